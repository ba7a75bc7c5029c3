"""The context view's report commands: write the report, copy it as text.

A mixin of ContextScreen (which owns `artifact`, `snapshot`, `strategy`, `settings`,
`decision`, `flips`, `counters`). The report is the one of `inspector report` (same builder,
same Markdown and HTML), written into the report folder (the preferences' `report_folder`,
else `<user data dir>/context-inspector/reports`) with the context as a snapshot carrying
its pins (the pin commands are `context_pins`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspector.core.pins import PinRow, pins_across_strategies
from inspector.core.redact import mask_secrets
from inspector.core.snapshot import ContextSnapshot
from inspector.core.strategy.base import Decision, Flip, Prepared, Settings, Strategy
from inspector.core.tokens import TokenCounter
from inspector.render.report_data import build_report
from inspector.render.report_html import report_html
from inspector.render.report_md import report_markdown

if TYPE_CHECKING:
    from inspector.core.artifact import Artifact


#: What the context view offers for an artifact without a context (a debug record alone).
NO_CONTEXT_ACTIONS = ("back", "show_tab", "copy_why", "help", "write_report")


def report_folder() -> Path:
    """Where the TUI writes reports: the preferences' folder, else the user data folder."""
    from inspector.prefs import load_prefs

    prefs, _ = load_prefs()
    if prefs.report_folder:
        return Path(prefs.report_folder).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("context-inspector", appauthor=False)) / "reports"


def _file_stem(artifact: Artifact) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", f"{artifact.kind}-{artifact.id}")[:120] or "context"


class ReportActions:
    """Write and copy; mixed into ContextScreen."""

    artifact: Artifact
    snapshot: ContextSnapshot | None
    strategy: Strategy
    settings: Settings
    decision: Decision | None
    flips: list[Flip] | None
    counters: dict[str, TokenCounter]
    counting_note: str
    #: Message indices the user pinned (kept verbatim, a what-if).
    pins: frozenset[int] = frozenset()

    if TYPE_CHECKING:  # provided by the screen; declared for type checkers

        def notify(self, message: str, **kwargs: Any) -> None: ...

        def apply_settings(self, settings: Settings) -> None: ...

        def query_one(self, selector: Any, expect_type: Any = None) -> Any: ...

        def _prepared(self, strategy: Strategy) -> Prepared: ...

        def complete_decision(self) -> Decision | None: ...

    def report_data(self, across: bool = False) -> dict[str, Any]:
        """The report of the context as on screen (current settings and pins); `across`: with
        every strategy's decision without and with the pins."""
        decision = self.complete_decision()
        mode = getattr(decision.settings, "token_mode", None) if decision else None
        counter = self.counters.get(mode) if isinstance(mode, str) else None
        rows: list[PinRow] = []
        if across and self.pins and self.snapshot is not None:
            rows = pins_across_strategies(
                self.snapshot, self.counters, self.pins, None, self.artifact, self.counting_note
            )
        return build_report(self.artifact, decision, self.flips or (), counter, self.pins, rows)

    def report_text(self) -> str:
        """The report as Markdown: plain text for the clipboard (no box drawing)."""
        return report_markdown([self.report_data()])

    def write_report(self, folder: Path) -> list[Path]:
        """Write the Markdown and HTML reports and the snapshot (with its pins) into `folder`."""
        folder.mkdir(parents=True, exist_ok=True)
        data = self.report_data(across=True)
        stem = _file_stem(self.artifact)
        from inspector.prefs import write_text_file

        written = []
        for suffix, text in (
            (".md", report_markdown([data])),
            (".html", report_html([data])),
        ):
            path = folder / f"{stem}{suffix}"
            write_text_file(path, text)
            written.append(path)
        if self.snapshot is not None:
            record = self.snapshot.to_dict()
            if self.pins:
                record["pins"] = sorted(self.pins)
            path = folder / f"{stem}.snapshot.json"
            write_text_file(path, json.dumps(mask_secrets(record), ensure_ascii=False) + "\n")
            written.append(path)
        return written

    def action_write_report(self) -> None:
        """Write the report of this context (Markdown, HTML, snapshot) and say where."""
        from inspector.llm.dump_writer import OutputDirError, check_out_dir

        folder = report_folder()
        try:
            check_out_dir(folder, [self.artifact.source])
            written = self.write_report(folder)
        except OutputDirError as error:
            self.notify(str(error), severity="error")
            return
        except OSError as error:
            self.notify(f"could not write the report into {folder}: {error}", severity="error")
            return
        names = ", ".join(p.name for p in written)
        self.notify(f"report written to {folder}: {names}", timeout=8)
