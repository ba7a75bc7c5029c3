"""Issue 17 (6) in the browser: a big folder's first screenful of named rows is drawn before
the load starts (the load held the interpreter and the first rows waited seconds for it),
and the load that follows still fills every row.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.synth import write_folder
from inspector.core.artifact import LoadResult
from inspector.core.tokens import TokenCounter
from inspector.sources.loader import load_paths
from inspector.tui.app import create_app
from inspector.tui.screens import browser
from inspector.tui.screens.browser import BrowserScreen
from inspector.tui.screens.browser_table import BrowserTable


@pytest.fixture()
def counters() -> dict[str, TokenCounter]:
    """Offline counters (no encoder needed: the test is about order, not counts)."""
    return {mode: TokenCounter(mode) for mode in ("tiktoken_cl100k", "len_div_4", "string_length")}


async def test_first_screen_is_drawn_before_the_load_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counters: dict[str, TokenCounter]
) -> None:
    dumps = browser.FIRST_SCREEN_ROWS + 40
    folder = write_folder(tmp_path / "f", dumps=dumps, sessions=2, messages_per_dump=6)
    events: list[tuple[str, int]] = []
    original = BrowserTable.render_lines

    def render_lines(self: BrowserTable, crop: Any) -> Any:
        if self.row_count:
            events.append(("drawn", self.row_count))
        return original(self, crop)

    monkeypatch.setattr(BrowserTable, "render_lines", render_lines)

    def loader(sources: list[str]) -> Iterator[LoadResult]:
        events.append(("load", 0))
        yield from load_paths(sources, counters=counters)

    app = create_app([str(folder)], counters=counters, loader=loader)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        for _ in range(200):
            await pilot.pause(0.05)
            await app.workers.wait_for_complete()
            screen = app.screen
            if isinstance(screen, BrowserScreen) and not screen.reading:
                break
        screen = app.screen
        assert isinstance(screen, BrowserScreen) and not screen.reading
        load_at = events.index(("load", 0))
        drawn_before = [count for what, count in events[:load_at] if what == "drawn"]
        # the first frame with rows held the first screenful only, then every listed file
        assert drawn_before and drawn_before[0] == browser.FIRST_SCREEN_ROWS
        assert events.count(("load", 0)) == 1
        expected = list(load_paths([str(folder)], counters=counters))
        assert len(screen.rows) == len(expected)
        assert sorted(row.source for row in screen.rows) == sorted(r.source for r in expected)
        assert not screen.pending


async def test_a_small_folder_loads_at_once(
    tmp_path: Path, counters: dict[str, TokenCounter]
) -> None:
    folder = write_folder(tmp_path / "f", dumps=12, sessions=2, messages_per_dump=6)
    app = create_app([str(folder)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(200):
            await pilot.pause(0.05)
            await app.workers.wait_for_complete()
            screen = app.screen
            if isinstance(screen, BrowserScreen) and not screen.reading:
                break
        screen = app.screen
        assert isinstance(screen, BrowserScreen) and not screen.reading
        assert len(screen.rows) == len(list(load_paths([str(folder)], counters=counters)))
