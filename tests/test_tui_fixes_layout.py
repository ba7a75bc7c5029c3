"""Layout fixes found by hand in tmux (docs/tui-captures): what a narrow or a wide terminal
shows of titles, ids and notes, asserted on the rendered lines of the widgets."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widget import Widget

from inspector.core.tokens import TokenCounter
from inspector.tui.app import create_app
from tests.conftest import REFERENCE
from tests.test_tui_app import open_row

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
