"""The browser's loading path under failure: a loader that raises, odd file names, a worker
that never returns. Driven through Textual's pilot on real files."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.message import Message
from textual.notifications import Notify

from inspector.core.artifact import LoadResult
from inspector.sources.loader import load_paths
from inspector.tui.app import create_app
from inspector.tui.screens.browser import BrowserScreen
from inspector.tui.screens.browser_cells import row_cells
from tests.conftest import REFERENCE

INPUT = REFERENCE / "c_below_threshold" / "input.json"


def _folder(tmp_path: Path, names: Iterable[str]) -> Path:
    document = json.loads(INPUT.read_text())
    for name in names:
        document["scenario"] = f"case-{len(name)}-{abs(hash(name)) % 1000}"
        (tmp_path / name).write_text(json.dumps(document))
    return tmp_path


class _Notices:
    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, message: Message) -> None:
        if isinstance(message, Notify):
            self.seen.append(message.notification.message)


async def _loaded(app: Any, pilot: Any) -> BrowserScreen:
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()
    assert isinstance(app.screen, BrowserScreen)
    return app.screen


async def test_a_loader_that_raises_gives_an_error_row_a_notice_and_the_other_files(
    tmp_path: Path, counters: Any
) -> None:
    folder = _folder(tmp_path, ["a.json", "b.json", "c.json"])

    def loader(paths: Iterable[str]) -> Iterator[LoadResult]:
        for item in load_paths(paths, counters=counters):
            if item.source.endswith("b.json"):
                raise RuntimeError("boom in the reader")
            yield item

    notices = _Notices()
    app = create_app([str(folder)], counters=counters, loader=loader)
    async with app.run_test(message_hook=notices) as pilot:
        browser = await _loaded(app, pilot)
        loaded = {row.source for row in browser.rows if row.artifact is not None}
        errors = [row for row in browser.rows if row.error is not None]
        assert loaded == {str(folder / "a.json"), str(folder / "c.json")}
        assert any(row.source == str(folder / "b.json") for row in errors)
        assert all("boom in the reader" in row.error.error for row in errors if row.error)
        assert not [row for row in browser.shown if row.outcome_kind == "pending"]
        assert any("unreadable" in text for text in notices.seen), notices.seen


async def test_odd_names_are_shown_escaped(tmp_path: Path, counters: Any) -> None:
    odd = "\x1b[31mred\x07.json"
    folder = _folder(tmp_path, [odd, "plain.json"])
    (tmp_path / "\x1b]0;title\x07broken.json").write_text("{not json")
    app = create_app([str(folder)], counters=counters)
    async with app.run_test() as pilot:
        browser = await _loaded(app, pilot)
        assert len(browser.rows) == 3
        for row in browser.rows:
            for cell in row_cells(row):
                text = cell if isinstance(cell, str) else cell.plain
                assert "\x1b" not in text and "\x07" not in text, repr(text)
        assert any("\\x1b" in row.title for row in browser.rows)


async def test_q_quits_while_the_loading_worker_is_stuck(tmp_path: Path, counters: Any) -> None:
    release = threading.Event()

    def stuck(paths: Iterable[str]) -> Iterator[LoadResult]:
        release.wait(60)  # a reader that does not come back
        yield from ()

    app = create_app([str(_folder(tmp_path, ["a.json"]))], counters=counters, loader=stuck)
    try:
        async with app.run_test() as pilot:
            await pilot.pause()
            await pilot.press("q")
            await pilot.pause()
            assert not app.is_running
    finally:
        release.set()


@pytest.mark.parametrize("kind", ["fifo"])
async def test_a_fifo_in_the_folder_is_an_error_row_not_a_hang(
    tmp_path: Path, counters: Any, kind: str
) -> None:
    import os

    folder = _folder(tmp_path, ["a.json"])
    os.mkfifo(folder / "pipe.json")
    app = create_app([str(folder)], counters=counters)
    async with app.run_test() as pilot:
        browser = await _loaded(app, pilot)
        errors = [row for row in browser.rows if row.error is not None]
        assert [row.source for row in errors] == [str(folder / "pipe.json")]
        assert "FIFO" in errors[0].outcome
