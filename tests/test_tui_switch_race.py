"""Switching the processor is one step for every key that follows: `p` then `s` (or `C`, or
a flip) pressed before the Tune panel has swapped its fields pairs the new strategy with its
own settings, never with the previous strategy's (that crashed the sweep view)."""

from __future__ import annotations

from inspector.core.tokens import TokenCounter
from inspector.tui.app import create_app
from inspector.tui.screens.sweep import SweepScreen
from tests.conftest import REFERENCE
from tests.test_tui_speed import opened, settle

E_INPUT = REFERENCE / "e_target_below_min" / "input.json"


async def test_p_then_s_at_once_opens_the_sweep_of_the_new_processor(
    counters: dict[str, TokenCounter],
) -> None:
    app = create_app([str(E_INPUT)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        for _ in range(4):  # through the forked processors and hybrid, each at once
            before = screen.strategy.key
            # both keys in one tick, before the panel's swap (a worker) has run
            screen.action_cycle_processor()
            screen.action_sweep()
            await pilot.pause()
            assert screen.strategy.key != before
            assert isinstance(screen.settings, screen.strategy.settings_model)
            sweep = app.screen
            assert isinstance(sweep, SweepScreen), type(sweep).__name__
            await pilot.press("escape")
            await settle(app, pilot)
            assert app.screen is screen
            assert isinstance(screen.settings, screen.strategy.settings_model)
