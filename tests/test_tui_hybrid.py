"""The TUI with the HybridCompressor processor and the strategies (compare) view.

Driven through the pilot on the long coding-session reference dump; every outcome, verdict
and number on screen is compared with what the core computes (`HybridContext.decide`,
`compare_strategies`) for the same tuning.
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot

from inspector.core.compare import compare_strategies, tuning_for
from inspector.core.hybrid import HybridContext, HybridResult
from inspector.core.hybrid_config import config_from_tuning
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import PROCESSOR_KINDS
from inspector.render.hybrid_report import verdict_text
from inspector.render.hybrid_view import outcome_label
from inspector.render.verdict import render_to_text
from inspector.tui.app import InspectorApp, create_app
from inspector.tui.screens.browser import BrowserScreen
from inspector.tui.screens.compare_screen import CompareScreen
from inspector.tui.screens.context import HYBRID_FLIPS_NOTE, ContextScreen
from inspector.tui.screens.hybrid_sweep import HybridSweepScreen
from inspector.tui.widgets.message_list import MessageList
from tests.conftest import REFERENCE

SCENARIO = REFERENCE / "k_long_coding_session"
pytestmark = pytest.mark.skipif(not SCENARIO.exists(), reason="reference scenario not available")


async def settle(app: InspectorApp, pilot: Pilot[Any]) -> None:
    """Let workers finish and their messages land."""
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def open_dump(app: InspectorApp, pilot: Pilot[Any]) -> ContextScreen:
    """Open the scenario's dump from the browser."""
    await settle(app, pilot)
    browser = app.screen
    assert isinstance(browser, BrowserScreen)
    index = next(
        i
        for i, row in enumerate(browser.shown)
        if row.artifact is not None and row.artifact.kind == "dump"
    )
    browser.query_one("#table").move_cursor(row=index)
    await pilot.press("enter")
    await settle(app, pilot)
    screen = app.screen
    assert isinstance(screen, ContextScreen)
    return screen


async def switch_to_hybrid(app: InspectorApp, pilot: Pilot[Any], screen: ContextScreen) -> None:
    """Press `p` until the processor is hybrid."""
    for _ in PROCESSOR_KINDS:
        assert screen.tuning is not None
        if screen.tuning.processor == "hybrid":
            break
        await pilot.press("p")
        await settle(app, pilot)
    assert screen.tuning is not None and screen.tuning.processor == "hybrid"


def text_of(widget: Any) -> str:
    """Plain text of a Static's content."""
    return render_to_text(widget.content, width=200)


def expected_result(screen: ContextScreen, counters: dict[str, TokenCounter]) -> HybridResult:
    """A fresh core decision for the screen's tuning."""
    snapshot = screen.artifact.snapshot
    assert snapshot is not None and screen.tuning is not None
    context = HybridContext.from_snapshot(snapshot, counters[screen.tuning.token_mode])
    return context.decide(config_from_tuning(screen.tuning))


def assert_rows_match_core(
    screen: ContextScreen, counters: dict[str, TokenCounter]
) -> HybridResult:
    """Every row's outcome and label, the verdict line: as the core decides."""
    expected = expected_result(screen, counters)
    assert screen.hybrid is not None
    assert screen.hybrid.to_json() == expected.to_json()
    message_list = screen.query_one(MessageList)
    assert message_list.row_count == expected.message_count
    for index in range(message_list.row_count):
        shown = message_list.outcome(index)
        assert shown == expected.outcome(index)
        assert message_list.row_label(index) == outcome_label(expected.outcome(index))
    verdict = text_of(screen.query_one("#verdict")).splitlines()
    assert verdict[0].rstrip() == verdict_text(expected).plain
    assert f"estimate {expected.estimate_before:,} → {expected.estimate_after:,}" in verdict[1]
    return expected


