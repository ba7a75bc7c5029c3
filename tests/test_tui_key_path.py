"""Issue 17 (1), a tuning key's path: list, bar and verdict decided on the UI thread without
the artifact (no finding on what the source recorded runs there), the complete decision and
the flips after it in one worker that never runs twice at once, and the Why tab saying what
it waits for. Every assertion is on state (threads seen, decisions, texts), never on time.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from textual import events

from inspector.core import diagnosis
from inspector.core.findings.base import FindingInput
from inspector.core.strategy import registry
from inspector.core.tokens import TokenCounter
from inspector.tui.app import InspectorApp, create_app
from inspector.tui.screens.context import ContextScreen
from inspector.tui.screens.context_side import PENDING_NOTE
from inspector.tui.screens.context_view import regions_text
from inspector.tui.widgets.why_panel import WhyPanel
from tests.test_tui_app import text_of
from tests.test_tui_latency import DEMO_DUMP, settle


def send(app: InspectorApp, key: str, char: str) -> None:
    """One key, straight to the driver (as a terminal sends it)."""
    assert app._driver is not None
    event = events.Key(key, char)
    event.set_sender(app)
    app._driver.send_message(event)


async def opened(app: InspectorApp, pilot: Any) -> ContextScreen:
    await settle(app, pilot)
    screen = app.screen
    assert isinstance(screen, ContextScreen) and screen.decision is not None
    assert screen.artifact.kind == "dump" and screen.decision_complete
    return screen


async def test_a_tuning_key_runs_no_finding_on_what_was_recorded_on_the_ui_thread(
    counters: dict[str, TokenCounter], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each finding run records its thread and whether it read the artifact: after `]` and
    `[`, the UI thread ran none that read it; a worker did, and the decision on screen is
    then the core's complete one (findings included)."""
    runs: list[tuple[bool, bool]] = []  # (on the UI thread, with the artifact)
    real = diagnosis.run_findings

    def recorded(inp: FindingInput) -> Any:
        runs.append(
            (threading.current_thread() is threading.main_thread(), inp.artifact is not None)
        )
        return real(inp)

    monkeypatch.setattr(diagnosis, "run_findings", recorded)
    app = create_app([str(DEMO_DUMP)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        for key, char in (("right_square_bracket", "]"), ("left_square_bracket", "[")):
            runs.clear()
            send(app, key, char)
            await settle(app, pilot)
            assert (True, False) in runs  # the quick decision, drawn at once
            assert (True, True) not in runs
            assert (False, True) in runs  # the complete decision, in a worker
            assert screen.decision_complete
            strategy = registry.get(screen.strategy.key)
            prepared = strategy.prepare(screen.artifact.snapshot, counters)  # type: ignore[arg-type]
            core = strategy.decide(prepared, screen.settings, screen.artifact)
            assert screen.decision.findings == core.findings  # type: ignore[union-attr]
            assert screen.decision.checks == core.checks  # type: ignore[union-attr]
            assert screen.decision.regions == core.regions  # type: ignore[union-attr]


async def test_a_slow_follow_up_runs_once_at_a_time_and_ends_on_the_last_settings(
    counters: dict[str, TokenCounter], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the complete decision slowed down, keys spaced wider than the debounce never
    start a second worker while one runs; the last settings get their complete decision."""
    app = create_app([str(DEMO_DUMP)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        strategy = screen.strategy
        real = type(strategy).decide
        busy = {"now": 0, "most": 0}

        def slow(self: Any, prepared: Any, settings: Any, artifact: Any = None) -> Any:
            if artifact is None or threading.current_thread() is threading.main_thread():
                return real(self, prepared, settings, artifact)
            busy["now"] += 1
            busy["most"] = max(busy["most"], busy["now"])
            time.sleep(0.25)
            try:
                return real(self, prepared, settings, artifact)
            finally:
                busy["now"] -= 1

        monkeypatch.setattr(type(strategy), "decide", slow)
        for _ in range(3):
            send(app, "plus", "+")
            await pilot.pause(0.12)  # past the debounce: a follow-up starts (or is queued)
        send(app, "right_square_bracket", "]")
        await settle(app, pilot, delay=0.6)
        await settle(app, pilot, delay=0.6)
        assert busy["most"] == 1
        assert screen.decision_complete and screen.flips is not None
        assert screen.decision is not None and screen.decision.settings == screen.settings


async def test_the_why_tab_says_it_waits_for_the_checks_then_shows_them(
    counters: dict[str, TokenCounter], monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the complete decision is on its way the Why tab's head says so (the regions
    already new); once in, the note is gone and the body shows the checks."""
    app = create_app([str(DEMO_DUMP)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        strategy = screen.strategy
        real = type(strategy).decide
        release = threading.Event()

        def held(self: Any, prepared: Any, settings: Any, artifact: Any = None) -> Any:
            if artifact is not None and threading.current_thread() is not threading.main_thread():
                release.wait(10)
            return real(self, prepared, settings, artifact)

        monkeypatch.setattr(type(strategy), "decide", held)
        send(app, "plus", "+")
        await pilot.pause(0.4)  # the side timer has fired; the complete decision is held
        assert not screen.decision_complete
        why = screen.query_one(WhyPanel)
        assert PENDING_NOTE in text_of(why.query_one("#why-verdict"))
        assert screen.decision is not None
        assert regions_text(screen.decision).plain in text_of(why.query_one("#why-verdict"))
        release.set()
        await settle(app, pilot)
        assert screen.decision_complete
        assert PENDING_NOTE not in text_of(why.query_one("#why-verdict"))
        assert "Checks" in text_of(why.query_one("#why-body"))
