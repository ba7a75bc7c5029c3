"""The re-run's progress from the context view: the step in hand, the elapsed time, the
attempts and retries; Esc stops the request itself (the run's thread ends at once though
the server would answer seconds later) and the context view is left as it was.

Driven through the real app (pilot) against the threaded FakeOpenAI server: a 429 (one
retry with openJiuwen's backoff), then a reply delayed by 5 s.
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input

from inspector.core.tokens import TokenCounter
from inspector.tui.app import create_app
from inspector.tui.screens.rerun_dialog import RerunDialog
from inspector.tui.screens.rerun_screen import RerunScreen
from tests.servers.fake_openai import FakeOpenAI, Reply
from tests.test_tui_app import open_row
from tests.test_tui_rerun import A_DUMP, A_SCRIPT, SECRET, text_of

RATE = {
    "message": "Rate limit reached for requests per minute.",
    "type": "requests",
    "code": "rate_limit_exceeded",
}


async def wait_until(pilot: Any, condition: Any, seconds: float = 5.0) -> None:
    """Pause until `condition()` holds (fails the test after `seconds`)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await pilot.pause(0.05)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_steps_retries_and_cancel_leave_the_context_as_it_was(
    size: tuple[int, int],
    tmp_path: Path,
    counters: dict[str, TokenCounter],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(A_DUMP, folder)
    out = tmp_path / "out"
    slow = Reply(content=A_SCRIPT[0].content, delay=5.0)
    with FakeOpenAI([Reply(status=429, error=RATE), slow]) as server:
        app = create_app([str(folder)], counters=counters)
        async with app.run_test(size=size) as pilot:
            context = await open_row(app, pilot, lambda row: row.artifact is not None)
            assert context.decision is not None
            before = (context.strategy.key, context.settings, context.decision, context.pins)
            await pilot.press("R")
            await pilot.pause()
            dialog = app.screen
            assert isinstance(dialog, RerunDialog)
            dialog.query_one("#base-url", Input).value = server.base_url
            dialog.query_one("#model", Input).value = "fake-compress-model"
            dialog.query_one("#out-dir", Input).value = str(out)
            await pilot.press("ctrl+r")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, RerunScreen)
            await wait_until(pilot, lambda: len(server.requests) == 2 and screen.attempts)
            await wait_until(pilot, lambda: screen.step.startswith("attempt 2"))
            await pilot.pause(0.3)  # the elapsed time ticks
            status = text_of(app, "#rerun-status")
            assert "calling fake-compress-model" in status
            assert "1 call(s) done, 1 retry" in status
            assert "attempt 2: request sent, waiting for the reply" in status
            shown = re.search(r"\.\.\. (\d+\.\d) s", status)
            assert shown is not None and float(shown.group(1)) >= 0.3  # the elapsed time
            assert context.snapshot is not None
            count = len(context.snapshot.messages)
            assert screen.steps[0] == f"preparing the request (counting {count} messages)"
            assert screen.steps[1:] == [
                "attempt 1: request sent, waiting for the reply",
                "waiting 0.1 s before attempt 2 (retry policy)",
                "attempt 2: request sent, waiting for the reply",
            ]
            assert "retrying after" in text_of(app, "#rerun-attempts")

            assert screen.call_in_flight
            started = time.monotonic()
            await pilot.press("escape")
            await wait_until(pilot, lambda: not screen.call_in_flight, seconds=2.0)
            assert time.monotonic() - started < 2.0  # the 5 s reply was not waited for
            await pilot.pause(0.3)
            assert screen.state == "cancelled" and screen.result is None
            assert len(server.requests) == 2  # no attempt after the cancel
            assert "cancelled after" in text_of(app, "#rerun-status")
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen is context
            assert (context.strategy.key, context.settings, context.decision, context.pins) == (
                before
            )
            assert not out.exists()  # nothing written
            assert SECRET not in app.export_screenshot()


async def test_q_during_a_rerun_asks_once_then_quits(
    tmp_path: Path, counters: dict[str, TokenCounter], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stray `q` does not throw a running re-run away: the first warns, a second quits."""
    from textual.notifications import Notify

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(A_DUMP, folder)
    warned: list[str] = []

    def hook(message: Any) -> None:
        if isinstance(message, Notify):
            warned.append(message.notification.message)

    with FakeOpenAI([Reply(content=A_SCRIPT[0].content, delay=5.0)]) as server:
        app = create_app([str(folder)], counters=counters)
        async with app.run_test(size=(120, 40), message_hook=hook) as pilot:
            await open_row(app, pilot, lambda row: row.artifact is not None)
            await pilot.press("R")
            await pilot.pause()
            dialog = app.screen
            assert isinstance(dialog, RerunDialog)
            dialog.query_one("#base-url", Input).value = server.base_url
            dialog.query_one("#model", Input).value = "fake-compress-model"
            dialog.query_one("#out-dir", Input).value = str(tmp_path / "out")
            await pilot.press("ctrl+r")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, RerunScreen)
            await wait_until(pilot, lambda: len(server.requests) == 1)
            assert screen.calls_running
            await pilot.press("q")
            await pilot.pause()
            assert app.is_running and app.screen is screen  # asked, not quit
            assert any("press q again to quit" in text for text in warned)
            await pilot.press("q")
            await wait_until(pilot, lambda: not app.is_running, seconds=3)
