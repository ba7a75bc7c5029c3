"""Pins (`inspector.core.pins`): messages kept verbatim, a what-if for every strategy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.core.pins import (
    KEPT_REGIONS,
    PINNED_LABEL,
    PinError,
    apply_pins,
    format_pins,
    parse_pins,
    with_tool_groups,
)
from inspector.core.snapshot import ContextSnapshot, snapshot_from_dict
from inspector.core.strategy import registry
from inspector.core.strategy.selection import select
from inspector.core.tokens import TokenCounter
from tests.conftest import call


def context(pairs: int = 3) -> ContextSnapshot:
    """A task, then `pairs` tool call/result pairs with long results (the current round)."""
    messages: list[dict] = [{"role": "user", "content": "Find why the nightly export fails."}]
    for n in range(pairs):
        messages.append(
            {"role": "assistant", "content": f"step {n}", "tool_calls": [call(f"c{n}", "bash")]}
        )
        messages.append(
            {"role": "tool", "tool_call_id": f"c{n}", "content": f"log line {n} " * 300}
        )
    return snapshot_from_dict(
        {
            "id": "pins",
            "processor": "CurrentRoundCompressor",
            "config": {
                "trigger_context_ratio": 0.5,
                "min_target_context_ratio": 0.1,
                "keep_recent_messages": 0,
            },
            "context_max": 4000,
            "token_mode": "tiktoken_cl100k",
            "system_messages": [{"role": "system", "content": "You are an agent."}],
            "messages": messages,
        }
    )


def test_parse_and_format_pins() -> None:
    assert parse_pins("3, 7-9,3") == {3, 7, 8, 9}
    assert format_pins({9, 3, 7, 8, 12}) == "3,7-9,12"
    assert parse_pins(format_pins({0, 2, 3, 4, 10})) == {0, 2, 3, 4, 10}
    for bad in ("x", "5-2", "-1", "1-b"):
        with pytest.raises(PinError):
            parse_pins(bad)


def test_a_pinned_tool_result_pins_its_call() -> None:
    snapshot = context()
    assert with_tool_groups(snapshot.messages, {4}) == {3, 4}
    assert with_tool_groups(snapshot.messages, {1}) == {1, 2}
    assert with_tool_groups(snapshot.messages, {0, 99}) == {0}


def test_pins_take_messages_out_of_the_span(counters: dict[str, TokenCounter]) -> None:
    snapshot = context()
    selection = select(snapshot, {})
    strategy, settings = selection.strategy, selection.settings
    result = apply_pins(strategy, snapshot, settings, counters, {4})
    base, pinned = result.base, result.decision
    assert base.hit and base.region_of(4) == "compress"
    assert result.lifted == {3, 4}
    # the pinned pair is kept, the other pairs still compress, the total is unchanged
    assert pinned.region_label(3) == pinned.region_label(4) == PINNED_LABEL
    assert pinned.region_of(1) == pinned.region_of(5) == "compress"
    assert pinned.total_tokens == base.total_tokens
    assert pinned.span["messages_to_compress"] == base.span["messages_to_compress"] - 2
    assert pinned.message_tokens == base.message_tokens
    assert pinned.numbers["pins"] == [3, 4]
    assert any(f.key == "pins_what_if" for f in pinned.findings)
    # regions still cover every message exactly once, in order
    covered = sorted(i for r in pinned.regions for i in range(r.start, r.end))
    assert covered == list(range(len(snapshot.messages)))


def test_pinning_the_whole_span_stops_compression(counters: dict[str, TokenCounter]) -> None:
    snapshot = context()
    selection = select(snapshot, {})
    result = apply_pins(
        selection.strategy, snapshot, selection.settings, counters, parse_pins("1-6")
    )
    assert result.base.hit and not result.decision.hit
    assert result.decision.reason in ("no_compressible_span", "target_below_min")


def test_pins_in_kept_regions_change_nothing(counters: dict[str, TokenCounter]) -> None:
    snapshot = context()
    selection = select(snapshot, {})
    result = apply_pins(selection.strategy, snapshot, selection.settings, counters, {0, 70})
    assert result.lifted == frozenset() and result.out_of_range == {70}
    assert result.decision is result.base


@pytest.mark.parametrize("key", registry.strategy_keys())
def test_every_strategy_keeps_pinned_messages_out_of_changing_regions(
    key: str, counters: dict[str, TokenCounter]
) -> None:
    snapshot = context(pairs=6)
    selection = select(snapshot, {"processor": key})
    result = apply_pins(selection.strategy, snapshot, selection.settings, counters, {3, 4})
    assert result.pinned == {3, 4}
    for index in result.pinned:
        assert result.decision.region_of(index) in KEPT_REGIONS
    if not result.lifted:
        assert result.decision is result.base
        return
    decision, base = result.decision, result.base
    assert decision.numbers["pins"] == sorted(result.lifted)
    assert all(decision.region_label(i) == PINNED_LABEL for i in result.lifted)
    finding = next(f for f in decision.findings if f.key == "pins_what_if")
    shift = (decision.total_tokens or 0) - (base.total_tokens or 0)
    assert finding.numbers["shift"] == shift
    if selection.strategy.family == "forked":
        assert shift == 0  # the forked engine counts system messages in its total
    else:
        assert (f"{shift:+,} tokens" in finding.sentence) == bool(shift)


def test_why_pin_flag_and_pins_saved_in_a_snapshot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "ctx.json"
    source.write_text(json.dumps(context().to_dict()), encoding="utf-8")
    assert main(["why", str(source), "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(["why", str(source), "--json", "--pin", "1-6"]) == 0
    pinned = json.loads(capsys.readouterr().out)
    assert plain["hit"] and not pinned["hit"] and pinned["pins"] == [1, 2, 3, 4, 5, 6]
    # the snapshot export carries the marks, and a pinned snapshot reads them back
    assert main(["snapshot", str(source), "--pin", "1-6"]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert exported["pins"] == [1, 2, 3, 4, 5, 6]
    saved = tmp_path / "pinned.json"
    saved.write_text(json.dumps(exported), encoding="utf-8")
    assert main(["why", str(saved), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pins"] == [1, 2, 3, 4, 5, 6]
    assert main(["why", str(saved), "--json", "--pin", ""]) == 0
    assert json.loads(capsys.readouterr().out)["hit"]
    assert main(["why", str(source), "--pin", "x-y"]) == 2
    assert "--pin" in capsys.readouterr().err


def test_report_shows_every_strategy_without_and_with_pins(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from inspector.core.pins import pins_across_strategies
    from inspector.encoding import make_counters

    snapshot = context()
    source = tmp_path / "ctx.json"
    source.write_text(json.dumps(snapshot.to_dict()), encoding="utf-8")
    assert main(["report", str(source), "--pin", "1-6"]) == 0
    out = capsys.readouterr().out
    table = out.split("## Pins across strategies (what-if)")[1].split("\n## ")[0]
    rows = pins_across_strategies(snapshot, make_counters(), parse_pins("1-6"))
    assert {r.strategy for r in rows} == set(registry.strategy_keys())
    for row in rows:
        line = next(x for x in table.splitlines() if x.startswith(f"| {row.strategy} |"))
        assert f"| {row.before.verdict} | {row.after.verdict} ({row.after.reason}) |" in line
    current = next(r for r in rows if r.strategy == "current_round")
    assert current.changed and current.before.hit and not current.after.hit
    assert main(["report", str(source)]) == 0
    assert "Pins across strategies" not in capsys.readouterr().out
