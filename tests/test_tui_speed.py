"""Issue 17 in the TUI, driven by Textual's pilot: opening, headline, keys and focus, mouse,
suggestions that hold, tuning kept and applied, progress, layout.

Each test asserts the state the behaviour leaves (screen, cursor, settings, focus, text
drawn), computed from the same sources the screen reads.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, ProgressBar, Select, TabbedContent

from inspector.core.compare import default_names
from inspector.core.flip_check import dropped_note, flip_holds
from inspector.core.outcome import classify_outcome
from inspector.core.strategy import registry
from inspector.core.tokens import TokenCounter
from inspector.render.context_bar import BarParts, ContextBar, stretch_note
from inspector.render.verdict import render_to_text
from inspector.tui.app import InspectorApp, create_app
from inspector.tui.screens import progress
from inspector.tui.screens.browser import BrowserScreen
from inspector.tui.screens.browser_cells import short_id
from inspector.tui.screens.compare_screen import CompareScreen
from inspector.tui.screens.context import ContextScreen
from inspector.tui.screens.context_launch import processor_config
from inspector.tui.screens.help import NARROW, HelpScreen
from inspector.tui.widgets.context_bar_panel import ContextBarPanel
from inspector.tui.widgets.message_list import MessageList
from inspector.tui.widgets.settings_panel import SettingsPanel, Unset, optional_kind, parse_field
from inspector.tui.widgets.why_panel import FlipButton, WhyPanel
from tests.conftest import REFERENCE

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_dumps"
CONTEXTS = SAMPLES / "workspace" / "context"
DEMO_DUMP = next((CONTEXTS / "demo" / "bugfix-tinycal_context").rglob("1795900020374_*.json"))
DOCS = CONTEXTS / "docs-rewrite_context"
E_INPUT = REFERENCE / "e_target_below_min" / "input.json"
A_INPUT = REFERENCE / "a_current_round_plain" / "input.json"

pytestmark = pytest.mark.skipif(not REFERENCE.exists(), reason="reference folder not available")


async def settle(app: InspectorApp, pilot: Pilot[Any], delay: float = 0.2) -> None:
    """Let workers finish, the coalesced side tab draw, and their messages land."""
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause(delay)
    await app.workers.wait_for_complete()
    await pilot.pause()


def text_of(widget: Any) -> str:
    """Plain text of a Static's content."""
    return render_to_text(widget.content, width=200)


async def opened(app: InspectorApp, pilot: Pilot[Any]) -> ContextScreen:
    """The context screen a lone file opened into."""
    await settle(app, pilot)
    screen = app.screen
    assert isinstance(screen, ContextScreen), type(screen).__name__
    return screen


async def open_in_browser(app: InspectorApp, pilot: Pilot[Any], predicate: Any) -> ContextScreen:
    """From the browser, open the first row matching `predicate`."""
    await settle(app, pilot)
    browser = app.screen
    assert isinstance(browser, BrowserScreen)
    index = next(i for i, row in enumerate(browser.shown) if predicate(row))
    browser.query_one("#table").move_cursor(row=index)
    await pilot.press("enter")
    return await opened(app, pilot)


# --- 2. opening ------------------------------------------------------------------------


