"""The browser's Enter: open the selected row's context, rebuilding a dump's context first.

The load is on demand (`sources.loader.load_paths(on_demand=True)`): a dump's row is made
from its recorded fields, and its context is rebuilt from the file when the row is opened
(`tui.rows.whole_row`). A small file is rebuilt at once; one of `IN_WORKER_BYTES` or more
in a thread worker (group `whole`), with a notice, and opened when done. The row keeps the
whole artifact (opened again, it is not read again); a file that no longer rebuilds
becomes an error row and says why.

A mixin of BrowserScreen (which owns `rows`, `shown`, the table and the counters).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from textual import work
from textual.message import Message as TextualMessage

from inspector.core.tokens import TokenCounter
from inspector.tui.rows import BrowserRow, whole_row

#: A dump file this big is rebuilt in a worker (its read and rebuild take over ~0.1 s).
IN_WORKER_BYTES = 4_000_000


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except (OSError, ValueError):
        return 0


class BrowserOpening:
    """Open the selected row; a header-level dump made whole first."""

    rows: list[BrowserRow]
    shown: list[BrowserRow]
    overrides: dict[str, Any]
    counters: dict[str, TokenCounter]

    class RowMadeWhole(TextualMessage):
        """A row's dump rebuilt in the worker (`new` is whole, or an error row)."""

        def __init__(self, old: BrowserRow, new: BrowserRow) -> None:
            super().__init__()
            self.old = old
            self.new = new

    if TYPE_CHECKING:  # provided by the screen; declared for type checkers
        app: Any

        @property
        def is_current(self) -> bool: ...

        def post_message(self, message: TextualMessage) -> bool: ...

        def notify(self, message: str, **kwargs: Any) -> None: ...

        def query_one(self, selector: Any, expect_type: Any = None) -> Any: ...

        def selected_row(self) -> BrowserRow | None: ...

        def cells_of(self, row: BrowserRow) -> Any: ...

    def action_open_row(self) -> None:
        """Open the selected artifact in the context view (an error row shows its reason)."""
        row = self.selected_row()
        if row is None:
            return
        if row.outcome_kind == "pending":
            self.notify(f"{row.title} is still being read", title="loading")
            return
        artifact = row.artifact
        if artifact is not None and artifact.whole is not None:
            size = _size(artifact.source)
            if size >= IN_WORKER_BYTES:
                self.notify(f"rebuilding {row.title} ({size / 1e6:,.1f} MB) …", timeout=3)
                self.make_whole(row)
                return
            row = self._swap_row(row, whole_row(row))
        self._open(row)

    @work(thread=True, exclusive=True, group="whole", exit_on_error=False)
    def make_whole(self, row: BrowserRow) -> None:
        """Rebuild a big dump's context off the UI thread."""
        self.post_message(self.RowMadeWhole(row, whole_row(row)))

    def on_browser_opening_row_made_whole(self, message: RowMadeWhole) -> None:
        """The big dump is rebuilt: keep it in its row and open it (if still on top)."""
        row = self._swap_row(message.old, message.new)
        if self.is_current:
            self._open(row)

    def _open(self, row: BrowserRow) -> None:
        if row.error is not None:
            where = f" at {row.error.where}" if row.error.where else ""
            self.notify(
                f"{row.error.source}{where}: {row.error.error}",
                title="unreadable",
                severity="error",
            )
            return
        from inspector.tui.screens.context import ContextScreen

        self.app.push_screen(ContextScreen(row, self.counters, self.overrides))

    def _swap_row(self, old: BrowserRow, new: BrowserRow) -> BrowserRow:
        """Put `new` where `old` is (by identity) in the rows and on screen; `new`."""
        if new is old:
            return new
        on_screen = False
        for rows in (self.rows, self.shown):
            index = next((i for i, row in enumerate(rows) if row is old), None)
            if index is not None:
                rows[index] = new
                on_screen = rows is self.shown
        if on_screen and new.error is not None:  # a whole artifact's cells are the same
            self.query_one("#table").replace_cells(str(old.key), self.cells_of(new))
        return new
