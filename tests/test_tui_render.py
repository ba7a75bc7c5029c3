"""Pure helpers behind the TUI: the context bar to scale, the sweep chart, region sentences."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest
from rich.console import Console

from inspector.core.engine import ContextEngine, Span
from inspector.core.forked.strategy import CURRENT_ROUND
from inspector.core.regions import after_span, region_reason, tool_links
from inspector.core.snapshot import snapshot_from_dict
from inspector.core.strategy.base import RegionRange, region_changes
from inspector.core.strategy.base import flip_indices as strategy_flips
from inspector.core.tokens import TokenCounter
from inspector.render.context_bar import BarParts, ContextBar, _columns
from inspector.render.message_detail import Placement, message_detail
from inspector.render.sweep_chart import ChartPoint, SweepChart, flip_indices
from inspector.tui.screens.sweep import chart_points
from tests.conftest import PARITY_CASES, REFERENCE, call, msg


def plain(renderable: object, width: int = 100) -> str:
    """Render without colour."""
    console = Console(file=io.StringIO(), width=width, color_system=None)
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]


def parts(**changes: int) -> BarParts:
    """A bar of 1,000 tokens max with easy numbers."""
    values = dict(outside=100, prefix=100, compress=300, tail=100, total=600, threshold=800)
    values.update(changes)
    return BarParts(
        segments=tuple((name, values[name]) for name in ("outside", "prefix", "compress", "tail")),
        total=values["total"],
        threshold=values["threshold"],
        min_target=100,
        context_max=1000,
        hit=False,
        reason="below_threshold",
        min_start=values["outside"] + values["prefix"],
    )


def test_bar_is_drawn_to_scale() -> None:
    columns, per_column = _columns(parts(), 100)
    assert per_column == 10
    assert columns.count("outside") == 10
    assert columns.count("prefix") == 10
    assert columns.count("compress") == 30
    assert columns.count("tail") == 10
    assert columns.count("free") == 40
    text = ContextBar(parts()).bar_text(100).plain.splitlines()
    assert text[1].index("▲") == 80  # threshold 800 of 1,000
    assert text[1].index("△") == 30  # compress starts at 200, min target 100 further


def test_tiny_region_still_shows_and_overflow_fills_the_bar() -> None:
    columns, _ = _columns(parts(compress=1, total=301), 100)
    assert "compress" in columns
    columns, _ = _columns(parts(total=2000, compress=1700), 50)
    assert "free" not in columns


def test_bar_legend_fits_80_columns() -> None:
    for line in plain(ContextBar(parts()), width=80).splitlines():
        assert len(line) <= 80


def test_sweep_chart_marks_flips() -> None:
    points = [
        ChartPoint(
            value=v / 10,
            total=500,
            threshold=v * 100,
            target=200,
            min_target=50,
            hit=v * 100 <= 500,
            reason="",
        )
        for v in range(1, 10)
    ]
    assert flip_indices(points) == [5]
    text = plain(SweepChart("trigger_ratio", points, current=0.3, height=8), width=120)
    assert "┊" in text
    assert "verdict flips between 0.5→0.6" in text


def test_sweep_points_come_from_core(counters: dict[str, TokenCounter]) -> None:
    raw = json.loads((REFERENCE / "e_target_below_min" / "input.json").read_text(encoding="utf-8"))
    snapshot = snapshot_from_dict(raw)
    strategy = CURRENT_ROUND
    prepared = strategy.prepare(snapshot, counters)
    points = list(
        strategy.sweep(prepared, strategy.recorded_settings(snapshot), "min_target_ratio", None)
    )
    drawn = chart_points(points)
    assert [p.hit for p in drawn] == [p.decision.hit for p in points]
    assert flip_indices(drawn) == strategy_flips(points) and flip_indices(drawn)


def _regions(*bounds: tuple[str, int, int]) -> tuple[RegionRange, ...]:
    return tuple(RegionRange(name, start, end, name) for name, start, end in bounds)  # type: ignore[arg-type]


def test_region_changes_are_ranges_of_differing_regions() -> None:
    old = _regions(("prefix", 0, 2), ("compress", 2, 8), ("tail", 8, 10))
    new = _regions(("prefix", 0, 2), ("compress", 2, 5), ("tail", 5, 10))
    assert region_changes(old, new, 10) == [range(5, 8)]
    assert region_changes((), (), 10) == []
    assert region_changes(new, new, 10) == []
    runs = _regions(("fold", 0, 3), ("prefix", 3, 4), ("fold", 4, 6), ("tail", 6, 10))
    changed = region_changes(runs, new, 10)
    assert sorted(i for r in changed for i in r) == [0, 1, 2, 3, 4, 5]  # 6.. tail in both


def test_after_span_finds_memory_and_recovered_messages() -> None:
    after = [
        msg("user", "question"),
        msg("user", "<memory_block_current>\n<summary>x</summary>\n</memory_block_current>"),
        msg("user", "<recovered_context>files</recovered_context>"),
        msg("assistant", "ok"),
    ]
    assert after_span(after, 1) == Span((0, 1), (1, 3), (3, 4))
    assert after_span(after, None) == Span((0, 1), (1, 3), (3, 4))


def test_tool_links_pair_calls_and_results() -> None:
    messages = [
        msg("user", "go"),
        msg("assistant", "", tool_calls=[call("a"), call("b")]),
        msg("tool", "ra", tool_call_id="a"),
        msg("tool", "rb", tool_call_id="b"),
        msg("tool", "orphan", tool_call_id="zzz"),
    ]
    links = tool_links(messages)
    assert links[1] == (2, 3)
    assert links[2] == (1,) and links[3] == (1,)
    assert 4 not in links


@pytest.mark.skipif(not PARITY_CASES.exists(), reason="parity corpus not available")
def test_region_reason_and_detail_for_every_message_of_parity_cases(
    counters: dict[str, TokenCounter],
) -> None:
    with PARITY_CASES.open(encoding="utf-8") as lines:
        raws = [json.loads(line) for _, line in zip(range(60), lines, strict=False)]
    for raw in raws:
        snapshot = snapshot_from_dict(raw)
        engine = ContextEngine(snapshot, counters)
        for tuning in (snapshot.tuning, snapshot.tuning.with_(tool_boundary=False, keep_recent=3)):
            priced = engine.priced(tuning.token_mode)
            evaluation = priced.evaluate(tuning)
            for index, message in enumerate(snapshot.messages):
                sentence = region_reason(priced, evaluation, index)
                assert sentence and "None" not in sentence
                plain(
                    message_detail(
                        message,
                        index,
                        priced.per_message_tokens[index],
                        Placement(evaluation.span.region_of(index), sentence),
                    ),
                    60,
                )


def test_render_helpers_do_not_import_textual() -> None:
    code = (
        "import sys\n"
        "import inspector.render.context_bar, inspector.render.sweep_chart\n"
        "import inspector.render.message_detail, inspector.render.recorded_view\n"
        "print('textual' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