async def test_one_file_opens_straight_into_its_context(
    counters: dict[str, TokenCounter],
) -> None:
    app = create_app([str(E_INPUT)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        assert screen.decision is not None and screen.artifact.source == str(E_INPUT)
        await pilot.press("G")
        assert screen.query_one(MessageList).cursor == screen.query_one(MessageList).row_count - 1
        await pilot.press("g")
        assert screen.query_one(MessageList).cursor == 0
        await pilot.press("escape")  # back to the browser of that one file
        await pilot.pause()
        assert isinstance(app.screen, BrowserScreen) and len(app.screen.rows) == 1


async def test_a_folder_opens_the_browser_on_the_newest_row(
    counters: dict[str, TokenCounter],
) -> None:
    app = create_app([str(SAMPLES)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        browser = app.screen
        assert isinstance(browser, BrowserScreen)
        table = browser.query_one("#table")
        newest = max(row.timestamp or 0 for row in browser.rows)
        assert table.cursor_row == 0 and browser.shown[0].timestamp == newest
        await pilot.press("G")
        assert table.cursor_row == len(browser.shown) - 1
        await pilot.press("g")
        assert table.cursor_row == 0


# --- 3. say what the source says -------------------------------------------------------


async def test_a_silent_end_leads_the_headline_beside_the_re_evaluation(
    counters: dict[str, TokenCounter],
) -> None:
    app = create_app([str(DOCS)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_in_browser(app, pilot, lambda r: r.outcome.startswith("failed"))
        recorded = classify_outcome(screen.artifact)
        assert recorded.recorded == "silent_end"
        lines = text_of(screen.query_one("#verdict")).splitlines()
        assert lines[0].strip().startswith("RECORDED") and recorded.text in lines[0]
        assert lines[1].startswith("re-evaluated:")
        assert screen.decision is not None and screen.decision.verdict in lines[1]


async def test_why_tab_shows_what_the_dump_cannot_give_back(
    counters: dict[str, TokenCounter],
) -> None:
    app = create_app([str(DEMO_DUMP)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        body = text_of(screen.query_one("#why-body"))
        assert "what it cannot give back" in body
        for item in screen.artifact.recorded["unrecoverable"]:
            assert str(item)[:40] in " ".join(body.split())
        for name in screen.artifact.recorded["inferred"]:
            assert name in body


def test_a_stretched_bar_says_why_its_segments_differ_from_the_total() -> None:
    parts = BarParts((("outside", 100), ("compress", 500), ("tail", 200)), 1000, 900, 50, 2000,
                     True, "reached_threshold")  # fmt: skip
    assert "800" in stretch_note(parts) and "1,000" in stretch_note(parts)
    legend = ContextBar(parts).legend_text(short=False).plain
    assert "segments sum to 800" in legend
    assert "Σ 800 ≠ total 1,000" in ContextBar(parts).legend_text(short=True).plain
    agreeing = BarParts((("outside", 100), ("tail", 900)), 1000, 900, 50, 2000, True, "x")
    assert (
        stretch_note(agreeing) == "" and "segments" not in ContextBar(agreeing).legend_text().plain
    )


# --- 4. suggestions that hold ----------------------------------------------------------


async def test_flips_the_benefit_check_would_drop_are_not_offered(
    counters: dict[str, TokenCounter],
) -> None:
    app = create_app([str(E_INPUT)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        assert screen.artifact.snapshot is not None
        strategy = registry.get(screen.strategy.key)
        found = list(
            strategy.flips(strategy.prepare(screen.artifact.snapshot, counters), screen.settings)
        )
        holding = [
            f for f in found if flip_holds(f, screen.artifact.snapshot, strategy.key, counters)
        ]
        assert len(holding) < len(found)  # this context: every "compresses" is rolled back
        assert [f.sentence for f in screen.flips or ()] == [f.sentence for f in holding]
        assert screen.flips_dropped == len(found) - len(holding)
        note = text_of(screen.query_one("#why-flips-note"))
        assert f"{screen.flips_dropped} changes would trigger" in note and "no benefit" in note


async def test_tuning_survives_going_back_and_reopening(
    counters: dict[str, TokenCounter],
) -> None:
    app = create_app([str(REFERENCE / "a_current_round_plain")], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_in_browser(app, pilot, lambda r: r.artifact is not None)
        await pilot.press("right_square_bracket", "plus")
        await settle(app, pilot)
        tuned = screen.settings
        assert tuned != screen.recorded
        await pilot.press("escape")
        await pilot.pause()
        again = await open_in_browser(app, pilot, lambda r: r.artifact is not None)
        assert again is not screen and again.settings == tuned
        assert again.decision is not None and again.decision.settings == tuned
        await pilot.press("r")  # reset: the next open starts from the recorded values
        await settle(app, pilot)
        await pilot.press("escape")
        third = await open_in_browser(app, pilot, lambda r: r.artifact is not None)
        assert third.settings == third.recorded


async def test_apply_to_every_row_re_evaluates_the_browser(
    tmp_path: Path, counters: dict[str, TokenCounter]
) -> None:
    for name in ("e_target_below_min", "c_below_threshold"):
        (tmp_path / f"{name}.json").write_bytes((REFERENCE / name / "input.json").read_bytes())
    app = create_app([str(tmp_path)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_in_browser(app, pilot, lambda r: r.artifact is not None)
        screen.set_settings(trigger_context_ratio=0.05)
        await settle(app, pilot)
        await pilot.press("A")
        await settle(app, pilot)
        browser = next(s for s in app.screen_stack if isinstance(s, BrowserScreen))
        assert browser.overrides["trigger_ratio"] == 0.05
        for row in browser.rows:
            assert row.decision is not None
            assert row.decision.settings.trigger_context_ratio == 0.05
            assert row.decision.hit or row.decision.reason != "below_threshold"


async def test_copy_the_tuning_as_the_processor_config(counters: dict[str, TokenCounter]) -> None:
    app = create_app([str(E_INPUT)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        await pilot.press("right_square_bracket")
        await settle(app, pilot)
        await pilot.press("X")
        document = json.loads(app.clipboard)
        assert document["processor"] == screen.strategy.processor
        assert document["config"]["trigger_context_ratio"] == screen.settings.trigger_context_ratio  # type: ignore[attr-defined]
        assert "tool_boundary" not in document["config"]  # a what-if openJiuwen cannot set
        await pilot.press("x")
        assert app.clipboard == processor_config(screen.strategy.processor, screen.settings)
        ratio = getattr(screen.settings, "trigger_context_ratio")  # noqa: B009
        assert f"  trigger_context_ratio: {ratio:g}" in app.clipboard


# --- 5. keys, focus, palette, mouse ----------------------------------------------------


async def test_escape_leaves_an_input_and_keeps_the_screen_and_tuning(
    counters: dict[str, TokenCounter],
) -> None:
    app = create_app([str(E_INPUT)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        await pilot.press("t")
        await settle(app, pilot)
        box = screen.query_one("#field-keep_recent_messages", Input)
        box.focus()
        box.value = "1"
        await settle(app, pilot)
        assert screen.settings.keep_recent_messages == 1  # type: ignore[attr-defined]
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen and isinstance(screen.focused, MessageList)
        assert screen.settings.keep_recent_messages == 1  # type: ignore[attr-defined]


async def test_digits_apply_flips_only_from_the_why_tab(counters: dict[str, TokenCounter]) -> None:
    app = create_app([str(A_INPUT)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        assert screen.flips and len(screen.flips) >= 2
        await pilot.press("t")
        await settle(app, pilot)
        before = screen.settings
        await pilot.press("2")
        await settle(app, pilot)
        assert screen.settings == before and screen.check_action("apply_flip", (2,)) is False
        await pilot.press("w")
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        assert screen.settings != before


async def test_the_why_tab_scrolls_from_the_list_and_takes_focus_with_its_key(
    counters: dict[str, TokenCounter],
) -> None:
    app = create_app([str(A_INPUT)], counters=counters)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await opened(app, pilot)
        why = screen.query_one(WhyPanel)
        assert why.max_scroll_y > 0 and why.scroll_y == 0
        await pilot.press("shift+down", "J")
        await pilot.pause()
        assert why.scroll_y == 6 and isinstance(screen.focused, MessageList)
        await pilot.press("w")  # the Why tab is showing: its key gives it the focus
        await pilot.pause()
        assert screen.focused is why
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen and isinstance(screen.focused, MessageList)
        await pilot.press("t", "t")  # the Tune tab's key again: its first control
        await pilot.pause()
        assert isinstance(screen.focused, Input | Select)
        assert screen.focused in screen.query_one(SettingsPanel).query("*")
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen and isinstance(screen.focused, MessageList)


async def test_the_palette_lists_our_commands_and_one_theme_entry(
    counters: dict[str, TokenCounter],
) -> None:
    app = create_app([str(SAMPLES)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        for screen in (app.screen,):
            titles = [c.title for c in app.get_system_commands(screen)]
            assert titles.count("Theme") == 1
            assert not [t for t in titles if "cursor" in t.lower() or t in ("Keys", "Screenshot")]
            assert "Open" in titles and "Filter" in titles


async def test_mouse_clicks_a_row_a_tab_a_bar_segment_and_a_flip(
    counters: dict[str, TokenCounter],
) -> None:
    app = create_app([str(A_INPUT)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        rows = screen.query_one(MessageList)
        await pilot.click(MessageList, offset=(10, 3))
        await pilot.pause()
        assert rows.cursor == 3
        side = screen.query_one("#side", TabbedContent)
        await pilot.click(side.get_tab("tab-detail"))
        await pilot.pause()
        assert screen.query_one("#side", TabbedContent).active == "tab-detail"
        await pilot.click(side.get_tab("tab-why"))
        await settle(app, pilot)
        bar = screen.query_one(ContextBarPanel)
        assert screen.decision is not None
        bar_row = 1 if bar._note else 0
        width = bar.content_region.width
        drawn = {bar.region_at(x, bar_row): x for x in reversed(range(width))}
        name = next(n for n in ("tail", "compress", "prefix") if n in drawn)
        start = min(r.start for r in screen.decision.regions if r.name == name and r.size)
        rows.move_to(rows.row_count // 2 if start == 0 else 0)
        await pilot.click(ContextBarPanel, offset=(drawn[name] + 1, bar_row))  # +1: padding
        await pilot.pause()
        assert rows.cursor == start
        expected = screen.flips[0].settings if screen.flips else None
        await pilot.click(FlipButton)
        await settle(app, pilot)
        assert expected is not None and screen.settings == expected


# --- 9. progress -----------------------------------------------------------------------


async def test_strategies_open_behind_a_progress_that_cancels(
    monkeypatch: pytest.MonkeyPatch, counters: dict[str, TokenCounter]
) -> None:
    gate = threading.Event()
    real = progress.comparison_for

    def slow(*args: Any, **kwargs: Any) -> Any:
        gate.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(progress, "SHOW_AFTER", 0.05)
    monkeypatch.setattr(progress, "comparison_for", slow)
    app = create_app([str(E_INPUT)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        await pilot.press("C")
        await pilot.pause(0.3)
        assert isinstance(app.screen, progress.ProgressScreen)
        await pilot.press("escape")  # cancel
        await pilot.pause()
        gate.set()
        await settle(app, pilot)
        assert app.screen is screen  # cancelled: no strategies view
        gate.clear()
        await pilot.press("C")
        await pilot.pause(0.3)
        bar = app.screen.query_one("#progress-bar", ProgressBar)
        gate.set()
        await settle(app, pilot)
        assert bar.progress >= 1
        view = app.screen
        assert isinstance(view, CompareScreen) and view.comparison is not None
        assert screen.snapshot is not None
        expected = default_names(screen.snapshot, screen.strategy)
        assert [o.strategy for o in view.comparison.outcomes] == expected


# --- the Tune panel's optional numbers ---------------------------------------------------


async def test_an_optional_integer_gets_a_number_input_with_an_unset_state(
    counters: dict[str, TokenCounter],
) -> None:
    model = registry.get("standard.dialogue").settings_model
    assert optional_kind(model, "messages_threshold") == "int"
    info = SettingsPanel(model).fields["messages_threshold"]
    assert parse_field(info, "", "int") is Unset and parse_field(info, "1_200", "int") == 1200
    assert parse_field(info, "x", "int") is None
    app = create_app([str(E_INPUT)], {"processor": "standard.dialogue"}, counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        await pilot.press("t")
        await settle(app, pilot)
        box = screen.query_one("#field-messages_threshold", Input)
        assert box.type == "integer" and box.value == "" and "unset" in box.placeholder
        box.value = "30"
        await settle(app, pilot)
        assert screen.settings.messages_threshold == 30  # type: ignore[attr-defined]
        box.value = ""
        await settle(app, pilot)
        assert screen.settings.messages_threshold is None  # type: ignore[attr-defined]


# --- 11. layout --------------------------------------------------------------------------


def test_ids_show_their_distinguishing_part() -> None:
    assert short_id("docs-rewrite/ctx_docs/CurrentRoundCompressor#5", "docs-rewrite",
                    "CurrentRoundCompressor") == "ctx_docs#5"  # fmt: skip
    assert short_id("1795900043252_CurrentRoundCompressor_demo-bugfix-tinycal",
                    "demo/bugfix-tinycal", "CurrentRoundCompressor") == "1795900043252"  # fmt: skip
    long = short_id("a-very-long-identifier-of-some-session-abcdef-0123456789-run-17")
    assert long.endswith("run-17") and "…" in long and len(long) <= 26


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 60)])
async def test_help_and_context_fit_each_terminal_size(
    size: tuple[int, int], counters: dict[str, TokenCounter]
) -> None:
    app = create_app([str(A_INPUT)], counters=counters)
    async with app.run_test(size=size) as pilot:
        screen = await opened(app, pilot)
        for button in screen.query(FlipButton):
            if button.display:  # the verdict leads the label, so a narrow panel keeps it
                assert str(button.label).split(" ", 1)[1].startswith(("compresses", "stops"))
        await pilot.press("question_mark")
        await pilot.pause()
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        drawn = render_to_text(help_screen.help_renderable(), width=size[0])
        assert not set(drawn) & set(NARROW_KEYS)
        body = help_screen.query_one("#help-body")
        assert body.region.right <= size[0] and body.region.width > 20


NARROW_KEYS = "".join(chr(key) for key in NARROW)


def test_the_cli_offers_the_same_holding_flips_as_the_why_tab(
    counters: dict[str, TokenCounter],
) -> None:
    """`inspector why` and `report` drop the flips the benefit check would drop, as the TUI."""
    from inspector.core.snapshot import snapshot_from_dict
    from inspector.core.strategy.selection import select

    kept = dropped = 0
    for path in (E_INPUT, REFERENCE / "c_below_threshold" / "input.json"):
        snapshot = snapshot_from_dict(json.loads(path.read_text()))
        selection = select(snapshot, {})
        strategy = selection.strategy
        found = list(strategy.flips(strategy.prepare(snapshot, counters), selection.settings))
        holds = [flip_holds(f, snapshot, strategy.key, counters) for f in found]
        done = subprocess.run(
            [sys.executable, "-m", "inspector", "report", str(path), "--format", "md"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        section = done.stdout.partition("## Smallest change")[2].partition("\n## ")[0]
        rows = [row for row in section.splitlines() if row.startswith("| ")][1:]
        shown = [row.split("|")[1].strip() for row in rows]
        assert shown == [f.param for f, held in zip(found, holds, strict=True) if held]
        assert ("no benefit" in section) is (False in holds)
        assert dropped_note(holds.count(False)) in section
        kept, dropped = kept + sum(holds), dropped + holds.count(False)
    assert kept and dropped  # both sides of the check were exercised
