"""The context view's tuning commands: nudges, toggles, reset, flips, and the panel's edits.

A mixin of ContextScreen (which owns `tuning`, `recorded_tuning`, `flips` and
`apply_tuning`); split out so each file stays about one job.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from inspector.core.errors import ConfigError
from inspector.core.hybrid_config import HybridConfig
from inspector.core.tokens import TOKEN_MODES
from inspector.core.tuning import DEFAULT_KEEP_RECENT, PROCESSOR_KINDS, Tuning
from inspector.core.whatif import Flip
from inspector.tui.widgets.tuning_panel import FIELD_LABELS, TuningPanel


def default_keep(processor: str) -> int:
    """Keep-recent on switching to `processor`: its default, for hybrid the spec's 5 turns.

    (Tuning's hybrid default 0 means "the spec default" to `config_from_tuning`; starting
    at 5 lets - and + step from the value actually used.)
    """
    if processor == "hybrid":
        return HybridConfig().preserve_recent_turns
    return DEFAULT_KEEP_RECENT[processor]  # type: ignore[index]


class TuningActions:
    """Every way the user changes the tuning; each ends in `apply_tuning` (validated first)."""

    tuning: Tuning | None
    recorded_tuning: Tuning | None
    flips: list[Flip] | None

    if TYPE_CHECKING:  # provided by the screen; declared for type checkers

        def apply_tuning(self, tuning: Tuning) -> None: ...

        def query_one(self, selector: Any, expect_type: Any = None) -> Any: ...

        def notify(self, message: str, **kwargs: Any) -> None: ...

        def action_toggle_compare(self) -> None: ...

    def on_tuning_panel_edited(self, message: TuningPanel.Edited) -> None:
        """A control changed: validate and apply, or say what is wrong."""
        if self.tuning is None:
            return
        changes: dict[str, Any] = {message.field: message.value}
        if message.field == "processor" and message.value != self.tuning.processor:
            changes["keep_recent"] = (
                self.recorded_tuning.keep_recent
                if self.recorded_tuning is not None
                and self.recorded_tuning.processor == message.value
                else default_keep(message.value)
            )
        self.set_tuning(**changes)

    def on_tuning_panel_reset_pressed(self, message: TuningPanel.ResetPressed) -> None:
        """Reset button."""
        self.action_reset_tuning()

    def on_tuning_panel_compare_pressed(self, message: TuningPanel.ComparePressed) -> None:
        """Compare button."""
        self.action_toggle_compare()

    def set_tuning(self, **changes: Any) -> bool:
        """Apply validated changes; a value out of range is shown, not applied."""
        if self.tuning is None:
            return False
        try:
            new = self.tuning.with_(**changes)
        except ConfigError as error:
            self.query_one(TuningPanel).show_problem(
                f"{FIELD_LABELS.get(error.field, error.field)}: must be {error.allowed}"
            )
            return False
        self.query_one(TuningPanel).show_problem("")
        if new != self.tuning:
            self.apply_tuning(new)
        return True

    def action_nudge(self, field: str, delta: float) -> None:
        """Step a number up or down (ratios are clamped to their open ranges)."""
        if self.tuning is None:
            return
        value = getattr(self.tuning, field)
        if field == "keep_recent":
            # hybrid: 0 turns would mean "the spec default 5" (config_from_tuning), so stop at 1
            fewest = 1 if self.tuning.processor == "hybrid" else 0
            self.set_tuning(keep_recent=max(int(value + delta), fewest))
            return
        low = 0.01 if field == "trigger_ratio" else 0.0
        new = round(min(max(value + delta, low), 0.99), 3)
        self.set_tuning(**{field: new})

    def action_toggle_boundary(self) -> None:
        """Tool-boundary protection on/off (off is a what-if openJiuwen cannot do)."""
        if self.tuning is not None:
            self.set_tuning(tool_boundary=not self.tuning.tool_boundary)

    def action_cycle_processor(self) -> None:
        """Next processor (keep-recent goes to that processor's default)."""
        if self.tuning is None:
            return
        kinds = list(PROCESSOR_KINDS)
        processor = kinds[(kinds.index(self.tuning.processor) + 1) % len(kinds)]
        keep = default_keep(processor)
        if self.recorded_tuning is not None and self.recorded_tuning.processor == processor:
            keep = self.recorded_tuning.keep_recent
        self.set_tuning(processor=processor, keep_recent=keep)

    def action_cycle_token_mode(self) -> None:
        """Next token counter."""
        if self.tuning is None:
            return
        modes = list(TOKEN_MODES)
        self.set_tuning(token_mode=modes[(modes.index(self.tuning.token_mode) + 1) % len(modes)])

    def action_reset_tuning(self) -> None:
        """Back to what the source recorded (without the command-line overrides)."""
        if self.recorded_tuning is not None:
            self.query_one(TuningPanel).show_problem("")
            self.apply_tuning(self.recorded_tuning)
            self.notify("tuning reset to the recorded values", timeout=2)

    def action_apply_flip(self, number: int) -> None:
        """Apply flip `number` (1-based) from the why panel."""
        if not self.flips or not 1 <= number <= len(self.flips):
            self.notify("no such flip (wait for the why panel to finish)", severity="warning")
            return
        flip = self.flips[number - 1]
        self.apply_tuning(flip.tuning)
        self.notify(f"applied: {flip.sentence}", timeout=3)
