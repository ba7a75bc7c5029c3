"""Tuning fixes found by hand in tmux (docs/tui-captures): a tuning applied to every row (A)
shows each row's new verdict in the browser, marked as tuned, beside what was recorded."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from inspector.core.strategy.selection import select
from inspector.core.tokens import TokenCounter
from inspector.tui.app import create_app
from inspector.tui.screens.browser import BrowserScreen
from tests.test_tui_app import settle

SAMPLES = Path(__file__).resolve().parents[1] / "sample_dumps"


async def test_apply_to_all_shows_each_rows_tuned_verdict(
    counters: dict[str, TokenCounter],
) -> None:
    """A said "37 rows re-evaluated" while no row changed: dumps and debug records kept
    their recorded outcome only. Each row now leads with the verdict under the tuning."""
    app = create_app([str(SAMPLES)], counters=counters)
    async with app.run_test(size=(200, 60)) as pilot:
        await settle(app, pilot)
        for key in ("enter", "]", "]", "]", "A", "escape", "escape"):
            await pilot.press(key)
            await settle(app, pilot)
        browser = app.screen
        assert isinstance(browser, BrowserScreen)
        assert browser.overrides == {"trigger_ratio": 0.75}
        lines = {}
        table = browser.query_one("#table", DataTable)
        for index, row in enumerate(browser.shown):
            lines[row.title] = table.render_line(index + 1).text
        evaluated = [row for row in browser.shown if row.artifact and row.artifact.snapshot]
        assert len(evaluated) >= 10
        for row in evaluated:
            assert row.artifact is not None and row.artifact.snapshot is not None
            selection = select(row.artifact.snapshot, browser.overrides)
            prepared = selection.strategy.prepare(row.artifact.snapshot, counters)
            expected = selection.strategy.decide(prepared, selection.settings, row.artifact)
            verdict = "compresses" if expected.hit else f"no: {expected.reason}"
            assert row.outcome.startswith(f"tuned: {verdict} (was "), (row.title, row.outcome)
        docs4 = next(
            row for row in browser.shown if "ctx_docs" in row.title and row.title.endswith("#4")
        )
        assert docs4.outcome == "tuned: no: below_threshold (was no: target_below_min)"
        assert "tuned: no: below_threshold (was no: target_below_min)" in lines[docs4.title]
