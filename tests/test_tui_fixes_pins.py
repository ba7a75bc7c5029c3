"""Pins fixes found by hand in tmux (docs/tui-captures/07-pins-120x40.txt): the bar's legend
gives the pinned tokens their own entry (it counted them as "sys") and the message list marks
the pinned rows."""

from __future__ import annotations

from pathlib import Path

from inspector.core.tokens import TokenCounter
from inspector.tui.app import create_app
from inspector.tui.widgets.message_list import PIN_MARK, MessageList
from tests.test_tui_app import open_row, settle
from tests.test_tui_fixes_layout import lines_of
from tests.test_tui_pins_views import source  # noqa: F401 - the pins context, as a fixture


async def test_pins_have_their_own_legend_entry_and_a_row_mark(
    source: Path,  # noqa: F811
    counters: dict[str, TokenCounter],
) -> None:
    app = create_app([str(source.parent)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_row(app, pilot, lambda row: row.artifact.id == "pins")
        legend = lines_of(screen.query_one("#bar"))[-1]
        assert "pinned" not in legend
        system = int(legend.split("■ sys ", 1)[1].split()[0].replace(",", ""))
        message_list = screen.query_one(MessageList)
        message_list.move_to(4)
        await pilot.press("P")
        await settle(app, pilot)
        assert screen.pins == {4} and screen.decision is not None
        pinned = screen.decision.numbers["pinned_tokens"]
        assert isinstance(pinned, int) and pinned > 0
        legend = " ".join(lines_of(screen.query_one("#bar"))[2:])
        assert f"■ pinned {pinned:,}" in legend
        assert f"■ sys {system:,}" in legend  # the system part is what it was before
        top = round(message_list.scroll_offset.y)
        rows = {top + y: message_list.render_line(y).text for y in range(message_list.size.height)}
        lifted = set(screen.decision.numbers["pins"])  # the pinned message and its call
        assert 4 in lifted
        assert {index for index, text in rows.items() if PIN_MARK in text} == lifted
