"""The browser's table (`BrowserTable`), its column fitting and key bindings (its cells:
`browser_cells`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual._two_way_dict import TwoWayDict
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.reactive import Reactive
from textual.strip import Strip
from textual.widgets import DataTable
from textual.widgets.data_table import CellDoesNotExist, DuplicateKey, Row, RowKey

from inspector.tui.screens.browser_cells import ID_MIN, cell_width

#: Columns that give way to the id when it has less than its goal, in order: mild steps
#: first, then the least useful columns, each to the narrowest content width given
#: (0: only its padding is left).
GIVE_WAY: tuple[tuple[str, int], ...] = (
    ("outcome", 20),
    ("session", 14),
    ("retries", 0),
    ("reduction", 0),
    ("processor", 8),
    ("session", 10),
    ("outcome", 14),
    ("time", 5),  # "11-29 18:07" wraps to its date
)


def fit_columns(table: DataTable[Any]) -> bool:
    """Give the id column the width the others leave (up to its whole length, so nothing is
    elided while there is room); when that is under a quarter of the width (`ID_MIN` at
    least), the columns of `GIVE_WAY` are narrowed first. True when a width changed."""
    columns = {str(column.key.value): column for column in table.ordered_columns}
    id_column = columns.get("title")
    available = table.scrollable_content_region.width
    if id_column is None or available <= 0:
        return False
    pad = 2 * table.cell_padding
    widths = {key: column.content_width for key, column in columns.items()}
    wanted = max(id_column.content_width, id_column.label.cell_len)
    goal = min(wanted, max(ID_MIN, available // 4))
    room = available - sum(widths[key] + pad for key in columns if key != "title") - pad
    for key, narrowest in GIVE_WAY:
        if room >= goal:
            break
        give = min(widths.get(key, 0) - narrowest, goal - room)
        if give > 0:
            widths[key] -= give
            room += give
    widths["title"] = max(min(wanted, room), min(wanted, ID_MIN))
    changed = False
    for key, column in columns.items():
        auto = key != "title" and widths[key] == column.content_width
        if (column.auto_width, column.width) != (auto, 0 if auto else widths[key]):
            column.auto_width, column.width = auto, 0 if auto else widths[key]
            changed = True
    return changed


BROWSER_BINDINGS: list[BindingType] = [
    Binding("enter", "open_row", "Open", tooltip="Open the selected context (error rows: say why)"),
    Binding("slash", "focus_filter", "Filter", tooltip="Type to filter rows by any text"),
    Binding("p", "cycle_processor", "Processor", tooltip="Show one processor at a time, then all"),
    Binding(
        "o",
        "cycle_outcome",
        "Outcome",
        tooltip="compressed / not compressed / unknown / failed / error / all",
    ),
    Binding("s", "cycle_sort", "Sort", tooltip="Sort by the next column (or click a header)"),
    Binding("R", "reverse_sort", "Reverse", show=False, tooltip="Reverse the sort order"),
    Binding("ctrl+r", "reload", "Reload", show=False, tooltip="Read the sources again"),
    Binding(
        "O",
        "focus_operations",
        "Operations",
        show=False,
        tooltip="Focus the live operations list: Enter opens an operation's detail",
    ),
    Binding(
        "ctrl+o",
        "connect",
        "Connect",
        tooltip="Attach to a running agent (gateway ws://, trajectory http://) or follow a folder",
    ),
    Binding(
        "ctrl+x",
        "disconnect",
        "Disconnect",
        show=False,
        tooltip="Close the live connection (rows it produced stay)",
    ),
    Binding("escape", "clear_filter", "Clear filter", show=False),
]


class OneLineOffsets:
    """DataTable's `_y_offsets` for a table whose rows are all one line high, without the
    list: line `y` is the row at index `y`, its line 0."""

    def __init__(self, locations: TwoWayDict[RowKey, int], count: int) -> None:
        self._locations = locations
        self._count = count

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, y: int) -> tuple[RowKey, int]:
        key = self._locations.get_key(y) if 0 <= y < self._count else None
        if key is None:
            raise IndexError(f"no row at line {y}")
        return key, 0

    def clear(self) -> None:
        """Nothing kept to forget (DataTable's `clear` empties its list)."""


class BrowserTable(DataTable[Any]):
    """The browser's table: Home/g and End/G go to the first and the last row; the rows can
    be replaced in one step (`replace_rows`) for a filter or a sort."""

    BINDINGS = [
        Binding("home,g", "scroll_top", "First row", show=False),
        Binding("end,G", "scroll_bottom", "Last row", show=False),
    ]

    #: Widget's virtual size without its layout flag: a filter key changes the row count, and
    #: a layout pass of the whole screen for it was a large part of the key.
    #: `watch_virtual_size` asks for the layout only when the scrollbars may come or go, or
    #: the width changes.
    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False, repaint=False)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        #: Row key -> the cells last measured for it (a row shown again is not measured again).
        self._measured: dict[str, Sequence[Any]] = {}
        #: Rendered cells that outlive a `replace_rows`: (cells, column, style, width, state)
        #: -> (cells, row index rendered for, lines). DataTable's own cache is keyed by its
        #: update count, so every filter key rendered every visible cell through Rich again.
        self._cell_lines: dict[tuple[Any, ...], tuple[Sequence[Any], int, Any]] = {}
        #: Row key -> (cells, its RowKey, Row and cell dict), reused while the cells are.
        self._made: dict[str, tuple[Sequence[Any], RowKey, Row, dict[Any, Any]]] = {}
        #: Whole rendered row lines that outlive a `replace_rows`, keyed by the row, its
        #: index, the cursor and hover on it and the column widths -> (cells, lines).
        self._row_lines: dict[tuple[Any, ...], tuple[Sequence[Any], Strip]] = {}
        #: The last few tables `replace_rows` built, by their row keys (a filter typed and
        #: erased comes back to one): keys -> (cells of each row, data, rows, locations).
        self._tables: dict[tuple[str, ...], tuple[tuple[Any, ...], Any, Any, Any]] = {}
        #: Called (once, soon after) when the table has next drawn its lines with rows.
        self._after_draw: Callable[[], None] | None = None
        #: Keys of the rows shown only until their real cells come (`replace_rows`'s
        #: `provisional`, a folder's placeholders): their widths count until then.
        self._provisional: set[str] = set()
        #: Column key -> the widest cell measured in any other row (`fit_to_settled`).
        self._settled: dict[Any, int] = {}

    def watch_virtual_size(self, old: Size, new: Size) -> None:
        """Scrollbars and scroll position follow a new height in place while a vertical
        scrollbar is needed before and after; anything else takes the layout pass."""
        if old.width == new.width and min(old.height, new.height) > self.size.height + 2:
            self._scroll_update(new)
            if new.height < old.height:
                self.refresh()
        else:
            self.refresh(layout=True)

    def after_next_draw(self, callback: Callable[[], None]) -> None:
        """Call `callback` once the table has next drawn rows (a first screenful shown
        before more rows are measured: measuring thousands holds the first frame)."""
        self._after_draw = callback
        self.refresh()

    def render_lines(self, crop: Region) -> list[Strip]:
        """DataTable's lines; then the `after_next_draw` callback, if one waits for rows."""
        lines = super().render_lines(crop)
        callback = self._after_draw
        if callback is not None and self.row_count:
            self._after_draw = None
            self.call_later(callback)
        return lines

    def update_cell(self, row_key: Any, column_key: Any, value: Any, **kwargs: Any) -> None:
        """Change one cell (the row's rendered cells are forgotten)."""
        self._measured.pop(str(getattr(row_key, "value", row_key)), None)
        self._made.pop(str(getattr(row_key, "value", row_key)), None)
        self._tables.clear()
        super().update_cell(row_key, column_key, value, **kwargs)

    def replace_cells(self, key: str, cells: Sequence[Any], new_key: str | None = None) -> None:
        """`replace_many` of one row."""
        self.replace_many([(key, cells, new_key)])

    def replace_many(self, rows: Sequence[tuple[str, Sequence[Any], str | None]]) -> None:
        """Give each row `key` of `rows` ((key, cells, new key)) new cells (one per
        `COLUMNS`) in place, measured as new rows' are: column widths only grow.
        `update_cell(update_width=True)` measured every cell of a column again for each new
        cell narrower than the column, so a big folder's placeholders, each replaced by its
        row as it loaded, held the screen for minutes (quadratic); `fit_to_settled` fits the
        widths once, when they are all in. One table update for them all (the console's
        options alone cost 24 us to make). A new key (not None) is the row's key from now
        on: a placeholder's place takes the key of the row that replaces it, so the table
        built after the load finds that row as it is (50,000 rows made and measured again
        held the last frame for a second)."""
        columns = [column.key for column in self.ordered_columns]
        self._tables.clear()
        measured: list[tuple[str, Sequence[Any]]] = []
        widths = self._widths()
        places: list[int] = []
        for key, cells, new_key in rows:
            row_key = RowKey(key)
            index = self._row_locations.get(row_key)
            if index is None:
                raise CellDoesNotExist(f"No row exists for row_key={key!r}.")
            places.append(index if new_key is not None and new_key != key else -1)
            if new_key is not None and new_key != key:
                if RowKey(new_key) in self._row_locations:
                    raise DuplicateKey(f"The row key {new_key!r} already exists.")
                self._row_locations.__delitem__(row_key)  # (its stubs lack __getitem__)
                del self.rows[row_key]
                self._data.pop(row_key, None)
                self._made.pop(key, None)
                self._measured.pop(key, None)
                self._new_rows.discard(row_key)
                self._provisional.discard(key)
                key, row_key = new_key, RowKey(new_key)
                self._row_locations[row_key] = index
                self.rows[row_key] = Row(row_key, 1)
            data = self._data[row_key] = dict(zip(columns, cells, strict=True))
            self._made[key] = (cells, row_key, self.rows[row_key], data)
            self._measured[key] = cells
            self._provisional.discard(key)
            measured.append((key, cells))
        self._measure_now(measured)
        if -1 in places or widths != self._widths() or self._on_screen(places):
            self._update_count += 1
            self.refresh()
        else:
            self._forget_lines(places)

    def _widths(self) -> list[int]:
        return [column.content_width for column in self.ordered_columns]

    def _on_screen(self, indexes: Sequence[int]) -> bool:
        """Whether a row at one of `indexes` is drawn (a row of margin each side)."""
        top = self.scroll_offset.y - 1
        bottom = top + self.size.height + 2
        return any(top <= index <= bottom for index in indexes)

    def _forget_lines(self, indexes: Sequence[int]) -> None:
        """Drop what DataTable keeps drawn of the rows at `indexes` by position (their lines,
        header included, and their cells by row index) and its list of rows, for rows that
        changed off screen under a new key: what it keeps by key is the new rows' already,
        and every other row's drawing stays valid. A table update instead (`_update_count`)
        made each frame draw every line again: while a 50,000-file folder loaded, its
        placeholders replaced far below the screen cost a full table drawing ~60 times a
        second."""
        header = self.header_height if self.show_header else 0
        rows = set(indexes)
        lines = {index + header for index in rows}
        kept: tuple[tuple[Any, int, set[int]], ...] = (
            (self._line_cache, 0, lines),  # (y, ...)
            (self._row_renderable_cache, 1, rows),  # (update count, row index)
        )
        for cache, at, wanted in kept:
            for key in [key for key in cache.keys() if key[at] in wanted]:  # noqa: SIM118 - no __iter__
                cache.discard(key)
        self._ordered_row_cache.clear()

    def remeasure(self) -> None:
        """Every column's width measured again from its label and every row's cells, once
        (what `update_cell(update_width=True)` did per cell), then fitted (`_fit`): now, not
        when next idle, so the table that follows is drawn with its final widths."""
        for column in self.columns.values():
            column.content_width = column.label.cell_len
        self._update_dimensions(list(self.rows))
        self._update_count += 1
        self.refresh()

    def fit_to_settled(self) -> None:
        """Each column as wide as its label and the widest cell of the rows that were never
        provisional, or replaced theirs, then fitted: `remeasure`'s widths once the
        placeholders are all replaced, without measuring a cell again (a 50,000-file
        folder's last frame waited 1.2 s for that). Rows not yet measured are measured
        when the table is next idle, as new rows are."""
        settled = self._settled
        for column in self.columns.values():
            column.content_width = max(column.label.cell_len, settled.get(column.key, 0))
        self._update_dimensions(())
        self._update_count += 1
        self.refresh()

    def add_row(self, *cells: Any, height: int | None = 1, **kwargs: Any) -> RowKey:
        """DataTable's `add_row` (the tables kept by `replace_rows` are forgotten: it adds
        to the one shown in place). Every row is one line high, which the measuring and
        the line offsets below rely on."""
        if height != 1:
            raise ValueError("the browser table's rows are one line high")
        self._tables.clear()
        return super().add_row(*cells, height=1, **kwargs)

    def remove_row(self, row_key: Any) -> None:
        """DataTable's `remove_row` (kept tables forgotten, as for `add_row`)."""
        self._tables.clear()
        super().remove_row(row_key)

    def clear(self, columns: bool = False) -> BrowserTable:
        """DataTable's `clear` (kept tables forgotten, as for `add_row`)."""
        self._tables.clear()
        self._provisional.clear()
        self._settled.clear()
        super().clear(columns)
        return self

    def _render_cell(
        self,
        row_index: int,
        column_index: int,
        base_style: Style,
        width: int,
        cursor: bool = False,
        hover: bool = False,
    ) -> Any:
        """DataTable's cell rendering, kept across row changes (the click target moved to
        the row's new index)."""
        render = super()._render_cell
        if row_index < 0 or column_index < 0:
            return render(row_index, column_index, base_style, width, cursor, hover)
        row_key = self._row_locations.get_key(row_index)
        cells = self._measured.get(str(row_key.value)) if row_key is not None else None
        if cells is None:
            return render(row_index, column_index, base_style, width, cursor, hover)
        state = (cursor, hover, self._show_hover_cursor, self._pseudo_class_state)
        key = (id(cells), column_index, base_style, width, state)
        hit = self._cell_lines.get(key)
        if hit is None or hit[0] is not cells:
            lines = render(row_index, column_index, base_style, width, cursor, hover)
        elif hit[1] == row_index:
            return hit[2]
        else:
            meta = Style.from_meta({"row": row_index, "column": column_index})
            lines = [
                [Segment(s.text, s.style + meta if s.style else meta, s.control) for s in line]
                for line in hit[2]
            ]
        if len(self._cell_lines) > 20_000:
            self._cell_lines.clear()
        self._cell_lines[key] = (cells, row_index, lines)
        return lines

    def _update_dimensions(self, new_rows: Any) -> None:
        """DataTable's measuring of new rows (`cell_width`), then the id column fitted to
        what is left. DataTable's own pass also lays out labelled and auto-height rows,
        which this table never has; the console's options are made once per pass, not once
        per cell, and the height is the row count (every row is one line): a 5,000-file
        folder's load spent most of its time in those two."""
        keys = [column.key for column in self.ordered_columns]
        data, locations = self._data, self._row_locations
        self._measure(
            (row_key.value, [cells.get(key) for key in keys])
            for row_key in new_rows
            # a row removed before the table was next idle is not measured
            if (cells := data.get(row_key)) is not None and row_key in locations
        )
        data_width = sum(column.get_render_width(self) for column in self.columns.values())
        header_height = self.header_height if self.show_header else 0
        self.virtual_size = Size(
            data_width + self._row_label_column_width, self._total_row_height + header_height
        )
        self._fit()

    @property
    def _y_offsets(self) -> OneLineOffsets:  # type: ignore[override]
        """DataTable's (row key, line in row) of each line, for rows one line high: line
        `y` is row `y`. DataTable rebuilds its list over every row at each table update."""
        return OneLineOffsets(self._row_locations, len(self.rows))

    @property
    def _total_row_height(self) -> int:
        """The lines of all rows: one a row."""
        return len(self.rows)

    def on_resize(self, event: events.Resize) -> None:
        """Fit the columns to the new width."""
        self._fit()

    def _fit(self) -> None:
        if fit_columns(self):
            width = sum(column.get_render_width(self) for column in self.columns.values())
            self.virtual_size = Size(width, self.virtual_size.height)
            self._update_count += 1
            self._line_cache.clear()
            self.refresh()

    def _render_line(self, y: int, x1: int, x2: int, base_style: Style) -> Strip:
        """DataTable's line `y`, kept across row changes: a row shown again at the same
        index with the same cells, widths, cursor and hover is not rendered again (DataTable's
        own caches are dropped at every `replace_rows`)."""
        render = super()._render_line
        try:
            row_key, line_no = self._get_offsets(y)
        except LookupError:
            return render(y, x1, x2, base_style)
        index = self._row_locations.get(row_key)
        cells = self._measured.get(str(row_key.value)) if index is not None else None
        if cells is None or index is None:
            return render(y, x1, x2, base_style)
        cursor, hover = self.cursor_coordinate, self.hover_coordinate
        key = (
            row_key.value,
            index,
            line_no,
            x1,
            x2,
            base_style,
            cursor if cursor.row == index else None,
            hover if hover.row == index else None,
            self.cursor_type,
            self.show_cursor,
            self._show_hover_cursor,
            self._pseudo_class_state,
            self.size.width,
            self._row_label_column_width,
            tuple(column.get_render_width(self) for column in self.ordered_columns),
        )
        hit = self._row_lines.get(key)
        if hit is not None and hit[0] is cells:
            return hit[1]
        strip = render(y, x1, x2, base_style)
        if len(self._row_lines) > 20_000:
            self._row_lines.clear()
        self._row_lines[key] = (cells, strip)
        return strip

    @property
    def row_keys(self) -> list[str]:
        """The keys of the rows shown, top to bottom."""
        return [str(row.key.value) for row in self.ordered_rows]

    def add_cells(self, key: str, cells: Sequence[Any]) -> None:
        """Add one row at the bottom (`add_row`), remembering its cells as measured."""
        self.add_row(*cells, key=key)
        self._measured[key] = cells

    def append_rows(
        self, rows: Sequence[tuple[str, Sequence[Any]]], provisional: Iterable[str] = ()
    ) -> None:
        """Add `rows` ((key, cells), one cell per column) at the bottom in one step: the end
        state of `add_cells` for each, with one table update. `add_row` sets the cursor (its
        validation and watchers) and asks for an idle pass at every row: ~40 us a row, a
        tenth of the UI thread's work while a 50,000-file folder loads. `provisional`: as
        for `replace_rows`."""
        if not rows:
            return
        self._provisional.update(provisional)
        if len(rows) == 1:
            self.add_cells(*rows[0])
            return
        columns = [column.key for column in self.ordered_columns]
        first = self.row_count
        self._tables.clear()
        made = self._made
        for offset, (key, cells) in enumerate(rows):
            row_key = RowKey(key)
            if row_key in self._row_locations:
                raise DuplicateKey(f"The row key {row_key!r} already exists.")
            self._row_locations[row_key] = first + offset
            data = self._data[row_key] = dict(zip(columns, cells, strict=True))
            row = self.rows[row_key] = Row(row_key, 1)
            made[key] = (cells, row_key, row, data)
            self._measured[key] = cells
        widths = self._widths()
        self._measure_now(rows)
        self.cursor_coordinate = self.cursor_coordinate
        if first == 0 and self.columns and self.show_cursor and self.cursor_type != "none":
            self._highlight_cursor()  # a cell to highlight where there was none
        if widths != self._widths():  # new rows on new lines: no line drawn changes else
            self._update_count += 1
        self.check_idle()

    def _measure_now(self, rows: Sequence[tuple[str, Sequence[Any]]]) -> None:
        """Measure `rows`' cells at once; the table's size and fit follow when it is next
        idle. A load's rows waited for the table's idle, which a busy screen put off: a
        50,000-file folder's were measured in a few passes of up to 1.3 s each, each a
        frozen screen; now each batch's rows cost their batch."""
        self._measure(rows)
        self._require_update_dimensions = True

    def _measure(self, rows: Iterable[tuple[str, Sequence[Any]]]) -> None:
        """Widen each column to the widest of `rows`' cells ((key, cells in column order),
        None for a missing cell) and, for rows not provisional, its settled width."""
        console = self.app.console
        options = console.options
        columns = self.ordered_columns
        settled, provisional = self._settled, self._provisional
        for key, cells in rows:
            counted = key not in provisional
            for column, cell in zip(columns, cells, strict=False):
                width = 0 if cell is None else cell_width(cell, console, options)
                if width > column.content_width:
                    column.content_width = width
                if counted and width > settled.get(column.key, 0):
                    settled[column.key] = width

    def replace_rows(
        self, rows: Sequence[tuple[str, Sequence[Any]]], provisional: Iterable[str] = ()
    ) -> None:
        """Show exactly `rows` ((key, cells), top to bottom), in one step.

        The same end state as `clear()` then `add_row` for each (cursor and scroll kept,
        clamped), in O(rows) with no per-row events: `add_row` costs ~0.2 ms a row and
        every added row is measured again, so a filter key in a 5,000-row browser took
        seconds. Only cells never measured before are measured (column widths only grow,
        as with `add_row`). `provisional`: the keys of rows shown until `replace_cells`
        gives them their real cells (their widths do not count for `fit_to_settled`).
        """
        self._provisional.update(provisional)
        self._clear_caches()
        keys = tuple(key for key, _ in rows)
        kept = self._tables.get(keys)
        if kept is not None and all(
            a is b for a, b in zip(kept[0], (cells for _, cells in rows), strict=True)
        ):
            _, data, table_rows, row_locations = kept
        else:
            data, table_rows, row_locations = self._build_rows(rows)
            if len(self._tables) >= 4:
                self._tables.pop(next(iter(self._tables)))
            self._tables[keys] = (
                tuple(cells for _, cells in rows),
                data,
                table_rows,
                row_locations,
            )
        self._data = data
        self.rows = table_rows
        self._row_locations = row_locations
        self._require_update_dimensions = True
        self._update_count += 1
        self.cursor_coordinate = self.cursor_coordinate  # clamped to the new rows
        self.refresh()
        self.check_idle()

    def _build_rows(
        self, rows: Sequence[tuple[str, Sequence[Any]]]
    ) -> tuple[dict[RowKey, dict[Any, Any]], dict[RowKey, Row], TwoWayDict[RowKey, int]]:
        """DataTable's row structures for `rows` (row objects reused while their cells are;
        cells never measured are marked for measuring)."""
        columns = [column.key for column in self.ordered_columns]
        data: dict[RowKey, dict[Any, Any]] = {}
        table_rows: dict[RowKey, Row] = {}
        locations: dict[RowKey, int] = {}
        made = self._made
        for index, (key, cells) in enumerate(rows):
            entry = made.get(key)
            if entry is None or entry[0] is not cells:  # a new row, or new cells for it
                row_key = RowKey(key)
                entry = (cells, row_key, Row(row_key, 1), dict(zip(columns, cells, strict=False)))
                made[key] = entry
            row_key = entry[1]
            locations[row_key] = index
            table_rows[row_key] = entry[2]
            data[row_key] = entry[3]
            if self._measured.get(key) is not cells:
                self._measured[key] = cells
                self._new_rows.add(row_key)
        return data, table_rows, TwoWayDict(locations)
