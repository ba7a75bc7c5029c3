"""The browser's load progress for a big file: bytes read and a percentage, then the
building and counting after the read, and Esc to stop loading that file.

The streaming reader reports each chunk it reads through `jsonstream.READ_PROGRESS` (set
in the load worker's thread only) to a `ReadTracker`; a timer on the UI thread draws it on
the load line once a file takes longer than `SHOW_AFTER` seconds. Esc marks the file in
hand cancelled: the reader stops at its next chunk (the hook raises `LoadCancelled`), a
count after the read stops at its next message (`tui.count_cancel`), the file becomes a
"not loaded" row and the load goes on with the other files; rows already loaded stay.

A mixin of BrowserScreen (which owns the worker, the rows and the load line). Textual only
for the widgets it draws; no strategy named.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.timer import Timer
from textual.widgets import ProgressBar, Static

from inspector.core.artifact import LoadError, LoadResult
from inspector.core.redact import shown_name
from inspector.core.tokens import TokenCounter
from inspector.sources.jsonstream import READ_PROGRESS
from inspector.sources.pool import CollectorHold
from inspector.tui.count_cancel import CountCancelled, cancellable
from inspector.tui.rows import BrowserRow, RowBatch, error_row

#: Seconds a file is read before its progress shows.
SHOW_AFTER = 0.5
#: Seconds between two looks at the read in hand.
LOOK_EVERY = 0.2
#: Characters of the file name on the load line.
NAME_WIDTH = 32
#: The row of a file whose load was stopped.
CANCELLED = "not loaded: cancelled with Esc (ctrl+r reads the sources again)"


class LoadCancelled(BaseException):
    """The load of one file was cancelled (raised inside the reader, between chunks).

    A BaseException: the loader's `except Exception` (one bad file, one error row) must
    not turn it into an error of the file."""


class ReadTracker:
    """The file the load worker is reading: bytes so far, size, since when; cancels."""

    def __init__(self) -> None:
        self.path: str | None = None
        self.done = 0
        self.size = 0
        self.started = time.monotonic()
        self.cancelled: set[str] = set()

    def hook(self, path: Path, done: int, size: int) -> None:
        """`READ_PROGRESS`: one more chunk of `path` read (raises once it is cancelled)."""
        name = str(path)
        if name != self.path:
            self.path, self.started = name, time.monotonic()
        self.done, self.size = done, size
        if name in self.cancelled:
            raise LoadCancelled(name)

    def finished(self, source: str) -> None:
        """The loader gave back `source`: it is no longer in hand."""
        if source == self.path:
            self.path = None

    def cancel(self) -> str | None:
        """Cancel the file in hand; its path (None when no big read is going on)."""
        if self.path is None:
            return None
        self.cancelled.add(self.path)
        return self.path

    def current_cancelled(self) -> bool:
        """True while the file in hand is cancelled (the count check of the worker)."""
        return self.path is not None and self.path in self.cancelled


def progress_text(tracker: ReadTracker, now: float) -> tuple[Text, bool] | None:
    """The load line for the read in hand, and whether it is still reading bytes (None
    when nothing has been read for `SHOW_AFTER` s)."""
    path = tracker.path
    if path is None or now - tracker.started < SHOW_AFTER or tracker.size <= 0:
        return None
    name = shown_name(Path(path).name)  # a file name cannot write to the terminal
    if len(name) > NAME_WIDTH:  # the end tells files apart (session, processor)
        name = "…" + name[-(NAME_WIDTH - 1) :]
    mb, total = tracker.done / 1e6, tracker.size / 1e6
    seconds = now - tracker.started
    reading = tracker.done < tracker.size
    text = Text()
    if reading:
        text.append(f"reading {name}: {mb:,.1f} of {total:,.1f} MB ")
        text.append(f"({tracker.done / tracker.size:.0%})", "bold")
    else:
        text.append(f"read {name} ({total:,.1f} MB); counting tokens …")
    text.append(f"  {seconds:.1f} s  Esc: stop", "dim")
    return text, reading


class BrowserLoading:
    """Mixin of BrowserScreen: the read in hand on the load line, and Esc to cancel it."""

    reading: bool
    counters: dict[str, TokenCounter]
    sources: list[str]
    loader: Callable[[list[str]], Any]
    _read_tracker: ReadTracker | None = None
    _read_timer: Timer | None = None
    _collector: CollectorHold | None = None

    if TYPE_CHECKING:  # provided by the screen; declared for type checkers

        def query_one(self, selector: Any, expect_type: Any = None) -> Any: ...

        def set_interval(self, interval: float, callback: Any = None, **kw: Any) -> Timer: ...

        def notify(self, message: str, **kw: Any) -> None: ...

        def _row_for(self, key: int, item: LoadResult) -> BrowserRow: ...

    def hold_collector(self) -> None:
        """The cyclic collector paused from the listing until the load's rows are in and the
        heap frozen (`release_collector`; `pool.CollectorHold`)."""
        if self._collector is None:
            self._collector = CollectorHold()
        self._collector.hold()

    def release_collector(self) -> None:
        """End `hold_collector`'s pause (the load is done, or the screen goes)."""
        if self._collector is not None:
            self._collector.release()

    def watch_reads(self) -> ReadTracker:
        """A new tracker for the load about to start, drawn every `LOOK_EVERY` s."""
        self._read_tracker = tracker = ReadTracker()
        if self._read_timer is not None:
            self._read_timer.stop()
        self._read_timer = self.set_interval(LOOK_EVERY, self._look_at_read)
        return tracker

    def stop_watching_reads(self) -> None:
        """The load ended: no more looks."""
        if self._read_timer is not None:
            self._read_timer.stop()
            self._read_timer = None

    def _look_at_read(self) -> None:
        tracker = self._read_tracker
        if tracker is None or not self.reading:
            return
        shown = progress_text(tracker, time.monotonic())
        if shown is None:
            return
        text, reading = shown
        self.query_one("#load-status", Static).update(text)
        bar = self.query_one("#load-progress", ProgressBar)
        if reading:
            bar.update(total=tracker.size, progress=tracker.done)
        else:
            bar.update(total=None)

    def cancel_read(self) -> bool:
        """Esc while a big file loads: stop loading it (True when one was stopped)."""
        tracker = self._read_tracker
        if tracker is None or not self.reading:
            return False
        path = tracker.cancel()
        if path is None:
            return False
        self.notify(f"stopping the load of {Path(path).name} …", timeout=3)
        return True

    def flush_counts(self) -> None:
        """Write the counts made so far to the token cache (after a load or a rebuild)."""
        store = self.counters["tiktoken_cl100k"].store
        if store is not None and hasattr(store, "flush"):
            store.flush()

    @contextmanager
    def tracking(self, tracker: ReadTracker) -> Iterator[None]:
        """In the load worker: the reader reports to `tracker`, a count of a cancelled
        file stops at its next message."""
        token = READ_PROGRESS.set(tracker.hook)
        try:
            with cancellable(self.counters, tracker.current_cancelled):
                yield
        finally:
            READ_PROGRESS.reset(token)

    def load_after_cancel(
        self,
        tracker: ReadTracker,
        batch: RowBatch,
        done: set[str],
        stopped: Callable[[], bool],
    ) -> None:
        """The file in hand was cancelled: a "not loaded" row for it, then every file not
        in `done` loaded on its own (another cancel stops only that file)."""
        from inspector.sources.entries import list_entries

        path = tracker.path or ""
        tracker.finished(path)
        done.add(path)
        batch.add(error_row(batch.seen, LoadError(path, CANCELLED)))
        for entry in list_entries(self.sources):
            name = str(entry.path)
            if name in done or name in tracker.cancelled or stopped():
                continue
            done.add(name)
            try:
                for item in self.loader([name]):
                    tracker.finished(item.source)
                    batch.add(self._row_for(batch.seen, item))
            except (LoadCancelled, CountCancelled):
                tracker.finished(name)
                batch.add(error_row(batch.seen, LoadError(name, CANCELLED)))
            except Exception as error:  # noqa: BLE001 - one bad file, one error row
                batch.add(
                    error_row(batch.seen, LoadError(name, f"{type(error).__name__}: {error}"))
                )
