"""The first count of a context in a token mode shows progress when it takes longer than
half a second (opening a big context): messages counted, a percentage, Esc.

Driven through the real app (pilot) on a real 3,000-message dump file (the bench's
generator), opened straight from the command line (a dump read by the browser is counted
by its load, so it opens at once). Esc while opening goes back to the browser. `m` and `p`
share the code, but their count now ends in the worker within milliseconds and the slow
part of a switch runs on the UI thread after it, so no progress shows there (issue 17's
note).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import ProgressBar

from bench.synth import write_big_dump
from inspector.core.tokens import TokenCounter
from inspector.encoding import make_counters
from inspector.tui.app import create_app
from inspector.tui.screens import progress
from inspector.tui.screens.browser import BrowserScreen
from inspector.tui.screens.progress import ProgressScreen, counted_share

MESSAGES = 3000


@pytest.fixture
def big(tmp_path: Path) -> Path:
    """A folder with one real 3,000-message dump (the bench's generator, about 3 MB)."""
    folder = tmp_path / "in"
    folder.mkdir()
    write_big_dump(folder, messages=MESSAGES, target_mb=3.0)
    return folder


async def wait_for(pilot: Any, condition: Any, seconds: float = 20.0) -> None:
    """Pause until `condition()` holds."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await pilot.pause(0.05)


def step_line(modal: ProgressScreen) -> str:
    """The modal's step line ("" until it is composed)."""
    found = modal.query("#progress-step")
    return str(found.first().render()) if found else ""


def test_counted_share_follows_the_counter() -> None:
    counter = make_counters()["len_div_4"]
    from inspector.core.messages import Message

    messages = [Message(role="user", content=f"message {n}") for n in range(1000)]
    assert counted_share(messages, [counter]) == 0.0
    for message in messages[:500]:
        counter.piece_tokens(message)
    assert 0.45 <= counted_share(messages, [counter]) <= 0.55
    assert counted_share([], [counter]) == 1.0


async def test_opening_shows_the_count_and_esc_returns_to_the_browser(
    big: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress, "SHOW_AFTER", 0.01)
    counters: dict[str, TokenCounter] = make_counters()  # cold: nothing counted yet
    [dump] = big.iterdir()
    app = create_app([str(dump)], counters=counters)  # one file: straight into its context
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ProgressScreen))
        browser = app.screen_stack[1]
        assert isinstance(browser, BrowserScreen)
        modal = app.screen
        assert isinstance(modal, ProgressScreen)
        assert modal.title_text.startswith("opening: counting tokens (tiktoken_cl100k)")
        assert modal.total == MESSAGES
        await wait_for(pilot, lambda: "/3,000:" in step_line(modal))
        line = step_line(modal)
        bar = modal.query_one(ProgressBar)
        if modal.open_ended:  # counted (the load counts a dump): the decision pulses
            assert bar.total is None and "3,000/3,000: counted; deciding" in line
        else:
            assert bar.total == MESSAGES and "messages counted" in line
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is browser)
        assert isinstance(app.screen, BrowserScreen)
        await app.workers.wait_for_complete()
