"""`compare` reaches every strategy through the protocol (issue 11): the standard family,
a plugin strategy, and the estimate from regions that any strategy gets."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import main
from inspector.core.compare import CompareOptions, compare_strategies, default_names, entries_for
from inspector.core.messages import Message
from inspector.core.snapshot import snapshot_from_dict
from inspector.core.strategy import registry
from inspector.core.strategy.after import OFFLOAD_MARKER, after_from_regions
from inspector.core.strategy.base import RegionRange
from inspector.core.strategy.selection import recorded_strategy
from inspector.core.tokens import TokenCounter
from tests.conftest import REFERENCE, call, msg
from tests.test_standard_reference import STANDARD

E_INPUT = REFERENCE / "e_target_below_min" / "input.json"


def standard_case(processor: str, hit: bool) -> dict[str, Any]:
    """The first 0.1.19 reference case of `processor` whose decision is `hit`."""
    with gzip.open(STANDARD / "cases_0119.jsonl.gz", "rt", encoding="utf-8") as handle:
        return next(
            c
            for c in map(json.loads, handle)
            if c["processor"] == processor and bool(c["expected"]["decision"]) == hit
        )


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, Any]]]:
    status = main(list(args))
    out = capsys.readouterr().out
    return status, [json.loads(line) for line in out.splitlines() if line.startswith("{")]


@pytest.fixture
def plugin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(
        registry, "STRATEGIES", (*registry.STRATEGIES, "tests.plugins.keep_last:KEEP_LAST")
    )
    registry.all_strategies.cache_clear()
    yield
    registry.all_strategies.cache_clear()


def test_standard_snapshot_compares_its_family_by_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = standard_case("DialogueCompressor", hit=True)
    path = tmp_path / "case.json"
    path.write_text(json.dumps(case), encoding="utf-8")
    snapshot = snapshot_from_dict(case)
    names = default_names(snapshot, recorded_strategy(snapshot))
    assert names[0] == "standard.dialogue" and names[-1] == "hybrid"
    assert all(registry.get(n).family == "standard" for n in names[:-1]) and len(names) == 6
    status, records = run(capsys, "compare", str(path), "--json")
    assert status == 0
    (record,) = records
    columns = record["strategies"]
    assert [c["strategy"] for c in columns] == names
    dialogue = columns[0]
    # the reference says it compresses; the column is an estimate built from its regions
    assert dialogue["compressed"] is True and dialogue["after_source"] == "estimate"
    assert dialogue["messages_after"] < dialogue["messages_before"]
    assert any("1 summary priced at 400 tokens" in n for n in dialogue["notes"])
    assert dialogue["llm_calls"] == 1 and dialogue["losses_at_risk"] is True
    # the summary's price moves tokens_after one for one
    status, cheaper = run(capsys, "compare", str(path), "--json", "--summary-tokens", "100")
    assert cheaper[0]["strategies"][0]["tokens_after"] == dialogue["tokens_after"] - 300


def test_processors_by_class_name_and_a_flag_for_one_strategy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = standard_case("DialogueCompressor", hit=True)
    path = tmp_path / "case.json"
    path.write_text(json.dumps(case), encoding="utf-8")
    threshold = case["config"]["tokens_threshold"]
    status, records = run(
        capsys, "compare", str(path), "--processors", "DialogueCompressor,CurrentRoundCompressor,current_round",
        "--messages-threshold", "100000", "--tokens-threshold", str(threshold * 10), "--json",
    )  # fmt: skip
    assert status == 0
    dialogue, current, forked = records[0]["strategies"]
    # a class name means the snapshot's family first; a registry key is exact
    assert dialogue["strategy"] == "standard.dialogue" and current["strategy"] == (
        "standard.current_round"
    )
    assert forked["strategy"] == "current_round"
    # the raised thresholds stop the dialogue compressor: the context is unchanged
    assert dialogue["compressed"] is False and dialogue["tokens_after"] == dialogue["tokens_before"]
    err = capsys.readouterr().err
    assert "Traceback" not in err


def test_a_plugin_strategy_is_a_compare_column(
    plugin: None, capsys: pytest.CaptureFixture[str]
) -> None:
    status, records = run(
        capsys, "compare", str(E_INPUT), "--processors", "keep_last,current_round", "--json"
    )
    assert status == 0
    keep_last, current = records[0]["strategies"]
    assert keep_last["label"] == "KeepLastCompressor" and keep_last["compressed"] is True
    # keep_last keeps 3 messages and writes one summary in place of the rest
    assert keep_last["messages_after"] == 4 and keep_last["kept_verbatim"] == 3
    assert current["strategy"] == "current_round"


def test_estimate_from_regions_keeps_calls_and_prices_summaries(
    counters: dict[str, TokenCounter],
) -> None:
    snapshot = snapshot_from_dict(json.loads(E_INPUT.read_text(encoding="utf-8")))
    strategy = recorded_strategy(snapshot)
    counter = counters["len_div_4"]
    (entry,) = entries_for(snapshot, [strategy.key], {})
    prepared = strategy.prepare(snapshot, counters)
    decision = strategy.decide(prepared, entry.settings)
    messages = [
        msg("user", "task " * 50),
        msg("assistant", "", tool_calls=[call("a")]),
        msg("tool", "x" * 4000, tool_call_id="a"),
        msg("assistant", "done " * 50),
        msg("user", "next"),
    ]
    regions = (
        RegionRange("prefix", 0, 1, "kept"),
        RegionRange("offload", 2, 3, "offloaded"),
        RegionRange("compress", 3, 4, "summarised"),
    )
    import dataclasses

    shaped = dataclasses.replace(decision, hit=True, regions=regions)
    for price in (100, 900):
        after = after_from_regions(shaped, messages, counter, price)
        kinds = [(m.role, m.content == OFFLOAD_MARKER) for m in after.messages]
        # prefix, the gap (outside) kept, the tool result offloaded, one summary, the tail gap
        assert kinds == [
            ("user", False),
            ("assistant", False),
            ("tool", True),
            ("user", False),
            ("user", False),
        ]
        assert after.messages[2].tool_call_id == "a" and after.truncated == 1
        plain = counter.count_messages(list(after.messages))
        assert after.tokens_after == plain - counter.text_tokens(after.messages[3].content) + price
    unchanged = after_from_regions(dataclasses.replace(shaped, hit=False), messages, counter, 100)
    assert unchanged.compressed is False and list(unchanged.messages) == messages
    assert unchanged.tokens_after == counter.count_messages(messages)


def test_compare_keeps_the_given_order_and_drops_duplicates(
    counters: dict[str, TokenCounter],
) -> None:
    snapshot = snapshot_from_dict(json.loads(E_INPUT.read_text(encoding="utf-8")))
    entries = entries_for(snapshot, ["hybrid", "CurrentRoundCompressor", "current_round"], {})
    assert [e.strategy.key for e in entries] == ["hybrid", "current_round"]
    counter = counters[snapshot.tuning.token_mode]
    comparison = compare_strategies(snapshot, entries, counters, counter, CompareOptions())
    assert [o.strategy for o in comparison.outcomes] == ["hybrid", "current_round"]
    assert all(isinstance(m, Message) for o in comparison.outcomes for m in o.after)


def test_every_column_is_counted_with_the_comparison_counter(
    counters: dict[str, TokenCounter],
) -> None:
    """The hybrid replay is recounted with the comparison's counter, whatever its own mode."""
    case = standard_case("DialogueCompressor", hit=True)
    snapshot = snapshot_from_dict(case)
    entries = entries_for(snapshot, ["standard.dialogue", "hybrid"], {})
    for mode in ("len_div_4", "tiktoken_cl100k"):
        counter = counters[mode]
        comparison = compare_strategies(snapshot, entries, counters, counter)
        dialogue, hybrid = comparison.outcomes
        assert comparison.tokens_before == counter.count_messages(snapshot.messages)
        assert dialogue.tokens_before == hybrid.tokens_before == comparison.tokens_before
        assert hybrid.native.stopped_at < 3  # no placeholder summary in the count
        assert hybrid.tokens_after == counter.count_messages(list(hybrid.after))
