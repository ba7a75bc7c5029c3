"""A big folder's placeholder rows (listed by name before the load reaches them) are replaced
by their rows in place: each replacement is measured once, as a new row is, and the column
widths are fitted to all the rows once the load is done.

`update_cell(update_width=True)` measured every cell of a column again whenever a new cell
was narrower than the column (a placeholder's long file name replaced by a short id): over a
5,000-file folder the browser sat at "read 51 items" for minutes. The measure count below
is what grew with the square of the rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import _data_table

from bench.synth import write_folder
from inspector.core.artifact import LoadResult
from inspector.core.tokens import TokenCounter
from inspector.sources.loader import load_paths
from inspector.tui.app import create_app
from inspector.tui.screens import browser_table
from inspector.tui.screens.browser import BrowserScreen
from inspector.tui.screens.browser_table import BrowserTable

DUMPS = 240


@pytest.fixture()
def counters() -> dict[str, TokenCounter]:
    """Offline counters (the test is about the table, not counts)."""
    return {mode: TokenCounter(mode) for mode in ("tiktoken_cl100k", "len_div_4", "string_length")}


async def _loaded(folder: Path, counters: dict[str, TokenCounter], measured: list[int]) -> Any:
    """The browser on `folder` once its load is done, with how many cells the table measured
    while placeholders were being replaced (`measured`, one count per call)."""

    def loader(sources: list[str]) -> Iterator[LoadResult]:
        yield from load_paths(sources, counters=counters)

    app = create_app([str(folder)], counters=counters, loader=loader)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = app.screen
        for _ in range(400):
            await pilot.pause(0.05)
            screen = app.screen
            if isinstance(screen, BrowserScreen) and not screen.reading:
                break
        await pilot.pause()
        assert isinstance(screen, BrowserScreen) and not screen.reading
        table = screen.query_one("#table", BrowserTable)
        widths = {str(c.key.value): c.content_width for c in table.columns.values()}
        # what a table that measured every final cell from scratch gives
        table.remeasure()
        await pilot.pause()
        fresh = {str(c.key.value): c.content_width for c in table.columns.values()}
        return screen, widths, fresh, len(measured)  # (widths: one entry per column)


async def test_placeholders_are_replaced_in_linear_measures_and_fitted_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counters: dict[str, TokenCounter]
) -> None:
    folder = write_folder(tmp_path / "f", dumps=DUMPS, sessions=3, messages_per_dump=6)
    measured: list[int] = []
    # the table measures new rows with `cell_width`; DataTable's own measuring (of cells
    # updated with `update_width=True`) goes through its `measure`: both are counted
    for module, name in ((browser_table, "cell_width"), (_data_table, "measure")):
        original = getattr(module, name)

        def counting(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
            measured.append(1)
            return _original(*args, **kwargs)

        monkeypatch.setattr(module, name, counting)
    adopted: list[int] = []
    real_replace = BrowserTable.replace_many

    def replace_many(self: BrowserTable, rows: Any) -> None:
        adopted.extend(1 for _ in rows)
        real_replace(self, rows)

    monkeypatch.setattr(BrowserTable, "replace_many", replace_many)
    screen, widths, fresh, count = await _loaded(folder, counters, measured)
    rows = len(screen.rows)
    assert adopted, "the load replaced placeholders (the path under test ran)"
    assert rows >= DUMPS
    # linear: each row's cells measured a few times (added, replaced, fitted); measuring
    # the whole column per replaced cell is rows * adopted, tens of thousands here
    assert count < 12 * len(widths) * rows, (count, rows, len(adopted))
    # the widths after the load are those of every final cell measured from scratch
    assert widths == fresh
