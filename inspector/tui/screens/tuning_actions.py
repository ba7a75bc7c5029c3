"""The context view's tuning commands: nudges, toggles, processor and counter cycles, reset,
flips and the settings panel's edits, for any strategy.

A mixin of ContextScreen (which owns `strategy`, `settings`, `recorded`, `flips` and
`apply_settings`); every command names settings by the spelling the keys use (`trigger_ratio`,
`keep_recent`, ...), resolved against the current strategy's settings model, so a strategy
without such a field simply says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from inspector.core.errors import ConfigError
from inspector.core.strategy import registry
from inspector.core.strategy.base import Flip, Settings, Strategy
from inspector.core.strategy.fields import FieldInfo, field_named
from inspector.tui.widgets.settings_panel import SettingsPanel


class TuningActions:
    """Every way the user changes the settings; each ends in `apply_settings` (validated first)."""

    strategy: Strategy
    settings: Settings
    recorded: Settings
    flips: list[Flip] | None

    if TYPE_CHECKING:  # provided by the screen; declared for type checkers

        def apply_settings(self, settings: Settings) -> None: ...

        def switch_strategy(self, strategy: Strategy, settings: Settings | None = None) -> None: ...

        def query_one(self, selector: Any, expect_type: Any = None) -> Any: ...

        def notify(self, message: str, **kwargs: Any) -> None: ...

        def action_toggle_compare(self) -> None: ...

    def field(self, name: str) -> FieldInfo | None:
        """The current strategy's field spelled `name`, or None (with a notice)."""
        try:
            return field_named(self.strategy.settings_model, name)
        except ConfigError:
            self.notify(f"{name} does not apply to {self.strategy.processor}", timeout=2)
            return None

    def set_settings(self, **changes: Any) -> bool:
        """Apply validated changes; a value out of range is shown, not applied."""
        try:
            new = self.settings.with_(**changes)
        except ConfigError as error:
            self.query_one(SettingsPanel).show_problem(f"{error.field}: must be {error.allowed}")
            return False
        self.query_one(SettingsPanel).show_problem("")
        if new != self.settings:
            self.apply_settings(new)
        return True

    def on_settings_panel_edited(self, message: SettingsPanel.Edited) -> None:
        """A control changed: validate with the settings model, apply or say what is wrong."""
        self.set_settings(**{message.field: message.value})

    def on_settings_panel_reset_pressed(self, message: SettingsPanel.ResetPressed) -> None:
        """Reset button."""
        self.action_reset_tuning()

    def on_settings_panel_compare_pressed(self, message: SettingsPanel.ComparePressed) -> None:
        """Compare button."""
        self.action_toggle_compare()

    def action_nudge(self, name: str, delta: float) -> None:
        """Step a number up or down, kept inside the field's range."""
        info = self.field(name)
        if info is None or info.kind not in ("int", "float"):
            return
        value = getattr(self.settings, info.name) + delta
        if info.kind == "int":
            low = (
                int(info.ge)
                if info.ge is not None
                else int(info.gt) + 1
                if info.gt is not None
                else None
            )
            new: float = max(int(value), low) if low is not None else int(value)
        else:
            low_f = (
                info.ge
                if info.ge is not None
                else (info.gt + 0.01 if info.gt is not None else None)
            )
            high_f = (
                info.le
                if info.le is not None
                else (info.lt - 0.01 if info.lt is not None else None)
            )
            new = round(value, 3)
            if low_f is not None:
                new = max(new, round(low_f, 3))
            if high_f is not None:
                new = min(new, round(high_f, 3))
        self.set_settings(**{info.name: new})

    def action_toggle_boundary(self) -> None:
        """Tool-boundary protection on/off (off is a what-if openJiuwen cannot do)."""
        info = self.field("tool_boundary")
        if info is not None:
            self.set_settings(**{info.name: not getattr(self.settings, info.name)})

    def action_cycle_processor(self) -> None:
        """The next registered strategy, reading the same source."""
        strategies = list(registry.all_strategies())
        index = next((i for i, s in enumerate(strategies) if s.key == self.strategy.key), -1)
        self.switch_strategy(strategies[(index + 1) % len(strategies)])

    def action_cycle_token_mode(self) -> None:
        """Next token counter."""
        info = self.field("token_mode")
        if info is None or not info.choices:
            return
        modes = list(info.choices)
        current = getattr(self.settings, info.name)
        self.set_settings(**{info.name: modes[(modes.index(current) + 1) % len(modes)]})

    def action_reset_tuning(self) -> None:
        """Back to what the source recorded (without the command-line overrides)."""
        self.query_one(SettingsPanel).show_problem("")
        self.apply_settings(self.recorded)
        self.notify("tuning reset to the recorded values", timeout=2)

    def action_apply_flip(self, number: int) -> None:
        """Apply flip `number` (1-based) from the why panel."""
        if not self.flips or not 1 <= number <= len(self.flips):
            self.notify("no such flip (wait for the why panel to finish)", severity="warning")
            return
        flip = self.flips[number - 1]
        if flip.strategy is not None and flip.strategy != self.strategy.key:
            self.switch_strategy(registry.get(flip.strategy), flip.settings)
        else:
            self.apply_settings(flip.settings)
        self.notify(f"applied: {flip.sentence}", timeout=3)
