"""BrowserScreen: every artifact and load error found in the sources, newest first.

A thread worker reads the sources through the injected loader and posts batches of rows
(`RowsLoaded`, then `LoadFinished`); the screen owns the rows, the filter and the sort.

Live sources: after the load, a thread worker (group `follow`) polls a `FileFollower` primed
before the load started, so only what changed since is reported; a connection chosen in the
connect dialog (or given as a ws:// / http:// source) runs in an async worker (group
`connect`). Both post `LiveBatch` messages; the screen adds or replaces rows by
(source, id), drops removed ones and feeds a `LiveTracker` shown in the `LivePanel`.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message as TextualMessage
from textual.timer import Timer
from textual.widgets import DataTable, Input, ProgressBar, Static
from textual.worker import Worker, get_current_worker

from inspector.core.artifact import Artifact, LoadError, LoadResult
from inspector.core.live_events import (
    LiveEvent,
    NewArtifact,
    SourceProblem,
    SourceRemoved,
    SourceState,
)
from inspector.core.live_tracker import LiveTracker
from inspector.core.tokens import TokenCounter
from inspector.sources.connect import ConnectRequest, classify_source
from inspector.sources.follow import FileFollower
from inspector.tui.count_cancel import CountCancelled
from inspector.tui.rows import (
    BrowserRow,
    RowBatch,
    artifact_row,
    error_row,
    load_rest,
    pending_row,
    primed_follower,
)
from inspector.tui.screens.base import InspectorScreen
from inspector.tui.screens.browser_cells import COLUMNS
from inspector.tui.screens.browser_filters import BrowserFilters
from inspector.tui.screens.browser_loading import BrowserLoading, LoadCancelled, ReadTracker
from inspector.tui.screens.browser_open import BrowserOpening
from inspector.tui.screens.browser_table import BROWSER_BINDINGS, BrowserTable
from inspector.tui.screens.browser_tuning import BrowserTuning
from inspector.tui.screens.connect_dialog import ConnectDialog
from inspector.tui.screens.context_live import offer_to_contexts
from inspector.tui.widgets.filter_input import FilterInput
from inspector.tui.widgets.live_panel import LivePanel
from inspector.tui.widgets.quiet_footer import QuietFooter

Loader = Callable[[Iterable[str]], Iterable[LoadResult]]

#: A loading worker posts its rows every this many seconds (`RowBatch`) ...
BATCH_SECONDS = 0.15
#: ... and at most this many rows a message (`RowBatch`: ~5 ms of the screen's work).
BATCH_ROWS = 100
#: ... and no more than this many batches posted and not yet shown (`RowBatch`).
ROWS_IN_FLIGHT = 2
#: Rows drawn before the rest of a long listing is measured (more than a screen holds).
FIRST_SCREEN_ROWS = 200
#: Longest wait (seconds) for that screenful to be drawn before the rest is measured.
FIRST_SCREEN_WAIT = 1.0
#: Seconds between two scans of the followed files.
FOLLOW_INTERVAL = 0.5
#: Seconds a half-written file is retried before it is shown as unreadable.
FOLLOW_SETTLE = 2.0
#: Keys of rows made while following start here (load rows count up from 0, placeholders down).
LIVE_KEYS_START = 1 << 40


class BrowserScreen(
    BrowserLoading, BrowserFilters, BrowserOpening, BrowserTuning, InspectorScreen[None]
):
    """The table of dumps, debug sessions and contexts, with filters and error rows."""

    BINDINGS = BROWSER_BINDINGS

    class RowsLoaded(TextualMessage):
        """The loading worker read some more rows."""

        def __init__(
            self, rows: Sequence[BrowserRow], seen: int, batch: RowBatch | None = None
        ) -> None:
            super().__init__()
            self.rows = list(rows)
            self.seen = seen
            #: The worker's batches, told when these rows are shown (`RowBatch.taken`).
            self.batch = batch

    class EntriesListed(TextualMessage):
        """The files about to be read, listed by name before any is parsed."""

        def __init__(self, rows: Sequence[BrowserRow], generation: int = 0) -> None:
            super().__init__()
            self.rows = list(rows)
            #: Which `start_loading` listed them (an older listing starts no load).
            self.generation = generation

    class LoadFinished(TextualMessage):
        """The loading worker read every source (`follower` was primed before it started)."""

        def __init__(self, seen: int, seconds: float, follower: FileFollower | None = None) -> None:
            super().__init__()
            self.seen = seen
            self.seconds = seconds
            self.follower = follower

    class LiveBatch(TextualMessage):
        """Live events from the follower or a connection; `rows` hold the NewArtifact rows."""

        def __init__(
            self, events: Sequence[LiveEvent], rows: Sequence[BrowserRow], origin: str
        ) -> None:
            super().__init__()
            self.events = list(events)
            self.rows = list(rows)
            #: `follow` or `connect`.
            self.origin = origin

    class LiveEnded(TextualMessage):
        """A live worker stopped: `error` says why when it failed."""

        def __init__(self, origin: str, error: str | None = None) -> None:
            super().__init__()
            self.origin = origin
            self.error = error

    def __init__(
        self,
        sources: Sequence[str],
        overrides: dict[str, Any],
        counters: dict[str, TokenCounter],
        loader: Loader,
    ) -> None:
        super().__init__()
        #: ws:// and http:// sources are connections, not files to read.
        self.live_sources = [s for s in sources if classify_source(s) != "files"]
        self.sources = [s for s in sources if classify_source(s) == "files"]
        self.overrides = overrides
        self.counters = counters
        self.loader = loader
        self.rows: list[BrowserRow] = []
        self.shown: list[BrowserRow] = []
        self.text_filter = ""
        self.processor_filter: str | None = None
        self.outcome_filter: str | None = None
        self.sort_column = "time"
        self.sort_reverse = False
        #: True while the sources are being read (not Textual's `loading`, which would cover
        #: the whole screen with a loading indicator).
        self.reading = False
        #: Placeholder rows by source path, shown until the load reaches their file.
        self.pending: dict[str, BrowserRow] = {}
        #: Placeholders were replaced by their rows in this load (`_adopt_pending`).
        self._adopted = False
        #: Row key -> position in `shown`, to update a placeholder's cells in place.
        self._row_index: dict[int, int] = {}
        #: Keys for rows made by live workers (thread-safe enough: `next` on a count).
        self._live_keys = itertools.count(LIVE_KEYS_START)
        #: The followed files' state (None until following starts).
        self.follow_state: SourceState | None = None
        #: What the live connection reported (None until one is opened).
        self.tracker: LiveTracker | None = None
        #: The connection being shown, if any.
        self.connection: ConnectRequest | None = None
        self._follower: FileFollower | None = None
        self._follow_timer: Timer | None = None
        self._follow_worker: Worker[None] | None = None
        #: Counts `start_loading` calls; the load of the newest starts once its names show.
        self._load_generation = 0
        self._listed = -1  # the newest generation whose listing is being shown
        self.open_single = len(self.sources) == 1 and Path(self.sources[0]).is_file()

    def compose(self) -> ComposeResult:
        """Filter bar, progress, the table, the footer."""
        with Horizontal(id="browser-top"):
            yield FilterInput(placeholder="filter text (/)", id="filter", compact=True)
            yield Static(id="filters", markup=False)
        with Horizontal(id="load-line"):
            yield ProgressBar(total=None, show_eta=False, show_percentage=False, id="load-progress")
            yield Static("", id="load-status", markup=False)
        with Horizontal(id="rebuild-line"):  # a big dump rebuilt for Enter (browser_open)
            yield ProgressBar(
                total=None, show_eta=False, show_percentage=False, id="rebuild-progress"
            )
            yield Static("", id="rebuild-status", markup=False)
        yield BrowserTable(id="table", cursor_type="row", zebra_stripes=True)
        yield LivePanel(id="live-panel")
        yield QuietFooter()

    def on_mount(self) -> None:
        """Set up the columns and start loading."""
        table = self.query_one("#table", DataTable)
        for key, header in COLUMNS:
            table.add_column(header, key=key)
        self._show_filters()
        self.start_loading()
        table.focus()
        for source in self.live_sources[:1]:
            self._connect_source(source)

    def on_unmount(self) -> None:
        """A load still held the collector paused: the screen goes, the pause with it."""
        self.release_collector()

    # --- loading -------------------------------------------------------------------------

    def start_loading(self) -> None:
        """(Re)load every source in the background; list the files by name first.

        The load itself (and the follower's priming) starts once the named rows are drawn
        (`_load_after_listing`): started beside the listing, its reading held the
        interpreter and a 5,000-file folder's first rows waited seconds for it. Following
        stops during the load and starts again after it; rows of a live connection stay.
        The cyclic collector is paused until the rows are in (`hold_collector`).
        """
        self._stop_following()
        self.hold_collector()
        self.rows[:] = [row for row in self.rows if self._from_connection(row)]
        self.pending.clear()
        self.reading = True
        self._load_generation += 1
        self.list_files(self._load_generation)
        self.query_one("#load-line").display = True
        self.query_one("#load-status", Static).update(f"reading {', '.join(self.sources)} …")
        self._refresh_table()
        self.watch_reads()

    @work(thread=True, exclusive=True, group="entries", exit_on_error=False)
    def list_files(self, generation: int) -> None:
        """List the files by name and cheap header fields so rows show before anything is
        parsed; posted even when the listing fails (no rows then), so the load starts."""
        from inspector.sources.entries import list_entries

        rows: list[BrowserRow] = []
        try:
            entries = list_entries(self.sources)
            rows = [pending_row(-1 - i, e) for i, e in enumerate(entries)]
        finally:
            self.post_message(self.EntriesListed(rows, generation))

    def on_browser_screen_entries_listed(self, message: EntriesListed) -> None:
        """Show placeholder rows for files the load has not reached yet, then start the load."""
        if not self.reading or message.generation != self._load_generation:
            return
        loaded = {row.source for row in self.rows}
        self.pending = {row.source: row for row in message.rows if row.source not in loaded}
        # a screenful first: DataTable measures every new row before it draws any
        self._refresh_table(limit=FIRST_SCREEN_ROWS)
        table = self.query_one("#table", DataTable)
        generation = message.generation
        if isinstance(table, BrowserTable) and len(self.shown) == FIRST_SCREEN_ROWS:
            table.after_next_draw(lambda: self._show_all_listed(generation))
            # and in any case soon (the table may not be drawn: another screen on top)
            self.set_timer(FIRST_SCREEN_WAIT, lambda: self._show_all_listed(generation))
        else:
            self._show_all_listed(generation)

    def _show_all_listed(self, generation: int) -> None:
        """Every listed row, once the first screenful is drawn (once per listing)."""
        if self.reading and generation == self._load_generation != self._listed:
            self._listed = generation
            self._list_rest(generation)

    @work(exclusive=True, group="listing")
    async def _list_rest(self, generation: int) -> None:
        """The listed rows after the first screenful, in steps (`show_rest`); then the load."""
        await self.show_rest(lambda: self.reading and generation == self._load_generation)
        self.call_after_refresh(self._load_after_listing, generation)

    def _load_after_listing(self, generation: int) -> None:
        """Start the load of `generation` (once: a newer `start_loading` starts its own)."""
        if self.reading and generation == self._load_generation:
            self._load_generation += 1  # a repeated listing message starts nothing more
            self.load_sources()

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def load_sources(self) -> None:
        """Read the sources; post rows in batches so the first ones show at once.

        A load that raises (a bug) is an error row and a notice; the files it had not
        reached are then loaded one by one (`rows.load_rest`)."""
        worker = get_current_worker()
        started = time.monotonic()
        tracker = self._read_tracker or ReadTracker()
        follower = primed_follower(self.sources, self.loader, FOLLOW_SETTLE)
        batch = RowBatch(
            lambda rows, seen: self.post_message(self.RowsLoaded(rows, seen, batch)),
            BATCH_SECONDS,
            BATCH_ROWS,
            ROWS_IN_FLIGHT,
            lambda: worker.is_cancelled,
        )
        done: set[str] = set()
        with self.tracking(tracker):
            try:
                for item in self.loader(self.sources):
                    if worker.is_cancelled:
                        return
                    tracker.finished(item.source)
                    done.add(item.source)
                    batch.add(self._row_for(batch.seen, item))
            except (LoadCancelled, CountCancelled):  # Esc on a big file: the others go on
                self.load_after_cancel(tracker, batch, done, lambda: worker.is_cancelled)
            except Exception as error:  # noqa: BLE001 - the other files must still load
                rest = (self.loader, self.sources, done)
                load_rest(rest, batch, self._row_for, lambda: worker.is_cancelled, error)
        if worker.is_cancelled:
            return
        batch.post()
        self.flush_counts()
        self.post_message(self.LoadFinished(batch.seen, time.monotonic() - started, follower))

    def _row_for(self, key: int, item: LoadResult) -> BrowserRow:
        """A row for one loaded item; an evaluation failure becomes an error row."""
        if isinstance(item, LoadError):
            return error_row(key, item)
        try:
            return artifact_row(key, item, self.overrides, self.counters)
        except Exception as error:  # noqa: BLE001 - a bad artifact must not stop the load
            return error_row(key, LoadError(item.source, f"could not evaluate: {error}", item.id))

    def on_browser_screen_rows_loaded(self, message: RowsLoaded) -> None:
        """Append the visible new rows (O(batch)); the full sort waits for the end of the load.
        The worker may then post another batch (`RowBatch.taken`)."""
        try:
            self._show_loaded(message)
        finally:
            if message.batch is not None:
                message.batch.taken()

    def _show_loaded(self, message: RowsLoaded) -> None:
        self.rows.extend(message.rows)
        new_rows = self._adopt_pending(message.rows) if self.pending else message.rows
        self.query_one("#load-status", Static).update(
            f"read {message.seen} items … (sorted when done)", layout=False
        )
        table = self.query_one("#table", BrowserTable)
        added = []
        for row in new_rows:
            if self._visible(row):
                self._row_index[row.key] = len(self.shown)
                self.shown.append(row)
                added.append((str(row.key), self.cells_of(row)))
        table.append_rows(added)
        self.query_one("#filters", Static).update(
            self._filters_line(str(len(self.shown))), layout=False
        )

    def _adopt_pending(self, rows: Sequence[BrowserRow]) -> list[BrowserRow]:
        """Show the first real row of each file in its placeholder's place; return the rest.

        Cells are updated in place: removing rows one by one from a large table is quadratic.
        """
        rest: list[BrowserRow] = []
        replaced: list[tuple[str, Sequence[Any], str | None]] = []
        for row in rows:
            placeholder = self.pending.pop(row.source, None)
            index = self._row_index.pop(placeholder.key, None) if placeholder else None
            if placeholder is None or index is None:
                rest.append(row)
                continue
            self.shown[index] = row
            self._row_index[row.key] = index
            replaced.append((str(placeholder.key), self.cells_of(row), str(row.key)))
        if replaced:  # column widths only grow now; fitted to the rows once the load is done
            self.query_one("#table", BrowserTable).replace_many(replaced)
            self._adopted = True
        return rest

    def on_browser_screen_load_finished(self, message: LoadFinished) -> None:
        """Hide the progress line and say what was found."""
        self.reading = False
        self.stop_watching_reads()
        self.pending.clear()
        self._refresh_table()
        if self._adopted:  # placeholders were replaced: widths fitted to the rows once
            self._adopted = False
            self.query_one("#table", BrowserTable).fit_to_settled()
        errors = sum(1 for row in self.rows if row.error is not None)
        contexts = len(self.rows) - errors
        self.query_one("#load-line").display = False
        summary = f"{contexts} artifacts, {errors} unreadable, in {message.seconds:.1f} s"
        self.sub_title = summary
        self.app.sub_title = summary
        if not self.rows and self.sources:
            self.notify("nothing found in " + ", ".join(self.sources), severity="warning")
        elif errors:
            first = next(row for row in self.rows if row.error is not None)
            self.notify(f"{errors} unreadable, first {first.title}: {first.outcome}", timeout=8)
        if message.follower is not None:
            self._start_following(message.follower)
        freeze = getattr(self.app, "freeze_heap", None)
        if freeze is not None:
            freeze()
        self.release_collector()
        self._first_load_done()

    # --- live: following files and connections -----------------------------------------

    def _from_connection(self, row: BrowserRow) -> bool:
        """True for a row a live connection produced (a rebuilt window)."""
        return row.artifact is not None and "live" in row.artifact.extra

    def _live_row(self, artifact: Artifact) -> BrowserRow:
        return self._row_for(next(self._live_keys), artifact)

    def _problem_row(self, problem: SourceProblem) -> BrowserRow:
        return error_row(next(self._live_keys), problem.error)

    def _rows_for(self, events: Sequence[LiveEvent]) -> list[BrowserRow]:
        """Rows for the artifacts and settled problems among `events` (worker side)."""
        rows: list[BrowserRow] = []
        for event in events:
            if isinstance(event, NewArtifact):
                rows.append(self._live_row(event.artifact))
            elif isinstance(event, SourceProblem):
                rows.append(self._problem_row(event))
        return rows

    def _start_following(self, follower: FileFollower) -> None:
        """Scan the followed files every `FOLLOW_INTERVAL` seconds from now on.

        A timer starts one short thread worker per scan (skipped while the previous one
        runs) rather than one endless worker, so `app.workers.wait_for_complete()` still
        means "the load is done" to callers and tests.
        """
        self._follower = follower
        self.follow_state = SourceState("files", "following", follower.files_text)
        self._show_live()
        if self._follow_timer is not None:
            self._follow_timer.stop()
        self._follow_timer = self.set_interval(FOLLOW_INTERVAL, self._follow_tick)

    def _stop_following(self) -> None:
        """Stop the scans (the follow state is left to the caller)."""
        if self._follow_timer is not None:
            self._follow_timer.stop()
            self._follow_timer = None
        self._follower = None
        self.workers.cancel_group(self, "follow")

    def _follow_tick(self) -> None:
        """Start one scan unless the previous one is still running."""
        if self._follower is None:
            return
        if self._follow_worker is None or self._follow_worker.is_finished:
            files = self.follow_state.detail if self.follow_state is not None else ""
            self._follow_worker = self.poll_files(self._follower, files)

    @work(thread=True, exclusive=True, group="follow", exit_on_error=False)
    def poll_files(self, follower: FileFollower, files: str) -> None:
        """One scan of the followed files; post what changed (rows built here, off the UI)."""
        try:
            events: list[LiveEvent] = list(follower.poll())
        except Exception as error:  # noqa: BLE001 - shown on the indicator, never a traceback
            self.post_message(self.LiveEnded("follow", f"{type(error).__name__}: {error}"))
            return
        count = follower.files_text
        if count != files:
            events.append(SourceState("files", "following", count))
        if events and not get_current_worker().is_cancelled:
            self.post_message(self.LiveBatch(events, self._rows_for(events), "follow"))

    def _connect_source(self, source: str) -> None:
        """Open a ws:// or http:// source given on the command line, as the dialog would."""
        from inspector.sources.connect import build_request

        try:
            request = build_request(source, "", "auto", "main")
        except ValueError as error:
            self.notify(f"{source}: {error}", title="cannot connect", severity="error")
            return
        self.start_connection(request)

    def start_connection(self, request: ConnectRequest | None) -> None:
        """Show `request`'s live events from now on (replacing an open connection)."""
        if request is None:
            return
        if request.kind == "files":
            if request.source not in self.sources:
                self.sources.append(request.source)
            self.start_loading()
            return
        self.connection = request
        self.tracker = LiveTracker()
        self._show_live()
        self.refresh_bindings()
        self.connect_live(request)

    @work(exclusive=True, group="connect", exit_on_error=False)
    async def connect_live(self, request: ConnectRequest) -> None:
        """Run the connection; post its events (rebuilt windows as rows) until cancelled."""
        import asyncio

        events: AsyncIterator[LiveEvent] = request.open()
        try:
            async for event in events:
                rows = await asyncio.to_thread(self._rows_for, [event])
                self.post_message(self.LiveBatch([event], rows, "connect"))
            self.post_message(self.LiveEnded("connect"))
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - shown on the indicator, never a traceback
            self.post_message(self.LiveEnded("connect", f"{type(error).__name__}: {error}"))
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()

    def on_browser_screen_live_batch(self, message: LiveBatch) -> None:
        """Add or replace rows by (source, id), drop removed ones, update the live panel."""
        fresh = iter(message.rows)
        changed = False
        for event in message.events:
            if isinstance(event, SourceState):
                if message.origin == "follow":
                    self.follow_state = event
                elif self.tracker is not None:
                    self.tracker.apply(event)
            elif isinstance(event, NewArtifact | SourceProblem):
                self._put_row(next(fresh))
                changed = True
            elif isinstance(event, SourceRemoved):
                changed |= self._drop_rows(event)
            elif self.tracker is not None and message.origin == "connect":
                self.tracker.apply(event)
        if changed:
            self._refresh_table()
            offer_to_contexts(self.app, message.rows, self.rows)
        self._show_live()

    def _put_row(self, row: BrowserRow) -> None:
        """Replace the row of the same (source, id), keeping its key and place; else append.

        A problem row replaces an earlier problem row of the same file; an artifact that
        finally reads drops the problem row of its file.
        """
        if row.artifact is not None:
            self.rows[:] = [
                old for old in self.rows if old.error is None or old.source != row.source
            ]
        for index, old in enumerate(self.rows):
            same = (
                old.artifact is not None
                and row.artifact is not None
                and (old.artifact.source, old.artifact.id) == (row.artifact.source, row.artifact.id)
            ) or (old.error is not None and row.error is not None and old.source == row.source)
            if same:
                row.key = old.key
                self.rows[index] = row
                return
        self.rows.append(row)

    def _drop_rows(self, event: SourceRemoved) -> bool:
        """Drop the rows of a removed file (or the one artifact named); True when any went."""
        kept = [
            row
            for row in self.rows
            if not (
                row.source == event.source
                and (event.id is None or (row.artifact is not None and row.artifact.id == event.id))
            )
        ]
        dropped = len(kept) != len(self.rows)
        self.rows[:] = kept
        return dropped

    def on_browser_screen_live_ended(self, message: LiveEnded) -> None:
        """Say on the indicator that following or the connection stopped, and why."""
        detail = message.error or "stopped"
        if message.origin == "follow":
            self._stop_following()
            self.follow_state = SourceState("files", "closed", f"following stopped: {detail}")
        elif self.tracker is not None and self.connection is not None:
            self.tracker.apply(SourceState(self.connection.source, "closed", detail))
        if message.error:
            self.notify(message.error, title=f"{message.origin} stopped", severity="error")
        self._show_live()

    def _show_live(self) -> None:
        """Redraw the live panel from the follow state and the tracker."""
        ratio = self.overrides.get("trigger_ratio")
        threshold = float(ratio) * 100 if isinstance(ratio, int | float) else 80.0
        self.query_one("#live-panel", LivePanel).show(self.follow_state, self.tracker, threshold)

    def on_live_panel_operation_chosen(self, message: LivePanel.OperationChosen) -> None:
        """Enter on a live operation opens its detail screen."""
        from inspector.tui.screens.operation import OperationScreen

        self.app.push_screen(OperationScreen(message.operation, message.tracker))

    def action_focus_operations(self) -> None:
        """Focus the live operations list (Enter opens one; Tab goes back to the rows)."""
        if not self.query_one("#live-panel", LivePanel).focus_operations():
            self.notify("no live operations yet (connect with ctrl+o)", timeout=2)

    def action_connect(self) -> None:
        """Open the connect dialog; a chosen source starts showing live events."""
        self.app.push_screen(ConnectDialog(), self.start_connection)

    def action_disconnect(self) -> None:
        """Close the live connection (its rows stay)."""
        if self.connection is None:
            return
        self.workers.cancel_group(self, "connect")
        self.on_browser_screen_live_ended(self.LiveEnded("connect"))
        self.connection = None
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Disconnect only while connected."""
        if action == "disconnect":
            return self.connection is not None
        return True

    # --- filter and sort ----------------------------------------------------------------

    def restyle(self) -> None:
        """The theme changed: rebuild the table in its palette."""
        self.drop_cells()
        self._refresh_table()

    def _show_filters(self) -> None:
        self.query_one("#filters", Static).update(self._filters_line(str(len(self.rows))))

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter_typed(event.value)

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        self.query_one("#table", DataTable).focus()

    @on(DataTable.HeaderSelected)
    def _header_clicked(self, event: DataTable.HeaderSelected) -> None:
        column = str(event.column_key.value)
        if column == self.sort_column:
            self.sort_reverse = not self.sort_reverse
        else:
            self.sort_column, self.sort_reverse = column, False
        self._refresh_table()

    @on(DataTable.RowSelected, "#table")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open_row()

    # --- actions -----------------------------------------------------------------------

    def selected_row(self) -> BrowserRow | None:
        """The row under the cursor, if any."""
        table = self.query_one("#table", DataTable)
        if 0 <= table.cursor_row < len(self.shown):
            return self.shown[table.cursor_row]
        return None

    def action_reload(self) -> None:
        """Read the sources again."""
        self.start_loading()

    def artifacts(self) -> list[Artifact]:
        """Every loaded artifact, in load order (for tests and exports)."""
        return [row.artifact for row in self.rows if row.artifact is not None]
