"""Issue 17 (1), latency, driven by Textual's pilot: what a key repaints, what waits for later,
what is cancelled, and the browser's incremental filter.

Each test asserts the state the behaviour leaves (screens painted, rows shown, work
cancelled), never a time: timings are in bench/bench_tui.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from inspector.core.tokens import TokenCounter
from inspector.tui.app import InspectorApp, create_app
from inspector.tui.screens.browser import BrowserScreen
from inspector.tui.screens.context import ContextScreen
from inspector.tui.screens.help import HelpScreen

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_dumps"
CONTEXTS = SAMPLES / "workspace" / "context"
DEMO_DUMP = next((CONTEXTS / "demo" / "bugfix-tinycal_context").rglob("1795900020374_*.json"))


async def settle(app: InspectorApp, pilot: Pilot[Any], delay: float = 0.2) -> None:
    """Let workers finish, the coalesced side tab draw, and their messages land."""
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause(delay)
    await app.workers.wait_for_complete()
    await pilot.pause()


def count_frames(screen: Any) -> list[int]:
    """Count the frames `screen`'s compositor paints from now on (one entry per frame)."""
    frames: list[int] = []
    render_update = screen._compositor.render_update

    def counted(*args: Any, **kwargs: Any) -> Any:
        update = render_update(*args, **kwargs)
        if update is not None:
            frames.append(1)
        return update

    screen._compositor.render_update = counted
    return frames


async def test_a_screen_below_an_opaque_one_never_repaints_it(
    counters: dict[str, TokenCounter],
) -> None:
    """The browser under the context view repainting itself costs the context view nothing;
    a modal (translucent) screen still shows the screen below it."""
    app = create_app([str(DEMO_DUMP)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        context = app.screen
        assert isinstance(context, ContextScreen)
        browser = app.screen_stack[-2]
        assert isinstance(browser, BrowserScreen)
        assert app._background_screens == []
        assert not browser.is_current
        frames = count_frames(context)
        for _ in range(5):
            browser.query_one("#table").refresh()
            browser.refresh()
            await pilot.pause(0.05)
        assert frames == []
        assert not context._compositor._dirty_regions
        app.action_help()
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert app._background_screens == [context]
        await pilot.press("escape")
        await settle(app, pilot)
        app.pop_screen()
        await settle(app, pilot)
        assert app.screen is browser and browser.is_current
