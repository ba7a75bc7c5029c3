"""While a big folder loads, the browser table draws only what changed on screen, and rows
share the cells of the values they have in common.

A 50,000-file folder's load replaces placeholders and appends rows far below the screen,
in a thousand batches of 100 rows: each batch had been a table update (every drawn line
made again) and a repaint of the whole table, drawn up to 60 times a second, and every
row's cells were made and measured anew. Now a row changed off screen under a new key drops only its own drawn lines
(`BrowserTable._forget_lines`), rows appended below a full table move the scrollbar without
a repaint (`watch_virtual_size`), and `shared_cell` makes each repeated value's cell once.
Behaviour only: what is drawn after scrolling to the changed rows, what is repainted, which
cell objects rows hold; the time saved is measured in bench/ (`bench/workers/folder.py
tui-fill`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from rich.console import Console
from rich.text import Text

from inspector.tui.rows import BrowserRow
from inspector.tui.screens import browser_cells
from inspector.tui.screens.browser_cells import (
    COLUMNS,
    SharedText,
    cell_width,
    row_cells,
    shared_cell,
)
from inspector.tui.screens.browser_table import BrowserTable
from tests.test_browser_batches import TableApp

ROWS = 300


def _cells(title: str) -> list[Text]:
    cells = [Text("") for _ in COLUMNS]
    cells[6], cells[7] = Text("session"), Text(title)
    return cells


def _drawn(table: BrowserTable) -> str:
    """The text of every line the table draws now."""
    return "\n".join(table.render_line(y).text for y in range(table.size.height))


def _counting(table: BrowserTable, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    calls: list[Any] = []
    original = table.refresh

    def refresh(*args: Any, **kwargs: Any) -> Any:
        calls.append((args, kwargs))
        return original(*args, **kwargs)

    monkeypatch.setattr(table, "refresh", refresh)
    return calls


@asynccontextmanager
async def _placeholders() -> AsyncIterator[tuple[Any, BrowserTable]]:
    """(pilot, table): a 20-line table of `ROWS` placeholder rows ("-1", ...) drawn once."""
    app = TableApp()
    async with app.run_test(size=(120, 20)) as pilot:
        table = app.query_one(BrowserTable)
        table.append_rows([(str(-k - 1), _cells(f"old{k:03}")) for k in range(ROWS)])
        await pilot.pause()
        yield pilot, table


async def _scroll_to(pilot: Any, table: BrowserTable, row: int) -> None:
    table.scroll_to(y=row, animate=False)
    await pilot.pause()


async def test_rows_changed_off_screen_are_drawn_new_when_scrolled_to(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with _placeholders() as (pilot, table):
        await _scroll_to(pilot, table, 200)  # rows 200.. drawn, their lines kept
        assert "old205" in _drawn(table)
        await _scroll_to(pilot, table, 0)
        calls = _counting(table, monkeypatch)
        updates = table._update_count
        # placeholders replaced far below the screen, each under its row's key, no wider
        table.replace_many([(str(-k - 1), _cells(f"new{k:03}"), str(k)) for k in range(195, 215)])
        assert calls == [] and table._update_count == updates  # nothing on screen changed
        assert "old000" in _drawn(table)
        await _scroll_to(pilot, table, 200)
        drawn = _drawn(table)
        assert "new205" in drawn and "old205" not in drawn  # not the lines kept before
        assert table.row_keys[205] == "205"


async def test_a_row_replaced_on_screen_or_wider_repaints(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with _placeholders() as (pilot, table):
        calls = _counting(table, monkeypatch)
        updates = table._update_count
        table.replace_many([("-3", _cells("new002"), "2")])  # on screen
        assert calls and table._update_count == updates + 1
        await pilot.pause()
        assert "new002" in _drawn(table)
        calls.clear()
        wide = _cells("w" * 40)
        table.replace_many([("-251", wide, "250")])  # off screen, but its column widens
        assert calls and table._update_count == updates + 2
        calls.clear()
        table.replace_many([("-261", _cells("same260"), None)])  # its key kept: no new key
        assert calls and table._update_count == updates + 3


async def test_rows_appended_below_a_full_table_move_only_the_scrollbar(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = TableApp()
    async with app.run_test(size=(120, 20)) as pilot:
        table = app.query_one(BrowserTable)
        table.append_rows([(str(k), _cells(f"row{k:03}")) for k in range(5)])
        await pilot.pause()
        assert "row004" in _drawn(table)  # a table not full shows appended rows at once
        table.append_rows([(str(k), _cells(f"row{k:03}")) for k in range(5, 100)])
        await pilot.pause()
        calls = _counting(table, monkeypatch)
        updates = table._update_count
        before = table.max_scroll_y
        table.append_rows([(str(k), _cells(f"row{k:03}")) for k in range(100, ROWS)])
        await pilot.pause()
        assert calls == [] and table._update_count == updates
        assert table.max_scroll_y == before + ROWS - 100
        assert table.vertical_scrollbar.window_virtual_size == table.virtual_size.height
        await pilot.press("end")
        await pilot.pause()
        assert f"row{ROWS - 1:03}" in _drawn(table)
        calls.clear()
        table.replace_rows([(str(k), _cells(f"row{k:03}")) for k in range(50)])  # fewer
        await pilot.pause()
        assert calls  # rows went away: the table is drawn again
        assert "row049" in _drawn(table)


def _row(key: int, session: str, outcome: str, retries: int | None) -> BrowserRow:
    return BrowserRow(
        key=key,
        artifact=None,
        error=None,
        time=f"2026-11-29 18:0{key % 3}:00",
        processor="CurrentRoundCompressor",
        session=session,
        outcome=outcome,
        outcome_kind="not compressed",
        before=1000 + key,
        after=None,
        reduction=0.25 if key % 2 else None,
        retries=retries,
        title=f"dump-{key}",
    )


def _plain(cell: Text) -> Text:
    """The cell as row_cells made it before cells were shared."""
    made = Text(cell.plain, cell.style, justify=cell.justify, no_wrap=cell.no_wrap, end=cell.end)
    made.spans = list(cell.spans)
    return made


def _segments(cell: Any, width: int) -> list[Any]:
    console = Console(width=width, color_system="truecolor", force_terminal=True)
    return list(console.render(cell, console.options.update_width(width)))


def test_rows_share_the_cells_of_common_values_drawn_and_measured_as_before() -> None:
    sessions = ["ops-42", "会话-七", "a[/]b [bold]x", "s" * 40]
    rows = [_row(k, sessions[k % 4], "not compressed: under", k % 3 or None) for k in range(24)]
    made = [row_cells(row) for row in rows]
    for column in (0, 1, 2, 4, 5, 6):  # minute, processor, outcome, cut, retries, session
        assert made[1][column] is made[13][column]
    assert made[1][6] is not made[2][6] and made[1][5] is not made[2][5]  # other values
    assert made[1][3] is not made[13][3] and made[1][7] is not made[13][7]  # tokens, id
    console = Console(width=120)
    for cells in made:
        for cell in cells:
            if isinstance(cell, SharedText):
                width = cell_width(cell, console, console.options)
                assert cell.measured == width == console.measure(cell).maximum
                for drawn_width in (width, 5, 1):
                    assert _segments(cell, drawn_width) == _segments(_plain(cell), drawn_width)
    kinds = {type(cell) for cells in made for cell in cells}
    assert SharedText in kinds


def test_shared_cells_start_again_past_their_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(browser_cells, "SHARED_MOST", 8)
    monkeypatch.setattr(browser_cells, "_shared", {})
    first = shared_cell("value-0")
    for n in range(1, 20):
        shared_cell(f"value-{n}")
        assert len(browser_cells._shared) <= 8
    again = shared_cell("value-0")
    assert again is not first and again.plain == first.plain  # made anew, the same cell
    assert shared_cell("x", "right") is not shared_cell("x")  # the kind is part of the value
    assert shared_cell("x", "right").justify == "right"


def test_a_shared_outcome_cell_takes_each_palettes_style() -> None:
    """A theme change rebuilds the cells in the new palette (`restyle`): the outcome cell of
    a row is shared within one palette, never across two."""
    from rich.style import Style

    from inspector.render.styles import Palette

    light = Palette({"good": Style(color="#005f00")})
    dark = Palette({"good": Style(color="#87d787")})
    row = _row(1, "ops-42", "compressed", None)
    row.outcome_kind = "compressed"
    again = _row(5, "other", "compressed", None)
    again.outcome_kind = "compressed"
    in_light, in_dark = row_cells(row, light)[2], row_cells(row, dark)[2]
    assert in_light is row_cells(again, light)[2]
    assert in_light is not in_dark
    assert in_light.style == Style(color="#005f00") and in_dark.style == Style(color="#87d787")
