"""Every parity case and every reference scenario agrees with openJiuwen on every field."""

from __future__ import annotations

import json

import pytest

from inspector.core.engine import PricedContext
from inspector.core.snapshot import snapshot_from_dict
from inspector.core.tokens import TokenCounter
from tests.conftest import PARITY_CASES, load_json, reference_inputs

CASES = [
    json.loads(line)
    for line in PARITY_CASES.read_text(encoding="utf-8").splitlines()
    if line.strip()
]


def _observed(raw: dict, counters: dict[str, TokenCounter]) -> dict:
    snapshot = snapshot_from_dict(raw)
    priced = PricedContext.from_snapshot(snapshot, counters[snapshot.tuning.token_mode])
    ev = priced.evaluate(snapshot.tuning)
    return {
        "hit": ev.hit,
        "reason": ev.reason,
        "total_tokens": ev.total_tokens,
        "threshold": ev.threshold,
        "target_tokens": ev.target_tokens,
        "min_target_tokens": ev.min_target_tokens,
        "effective_keep": ev.effective_keep,
        "span": ev.span.counts,
        "per_message_tokens": list(priced.per_message_tokens),
        "per_system_message_tokens": priced.per_system_message_tokens,
        "last_real_user_index": priced.last_real_user_index,
        "usage_tokens_with_tail": priced.usage.value,
        "messages_tokens": priced.messages_tokens,
        "tools_tokens": priced.tools_tokens,
        "span_target_tokens": ev.span_target_tokens,
        "context_max": snapshot.tuning.context_max,
    }


def test_corpus_has_all_cases() -> None:
    assert len(CASES) == 300


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_parity_case(case: dict, counters: dict[str, TokenCounter]) -> None:
    observed = _observed(case, counters)
    expected = case["expected"]
    unknown = set(expected) - set(observed)
    assert not unknown, f"expected fields the engine does not produce: {unknown}"
    mismatches = {k: (observed[k], v) for k, v in expected.items() if observed[k] != v}
    assert not mismatches


ANALYSED = [p for p in reference_inputs() if "library_analysis_before" in load_json(p)]


def test_reference_scenarios_found() -> None:
    assert len(ANALYSED) >= 20


@pytest.mark.parametrize("path", ANALYSED, ids=lambda p: str(p.parent.name))
def test_reference_scenario_analysis(path, counters: dict[str, TokenCounter]) -> None:
    """The library's own numbers recorded before each reference run."""
    raw = load_json(path)
    analysis = raw["library_analysis_before"]
    snapshot = snapshot_from_dict(raw)
    priced = PricedContext.from_snapshot(snapshot, counters[snapshot.tuning.token_mode])
    ev = priced.evaluate(snapshot.tuning)
    assert ev.total_tokens == analysis["total_tokens_for_threshold"]
    assert ev.threshold == analysis["threshold"]
    assert priced.last_real_user_index == analysis["last_real_user_index"]
    assert ev.effective_keep == analysis["effective_keep"]
    assert ev.span.counts == analysis["span"]
    assert ev.span_target_tokens == analysis["span_target_tokens"]
    assert list(priced.per_message_tokens) == analysis["per_message_tokens"]
    assert priced.tools_tokens == analysis["tools_tokens"]
