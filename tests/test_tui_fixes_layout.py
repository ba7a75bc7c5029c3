"""Layout fixes found by hand in tmux (docs/tui-captures): what a narrow or a wide terminal
shows of titles, ids and notes, asserted on the rendered lines of the widgets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.widget import Widget

from inspector.core.tokens import TokenCounter
from inspector.tui.app import create_app
from inspector.tui.screens.context import ContextScreen
from inspector.tui.widgets.why_panel import WhyPanel
from tests.conftest import REFERENCE
from tests.test_tui_app import open_row, settle

pytestmark = pytest.mark.skipif(not REFERENCE.exists(), reason="reference folder not available")

LONG_ID = "h4_model_replies_with_tool_call"


def lines_of(widget: Widget) -> list[str]:
    """The text of each line the widget shows now."""
    return [widget.render_line(y).text for y in range(widget.size.height)]


def is_long_debug_row(row: Any) -> bool:
    """The debug row of the h4 scenario, whose id is 94 characters long."""
    return row.artifact is not None and row.artifact.kind == "debug" and LONG_ID in row.title


@pytest.mark.parametrize("width", [80, 100])
async def test_long_id_title_keeps_the_id_on_one_line(
    width: int, counters: dict[str, TokenCounter]
) -> None:
    """At 80 and 100 columns the title showed only "debug": the long id wrapped out of it."""
    app = create_app([str(REFERENCE)], counters=counters)
    async with app.run_test(size=(width, 24)) as pilot:
        screen = await open_row(app, pilot, is_long_debug_row)
        (title,) = lines_of(screen.query_one("#context-title"))
        assert title.lstrip().startswith("debug")
        assert f"ojw-ref/{LONG_ID}/" in title
        assert title.rstrip().endswith("…")  # cut at the edge, not wrapped away


TINYCAL = (
    Path(__file__).resolve().parents[1]
    / "sample_dumps/workspace/context/demo/bugfix-tinycal_context/compression_logs"
    / "1795900043252_CurrentRoundCompressor_demo-bugfix-tinycal.json"
)


async def test_flip_note_keeps_all_its_lines_after_reopening_a_tuned_context(
    counters: dict[str, TokenCounter],
) -> None:
    """Reopened tuned, the flip note changed text without a relayout and kept 1 line."""
    app = create_app([str(TINYCAL)], counters=counters)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        for key in ("w", "1", "escape", "escape", "enter", "w"):
            await pilot.press(key)
            await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        assert screen.settings != screen.recorded  # the flip survived the reopening
        note = screen.query_one("#why-flips-note")
        shown = " ".join(line.strip() for line in lines_of(note))
        assert shown.startswith("no single change flips the verdict;")
        assert "drops for no benefit" in shown
        assert shown.endswith("(the new context would not be smaller)")


class WhyOnlyApp(App[None]):
    """A WhyPanel alone, 35 columns wide (its width in the 80x24 context view)."""

    CSS = "WhyPanel { width: 37; }"

    def compose(self) -> ComposeResult:
        """The panel."""
        yield WhyPanel(id="why")


async def test_flip_note_grows_when_its_text_changes_after_layout() -> None:
    """The note's new text is laid out again: a longer note gets all its lines."""
    app = WhyOnlyApp()
    async with app.run_test(size=(60, 30)) as pilot:
        panel = app.query_one(WhyPanel)
        panel.show_flips(None)  # "computing…": one line
        await pilot.pause()
        note = app.query_one("#why-flips-note")
        assert lines_of(note) == ["computing…"]
        panel.show_flips([], dropped=2)
        await pilot.pause()
        shown = " ".join(line.strip() for line in lines_of(note))
        assert shown == (
            "no single change flips the verdict; 2 changes would trigger a compression that"
            " openJiuwen drops for no benefit (the new context would not be smaller)"
        )
