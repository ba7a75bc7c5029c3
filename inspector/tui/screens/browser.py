"""BrowserScreen: every artifact and load error found in the sources, newest first.

A thread worker reads the sources through the injected loader and posts batches of rows
(`RowsLoaded`, then `LoadFinished`); the screen owns the rows, the filter and the sort.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message as TextualMessage
from textual.widgets import DataTable, Footer, Input, ProgressBar, Static
from textual.worker import get_current_worker

from inspector.core.artifact import Artifact, LoadError, LoadResult
from inspector.core.tokens import TokenCounter
from inspector.tui.rows import OUTCOMES, BrowserRow, artifact_row, error_row, pending_row
from inspector.tui.screens.base import InspectorScreen

Loader = Callable[[Iterable[str]], Iterable[LoadResult]]

#: (column key, header, sort key)
COLUMNS: tuple[tuple[str, str], ...] = (
    ("time", "time"),
    ("processor", "processor"),
    ("outcome", "outcome"),
    ("tokens", "tokens before→after"),
    ("reduction", "cut"),
    ("retries", "retries"),
    ("session", "session"),
    ("title", "id / source"),
)
OUTCOME_WIDTH = 28
OUTCOME_STYLES = {
    "compressed": "green",
    "not compressed": "yellow",
    "failed": "red",
    "error": "bold red",
}
BATCH_SECONDS = 0.15


def _short_processor(name: str) -> str:
    return name.removesuffix("Compressor") or name


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _sort_value(row: BrowserRow, column: str) -> Any:
    """A comparable key for `column`; missing values sort last."""
    if column == "time":
        return (row.timestamp is None, -(row.timestamp or 0.0), row.key)
    if column == "tokens":
        return (row.before is None, -(row.before or 0), row.key)
    if column == "reduction":
        return (row.reduction is None, -(row.reduction or 0.0), row.key)
    if column == "retries":
        return (row.retries is None, -(row.retries or 0), row.key)
    return (getattr(row, column) == "", str(getattr(row, column)).lower(), row.key)


class BrowserScreen(InspectorScreen[None]):
    """The table of dumps, debug sessions and contexts, with filters and error rows."""

    BINDINGS = [
        Binding(
            "enter", "open_row", "Open", tooltip="Open the selected context (error rows: say why)"
        ),
        Binding("slash", "focus_filter", "Filter", tooltip="Type to filter rows by any text"),
        Binding(
            "p", "cycle_processor", "Processor", tooltip="Show one processor at a time, then all"
        ),
        Binding(
            "o",
            "cycle_outcome",
            "Outcome",
            tooltip="compressed / not compressed / failed / error / all",
        ),
        Binding("s", "cycle_sort", "Sort", tooltip="Sort by the next column (or click a header)"),
        Binding("R", "reverse_sort", "Reverse", show=False, tooltip="Reverse the sort order"),
        Binding("ctrl+r", "reload", "Reload", show=False, tooltip="Read the sources again"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
    ]

    class RowsLoaded(TextualMessage):
        """The loading worker read some more rows."""

        def __init__(self, rows: Sequence[BrowserRow], seen: int) -> None:
            super().__init__()
            self.rows = list(rows)
            self.seen = seen

    class EntriesListed(TextualMessage):
        """The files about to be read, listed by name before any is parsed."""

        def __init__(self, rows: Sequence[BrowserRow]) -> None:
            super().__init__()
            self.rows = list(rows)

    class LoadFinished(TextualMessage):
        """The loading worker read every source."""

        def __init__(self, seen: int, seconds: float) -> None:
            super().__init__()
            self.seen = seen
            self.seconds = seconds

    def __init__(
        self,
        sources: Sequence[str],
        overrides: dict[str, Any],
        counters: dict[str, TokenCounter],
        loader: Loader,
    ) -> None:
        super().__init__()
        self.sources = list(sources)
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
        #: Row key -> position in `shown`, to update a placeholder's cells in place.
        self._row_index: dict[int, int] = {}

    def compose(self) -> ComposeResult:
        """Filter bar, progress, the table, the footer."""
        with Horizontal(id="browser-top"):
            yield Input(placeholder="filter text (/)", id="filter", compact=True)
            yield Static(id="filters")
        with Horizontal(id="load-line"):
            yield ProgressBar(total=None, show_eta=False, show_percentage=False, id="load-progress")
            yield Static("", id="load-status")
        yield DataTable(id="table", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        """Set up the columns and start loading."""
        table = self.query_one("#table", DataTable)
        for key, header in COLUMNS:
            table.add_column(header, key=key)
        self._show_filters()
        self.start_loading()
        table.focus()

    # --- loading -------------------------------------------------------------------------

    def start_loading(self) -> None:
        """(Re)load every source in the background; list the files by name first."""
        self.rows.clear()
        self.pending.clear()
        self.reading = True
        self.list_files()
        self.query_one("#load-line").display = True
        self.query_one("#load-status", Static).update(f"reading {', '.join(self.sources)} …")
        self._refresh_table()
        self.load_sources()

    @work(thread=True, exclusive=True, group="entries", exit_on_error=False)
    def list_files(self) -> None:
        """List the files by name and cheap header fields so rows show before anything is parsed."""
        from inspector.sources.entries import list_entries

        entries = list_entries(self.sources)
        self.post_message(
            self.EntriesListed([pending_row(-1 - i, e) for i, e in enumerate(entries)])
        )

    def on_browser_screen_entries_listed(self, message: EntriesListed) -> None:
        """Show placeholder rows for files the load has not reached yet."""
        if not self.reading:
            return
        loaded = {row.source for row in self.rows}
        self.pending = {row.title: row for row in message.rows if row.title not in loaded}
        self._refresh_table()

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def load_sources(self) -> None:
        """Read the sources; post rows in batches so the first ones show at once."""
        worker = get_current_worker()
        started = time.monotonic()
        batch: list[BrowserRow] = []
        last_post = started
        seen = 0
        for item in self.loader(self.sources):
            if worker.is_cancelled:
                return
            batch.append(self._row_for(seen, item))
            seen += 1
            now = time.monotonic()
            if now - last_post >= BATCH_SECONDS:
                self.post_message(self.RowsLoaded(batch, seen))
                batch, last_post = [], now
        if batch:
            self.post_message(self.RowsLoaded(batch, seen))
        store = self.counters["tiktoken_cl100k"].store
        if store is not None and hasattr(store, "flush"):
            store.flush()
        self.post_message(self.LoadFinished(seen, time.monotonic() - started))

    def _row_for(self, key: int, item: LoadResult) -> BrowserRow:
        """A row for one loaded item; an evaluation failure becomes an error row."""
        if isinstance(item, LoadError):
            return error_row(key, item)
        try:
            return artifact_row(key, item, self.overrides, self.counters)
        except Exception as error:  # noqa: BLE001 - a bad artifact must not stop the load
            return error_row(key, LoadError(item.source, f"could not evaluate: {error}", item.id))

    def on_browser_screen_rows_loaded(self, message: RowsLoaded) -> None:
        """Append the visible new rows (O(batch)); the full sort waits for the end of the load."""
        self.rows.extend(message.rows)
        new_rows = self._adopt_pending(message.rows) if self.pending else message.rows
        self.query_one("#load-status", Static).update(
            f"read {message.seen} items … (sorted when done)", layout=False
        )
        table = self.query_one("#table", DataTable)
        for row in new_rows:
            if self._visible(row):
                self._row_index[row.key] = len(self.shown)
                self.shown.append(row)
                table.add_row(*self._cells(row), key=str(row.key))
        self.query_one("#filters", Static).update(
            self._filters_text(str(len(self.shown))), layout=False
        )

    def _adopt_pending(self, rows: Sequence[BrowserRow]) -> list[BrowserRow]:
        """Show the first real row of each file in its placeholder's place; return the rest.

        Cells are updated in place: removing rows one by one from a large table is quadratic.
        """
        table = self.query_one("#table", DataTable)
        rest: list[BrowserRow] = []
        for row in rows:
            placeholder = self.pending.pop(row.source, None)
            index = self._row_index.pop(placeholder.key, None) if placeholder else None
            if placeholder is None or index is None:
                rest.append(row)
                continue
            self.shown[index] = row
            self._row_index[row.key] = index
            for (column, _), cell in zip(COLUMNS, self._cells(row), strict=True):
                table.update_cell(str(placeholder.key), column, cell)
        return rest

    def on_browser_screen_load_finished(self, message: LoadFinished) -> None:
        """Hide the progress line and say what was found."""
        self.reading = False
        self.pending.clear()
        self._refresh_table()
        errors = sum(1 for row in self.rows if row.error is not None)
        contexts = len(self.rows) - errors
        self.query_one("#load-line").display = False
        summary = f"{contexts} artifacts, {errors} unreadable, in {message.seconds:.1f} s"
        self.sub_title = summary
        self.app.sub_title = summary
        if not self.rows:
            self.notify("nothing found in " + ", ".join(self.sources), severity="warning")

    # --- filter and sort ----------------------------------------------------------------

    def _visible(self, row: BrowserRow) -> bool:
        if self.text_filter and self.text_filter not in row.search_text:
            return False
        if self.processor_filter and row.processor != self.processor_filter:
            return False
        return not (self.outcome_filter and row.outcome_kind != self.outcome_filter)

    def _refresh_table(self) -> None:
        """Apply filter and sort and rebuild the table, keeping the cursor on the same row."""
        table = self.query_one("#table", DataTable)
        current_key = (
            self.shown[table.cursor_row].key if 0 <= table.cursor_row < len(self.shown) else None
        )
        rows = [row for row in [*self.rows, *self.pending.values()] if self._visible(row)]
        rows.sort(key=lambda row: _sort_value(row, self.sort_column), reverse=self.sort_reverse)
        self.shown = rows
        self._row_index = {row.key: index for index, row in enumerate(rows)}
        table.clear()
        for row in rows:
            table.add_row(*self._cells(row), key=str(row.key))
        if current_key is not None:
            for index, row in enumerate(rows):
                if row.key == current_key:
                    table.move_cursor(row=index, animate=False)
                    break
        total = len(self.rows) + len(self.pending)
        shown = f"{len(rows)} of {total}" if len(rows) != total else f"{len(rows)}"
        self.query_one("#filters", Static).update(self._filters_text(shown))

    def _cells(self, row: BrowserRow) -> list[Any]:
        style = OUTCOME_STYLES.get(row.outcome_kind, "")
        if row.before is not None and row.after is not None:
            tokens = f"{row.before:,}→{row.after:,}"
        elif row.before is not None:
            tokens = f"{row.before:,}"
        else:
            tokens = ""
        return [
            row.time[5:16] if row.time else "",
            _short_processor(row.processor),
            Text(_clip(row.outcome, OUTCOME_WIDTH), style),
            Text(tokens, justify="right"),
            Text(f"{row.reduction:.0%}" if row.reduction is not None else "", justify="right"),
            Text(str(row.retries) if row.retries is not None else "", justify="right"),
            row.session,
            row.title if row.error is None else row.error.source,
        ]

    def _filters_text(self, shown: str) -> Text:
        text = Text()
        text.append(" processor ", "dim")
        text.append(
            _short_processor(self.processor_filter) if self.processor_filter else "all", "bold"
        )
        text.append("  outcome ", "dim")
        text.append(self.outcome_filter or "all", "bold")
        text.append("  sort ", "dim")
        text.append(self.sort_column + (" ↑" if self.sort_reverse else ""), "bold")
        text.append(f"  rows {shown}", "dim")
        return text

    def _show_filters(self) -> None:
        self.query_one("#filters", Static).update(self._filters_text(str(len(self.rows))))

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.text_filter = event.value.strip().lower()
        self._refresh_table()

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

    def action_open_row(self) -> None:
        """Open the selected artifact in the context view (an error row shows its reason)."""
        row = self.selected_row()
        if row is None:
            return
        if row.outcome_kind == "pending":
            self.notify(f"{row.title} is still being read", title="loading")
            return
        if row.error is not None:
            where = f" at {row.error.where}" if row.error.where else ""
            self.notify(
                f"{row.error.source}{where}: {row.error.error}",
                title="unreadable",
                severity="error",
            )
            return
        from inspector.tui.screens.context import ContextScreen

        self.app.push_screen(ContextScreen(row, self.counters))

    def action_focus_filter(self) -> None:
        """Type to filter rows."""
        self.query_one("#filter", Input).focus()

    def action_clear_filter(self) -> None:
        """Clear the text filter and go back to the table."""
        box = self.query_one("#filter", Input)
        box.value = ""
        self.query_one("#table", DataTable).focus()

    def _cycle(self, current: str | None, choices: Sequence[str]) -> str | None:
        options: list[str | None] = [None, *choices]
        index = options.index(current) if current in options else 0
        return options[(index + 1) % len(options)]

    def action_cycle_processor(self) -> None:
        """Show only one processor (cycles through those found, then all)."""
        found = sorted({row.processor for row in self.rows if row.processor})
        self.processor_filter = self._cycle(self.processor_filter, found)
        self._refresh_table()

    def action_cycle_outcome(self) -> None:
        """Show only one outcome: compressed, not compressed, failed, error, then all."""
        self.outcome_filter = self._cycle(self.outcome_filter, OUTCOMES)
        self._refresh_table()

    def action_cycle_sort(self) -> None:
        """Sort by the next column."""
        keys = [key for key, _ in COLUMNS]
        self.sort_column = keys[(keys.index(self.sort_column) + 1) % len(keys)]
        self.sort_reverse = False
        self._refresh_table()

    def action_reverse_sort(self) -> None:
        """Reverse the sort order."""
        self.sort_reverse = not self.sort_reverse
        self._refresh_table()

    def action_reload(self) -> None:
        """Read the sources again."""
        self.start_loading()

    def artifacts(self) -> list[Artifact]:
        """Every loaded artifact, in load order (for tests and exports)."""
        return [row.artifact for row in self.rows if row.artifact is not None]
