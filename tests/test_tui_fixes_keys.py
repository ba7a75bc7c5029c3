"""Keys and focus fixes found by hand in tmux (docs/tui-captures): what a burst of keys typed
faster than the screen redraws leaves in a Tune input, and where Esc and focus go."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual import events
from textual.widgets import Input, Select

from inspector.core.tokens import TokenCounter
from inspector.tui.app import InspectorApp, create_app
from inspector.tui.screens.context import ContextScreen
from inspector.tui.screens.rerun_dialog import RerunDialog
from tests.test_tui_app import settle

TINYCAL = (
    Path(__file__).resolve().parents[1]
    / "sample_dumps/workspace/context/demo/bugfix-tinycal_context/compression_logs"
    / "1795900043252_CurrentRoundCompressor_demo-bugfix-tinycal.json"
)
KEY_NAMES = {".": "full_stop"}


def burst(app: InspectorApp, keys: list[tuple[str, str | None]]) -> None:
    """Queue key events all at once, as a terminal delivers a burst in one read (the pilot's
    `press` waits for each key to be handled, so the screen is never behind it)."""
    for key, character in keys:
        app.post_message(events.Key(key, character))


def typed(text: str) -> list[tuple[str, str | None]]:
    """The key events of typing `text`."""
    return [(KEY_NAMES.get(char, char), char) for char in text]


async def tune_input(app: InspectorApp, pilot: Any, name: str) -> tuple[ContextScreen, Input]:
    """The context screen on its Tune tab, and field `name`'s input, focused."""
    await settle(app, pilot)
    await pilot.press("t")
    await settle(app, pilot)
    screen = app.screen
    assert isinstance(screen, ContextScreen)
    box = screen.query_one(f"#field-{name}", Input)
    box.focus()
    await pilot.pause()
    return screen, box


async def test_fast_typing_in_a_tune_input_is_not_overwritten(
    counters: dict[str, TokenCounter],
) -> None:
    """The applied value came back into the focused input mid-burst: '050.6' for 0.5."""
    app = create_app([str(TINYCAL)], counters=counters)
    async with app.run_test(size=(80, 24)) as pilot:
        screen, box = await tune_input(app, pilot, "trigger_context_ratio")
        assert box.value == "0.693"
        burst(app, [("end", None)] + [("backspace", None)] * 6)
        await pilot.pause(0.4)  # past the side panel's coalesced redraw
        await settle(app, pilot)
        assert box.value == ""  # what the user left, not the last value applied
        burst(app, typed("0.5"))
        await pilot.pause(0.4)
        await settle(app, pilot)
        assert box.value == "0.5"
        assert screen.settings.trigger_context_ratio == 0.5
        assert screen.decision is not None
        assert screen.decision.threshold == int(0.5 * screen.settings.context_max)


async def test_a_tune_input_shows_the_applied_value_when_it_loses_focus(
    counters: dict[str, TokenCounter],
) -> None:
    """Text the screen refused (out of range) is replaced by the value in force on Tab."""
    app = create_app([str(TINYCAL)], counters=counters)
    async with app.run_test(size=(80, 24)) as pilot:
        screen, box = await tune_input(app, pilot, "trigger_context_ratio")
        burst(app, [("end", None)] + [("backspace", None)] * 6)
        await pilot.pause(0.4)
        await pilot.press("7")
        await pilot.pause(0.4)
        await settle(app, pilot)
        assert box.value == "7"  # kept while focused, although 7 is out of range
        applied = screen.settings.trigger_context_ratio
        assert applied != 7
        await pilot.press("tab")
        await settle(app, pilot)
        assert not box.has_focus
        assert float(box.value) == applied


async def test_escape_in_a_rerun_field_leaves_the_field_not_the_form(
    counters: dict[str, TokenCounter],
) -> None:
    """Esc in a field closed the whole form and lost what was typed."""
    app = create_app([str(TINYCAL)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("R")
        await settle(app, pilot)
        dialog = app.screen
        assert isinstance(dialog, RerunDialog)
        model = dialog.query_one("#model", Input)
        assert app.focused is model  # a field has the focus on open: typing goes somewhere
        model.value = ""
        await pilot.press(*"my-model")
        assert model.value == "my-model"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is dialog and not isinstance(app.focused, Input)
        assert model.value == "my-model"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ContextScreen)


OPS = (
    Path(__file__).resolve().parents[1]
    / "sample_dumps/workspace/context/ops-incident-42_context/compression_logs"
    / "1796159289784_CurrentRoundCompressor_ops-incident-42.json"
)


async def test_the_first_look_at_the_tune_tab_changes_no_setting(
    counters: dict[str, TokenCounter],
) -> None:
    """Found in tmux: a dump counted len_div_4 showed 7,688 tokens, and pressing `t` made it
    12,888. The token_mode select takes its first option (tiktoken_cl100k) when it mounts,
    and said so after the panel had shown len_div_4: that stale change was applied."""
    app = create_app([str(OPS)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        before, total = screen.settings, screen.decision.total_tokens if screen.decision else None
        assert before.token_mode != "tiktoken_cl100k"  # not the select's first option
        await pilot.press("t")
        await settle(app, pilot)
        await pilot.pause(0.3)
        await settle(app, pilot)
        assert screen.settings == before == screen.recorded
        assert screen.decision is not None and screen.decision.total_tokens == total
        select = screen.query_one("#field-token_mode", Select)
        assert select.value == before.token_mode
        # a choice the user makes is still applied
        select.value = "tiktoken_cl100k"
        await settle(app, pilot)
        assert screen.settings.token_mode == "tiktoken_cl100k"
