"""The browser's "apply this tuning to every row" (new starting values for every context,
every row evaluated again under them, off the UI thread), and what follows its first load
(the newest row selected; one file given alone opened straight into its context).

A mixin of BrowserScreen (which owns `rows`, `overrides`, `counters` and `_refresh_table`);
rows are rebuilt with `tui.rows.artifact_row`, the same function the load uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from textual import work
from textual.message import Message as TextualMessage
from textual.worker import get_current_worker

from inspector.core.errors import InspectorError
from inspector.core.strategy.selection import select
from inspector.core.tokens import TokenCounter
from inspector.tui.rows import BrowserRow, artifact_row, whole_row


class BrowserTuning:
    """Re-evaluate every row under new tuning overrides; select or open after the first load."""

    rows: list[BrowserRow]
    shown: list[BrowserRow]
    #: One file given alone opens straight into its context (once, after the first load).
    open_single: bool
    _loaded_once = False
    overrides: dict[str, Any]
    counters: dict[str, TokenCounter]

    class Reevaluated(TextualMessage):
        """Every row evaluated again under `overrides` (rows by key)."""

        def __init__(self, overrides: dict[str, Any], rows: dict[int, BrowserRow]) -> None:
            super().__init__()
            self.overrides = overrides
            self.rows = rows

    if TYPE_CHECKING:  # provided by the screen; declared for type checkers

        def post_message(self, message: TextualMessage) -> bool: ...

        def notify(self, message: str, **kwargs: Any) -> None: ...

        def _refresh_table(self) -> None: ...

        def query_one(self, selector: Any, expect_type: Any = None) -> Any: ...

        def action_open_row(self) -> None: ...

    def _first_load_done(self) -> None:
        """After the first load: the newest row selected; a lone file's one context opened."""
        if self._loaded_once:
            return
        self._loaded_once = True
        table = self.query_one("#table")
        if self.shown:
            table.move_cursor(row=0, animate=False)
        openable = [row for row in self.rows if row.artifact is not None]
        if self.open_single and len(openable) == 1 and len(self.rows) == 1:
            table.move_cursor(row=self.shown.index(openable[0]), animate=False)
            self.action_open_row()

    def apply_tuning(self, overrides: Mapping[str, Any]) -> None:
        """Start every context from `overrides` and evaluate every row again (in a worker)."""
        wanted = {**self.overrides, **overrides}
        self.notify(f"re-evaluating {len(self.rows)} rows under the new tuning …", timeout=2)
        self.reevaluate(wanted, list(self.rows))

    @work(thread=True, exclusive=True, group="reevaluate", exit_on_error=False)
    def reevaluate(self, overrides: dict[str, Any], rows: list[BrowserRow]) -> None:
        """Rows built again with `overrides` (cancelled when another tuning is applied)."""
        worker = get_current_worker()
        done: dict[int, BrowserRow] = {}
        for row in rows:
            if worker.is_cancelled:
                return
            if row.artifact is None:
                continue
            row = whole_row(row)  # a header-level dump's context rebuilt: it is evaluated
            if row.error is not None:
                done[row.key] = row
                continue
            try:
                done[row.key] = tuned_row(row, overrides, self.counters)
            except Exception:  # noqa: BLE001 - a row that cannot be evaluated keeps its old cells
                continue
        self.post_message(self.Reevaluated(overrides, done))

    def on_browser_tuning_reevaluated(self, message: Reevaluated) -> None:
        """Swap the rows in and redraw the table."""
        self.overrides.clear()
        self.overrides.update(message.overrides)
        self.rows[:] = [message.rows.get(row.key, row) for row in self.rows]
        self._refresh_table()
        self.notify(f"{len(message.rows)} rows re-evaluated under the applied tuning", timeout=3)


#: The mark of a verdict re-evaluated under the tuning applied to every row.
TUNED_MARK = "tuned:"


def tuned_row(
    row: BrowserRow, overrides: Mapping[str, Any], counters: dict[str, TokenCounter]
) -> BrowserRow:
    """`row` built again under `overrides`, its outcome led by our verdict under them
    ("tuned: compresses (was no: target_below_min)"). Dumps and debug records are evaluated
    too: their recorded outcome does not change with a tuning, so the row showed none."""
    assert row.artifact is not None
    new = artifact_row(row.key, row.artifact, overrides, counters)
    snapshot = row.artifact.snapshot
    if new.decision is None and snapshot is not None:
        try:
            selection = select(snapshot, dict(overrides))
        except InspectorError:
            selection = select(snapshot, {})
        prepared = selection.strategy.prepare(snapshot, counters)
        new.decision = selection.strategy.decide(prepared, selection.settings, row.artifact)
    if new.decision is None:
        return new
    was = row.outcome
    if was.startswith(TUNED_MARK) and " (was " in was:
        was = was.split(" (was ", 1)[1].removesuffix(")")
    verdict = "compresses" if new.decision.hit else f"no: {new.decision.reason}"
    new.outcome = f"{TUNED_MARK} {verdict} (was {was})"
    return new
