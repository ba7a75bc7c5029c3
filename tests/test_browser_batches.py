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
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets.data_table import DuplicateKey

from bench.synth import write_folder
from inspector.core.artifact import LoadError, LoadResult
from inspector.sources.entries import list_entries
from inspector.tui.app import create_app
from inspector.tui.rows import BrowserRow, RowBatch
from inspector.tui.screens import browser, browser_filters, browser_table
from inspector.tui.screens.browser import BrowserScreen
from inspector.tui.screens.browser_cells import COLUMNS
from inspector.tui.screens.browser_table import BrowserTable
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


class TableApp(App[None]):
    """A browser table alone, with the browser's columns."""

    def compose(self) -> ComposeResult:
        yield BrowserTable(id="table")

    def on_mount(self) -> None:
        table = self.query_one(BrowserTable)
        for key, label in COLUMNS:
            table.add_column(label, key=key)


def _cells(session: str, title: str) -> list[Text]:
    cells = [Text("") for _ in COLUMNS]
    cells[6], cells[7] = Text(session), Text(title)
    return cells


async def test_fitted_widths_leave_out_replaced_placeholders_only() -> None:
    app = TableApp()
    async with app.run_test(size=(200, 20)) as pilot:
        table = app.query_one(BrowserTable)
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


async def test_a_replaced_row_can_take_the_key_of_the_row_that_replaced_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A placeholder's place takes its row's key: the table built after the load (by row
    keys) then finds that row made and measured, and measures none of it again."""
    app = TableApp()
    async with app.run_test(size=(200, 20)) as pilot:
        table = app.query_one(BrowserTable)
        table.replace_rows(
            [("-1", _cells("s", "placeholder")), ("-2", _cells("s", "other"))], provisional=["-2"]
        )
        await pilot.pause()
        real = _cells("s", "real")
        table.replace_cells("-2", real, "7")
        assert table.row_keys == ["-1", "7"]  # in the placeholder's place
        with pytest.raises(DuplicateKey):
            table.replace_cells("7", real, "-1")
        measured: list[Any] = []
        original = browser_table.cell_width
        monkeypatch.setattr(
            browser_table, "cell_width", lambda *a: measured.append(a) or original(*a)
        )
        table.replace_rows([("7", real), ("-1", table.get_row("-1"))])
        await pilot.pause()
        assert table.row_keys == ["7", "-1"]
        assert len(measured) == len(COLUMNS)  # "-1"'s new cell list only, not "7"'s


def test_a_long_listing_is_shown_in_steps_then_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the first screenful, the listed rows go in `LISTING_STEP` at a time; the load
    starts once every one is in. A filter applied between two steps ends the steps, and
    the table then holds exactly the rows it leaves."""
    monkeypatch.setattr(browser, "FIRST_SCREEN_ROWS", 20)
    monkeypatch.setattr(browser_filters, "LISTING_STEP", 30)
    folder = write_folder(tmp_path / "f", dumps=150, sessions=3, messages_per_dump=4)
    steps: list[int] = []
    at_load: list[int] = []
    append_rows = BrowserTable.append_rows

    def spied(self: BrowserTable, rows: Any, provisional: Any = ()) -> None:
        if not at_load:
            steps.append(len(rows))
        append_rows(self, rows, provisional)

    monkeypatch.setattr(BrowserTable, "append_rows", spied)

    async def run(filtered: bool) -> tuple[list[str], list[str]]:
        screen: Any = None
        seen: list[list[str]] = []  # the table's keys, and the filter's, when the load starts

        def loader(sources: Iterable[str]) -> Iterator[LoadResult]:
            table = screen.query_one("#table", BrowserTable)
            at_load.append(table.row_count)
            seen.extend([table.row_keys, [str(row.key) for row in screen.filtered_rows()]])
            yield from ()

        if filtered:

            def filtering(self: BrowserTable, rows: Any, provisional: Any = ()) -> None:
                spied(self, rows, provisional)
                if len(steps) == 2:  # a filter typed between two steps
                    screen.text_filter = "s001"
                    screen._refresh_table()

            monkeypatch.setattr(BrowserTable, "append_rows", filtering)
        app = create_app([str(folder)], loader=loader)
        async with app.run_test(size=(120, 30)) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, BrowserScreen))
            screen = app.screen
            await wait_for(pilot, lambda: bool(at_load))
        return seen[0], seen[1]

    keys, wanted = asyncio.run(run(filtered=False))
    files = len(list_entries([str(folder)]))  # 150 dumps and their sessions' logs
    assert len(keys) == files and at_load == [files]  # every row in when the load started
    assert steps == [30] * 4 + [files - 20 - 4 * 30]  # after the first screenful of 20
    assert keys == wanted
    steps.clear()
    at_load.clear()
    keys, wanted = asyncio.run(run(filtered=True))
    assert steps == [30, 30]  # no step after the filter
    assert keys == wanted and 0 < len(keys) < files  # the filter's rows, and only those
    assert at_load == [len(keys)]
