"""The context view's commands that open another screen or copy something out: sweep,
strategies (`C`), re-run, copy message / why report / processor config.

A mixin of ContextScreen (which owns `artifact`, `snapshot`, `strategy`, `settings`,
`decision`, `flips`); never names a strategy.
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any

from inspector.core.artifact import Artifact
from inspector.core.compare import CompareEntry, column_mode, default_names
from inspector.core.snapshot import ContextSnapshot
from inspector.core.strategy import registry
from inspector.core.strategy.base import (
    Decision,
    EngineRerun,
    Flip,
    Prepared,
    ScriptRerun,
    Settings,
    Strategy,
    rerun_of,
)
from inspector.core.strategy.fields import fields_of
from inspector.core.tokens import TokenCounter
from inspector.render.message_detail import message_plain_text
from inspector.tui.screens.progress import CountProgress, StrategiesLauncher
from inspector.tui.widgets.message_list import MessageList


class ContextLaunch(StrategiesLauncher, CountProgress):
    """Sweep, strategies, re-run and the copy commands."""

    artifact: Artifact
    snapshot: ContextSnapshot | None
    strategy: Strategy
    settings: Settings
    recorded: Settings
    decision: Decision | None
    flips: list[Flip] | None
    counters: dict[str, TokenCounter]
    #: The messages kept verbatim (ReportActions' what-if).
    pins: frozenset[int]
    app: Any

    if TYPE_CHECKING:  # provided by the screen; declared for type checkers

        def apply_settings(self, settings: Settings) -> None: ...

        def _carried_settings(self, strategy: Strategy) -> Settings: ...

        def report_text(self) -> str: ...

        def _prepared(self, strategy: Strategy) -> Prepared: ...

        def current_messages(self) -> Any: ...

        def query_one(self, selector: Any, expect_type: Any = None) -> Any: ...

        def notify(self, message: str, **kwargs: Any) -> None: ...

    def action_sweep(self) -> None:
        """Open the sweep view of the current strategy and settings."""
        if self.snapshot is None or self.decision is None:
            return
        from inspector.tui.screens.sweep import SweepScreen

        def chosen(settings: Settings | None) -> None:
            if settings is not None:
                self.apply_settings(settings)

        screen = SweepScreen(self.strategy, self._prepared(self.strategy), self.settings)
        self.app.push_screen(screen, chosen)

    def action_compare_strategies(self) -> None:
        """Open the strategies view: this context under this strategy, the others of its
        family and hybrid, the user's changes carried to each."""
        if self.snapshot is None:
            return
        entries = [CompareEntry(self.strategy, self.settings)] + [
            CompareEntry(other, self._carried_settings(other))
            for other in map(registry.get, default_names(self.snapshot, self.strategy)[1:])
        ]
        mode = column_mode(self.settings, self.snapshot, self.counters)
        self.launch_strategies(self.artifact, entries, mode, self.pins)

    def action_rerun(self) -> None:
        """Open the re-run form for this context and the current settings."""
        rerun = rerun_of(self.strategy)
        if self.snapshot is not None and isinstance(rerun, ScriptRerun):
            from inspector.tui.screens.standard_rerun_screen import open_standard_rerun

            prepared = self._prepared(self.strategy)
            open_standard_rerun(self.app, self.strategy, prepared, self.settings, self.artifact)
            return
        if self.snapshot is None or not isinstance(rerun, EngineRerun):
            return
        from inspector.tui.screens.rerun_screen import open_rerun

        artifact = self.artifact
        release = getattr(self.settings, "openjiuwen_version", None)
        if isinstance(release, str):
            # the re-run follows the release the Tune panel shows, like the decision does
            snapshot = dataclasses.replace(self.snapshot, openjiuwen_version=release)
            artifact = dataclasses.replace(artifact, snapshot=snapshot)
        tuning = rerun.tuning(self.settings)
        open_rerun(self.app, artifact, tuning, counters=self.counters)

    def action_copy_message(self) -> None:
        """Copy the selected message to the clipboard."""
        messages = self.current_messages()
        index = self.query_one(MessageList).cursor
        if 0 <= index < len(messages):
            self.app.copy_to_clipboard(message_plain_text(messages[index], index))
            self.notify(f"message #{index} copied", timeout=2)

    def action_copy_why(self) -> None:
        """Copy the why report (plain text) to the clipboard."""
        self.app.copy_to_clipboard(self.why_text())
        self.notify("why report copied", timeout=2)

    def why_text(self) -> str:
        """The why report of the current settings as plain text (Markdown, no box drawing)."""
        return self.report_text()

    def settings_fields(self) -> list[str]:
        """Names of the current strategy's settings (for tests and the palette)."""
        return [info.name for info in fields_of(self.strategy.settings_model)]

    def config_text(self, fmt: str = "yaml") -> str:
        """The current settings as the processor config they stand for, in openJiuwen's field
        names (what-if fields, which openJiuwen cannot set, and the release are left out)."""
        return processor_config(self.strategy.processor, self.settings, fmt)

    def action_copy_config(self, fmt: str = "yaml") -> None:
        """Copy the processor config of the current tuning (YAML or JSON)."""
        self.app.copy_to_clipboard(self.config_text(fmt))
        self.notify(f"{self.strategy.processor} config copied as {fmt.upper()}", timeout=2)

    def action_apply_to_all(self) -> None:
        """Apply the changed settings to every row of the browser (it evaluates them again)."""
        # the browser is found by what it can do (importing it would make a cycle)
        browser = next((s for s in self.app.screen_stack if hasattr(s, "apply_tuning")), None)
        if browser is None:
            return
        # only what the user changed: each row keeps its own recorded values otherwise
        recorded = by_short_name(self.recorded)
        overrides: dict[str, Any] = {
            name: value
            for name, value in by_short_name(self.settings).items()
            if recorded.get(name) != value
        }
        if self.strategy.key != getattr(self, "_first_strategy", self.strategy.key):
            overrides["processor"] = self.strategy.key
        if not overrides:
            self.notify("nothing tuned to apply: the settings are the recorded ones", timeout=2)
            return
        browser.apply_tuning(overrides)


def by_short_name(settings: Settings) -> dict[str, Any]:
    """Every field by its shared short name where it has one (`trigger_ratio`, ...), so that
    rows of other processors read the same setting; else by its own name."""
    return {
        info.alias or info.name: getattr(settings, info.name) for info in fields_of(type(settings))
    }


def processor_config(processor: str, settings: Settings, fmt: str = "yaml") -> str:
    """`settings` as openJiuwen's processor config: `processor` and its `config` mapping."""
    config: dict[str, Any] = {
        info.name: getattr(settings, info.name)
        for info in fields_of(type(settings))
        if not info.what_if and info.name != "openjiuwen_version"
    }
    if isinstance(config.get("model"), str):  # the standard family: openJiuwen's model config
        config["model"] = {"model_name": config["model"]}
    if fmt == "json":
        return json.dumps({"processor": processor, "config": config}, indent=2) + "\n"
    lines = [f"processor: {processor}", "config:"]
    for name, value in config.items():
        if isinstance(value, dict):
            lines.append(f"  {name}:")
            lines += [f"    {key}: {_yaml_scalar(inner)}" for key, inner in value.items()]
        else:
            lines.append(f"  {name}: {_yaml_scalar(value)}")
    return "\n".join(lines) + "\n"


def _yaml_scalar(value: Any) -> str:
    """A YAML scalar (JSON's spelling is valid YAML for every value settings hold)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return format(value, "g") if isinstance(value, float) else str(value)
    return json.dumps(value, ensure_ascii=False)