async def test_hybrid_outcomes_verdict_and_why_equal_core(
    counters: dict[str, TokenCounter],
) -> None:
    app = create_app([str(SCENARIO)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_dump(app, pilot)
        await switch_to_hybrid(app, pilot, screen)
        first = assert_rows_match_core(screen, counters)
        assert first.stopped_at == 1  # level 1 cuts tool outputs whatever the water level
        assert any(o.outcome == "truncated" for o in first.outcomes)
        cut = next(o for o in first.outcomes if o.outcome == "truncated")
        label = screen.query_one(MessageList).row_label(cut.index)
        assert label.startswith("cut ") and label == outcome_label(cut)
        # the rendered row carries the label
        rendered = screen.query_one(MessageList)._build_line(cut.index, 110, "", False, cut)
        assert label[:18] in rendered.text

        # the Tune tab says how the fields map onto the pipeline and where it stops
        await pilot.press("t")
        await pilot.pause()
        assert "keep-recent the last N turns" in text_of(screen.query_one("#tuning-note"))
        tune = text_of(screen.query_one("#tuning-compare-table"))
        assert f"level {first.stopped_at}: {first.reason}" in tune

        # lower the trigger until level 2 has to fold the middle
        for _ in range(10):
            await pilot.press("left_square_bracket")
        await settle(app, pilot)
        folded = assert_rows_match_core(screen, counters)
        assert folded.stopped_at >= 2 and folded.folded
        assert {o.outcome for o in folded.outcomes} >= {"kept", "folded"}

        # why panel: water levels after each level, where it stopped, no flips for hybrid
        await pilot.press("w")
        await pilot.pause()
        why = text_of(screen.query_one("#why-body"))
        for level in folded.water_levels:
            assert f"{level.estimated_tokens:,}" in why
        assert "The pipeline stops here." in why
        assert HYBRID_FLIPS_NOTE in text_of(screen.query_one("#why-flips-note"))
        assert not screen.check_action("apply_flip", (1,))

        # detail pane: what happened to the selected message
        await pilot.press("d")
        screen.query_one(MessageList).move_to(folded.folded[0])
        await pilot.pause()
        detail = text_of(screen.query_one("#detail-body"))
        assert "Level 2 folded this message" in detail
        screen.query_one(MessageList).move_to(cut.index)
        await pilot.pause()
        detail = text_of(screen.query_one("#detail-body"))
        assert f"{cut.truncation.chars_removed:,} removed" in detail

        # keep-recent counts turns for hybrid
        await pilot.press("plus")
        await settle(app, pilot)
        assert screen.tuning is not None and screen.tuning.keep_recent == 6
        assert_rows_match_core(screen, counters)

        # sweep: the hybrid sweep view, Enter applies a value
        await pilot.press("s")
        await pilot.pause()
        sweep = app.screen
        assert isinstance(sweep, HybridSweepScreen)
        await pilot.press("up", "enter")
        await settle(app, pilot)
        assert app.screen is screen
        assert_rows_match_core(screen, counters)

        # back to an openJiuwen processor: regions again, no outcome labels
        await pilot.press("p")
        await settle(app, pilot)
        assert screen.tuning is not None and screen.tuning.processor == "current_round"
        assert screen.hybrid is None and screen.evaluation is not None
        assert screen.query_one(MessageList).outcome(0) is None


async def test_compare_screen_shows_core_numbers(counters: dict[str, TokenCounter]) -> None:
    app = create_app([str(SCENARIO)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_dump(app, pilot)
        await pilot.press("C")
        await settle(app, pilot)
        compare = app.screen
        assert isinstance(compare, CompareScreen)
        assert compare.comparison is not None

        artifact = screen.artifact
        snapshot = artifact.snapshot
        assert snapshot is not None and artifact.after is not None
        tuning = snapshot.tuning
        expected = compare_strategies(
            snapshot,
            list(PROCESSOR_KINDS),
            counters[tuning.token_mode],
            tunings={k: tuning_for(snapshot, k) for k in PROCESSOR_KINDS if k != "hybrid"},
            hybrid_config=config_from_tuning(tuning, keep_recent_is_turns=False),
            dump_after=artifact.after,
            dump_processor=artifact.processor,
        )
        assert compare.comparison.to_dict() == expected.to_dict()
        recorded = next(o for o in expected.outcomes if o.strategy == tuning.processor)
        assert recorded.after_source == "dump"

        shown = text_of(compare.query_one("#compare-report"))
        for outcome in expected.outcomes:
            assert outcome.label in shown
            assert f"{outcome.tokens_after:,} (-{outcome.reduction:.0%})" in shown
        assert "dump (real)" in shown

        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen


async def test_compare_from_the_palette_and_with_hybrid_tuned(
    counters: dict[str, TokenCounter],
) -> None:
    app = create_app([str(SCENARIO / "input.json")], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        await switch_to_hybrid(app, pilot, screen)
        assert screen.check_action("toggle_after", ()) is not True
        titles = [c.title for c in app.get_system_commands(screen)]
        assert "Strategies" in titles
        await app.run_action("screen.compare_strategies")
        await settle(app, pilot)
        compare = app.screen
        assert isinstance(compare, CompareScreen) and compare.comparison is not None
        hybrid = next(o for o in compare.comparison.outcomes if o.strategy == "hybrid")
        assert hybrid.hybrid is not None and screen.hybrid is not None
        assert hybrid.hybrid.config == screen.hybrid.config
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen


def test_outcome_labels_fit_the_row_column() -> None:
    from inspector.core.hybrid import MessageOutcome
    from inspector.core.hybrid_truncate import Truncation
    from inspector.tui.widgets.message_list import OUTCOME_WIDTH

    def make(outcome: Any, branch: Any, before: int, protected: Any = None) -> MessageOutcome:
        return MessageOutcome(
            1, "tool", 0, outcome, Truncation(branch, before, 2000), protected, 0, 0
        )

    cases = {
        make("truncated", "file_read", 4873): "cut file -2,873",
        make("truncated", "head_tail", 52_300): "cut head+tail -50.3k",
        make("folded", "json", 9000): "folded, cut json",
        make("summarized", "none", 10): "summarized",
        make("kept", "none", 10, "recent_turn"): "kept recent",
        make("kept", "none", 10, "in_flight"): "kept in flight",
        make("kept", "none", 10): "kept",
    }
    for outcome, label in cases.items():
        assert outcome_label(outcome) == label
        assert len(label) < OUTCOME_WIDTH
