"""The first count of a context in a token mode shows progress when it takes longer than
half a second (opening a big context, `p`, `m`): messages counted, a percentage, Esc.

Driven through the real app (pilot) on a real 3,000-message dump file (the bench's
generator). Esc while
opening goes back to the browser; Esc during an `m` or `p` goes back to the previous token
mode or strategy, decided as before.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import ProgressBar, Static

from bench.synth import write_big_dump
from inspector.core.tokens import TokenCounter
from inspector.encoding import make_counters
from inspector.tui.app import create_app
from inspector.tui.screens import progress
from inspector.tui.screens.browser import BrowserScreen
from inspector.tui.screens.context import ContextScreen
from inspector.tui.screens.progress import ProgressScreen, counted_share
from tests.test_tui_app import loaded, settle

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
    app = create_app([str(big)], counters=counters)
    async with app.run_test(size=(80, 24)) as pilot:
        browser = await loaded(app, pilot)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ProgressScreen))
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


async def test_m_and_p_show_progress_and_esc_keeps_the_previous_settings(
    big: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counters: dict[str, TokenCounter] = make_counters()
    app = create_app([str(big)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(app, pilot)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ContextScreen))
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        await wait_for(pilot, lambda: screen.decision is not None and not screen.workers)
        await settle(app, pilot)
        decided = screen.decision
        assert decided is not None and decided.settings.token_mode == "tiktoken_cl100k"
        monkeypatch.setattr(progress, "SHOW_AFTER", 0.01)
        await pilot.press("m")  # a mode not counted yet
        await wait_for(pilot, lambda: isinstance(app.screen, ProgressScreen), seconds=5)
        modal = app.screen
        assert isinstance(modal, ProgressScreen) and "counting tokens" in modal.title_text
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen and screen.decision is not None)
        await pilot.pause(0.2)
        assert screen.settings.token_mode == "tiktoken_cl100k"
        assert screen.decision is not None and screen.decision.regions == decided.regions
        await settle(app, pilot)

        # p to the next strategy: cancelled, the context stays under its strategy
        first = screen.strategy.key
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, ProgressScreen), seconds=5)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen)
        await wait_for(pilot, lambda: screen.strategy.key == first and screen.decision is not None)
        await settle(app, pilot)
        assert screen.strategy.key == first and screen.decision is not None
        assert screen.decision.strategy == first
        assert screen.decision is decided  # shown as it was: nothing decided again
        verdict = str(screen.query_one("#verdict", Static).render())
        assert "counting tokens" not in verdict
