"""The browser table's own measuring and line offsets agree with DataTable's.

`BrowserTable._update_dimensions` measures new rows with the console's options made once
per pass (`cell_width`) and takes every row as one line high (`OneLineOffsets`,
`_total_row_height`): DataTable's pass made the options anew for every cell and rebuilt a
list over every row at each table update, most of a 5,000-file folder's fill. The same
cells in a plain DataTable must give the same column widths, height and line -> row map;
and a cell is never read as Rich markup (a session holding `[/]` raised MarkupError while
the table measured it, and one holding `[bold]` lost those characters).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from inspector.tui.rows import BrowserRow
from inspector.tui.screens.browser_cells import COLUMNS, row_cells
from inspector.tui.screens.browser_table import BrowserTable


def _rows() -> list[BrowserRow]:
    """Rows with empty, wide (CJK, emoji), long and markup-like values."""
    rows = []
    values = [
        ("", "", "", "", None, None, None),
        ("2026-11-29 18:07:00", "CurrentRoundCompressor", "ops-42", "a/b/c_dump", 7294, 3841, 2),
        ("2026-11-29 18:08:00", "压缩器", "会话-七", "标识" * 9, 12, 12, 0),
        ("2026-11-29 18:09:00", "[bold]x", "a[/]b", "[/x] :smile: 🙂" * 3, 10**9, 0, 11),
        ("2026-11-29 18:10:00", "DialogueCompressor", "s" * 40, "x" * 90, None, None, None),
    ]
    for key, (time, processor, session, title, before, after, retries) in enumerate(values):
        rows.append(
            BrowserRow(
                key=key,
                artifact=None,
                error=None,
                time=time,
                processor=processor,
                session=session,
                outcome="not compressed: 3,600 < 6,130 (tokens under the threshold)" * (key % 2),
                outcome_kind="not compressed",
                before=before,
                after=after,
                reduction=None if before is None else 0.47,
                retries=retries,
                title=title,
            )
        )
    return rows


class _Tables(App[None]):
    def compose(self) -> ComposeResult:
        yield BrowserTable(id="ours")
        yield DataTable(id="plain")


async def test_widths_height_and_offsets_match_datatable() -> None:
    app = _Tables()
    async with app.run_test(size=(200, 40)) as pilot:
        ours = app.query_one("#ours", BrowserTable)
        plain: DataTable[Any] = app.query_one("#plain", DataTable)
        for table in (ours, plain):
            for key, label in COLUMNS:
                table.add_column(label, key=key)
        rows = _rows()
        for row in rows:
            cells = row_cells(row)
            ours.add_cells(str(row.key), cells)
            plain.add_row(*cells, key=str(row.key))
        # replaced in place as a placeholder is: widths only grow, like a new row's
        swapped = rows[1]
        swapped.session = "a much longer session name"
        ours.replace_cells(str(swapped.key), row_cells(swapped))
        plain.remove_row(str(swapped.key))
        plain.add_row(*row_cells(swapped), key=str(swapped.key))
        await pilot.pause()
        await pilot.pause()
        assert {str(c.key.value): c.content_width for c in ours.columns.values()} == {
            str(c.key.value): c.content_width for c in plain.columns.values()
        }
        assert ours.virtual_size.height == plain.virtual_size.height == len(rows) + 1
        assert len(ours._y_offsets) == len(plain._y_offsets) == len(rows)
        # line y is the row at index y (plain's order differs only for the re-added row)
        for y in range(len(rows)):
            row_key, line = ours._y_offsets[y]
            assert line == 0 and ours._row_locations.get(row_key) == y
        for y in (-1, len(rows)):
            try:
                ours._y_offsets[y]
            except IndexError:
                pass
            else:
                raise AssertionError(f"line {y} has no row")


async def test_markup_like_values_are_shown_as_they_are() -> None:
    app = _Tables()
    async with app.run_test(size=(200, 10)) as pilot:
        ours = app.query_one("#ours", BrowserTable)
        for key, label in COLUMNS:
            ours.add_column(label, key=key)
        row = _rows()[3]
        cells = row_cells(row)
        assert all(isinstance(cell, Text) for cell in cells)
        ours.add_cells("3", cells)
        await pilot.pause()
        await pilot.pause()
        line = ours.render_line(1).text  # line 0 is the header
        assert "[bold]x" in line and "a[/]b" in line and ":smile:" in line


class _TwoBrowserTables(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.highlighted: list[str] = []

    def compose(self) -> ComposeResult:
        yield BrowserTable(id="one-by-one", cursor_type="row")  # as the browser has it
        yield BrowserTable(id="in-one-step", cursor_type="row")

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.highlighted.append(f"{event.data_table.id} {event.row_key.value}")


async def test_rows_appended_in_one_step_are_those_added_one_by_one() -> None:
    app = _TwoBrowserTables()
    highlighted: list[str] = []
    async with app.run_test(size=(200, 40)) as pilot:
        single = app.query_one("#one-by-one", BrowserTable)
        batch = app.query_one("#in-one-step", BrowserTable)
        for table in (single, batch):
            for key, label in COLUMNS:
                table.add_column(label, key=key)
        rows = [(str(row.key), row_cells(row)) for row in _rows()]
        for key, cells in rows[:3]:
            single.add_cells(key, cells)
        batch.append_rows(rows[:3])  # into an empty table: the cursor's cell appears
        for key, cells in rows[3:]:
            single.add_cells(key, cells)
        batch.append_rows(rows[3:])
        await pilot.pause()
        await pilot.pause()
        for table in (single, batch):
            highlighted.append(str(table.cursor_coordinate))
        assert batch.row_keys == single.row_keys == [key for key, _ in rows]
        for key, _ in rows:
            assert batch.get_row(key) == single.get_row(key)
        assert [c.content_width for c in batch.ordered_columns] == [
            c.content_width for c in single.ordered_columns
        ]
        assert batch.virtual_size == single.virtual_size
        assert highlighted[0] == highlighted[1]
        # the first row added to an empty table is highlighted, as add_row does
        assert sorted(app.highlighted) == ["in-one-step 0", "one-by-one 0"]
        assert [batch.render_line(y).text for y in range(7)] == [
            single.render_line(y).text for y in range(7)
        ]
        try:
            batch.append_rows(rows[:2])
        except Exception as error:  # a key already there is refused, as by add_row
            assert type(error).__name__ == "DuplicateKey"
        else:
            raise AssertionError("a duplicate key was added")
