"""The strategy view driven through the pilot: every registered strategy, its generated
settings panel and its flips, compared with what the core decides for the same settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from inspector.core.strategy import registry
from inspector.core.strategy.selection import select
from inspector.core.tokens import TokenCounter
from inspector.render.verdict import render_to_text
from inspector.sources.loader import load_paths
from inspector.tui.app import InspectorApp, create_app
from inspector.tui.screens.strategy_screen import StrategyScreen
from inspector.tui.widgets.message_list import MessageList
from inspector.tui.widgets.settings_panel import SettingsPanel
from tests.conftest import REFERENCE

pytestmark = pytest.mark.skipif(not REFERENCE.exists(), reason="reference folder not available")

E_INPUT = REFERENCE / "e_target_below_min" / "input.json"


async def settle(app: InspectorApp, pilot: Pilot[Any]) -> None:
    """Let workers finish and their messages land."""
    for _ in range(3):
        await pilot.pause()
        await app.workers.wait_for_complete()
    await pilot.pause()


def expected(screen: StrategyScreen, counters: dict[str, TokenCounter]) -> Any:
    """A fresh core decision for the screen's strategy and settings."""
    strategy = registry.get(screen.strategy.key)
    prepared = strategy.prepare(screen.snapshot, counters)
    return strategy.decide(prepared, screen.settings, screen.artifact)


async def open_strategy_view(
    app: InspectorApp, pilot: Pilot[Any], path: Path, counters: dict[str, TokenCounter]
) -> StrategyScreen:
    artifact = next(a for a in load_paths([str(path)], counters=counters) if hasattr(a, "snapshot"))
    await settle(app, pilot)
    app.push_screen(StrategyScreen(artifact, counters))
    await settle(app, pilot)
    screen = app.screen
    assert isinstance(screen, StrategyScreen)
    return screen


def assert_matches_core(screen: StrategyScreen, counters: dict[str, TokenCounter]) -> None:
    decision = expected(screen, counters)
    assert screen.decision is not None
    assert (screen.decision.hit, screen.decision.reason) == (decision.hit, decision.reason)
    assert screen.decision.regions == decision.regions
    rows = screen.query_one(MessageList)
    for index in range(rows.row_count):
        assert rows.region_of(index) == decision.region_of(index)


async def test_every_strategy_decides_like_the_core(counters: dict[str, TokenCounter]) -> None:
    app = create_app([str(E_INPUT)], counters=counters)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await open_strategy_view(app, pilot, E_INPUT, counters)
        seen = []
        for _ in registry.all_strategies():
            seen.append(screen.strategy.key)
            assert_matches_core(screen, counters)
            panel = screen.query_one(SettingsPanel)
            assert set(panel.fields) == set(screen.strategy.settings_model.model_fields)
            why = render_to_text(screen.query_one("#strategy-why").content, width=160)
            assert screen.decision is not None and screen.decision.verdict in why
            await pilot.press("p")
            await settle(app, pilot)
        assert seen == list(registry.keys())


async def test_settings_panel_edit_and_flip(counters: dict[str, TokenCounter]) -> None:
    app = create_app([str(E_INPUT)], counters=counters)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await open_strategy_view(app, pilot, E_INPUT, counters)
        assert screen.decision is not None and screen.decision.reason == "target_below_min"
        await pilot.press("t")
        await settle(app, pilot)
        box = screen.query_one("#field-min_target_context_ratio", Input)
        box.value = "0.01"
        await settle(app, pilot)
        assert screen.settings.min_target_context_ratio == 0.01  # type: ignore[attr-defined]
        assert_matches_core(screen, counters)
        assert screen.decision.hit
        box.value = "1.5"  # out of range: refused with the model's words, nothing applied
        await settle(app, pilot)
        assert screen.settings.min_target_context_ratio == 0.01  # type: ignore[attr-defined]
        problem = render_to_text(screen.query_one("#settings-problem").content, width=160)
        assert "min_target_context_ratio" in problem and "< 1" in problem
        await pilot.press("r")
        await settle(app, pilot)
        assert screen.settings == screen.recorded and screen.decision.reason == "target_below_min"
        first = screen.flips[0]
        await pilot.press("1")
        await settle(app, pilot)
        assert screen.decision.hit != (screen.recorded == screen.settings)
        assert getattr(screen.settings, first.param) == first.value
        assert_matches_core(screen, counters)


def test_selection_for_the_screen_follows_overrides(counters: dict[str, TokenCounter]) -> None:
    artifact = next(iter(load_paths([str(E_INPUT)], counters=counters)))
    assert getattr(artifact, "snapshot", None) is not None
    selection = select(artifact.snapshot, {"processor": "hybrid", "keep_recent": 2})  # type: ignore[union-attr]
    assert selection.strategy.key == "hybrid"
    assert selection.settings.preserve_recent_turns == 2  # type: ignore[attr-defined]
