"""The browser's Enter: open the selected row's context, rebuilding a dump's context first.

The load is on demand (`sources.loader.load_paths(on_demand=True)`): a dump's row is made
from its recorded fields, and its context is rebuilt from the file when the row is opened
(`tui.rows.whole_row`). A small file is rebuilt at once; one of `IN_WORKER_BYTES` or more
in a thread worker (group `whole`), one at a time, and opened when done: meanwhile the
rebuild line shows the bytes read, then the count (`browser_loading.progress_text`), and
Esc stops it (the reader at its next chunk, the count at its next message; the row stays
as it was, and Enter starts again, from the counts already made). The row keeps the
whole artifact (opened again, it is not read again); a file that no longer rebuilds
becomes an error row and says why.

A mixin of BrowserScreen (which owns `rows`, `shown`, the table and the counters).
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from textual import work
from textual.message import Message as TextualMessage
from textual.timer import Timer
from textual.widgets import ProgressBar, Static
from textual.worker import get_current_worker

from inspector.core.tokens import TokenCounter
from inspector.tui.count_cancel import CountCancelled
from inspector.tui.rows import BrowserRow, whole_row
from inspector.tui.screens.browser_loading import (
    LOOK_EVERY,
    LoadCancelled,
    ReadTracker,
    progress_text,
)

#: A dump file this big is rebuilt in a worker (its read and rebuild take over ~0.1 s).
IN_WORKER_BYTES = 4_000_000


class Rebuilding(ReadTracker):
    """The rebuild in hand: its row and size, the read and count progress, and Esc."""

    def __init__(self, row: BrowserRow, size: int) -> None:
        super().__init__()
        self.row = row
        self.bytes = size
        self.stopped = False
        #: The rebuild's worker, once it runs (the app cancels it when it quits).
        self.worker: Any = None

    def hook(self, path: Any, done: int, size: int) -> None:
        """`READ_PROGRESS` of the rebuild's read (raises once it is stopped)."""
        if self.current_cancelled():
            raise LoadCancelled(str(path))
        super().hook(path, done, size)

    def current_cancelled(self) -> bool:
        """The count check: True once Esc stopped the rebuild or its worker was cancelled
        (the app quitting waits for a thread worker: the rebuild must end at once)."""
        return self.stopped or (self.worker is not None and self.worker.is_cancelled)

    def line(self, now: float) -> Any:
        """What the rebuild line says now."""
        shown = progress_text(self, now)
        if shown is not None:
            return shown[0]
        seconds = now - self.started
        return f"rebuilding {self.row.title} ({self.bytes / 1e6:,.1f} MB) …  {seconds:.1f} s  Esc: stop"


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

    _rebuilding: Rebuilding | None = None
    _rebuild_timer: Timer | None = None

    class RowMadeWhole(TextualMessage):
        """A row's dump rebuilt in the worker (`new` is whole, or an error row; None: Esc
        stopped the rebuild)."""

        def __init__(self, old: BrowserRow, new: BrowserRow | None) -> None:
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

        def set_interval(self, interval: float, callback: Any = None, **kw: Any) -> Timer: ...

        def tracking(self, tracker: ReadTracker) -> Any: ...

        def flush_counts(self) -> None: ...

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
                self._start_rebuild(row, size)
                return
            row = self._swap_row(row, whole_row(row))
        self._open(row)

    def _start_rebuild(self, row: BrowserRow, size: int) -> None:
        """Rebuild a big dump in the worker, its progress on the rebuild line (one at a
        time: Enter during a rebuild says which one runs)."""
        if self._rebuilding is not None:
            other = self._rebuilding.row
            said = "still rebuilding" if other is row else f"rebuilding {other.title} first"
            self.notify(f"{said} (Esc stops it)", timeout=3)
            return
        self._rebuilding = tracker = Rebuilding(row, size)
        self.query_one("#rebuild-line").display = True
        self.query_one("#rebuild-progress", ProgressBar).update(total=None)
        self._look_at_rebuild()
        self._rebuild_timer = self.set_interval(LOOK_EVERY, self._look_at_rebuild)
        self.make_whole(row, tracker)

    def _look_at_rebuild(self) -> None:
        tracker = self._rebuilding
        if tracker is None:
            return
        self.query_one("#rebuild-status", Static).update(tracker.line(time.monotonic()))
        bar = self.query_one("#rebuild-progress", ProgressBar)
        if tracker.size and tracker.done < tracker.size:
            bar.update(total=tracker.size, progress=tracker.done)
        else:
            bar.update(total=None)

    def cancel_rebuild(self) -> bool:
        """Esc during a rebuild: stop it (True when one was running)."""
        tracker = self._rebuilding
        if tracker is None or tracker.stopped:
            return False
        tracker.stopped = True
        self.query_one("#rebuild-status", Static).update(
            f"stopping the rebuild of {tracker.row.title} …"
        )
        return True

    @work(thread=True, exclusive=True, group="whole", exit_on_error=False)
    def make_whole(self, row: BrowserRow, tracker: Rebuilding) -> None:
        """Rebuild a big dump's context off the UI thread (Esc stops it)."""
        tracker.worker = get_current_worker()
        with self.tracking(tracker):
            try:
                made: BrowserRow | None = whole_row(row)
            except (LoadCancelled, CountCancelled):
                made = None
        self.flush_counts()  # the counts made so far serve the next open
        self.post_message(self.RowMadeWhole(row, made))

    def on_browser_opening_row_made_whole(self, message: RowMadeWhole) -> None:
        """The big dump is rebuilt: keep it in its row and open it (if still on top); or
        Esc stopped it: say so, the row as it was."""
        if self._rebuild_timer is not None:
            self._rebuild_timer.stop()
            self._rebuild_timer = None
        stopped = self._rebuilding is not None and self._rebuilding.stopped
        self._rebuilding = None
        self.query_one("#rebuild-line").display = False
        if message.new is None:
            self.notify(f"stopped rebuilding {message.old.title}; Enter starts again", timeout=4)
            return
        row = self._swap_row(message.old, message.new)
        if stopped:  # done before Esc reached it: kept, not opened
            self.notify(f"{row.title} rebuilt, not opened (Esc); Enter opens it", timeout=4)
        elif self.is_current:
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
