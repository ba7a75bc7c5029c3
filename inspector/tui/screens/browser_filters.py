"""The browser's filter and sort: text filter, processor and outcome filters, sort column and
order, and the table they leave. A mixin of BrowserScreen (which owns the rows and the filter
state); nothing here reads a file.

Incremental: the rows are sorted once per change of the rows or of the sort (a filter key
only filters that order), each row's cells are built once, a filter that leaves the same
rows leaves the table alone, and the keys typed before the table is redrawn are coalesced
into one redraw (the last text wins).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.widgets import DataTable, Input, Static

from inspector.render.styles import Palette
from inspector.tui.rows import OUTCOMES, BrowserRow
from inspector.tui.screens.browser_cells import COLUMNS, row_cells, short_processor, sort_value
from inspector.tui.screens.browser_table import BrowserTable

#: Rows added to the table at a time when a long listing is shown (`show_rest`).
LISTING_STEP = 1000


def filters_text(
    processor: str | None, outcome: str | None, column: str, reverse: bool, shown: str
) -> Text:
    """The filter line: processor, outcome, sort and rows shown."""
    text = Text()
    text.append(" processor ", "dim")
    text.append(short_processor(processor) if processor else "all", "bold")
    text.append("  outcome ", "dim")
    text.append(outcome or "all", "bold")
    text.append("  sort ", "dim")
    text.append(column + (" ↑" if reverse else ""), "bold")
    text.append(f"  rows {shown}", "dim")
    return text


class BrowserFilters:
    """`/`, Esc, `p`, `o`, `s` and `R` of the browser, and the filtered, sorted table."""

    rows: list[BrowserRow]
    pending: dict[str, BrowserRow]
    shown: list[BrowserRow]
    _row_index: dict[int, int]
    text_filter: str
    processor_filter: str | None
    outcome_filter: str | None
    sort_column: str
    sort_reverse: bool

    if TYPE_CHECKING:  # provided by the screen; declared for type checkers

        @property
        def palette(self) -> Palette: ...

        def query_one(self, selector: Any, expect_type: Any = None) -> Any: ...

        def call_later(self, callback: Any, *args: Any, **kwargs: Any) -> bool: ...

    #: (rows and placeholders, sort column, reverse) of `_sorted`.
    _sorted_for: tuple[tuple[BrowserRow, ...], str, bool] | None = None
    _sorted: list[BrowserRow]
    #: Row key -> (the row, its cells), built once per row object.
    _cells: dict[int, tuple[BrowserRow, list[Any]]]
    #: Row key -> (the row, its search text), built once per row object.
    _search: dict[int, tuple[BrowserRow, str]]
    #: True while a filter redraw is queued (keys typed meanwhile join it).
    _filter_queued = False

    def cells_of(self, row: BrowserRow) -> list[Any]:
        """The table cells of `row` (built once per row object and palette)."""
        cache = self.__dict__.setdefault("_cells", {})
        cached = cache.get(row.key)
        if cached is None or cached[0] is not row:
            cached = (row, row_cells(row, self.palette))
            cache[row.key] = cached
        return cached[1]

    def drop_cells(self) -> None:
        """Forget the built cells (the palette changed)."""
        self.__dict__.pop("_cells", None)

    def _search_text(self, row: BrowserRow) -> str:
        """`row.search_text`, built once per row object."""
        cache = self.__dict__.setdefault("_search", {})
        cached = cache.get(row.key)
        if cached is None or cached[0] is not row:
            cached = (row, row.search_text)
            cache[row.key] = cached
        return str(cached[1])

    def _visible(self, row: BrowserRow) -> bool:
        if self.text_filter and self.text_filter not in self._search_text(row):
            return False
        if self.processor_filter and row.processor != self.processor_filter:
            return False
        return not (self.outcome_filter and row.outcome_kind != self.outcome_filter)

    def _entries(self) -> list[tuple[BrowserRow, str]]:
        """(row, search text) of every row in the sort order, built once per order."""
        ordered = self.sorted_rows()
        cached = self.__dict__.get("_entries_for")
        if cached is None or cached[0] is not ordered:
            cached = (ordered, [(row, self._search_text(row)) for row in ordered])
            self.__dict__["_entries_for"] = cached
            self.__dict__.pop("_last_filter", None)
        return cached[1]

    def filtered_rows(self) -> list[BrowserRow]:
        """The rows the filters leave, in the sort order. A text that extends the last one
        (a key typed) filters the last result, not every row again."""
        text, processor, outcome = self.text_filter, self.processor_filter, self.outcome_filter
        if not text:  # no row's search text needed (0.3 s of a 50,000-file folder's end)
            self.__dict__.pop("_last_filter", None)
            return [
                row
                for row in self.sorted_rows()
                if (not processor or row.processor == processor)
                and (not outcome or row.outcome_kind == outcome)
            ]
        entries = self._entries()
        last = self.__dict__.get("_last_filter")
        base = entries
        if last is not None and last[1:3] == (processor, outcome) and text.startswith(last[0]):
            base = last[3]
        kept = [
            entry
            for entry in base
            if (not text or text in entry[1])
            and (not processor or entry[0].processor == processor)
            and (not outcome or entry[0].outcome_kind == outcome)
        ]
        self.__dict__["_last_filter"] = (text, processor, outcome, kept)
        return [entry[0] for entry in kept]

    def sorted_rows(self) -> list[BrowserRow]:
        """Every row and placeholder in the sort order (sorted again only when they changed)."""
        source = (*self.rows, *self.pending.values())
        key = (source, self.sort_column, self.sort_reverse)
        if self._sorted_for is None or not _same_rows(self._sorted_for, key):
            column = self.sort_column
            self._sorted = sorted(
                source, key=lambda row: sort_value(row, column), reverse=self.sort_reverse
            )
            self._sorted_for = key
        return self._sorted

    def filter_typed(self, value: str) -> None:
        """The filter text changed: redraw once the keys already typed are in."""
        self.text_filter = value.strip().lower()
        if not self._filter_queued:
            self._filter_queued = True
            self.call_later(self._filter_due)

    def _filter_due(self) -> None:
        self._filter_queued = False
        self._refresh_table()

    def _refresh_table(self, limit: int | None = None) -> None:
        """Apply filter and sort to the table, keeping the cursor on the same row (`limit`:
        only the first rows, a screenful drawn before the rest is measured)."""
        table = self.query_one("#table", DataTable)
        current = self.shown[table.cursor_row] if 0 <= table.cursor_row < len(self.shown) else None
        rows = self.filtered_rows()
        if limit is not None:
            rows = rows[:limit]
        same = len(rows) == len(self.shown) and all(
            a is b for a, b in zip(rows, self.shown, strict=True)
        )
        if not same:
            self.shown = rows
            self._row_index = {row.key: index for index, row in enumerate(rows)}
            if isinstance(table, BrowserTable):
                table.replace_rows(
                    [(str(row.key), self.cells_of(row)) for row in rows],
                    provisional=self._placeholder_keys(rows),
                )
            else:
                table.clear()
                for row in rows:
                    table.add_row(*self.cells_of(row), key=str(row.key))
            if current is not None and current.key in self._row_index:
                table.move_cursor(row=self._row_index[current.key], animate=False)
        total = len(self.rows) + len(self.pending)
        shown = f"{len(rows)} of {total}" if len(rows) != total else f"{len(rows)}"
        self.query_one("#filters", Static).update(self._filters_line(shown), layout=False)

    def _placeholder_keys(self, rows: Sequence[BrowserRow]) -> list[str]:
        """The table keys of the placeholders among `rows` (provisional rows of the table)."""
        pending = self.pending
        return [str(row.key) for row in rows if pending.get(row.source) is row] if pending else []

    async def show_rest(self, wanted: Callable[[], bool]) -> None:
        """The filtered rows after those shown, added `LISTING_STEP` at a time with the event
        loop let through between steps: keys are answered meanwhile (a 50,000-file folder's
        placeholders, added at once, held the app for 2 s). The table is refreshed whole
        instead when the rows shown are not the first filtered ones; a sort or filter that
        redraws it meanwhile shows every row itself, and the steps end, as they do once
        `wanted()` is false."""
        shown, rows = self.shown, self.filtered_rows()
        table = self.query_one("#table", DataTable)
        head = len(rows) >= len(shown) and all(a is b for a, b in zip(rows, shown, strict=False))
        if isinstance(table, BrowserTable) and head:
            for start in range(len(shown), len(rows), LISTING_STEP):
                await asyncio.sleep(0)
                if self.shown is not shown or not wanted():
                    break
                step = rows[start : start + LISTING_STEP]
                for row in step:
                    self._row_index[row.key] = len(shown)
                    shown.append(row)
                table.append_rows(
                    [(str(row.key), self.cells_of(row)) for row in step],
                    provisional=self._placeholder_keys(step),
                )
        if wanted():
            self._refresh_table()  # the counts of the filter line, or every row

    def _filters_line(self, shown: str) -> Text:
        return filters_text(
            self.processor_filter, self.outcome_filter, self.sort_column, self.sort_reverse, shown
        )

    def action_focus_filter(self) -> None:
        """Type to filter rows."""
        self.query_one("#filter", Input).focus()

    def action_clear_filter(self) -> None:
        """Stop rebuilding the big dump in hand (`BrowserOpening`) or loading the big file
        in hand (`BrowserLoading`) if there is one, else clear the text filter and go back
        to the table."""
        for name in ("cancel_rebuild", "cancel_read"):
            cancel = getattr(self, name, None)
            if cancel is not None and cancel():
                return
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


def _same_rows(
    old: tuple[tuple[BrowserRow, ...], str, bool], new: tuple[tuple[BrowserRow, ...], str, bool]
) -> bool:
    """The same row objects in the same order, and the same sort."""
    return (
        old[1:] == new[1:]
        and len(old[0]) == len(new[0])
        and all(a is b for a, b in zip(old[0], new[0], strict=True))
    )
