"""The TUI with the HybridCompressor processor and the strategies (compare) view.

Driven through the pilot on the long coding-session reference dump; every outcome, verdict
and number on screen is compared with what the core computes (the hybrid strategy deciding
the same settings, `compare_strategies`). The context view reaches hybrid through the
strategy protocol like any other strategy.
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot

from inspector.core.compare import (
    CompareOptions,
    artifact_afters,
    compare_strategies,
    default_names,
    entries_for,
)
from inspector.core.hybrid import HybridResult
from inspector.core.hybrid_strategy import HYBRID, hybrid_config, outcome_label
from inspector.core.strategy import registry
from inspector.core.strategy.base import Decision
from inspector.core.tokens import TokenCounter
from inspector.render.verdict import render_to_text
from inspector.tui.app import InspectorApp, create_app
from inspector.tui.screens.browser import BrowserScreen
from inspector.tui.screens.compare_screen import CompareScreen
from inspector.tui.screens.context import ContextScreen
from inspector.tui.screens.sweep import SweepScreen
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
    """Press `p` until the strategy is hybrid."""
    for _ in registry.all_strategies():
        if screen.strategy.key == "hybrid":
            break
        await pilot.press("p")
        await settle(app, pilot)
    assert screen.strategy.key == "hybrid"


def text_of(widget: Any) -> str:
    """Plain text of a Static's content."""
    return render_to_text(widget.content, width=200)


def expected_decision(screen: ContextScreen, counters: dict[str, TokenCounter]) -> Decision:
    """A fresh core decision for the screen's settings."""
    snapshot = screen.artifact.snapshot
    assert snapshot is not None
    return HYBRID.decide(HYBRID.prepare(snapshot, counters), screen.settings)


def assert_rows_match_core(
    screen: ContextScreen, counters: dict[str, TokenCounter]
) -> HybridResult:
    """Every row's region and label, the verdict line: as the core decides."""
    expected = expected_decision(screen, counters)
    result = expected.native
    assert isinstance(result, HybridResult) and screen.decision is not None
    assert screen.decision.native.to_json() == result.to_json()
    message_list = screen.query_one(MessageList)
    assert message_list.row_count == result.message_count
    for index in range(message_list.row_count):
        assert message_list.region_of(index) == expected.region_of(index)
        assert message_list.row_label(index) == outcome_label(result.outcome(index))
    verdict = text_of(screen.query_one("#verdict")).splitlines()
    if verdict[0].strip().startswith("RECORDED"):  # the source's own outcome leads
        verdict = [verdict[1].removeprefix("re-evaluated: "), *verdict[2:]]
    assert verdict[0].strip().startswith(f"{expected.verdict}  {expected.reason}")
    assert f"estimate {result.estimate_before:,} -> {result.estimate_after:,}" in verdict[1]
    return result


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
        strip = screen.query_one(MessageList).render_line(0)
        assert strip.cell_length > 0

        # the Tune tab: the pipeline's own fields, recorded vs tuned with the verdicts
        await pilot.press("t")
        await pilot.pause()
        assert "preserve_recent_turns" in screen.settings_fields()
        tune = text_of(screen.query_one("#settings-compare-table"))
        assert "compression_threshold" in tune and first.reason in tune

        # lower the trigger until level 2 has to fold the middle
        for _ in range(10):
            await pilot.press("left_square_bracket")
        await settle(app, pilot)
        folded = assert_rows_match_core(screen, counters)
        assert folded.stopped_at >= 2 and folded.folded
        assert {o.outcome for o in folded.outcomes} >= {"kept", "folded"}

        # why panel: water levels after each level, where it stopped, the flips of the core
        await pilot.press("w")
        await settle(app, pilot)
        why = text_of(screen.query_one("#why-body"))
        for level in folded.water_levels:
            assert f"{level.estimated_tokens}" in why
        assert "The pipeline stops here." in why
        snapshot = screen.artifact.snapshot
        assert snapshot is not None
        flips = HYBRID.flips(HYBRID.prepare(snapshot, counters), screen.settings)
        assert [f.sentence for f in screen.flips or ()] == [f.sentence for f in flips]

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
        turns = screen.settings.preserve_recent_turns  # type: ignore[attr-defined]
        await pilot.press("plus")
        await settle(app, pilot)
        assert screen.settings.preserve_recent_turns == turns + 1  # type: ignore[attr-defined]
        assert_rows_match_core(screen, counters)

        # sweep: the one sweep view, Enter applies a value
        await pilot.press("s")
        await pilot.pause()
        sweep = app.screen
        assert isinstance(sweep, SweepScreen) and sweep.param == "max_context_tokens"
        await pilot.press("right", "enter")
        await settle(app, pilot)
        assert app.screen is screen
        assert_rows_match_core(screen, counters)

        # on to the next strategies: regions again, no outcome labels
        await pilot.press("p")
        await settle(app, pilot)
        assert screen.strategy.key != "hybrid"
        assert screen.query_one(MessageList).row_label(0) == ""


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
        entries = compare.entries
        assert entries[0].strategy is screen.strategy and entries[0].settings == screen.settings
        assert [e.strategy.key for e in entries] == default_names(snapshot, screen.strategy)
        counter = counters[compare.mode]
        expected = compare_strategies(
            snapshot,
            entries_for(snapshot, [e.strategy.key for e in entries], {}),
            counters,
            counter,
            CompareOptions(afters=artifact_afters(artifact, counter)),
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
        assert isinstance(hybrid.native, HybridResult) and screen.decision is not None
        shown = hybrid_config(screen.settings)  # type: ignore[arg-type]
        for name in ("max_context_tokens", "compression_threshold", "preserve_recent_turns"):
            assert getattr(hybrid.native.config, name) == getattr(shown, name)
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
