"""Issue 17 (1): a filter key in a big browser repaints the box and the table without a layout
pass of the whole screen (the filter box's text width and the table's row count used to ask
for one on every key), and the table's scrollbar and scroll still follow its rows: in place
while a scrollbar is needed before and after, through the layout when it comes or goes."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from inspector.core.tokens import TokenCounter
from inspector.sources.loader import load_file
from inspector.tui.app import create_app
from inspector.tui.screens.browser_table import BrowserTable
from tests.test_tui_latency import DEMO_DUMP, full_rebuild, open_browser, table_rows

ROWS = 600


def many_rows(_: Iterable[str]) -> list[Any]:
    """`ROWS` copies of the demo dump, each with its own id and a source ending in #i."""
    base = next(item for item in load_file(DEMO_DUMP) if not hasattr(item, "error"))
    return [
        dataclasses.replace(base, id=f"copy-{i:04d}", source=f"{DEMO_DUMP}#{i}")
        for i in range(ROWS)
    ]


def count_layouts(screen: Any) -> list[int]:
    """Count the screen's layout passes from now on."""
    passes = [0]
    refresh_layout = screen._refresh_layout

    def counted(*args: Any, **kwargs: Any) -> Any:
        passes[0] += 1
        return refresh_layout(*args, **kwargs)

    screen._refresh_layout = counted
    return passes


async def test_filter_keys_lay_out_nothing_while_the_scrollbar_stays(
    counters: dict[str, TokenCounter], tmp_path: Path
) -> None:
    app = create_app([str(tmp_path)], counters=counters, loader=many_rows)
    async with app.run_test(size=(120, 40)) as pilot:
        browser = await open_browser(app, pilot)
        while browser.reading:
            await pilot.pause(0.05)
        table = browser.query_one("#table", BrowserTable)
        assert len(browser.shown) == ROWS and table.show_vertical_scrollbar
        table.focus()
        await pilot.press("end")  # scrolled to the bottom: the scroll must come back in range
        await pilot.pause()
        assert table.scroll_y > 0
        browser.action_focus_filter()
        await pilot.pause()
        layouts = count_layouts(app.screen)
        await pilot.press("#", "4")  # "#4": #4, #40-#49, #400-#499: 111 rows
        await pilot.pause(0.2)
        assert len(browser.shown) == 111 and table_rows(table) == full_rebuild(browser)
        assert layouts[0] == 0
        header = table.header_height if table.show_header else 0
        assert table.virtual_size.height == 111 + header
        assert table.show_vertical_scrollbar
        assert table.vertical_scrollbar.window_virtual_size == table.virtual_size.height
        assert 0 <= table.scroll_y <= table.max_scroll_y

        await pilot.press("9")  # "#49": 11 rows, fewer than the screen holds
        await pilot.pause(0.2)
        assert len(browser.shown) == 11 and layouts[0] > 0
        assert not table.show_vertical_scrollbar and table.scroll_y == 0
        for _ in range(3):
            await pilot.press("backspace")
        await pilot.pause(0.2)
        assert len(browser.shown) == ROWS and table.show_vertical_scrollbar
        assert table_rows(table) == full_rebuild(browser)
