"""A few key screens at a fixed size: their structure is checked, their SVGs kept as pictures.

The SVGs under tests/data/tui/ are regenerated with `UPDATE_TUI_SNAPSHOTS=1 pytest
tests/test_tui_snapshots.py`; the test itself checks what each screen must show rather than
comparing pixels (paths and timestamps differ between machines).
"""

from __future__ import annotations

import html
import os
import re
from pathlib import Path

import pytest

from inspector.core.tokens import TokenCounter
from inspector.tui.app import InspectorApp, create_app
from inspector.tui.screens.context import ContextScreen
from tests.conftest import REFERENCE

SNAPSHOTS = Path(__file__).parent / "data" / "tui"
SIZE = (100, 30)

pytestmark = pytest.mark.skipif(not REFERENCE.exists(), reason="reference folder not available")


def svg_text(svg: str) -> str:
    """The visible text of an exported screenshot, runs joined."""
    runs = re.findall(r"<text[^>]*>(.*?)</text>", svg, flags=re.S)
    return html.unescape("".join(runs)).replace("\xa0", " ")


async def shot(app: InspectorApp, name: str) -> str:
    """Export the current screen; write it when updating snapshots."""
    svg = app.export_screenshot(title=name)
    if os.environ.get("UPDATE_TUI_SNAPSHOTS"):
        SNAPSHOTS.mkdir(parents=True, exist_ok=True)
        (SNAPSHOTS / f"{name}.svg").write_text(svg, encoding="utf-8")
    return svg_text(svg)


async def test_key_screens(counters: dict[str, TokenCounter]) -> None:
    app = create_app([str(REFERENCE / "e_target_below_min")], counters=counters)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        browser = await shot(app, "browser")
        assert "outcome" in browser and "target_below_min" in browser
        browser_screen = app.screen
        index = next(
            i
            for i, row in enumerate(browser_screen.shown)
            if row.artifact and row.artifact.snapshot
        )  # type: ignore[attr-defined]
        browser_screen.query_one("#table").move_cursor(row=index)
        await pilot.press("enter")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause(0.2)  # the flips follow the decision after a short debounce
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, ContextScreen)
        why = await shot(app, "context_why")
        for expected in (
            "DOES NOT COMPRESS",
            "target_below_min",
            "threshold",
            "Smallest change",
            "no single change",  # its flips would compress, then be dropped for no benefit
        ):
            assert expected in why, expected
        await pilot.press("t")
        await pilot.pause()
        tune = await shot(app, "context_tune")
        assert "Reset to recorded" in tune and "recorded" in tune and "tuned" in tune
        await pilot.press("s", "2")
        await pilot.pause()
        sweep = await shot(app, "sweep")
        assert "verdict flips between" in sweep and "min_target_context_ratio" in sweep
