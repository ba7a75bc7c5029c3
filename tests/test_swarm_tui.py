"""The TUI's live panel: every operation listed and scrollable, each opens its detail screen.

Driven through the pilot against the fake gateway of `tests/servers/` on 127.0.0.1: more
operations than fit (a noop after each compaction, as jiuwenswarm sends them), Enter on the
compaction opens the operation screen with its before/after, summary, compaction usage and
statistic; disconnecting leaves no source saying "ready".
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot
from textual.widgets import OptionList

from inspector.core.tokens import TokenCounter
from inspector.sources.connect import build_request
from inspector.tui.app import create_app
from inspector.tui.screens.browser import BrowserScreen
from inspector.tui.screens.operation import OperationScreen
from inspector.tui.widgets.live_panel import LivePanel
from tests.servers.fake_gateway import FakeGateway, sample_frame

SID = "sess_tui_1"


async def _until(pilot: Pilot[Any], condition: Callable[[], bool], timeout: float = 5.0) -> None:
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, "not within the timeout"
        await pilot.pause(0.05)


def _frames(count: int) -> list[dict[str, Any]]:
    """`count` compactions, each followed by a noop of the same processor."""
    frames = []
    for index in range(count):
        done = copy.deepcopy(sample_frame("compression_state_completed", SID))
        done["payload"].update(
            operation_id=f"op-{index}",
            compression_usage={"calls": 1, "input_tokens": 900 + index, "output_tokens": 80},
            statistic={"total_messages": 3, "user_messages": 2, "user_message_tokens": 40},
        )
        noop = copy.deepcopy(sample_frame("compression_state_noop", SID))
        noop["payload"]["operation_id"] = f"noop-{index}"
        frames += [done, noop]
    return frames


async def test_o_without_operations_says_so(counters: dict[str, TokenCounter]) -> None:
    app = create_app([], counters=counters)
    async with app.run_test(size=(100, 30)) as pilot:
        browser = next(s for s in app.screen_stack if isinstance(s, BrowserScreen))
        said: list[str] = []
        browser.notify = lambda message, **kw: said.append(str(message))  # type: ignore[method-assign]
        await pilot.press("O")
        await pilot.pause()
        assert not browser.query_one("#live-operations", OptionList).has_focus
        assert any("no live operations yet" in line for line in said)


async def test_operations_are_a_list_and_each_opens(counters: dict[str, TokenCounter]) -> None:
    gateway = await FakeGateway().astart()
    gateway.sessions_meta = [{"session_id": SID}]
    try:
        app = create_app([], counters=counters)
        async with app.run_test(size=(130, 44)) as pilot:
            browser = next(s for s in app.screen_stack if isinstance(s, BrowserScreen))
            browser.start_connection(build_request(gateway.url(SID), "", "", "main"))
            await gateway.await_registered(SID)
            for frame in _frames(4):
                await gateway.aemit(SID, frame)
            await gateway.aemit(SID, sample_frame("context_usage", SID))
            panel = browser.query_one("#live-panel", LivePanel)
            await _until(pilot, lambda: len(panel.operations) == 8)
            assert [op.operation_id for op in panel.operations][:2] == ["noop-3", "op-3"]
            listing = panel.query_one("#live-operations", OptionList)
            assert listing.option_count == 8
            # `O` reaches the list from the rows, as a user would; the earliest compaction is
            # still there, far below the two latest
            browser.query_one("#table").focus()
            await pilot.press("O")
            await pilot.pause()
            assert listing.has_focus and listing.highlighted == 0
            for _ in range(7):
                await pilot.press("down")
            assert listing.highlighted == 7
            await pilot.press("enter")
            await _until(pilot, lambda: isinstance(app.screen, OperationScreen))
            screen = app.screen
            assert isinstance(screen, OperationScreen) and screen.operation.operation_id == "op-0"
            text = screen.plain
            assert "685,440 tokens" in text and "30,003 tokens" in text
            assert "staging cluster" in text  # the compact summary
            assert "900 in" in text and "80 out" in text  # the compaction usage
            assert "statistic" in text and "user" in text
            await pilot.press("escape")
            await _until(pilot, lambda: app.screen is browser)
            await pilot.press("ctrl+x")
            await _until(pilot, lambda: "closed" in panel.plain)
            head = panel.plain.split("usage")[0]
            assert "ready" not in head and "connected" not in head
    finally:
        gateway.shutdown()
