"""Issue 17 (7): a range of messages pinned from the TUI ("never compress 3-6"), through the
`V` prompt: the decision is the core's `apply_pins` on that range, the list marks every
pinned row, the legend gives the pinned tokens their entry, a bad range is said (nothing
changes), Esc closes the prompt on the screen, the pins survive going back and reopening,
and an exported snapshot carries them and opens with them again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input

from inspector.core.pins import apply_pins
from inspector.core.strategy import registry
from inspector.core.tokens import TokenCounter
from inspector.tui.app import InspectorApp, create_app
from inspector.tui.screens.browser import BrowserScreen
from inspector.tui.screens.context import ContextScreen
from inspector.tui.widgets.context_bar_panel import ContextBarPanel
from inspector.tui.widgets.message_list import PIN_MARK, MessageList
from tests.test_pins import context
from tests.test_tui_app import Notices, open_row, settle
from tests.test_tui_fixes_layout import lines_of
from tests.test_tui_key_path import send


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A task and six long tool pairs (13 messages, compressing) as a snapshot file."""
    folder = tmp_path / "in"
    folder.mkdir()
    path = folder / "pins.json"
    path.write_text(json.dumps(context(6).to_dict()), encoding="utf-8")
    return path


async def type_pins(app: InspectorApp, pilot: Any, text: str) -> None:
    """Open the prompt with `V`, replace what it holds with `text`, press Enter."""
    await pilot.press("V")
    await pilot.pause()
    box = app.screen.query_one("#pins", Input)
    assert box.has_focus
    box.value = text
    await pilot.press("enter")
    await settle(app, pilot)


def marked_rows(message_list: MessageList) -> set[int]:
    top = round(message_list.scroll_offset.y)
    return {
        top + y
        for y in range(min(message_list.size.height, message_list.row_count - top))
        if PIN_MARK in message_list.render_line(y).text
    }


async def test_a_range_pin_decides_as_the_core_and_marks_the_rows(
    source: Path, counters: dict[str, TokenCounter]
) -> None:
    notices = Notices()
    app = create_app([str(source.parent)], counters=counters)
    async with app.run_test(size=(120, 40), message_hook=notices) as pilot:
        screen = await open_row(app, pilot, lambda row: row.artifact.id == "pins")
        message_list = screen.query_one(MessageList)
        message_list.move_to(3)
        await pilot.pause()
        send(app, "V", "V")  # V, 6 and Enter arrive together, as from a fast typist
        send(app, "6", "6")
        send(app, "enter", "\r")
        await settle(app, pilot)
        box = screen.query_one("#pins", Input)
        assert box.value == "3-6"  # the range started at the cursor; 6 typed after it
        await settle(app, pilot)
        assert screen.pins == {3, 4, 5, 6}
        assert not screen.query_one("#pins-bar").display and message_list.has_focus
        strategy = registry.get(screen.strategy.key)
        assert screen.snapshot is not None and screen.decision is not None
        core = apply_pins(
            strategy, screen.snapshot, screen.settings, counters, {3, 4, 5, 6}, screen.artifact
        )
        assert core.lifted  # the range was in the span: the pins change the decision
        assert screen.decision.regions == core.decision.regions
        assert (screen.decision.verdict, screen.decision.reason) == (
            core.decision.verdict,
            core.decision.reason,
        )
        assert screen.decision.findings == core.decision.findings
        assert marked_rows(message_list) == {3, 4, 5, 6}
        pinned = core.decision.numbers["pinned_tokens"]
        assert f"■ pinned {pinned:,}" in " ".join(lines_of(screen.query_one(ContextBarPanel)))

        # a bad range is said, changes nothing and leaves the prompt open; Esc closes it
        await pilot.press("V")
        screen.query_one("#pins", Input).value = "3-6,9-x"
        await pilot.press("enter")
        await settle(app, pilot)
        assert screen.pins == {3, 4, 5, 6} and screen.query_one("#pins-bar").display
        assert any("9-x" in n.message for n in notices.seen)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen and not screen.query_one("#pins-bar").display

        # an empty list clears every pin
        await type_pins(app, pilot, "")
        assert screen.pins == frozenset() and marked_rows(message_list) == set()
        plain = strategy.decide(
            strategy.prepare(screen.snapshot, counters), screen.settings, screen.artifact
        )
        assert screen.decision.regions == plain.regions


async def test_range_pins_survive_reopening_and_travel_with_an_exported_snapshot(
    source: Path, counters: dict[str, TokenCounter], tmp_path: Path
) -> None:
    app = create_app([str(source.parent)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_row(app, pilot, lambda row: row.artifact.id == "pins")
        await type_pins(app, pilot, "1-2,5-6,40")  # 40 is past the last message: left out
        assert screen.pins == {1, 2, 5, 6}
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, BrowserScreen)
        await pilot.press("enter")
        await settle(app, pilot)
        again = app.screen
        assert isinstance(again, ContextScreen) and again is not screen
        assert again.pins == {1, 2, 5, 6}
        assert marked_rows(again.query_one(MessageList)) == {1, 2, 5, 6}
        written = again.write_report(tmp_path / "reports")
    snapshot = next(p for p in written if p.name.endswith(".snapshot.json"))
    assert json.loads(snapshot.read_text(encoding="utf-8"))["pins"] == [1, 2, 5, 6]
    app = create_app([str(snapshot)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        opened = app.screen
        assert isinstance(opened, ContextScreen) and opened.pins == {1, 2, 5, 6}
        assert opened.decision is not None and opened.decision.numbers.get("pins")
