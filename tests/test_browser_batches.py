"""A big folder's load keeps the app answering keys: the loading worker posts rows in
batches of at most `BATCH_ROWS`, with no more than `ROWS_IN_FLIGHT` batches posted and not
yet shown (`RowBatch`), and the table measures each batch's rows as they come; when the
load ends, the columns are fitted to the rows that were never placeholders without
measuring a cell again (`BrowserTable.fit_to_settled`).

Textual's message pump handles what its queue holds one message after the other without
yielding to the event loop: a worker faster than the screen queued every batch of a
50,000-file folder, and the screen then kept the app, keys and all, for 10 s. Behaviour
only (what is posted before what is shown, which widths count); the stalls are measured
in bench/ (`bench/workers/folder.py tui-fill`).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable, Iterator
from typing import Any

import pytest
from rich.text import Text
from textual.app import App, ComposeResult

from inspector.core.artifact import LoadError, LoadResult
from inspector.tui.app import create_app
from inspector.tui.rows import BrowserRow, RowBatch
from inspector.tui.screens import browser
from inspector.tui.screens.browser import BrowserScreen
from inspector.tui.screens.browser_table import COLUMNS, BrowserTable
from tests.test_tui_count_progress import wait_for


def _row(key: int) -> BrowserRow:
    return BrowserRow(
        key=key,
        artifact=None,
        error=None,
        time="",
        processor="",
        session="",
        outcome="",
        outcome_kind="",
        before=None,
        after=None,
        reduction=None,
        retries=None,
        title=f"row {key}",
    )


def test_a_batch_is_posted_every_most_rows_and_the_rest_on_post() -> None:
    posted: list[tuple[list[int], int]] = []
    batch = RowBatch(lambda rows, seen: posted.append(([r.key for r in rows], seen)), 3600, 2)
    for key in range(5):
        batch.add(_row(key))
    batch.post()
    batch.post()  # nothing left: nothing posted
    assert posted == [([0, 1], 2), ([2, 3], 4), ([4], 5)]


def test_a_batch_waits_for_the_screen_to_take_one_in_flight() -> None:
    posted: list[list[int]] = []
    batch = RowBatch(lambda rows, _: posted.append([r.key for r in rows]), 3600, 1, 1)
    batch.add(_row(0))  # the one slot
    worker = threading.Thread(target=batch.add, args=(_row(1),))
    worker.start()
    worker.join(0.5)
    assert worker.is_alive() and posted == [[0]]  # waiting: nothing shown yet
    batch.taken()
    worker.join(10)
    assert not worker.is_alive() and posted == [[0], [1]]


def test_a_cancelled_load_stops_waiting_and_posts_nothing() -> None:
    posted: list[list[int]] = []
    cancelled = threading.Event()
    batch = RowBatch(
        lambda rows, _: posted.append([r.key for r in rows]), 3600, 1, 1, cancelled.is_set
    )
    batch.add(_row(0))
    worker = threading.Thread(target=batch.add, args=(_row(1),))
    worker.start()
    worker.join(0.3)
    assert worker.is_alive()
    cancelled.set()
    worker.join(10)
    assert not worker.is_alive() and posted == [[0]]


def test_the_screen_never_has_more_batches_queued_than_in_flight(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A loader far faster than the screen: every row arrives, in batches of at most
    `BATCH_ROWS`, and at each post at most `ROWS_IN_FLIGHT` batches await the screen."""
    count = 6 * browser.BATCH_ROWS + 7
    lock = threading.Lock()
    state = {"posted": 0, "shown": 0, "most_waiting": 0, "largest": 0}
    post_message = BrowserScreen.post_message
    handler = BrowserScreen.on_browser_screen_rows_loaded

    def posting(self: BrowserScreen, message: Any) -> bool:
        if isinstance(message, BrowserScreen.RowsLoaded):
            with lock:
                state["posted"] += 1
                waiting = state["posted"] - state["shown"]
                state["most_waiting"] = max(state["most_waiting"], waiting)
                state["largest"] = max(state["largest"], len(message.rows))
        return post_message(self, message)

    def shown(self: BrowserScreen, message: Any) -> None:
        with lock:
            state["shown"] += 1
        handler(self, message)

    monkeypatch.setattr(BrowserScreen, "post_message", posting)
    monkeypatch.setattr(BrowserScreen, "on_browser_screen_rows_loaded", shown)

    def loader(sources: Iterable[str]) -> Iterator[LoadResult]:
        for index in range(count):
            yield LoadError(f"/nowhere/{index:05d}.json", "not JSON")

    async def run() -> int:
        app = create_app(["/nowhere"], loader=loader)
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, BrowserScreen))
            screen = app.screen
            assert isinstance(screen, BrowserScreen)
            await wait_for(pilot, lambda: not screen.reading and len(screen.rows) == count)
            return len(screen.rows)

    assert asyncio.run(run()) == count
    assert state["posted"] >= count // browser.BATCH_ROWS  # batches, not one message
    assert state["largest"] <= browser.BATCH_ROWS
    assert 1 <= state["most_waiting"] <= browser.ROWS_IN_FLIGHT
    assert state["shown"] == state["posted"]


class _Table(App[None]):
    def compose(self) -> ComposeResult:
        yield BrowserTable(id="table")


def _cells(session: str, title: str) -> list[Text]:
    cells = [Text("") for _ in COLUMNS]
    cells[6], cells[7] = Text(session), Text(title)
    return cells


async def test_fitted_widths_leave_out_replaced_placeholders_only() -> None:
    app = _Table()
    async with app.run_test(size=(200, 20)) as pilot:
        table = app.query_one(BrowserTable)
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        # a placeholder with a long name, and a real row whose session is wide
        table.replace_rows(
            [("-1", _cells("s", "p" * 60)), ("1", _cells("w" * 30, "id"))], provisional=["-1"]
        )
        await pilot.pause()
        session, title = (table.columns[key] for key in ("session", "title"))  # type: ignore[index]
        assert (session.content_width, title.content_width) == (30, 60)
        table.replace_cells("-1", _cells("s2", "i" * 19))  # measured now, as a real row
        assert (session.content_width, title.content_width) == (30, 60)  # only grow
        table.fit_to_settled()
        await pilot.pause()
        fitted = (session.content_width, title.content_width)
        table.remeasure()  # every cell measured from scratch
        assert fitted == (session.content_width, title.content_width) == (30, 19)
        table.clear()  # a new load: nothing settled any more
        table.fit_to_settled()
        assert session.content_width == len("session")
