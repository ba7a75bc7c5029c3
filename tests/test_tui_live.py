"""The browser live: files written while the app runs, and a connection to real local servers.

Follow: a folder and a log are changed while the app runs; rows appear, are replaced and go
within the follower's polling interval. Connect: the fake gateway and trajectory servers of
`tests/servers/` replay the spec's samples; the browser's live panel shows the compression
events and the rebuilt window opens in the context view. Every wait is bounded.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from inspector.core.tokens import TokenCounter
from inspector.tui.app import InspectorApp, create_app
from inspector.tui.screens.browser import BrowserScreen
from inspector.tui.screens.connect_dialog import ConnectDialog
from inspector.tui.screens.context import ContextScreen
from inspector.tui.widgets.live_panel import LivePanel
from tests.conftest import REFERENCE
from tests.servers.fake_gateway import FakeGateway, sample_frame
from tests.servers.fake_trajectory import SESSION, FakeTrajectory

pytestmark = pytest.mark.skipif(not REFERENCE.exists(), reason="reference folder not available")


def snapshot_line(snapshot_id: str, text: str = "hello") -> str:
    """One snapshot record of a JSON Lines log."""
    record = {
        "id": snapshot_id,
        "context_max": 1000,
        "messages": [{"role": "user", "content": text}],
    }
    return json.dumps(record) + "\n"


def dump(name: str) -> Path:
    """The openJiuwen dump of a reference scenario."""
    return next((REFERENCE / name).glob("17*.json"))


async def wait_for(pilot: Pilot[Any], condition: Callable[[], bool], timeout: float = 3.0) -> float:
    """Pause until `condition()` holds; return the seconds it took (fail after `timeout`)."""
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > timeout:
            raise AssertionError(f"not within {timeout} s")
        await pilot.pause(0.05)
    return time.monotonic() - started


def browser_of(app: InspectorApp) -> BrowserScreen:
    """The browser screen (the bottom of the stack)."""
    screen = app.screen_stack[1] if len(app.screen_stack) > 1 else app.screen
    assert isinstance(screen, BrowserScreen)
    return screen


def ids(browser: BrowserScreen) -> set[str]:
    """Ids of the artifact rows."""
    return {row.artifact.id for row in browser.rows if row.artifact is not None}


def panel_text(browser: BrowserScreen) -> str:
    """What the live panel shows."""
    return browser.query_one("#live-panel", LivePanel).plain


async def test_follow_folder_and_log(tmp_path: Path, counters: dict[str, TokenCounter]) -> None:
    shutil.copy(dump("a_current_round_plain"), tmp_path)
    log = tmp_path / "snapshots.jsonl"
    log.write_text(snapshot_line("s1"))
    app = create_app([str(tmp_path)], counters=counters)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()  # the load (following is not one endless worker)
        browser = browser_of(app)
        await wait_for(pilot, lambda: "following" in panel_text(browser))
        assert "2 files" in panel_text(browser)
        before = ids(browser)
        assert len(before) == 2 and "s1" in before

        # a new dump, written the way a person (or the agent) would: directly into the folder
        new_dump = tmp_path / dump("b_keep_recent_tool_boundary").name
        shutil.copy(dump("b_keep_recent_tool_boundary"), new_dump)
        took = await wait_for(pilot, lambda: len(ids(browser)) == 3, timeout=2.5)
        assert took < 2.0
        assert any(row.source == str(new_dump) for row in browser.shown)
        await wait_for(pilot, lambda: "3 files" in panel_text(browser))

        # an appended record is a new row; a rewritten one replaces its row (same key)
        key_s1 = next(r.key for r in browser.rows if r.artifact and r.artifact.id == "s1")
        with log.open("a") as handle:
            handle.write(snapshot_line("s2"))
        await wait_for(pilot, lambda: "s2" in ids(browser), timeout=2.5)
        log.write_text(snapshot_line("s1", "changed a lot") + snapshot_line("s2"))
        await wait_for(
            pilot,
            lambda: (
                any(
                    r.artifact and r.artifact.id == "s1" and r.key == key_s1 and r.before != 4
                    for r in browser.rows
                )
                and sum(1 for r in browser.rows if r.artifact and r.artifact.id == "s1") == 1
            ),
            timeout=2.5,
        )

        # half a line is retried, not shown as broken; a removed file drops its rows
        with log.open("a") as handle:
            handle.write(snapshot_line("s3")[:12])
        await pilot.pause(1.0)
        assert not any(row.error for row in browser.rows)
        new_dump.unlink()
        await wait_for(pilot, lambda: str(new_dump) not in {r.source for r in browser.rows})
        assert len(browser.rows) == len(browser.shown) == 3
        assert "s1" in ids(browser) and "s2" in ids(browser)

        with log.open("a") as handle:
            handle.write(snapshot_line("s3")[12:])
        await wait_for(pilot, lambda: "s3" in ids(browser), timeout=2.5)
        assert len(browser.rows) == 4

        # a reload keeps following, without doubling rows
        await pilot.press("ctrl+r")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await wait_for(pilot, lambda: "following" in panel_text(browser))
        assert len(browser.rows) == 4
        with log.open("a") as handle:
            handle.write(snapshot_line("s4"))
        await wait_for(pilot, lambda: "s4" in ids(browser), timeout=2.5)
        assert len(browser.rows) == 5


async def test_a_failing_follower_says_so(
    tmp_path: Path, counters: dict[str, TokenCounter]
) -> None:
    shutil.copy(dump("a_current_round_plain"), tmp_path)
    app = create_app([str(tmp_path)], counters=counters)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        browser = browser_of(app)
        await wait_for(pilot, lambda: "following" in panel_text(browser))
        follower = browser._follower
        assert follower is not None

        def broken() -> list[Any]:
            raise PermissionError("folder became unreadable")

        follower.poll = broken  # type: ignore[method-assign]
        await wait_for(pilot, lambda: "following stopped" in panel_text(browser))
        assert "folder became unreadable" in panel_text(browser)
        assert len(browser.rows) == 1


async def test_connect_dialog_shows_compressions_and_opens_the_rebuilt_window(
    counters: dict[str, TokenCounter],
) -> None:
    gateway = await FakeGateway().astart()
    server = FakeTrajectory().start()
    try:
        app = create_app([str(dump("a_current_round_plain"))], counters=counters)
        async with app.run_test(size=(120, 34)) as pilot:
            await pilot.pause()
            await app.workers.wait_for_complete()
            browser = browser_of(app)
            if app.screen is not browser:  # one file opens straight into its context
                await pilot.press("escape")
                await pilot.pause()
            await pilot.press("ctrl+o")
            await pilot.pause()
            dialog = app.screen
            assert isinstance(dialog, ConnectDialog)
            dialog.query_one("#connect-source", Input).value = gateway.url()
            dialog.query_one("#connect-session", Input).value = SESSION
            dialog.query_one("#connect-trajectory", Input).value = server.base_url
            await pilot.click("#connect-ok")
            await wait_for(pilot, lambda: app.screen is browser)

            # the rebuilt window is a row
            await wait_for(
                pilot,
                lambda: any(r.artifact and "live" in r.artifact.extra for r in browser.rows),
                timeout=5,
            )
            await gateway.await_registered(SESSION)
            await gateway.aemit(SESSION, sample_frame("compression_state_started", SESSION))
            await gateway.aemit(SESSION, sample_frame("compression_state_completed", SESSION))
            await gateway.aemit(SESSION, sample_frame("context_usage", SESSION))
            await wait_for(pilot, lambda: "usage" in panel_text(browser), timeout=3)
            await wait_for(pilot, lambda: "completed" in panel_text(browser), timeout=3)
            text = panel_text(browser)
            assert "ready" in text or "connected" in text
            assert browser.tracker is not None and browser.tracker.operations

            # it opens in the context view, the why panel works on it
            index = next(
                i
                for i, row in enumerate(browser.shown)
                if row.artifact is not None and "live" in row.artifact.extra
            )
            browser.query_one("#table").move_cursor(row=index)
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, ContextScreen))
            context = app.screen
            assert isinstance(context, ContextScreen)
            assert context.row.artifact is not None and context.row.artifact.kind == "messages"
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is browser)

            # the agent goes away: the panel says so instead of failing
            await gateway.astop(abrupt=True)
            await wait_for(
                pilot,
                lambda: (
                    "reconnecting" in panel_text(browser) or "connecting" in panel_text(browser)
                ),
                timeout=5,
            )
            await pilot.press("ctrl+x")
            await wait_for(pilot, lambda: "closed" in panel_text(browser))
    finally:
        gateway.shutdown()
        server.stop()


async def test_launcher_opens_a_trajectory_url(counters: dict[str, TokenCounter]) -> None:
    with FakeTrajectory() as server:
        app = create_app([server.session_url()], counters=counters)
        async with app.run_test(size=(120, 30)) as pilot:
            await pilot.pause()
            browser = browser_of(app)
            await wait_for(
                pilot,
                lambda: any(r.artifact and "live" in r.artifact.extra for r in browser.rows),
                timeout=5,
            )
            assert "polling" in panel_text(browser)
            assert not any(row.error for row in browser.rows)  # the URL was not read as a file
            await pilot.press("ctrl+x")
            await pilot.pause()
