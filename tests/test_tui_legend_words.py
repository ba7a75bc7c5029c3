"""The context bar's legend names each part in the words of the strategy's regions: a standard
snapshot's legend said prefix / compress / tail while its Why tab said kept / summarised
rounds (docs/tui-captures/03-standard-context-120x40.txt). Checked at three sizes; the words
are the decision's own region labels, shortened (what is in brackets dropped) only when the
whole legend would not fit."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from inspector.core.tokens import TokenCounter
from inspector.render.context_bar import ContextBar, decision_parts
from inspector.tui.app import create_app
from inspector.tui.screens.context import ContextScreen
from inspector.tui.screens.context_view import legend_labels
from inspector.tui.widgets.context_bar_panel import ContextBarPanel
from tests.conftest import REFERENCE
from tests.test_tui_app import text_of
from tests.test_tui_fixes_layout import lines_of
from tests.test_tui_latency import DEMO_DUMP, settle

STANDARD = REFERENCE.parent / "standard" / "cases_0119.jsonl.gz"


@pytest.fixture
def dialogue_case(tmp_path: Path) -> Path:
    """One DialogueCompressor snapshot of openJiuwen 0.1.19 that compresses, as its own file."""
    with gzip.open(STANDARD, "rt", encoding="utf-8") as packed:
        for line in packed:
            case = json.loads(line)
            if case.get("processor") == "DialogueCompressor":
                path = tmp_path / "dialogue.jsonl"
                path.write_text(line, encoding="utf-8")
                return path
    raise AssertionError("no DialogueCompressor case")


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 60)])
async def test_a_standard_snapshots_legend_uses_its_regions_words(
    size: tuple[int, int], dialogue_case: Path, counters: dict[str, TokenCounter]
) -> None:
    app = create_app([str(dialogue_case)], counters=counters)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, ContextScreen) and screen.decision is not None
        assert screen.strategy.family == "standard"
        words = legend_labels(screen.decision)
        assert {"compress", "tail"} <= set(words)  # regions the strategy names its own way
        bar = screen.query_one(ContextBarPanel)
        legend = " ".join(lines_of(bar)[2:])
        for name, label in words.items():
            assert f"■ {label} " in legend or f"■ {label.split(' (')[0]} " in legend, (name, legend)
            assert f"■ {name} " not in legend
        assert all(len(line.rstrip()) <= size[0] for line in lines_of(bar))
        # the Why tab names the same regions the same way
        why = text_of(screen.query_one("#why-verdict"))
        for label in words.values():
            assert label in why


async def test_a_forked_contexts_legend_is_unchanged(counters: dict[str, TokenCounter]) -> None:
    """The forked compressors' region words are the legend's common ones: nothing renamed."""
    app = create_app([str(DEMO_DUMP)], counters=counters)
    async with app.run_test(size=(200, 60)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, ContextScreen) and screen.decision is not None
        assert legend_labels(screen.decision) == {}
        bar = screen.query_one(ContextBarPanel)
        parts = decision_parts(screen.decision)
        assert parts is not None
        plain = ContextBar(parts).legend_lines(bar.content_region.width)
        assert [line.rstrip() for line in lines_of(bar)[2:]] == [t.plain.rstrip() for t in plain]
