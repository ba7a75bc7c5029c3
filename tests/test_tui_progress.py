"""The progress modal takes steps before it is composed (a step can arrive between the push
and the first compose, under load): no crash, and the latest step is drawn once mounted."""

from __future__ import annotations

from textual.app import App
from textual.widgets import ProgressBar, Static

from inspector.tui.screens.progress import ProgressScreen


async def test_a_step_before_compose_is_drawn_after_mount() -> None:
    app: App[None] = App()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = ProgressScreen("comparing strategies", 4)
        app.push_screen(screen)
        screen.step(2, "hybrid")  # pushed, not yet composed
        await pilot.pause()
        assert screen.query_one(ProgressBar).progress == 2
        line = str(screen.query_one("#progress-step", Static).render())
        assert "2/4: hybrid" in line
        screen.step(3, "dialogue")
        await pilot.pause()
        assert screen.query_one(ProgressBar).progress == 3
