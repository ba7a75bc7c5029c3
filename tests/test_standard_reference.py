"""The standard family against the cases computed by the real openJiuwen 0.1.16/0.1.17/0.1.19.

Every case of `shared/reference/standard/` must agree on the trigger decision, on every field
of `expected.details`, and on the `started` state the engine builds (`expected.event_started`).
The differential corpus under `tests/data/standard/` (other cases like these, computed by the
real library with `tests/standard_differential.py`) is checked the same way.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from inspector.core.snapshot import snapshot_from_dict
from inspector.core.standard.event import started_state
from inspector.core.standard.prepared import StandardPrepared
from inspector.core.standard.strategy import for_processor
from inspector.core.tokens import TokenCounter
from tests.conftest import SHARED

STANDARD = SHARED / "reference" / "standard"
CORPUS = Path(__file__).parent / "data" / "standard"


def _cases(paths: list[Path]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in paths:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as handle:
            out.extend(json.loads(line) for line in handle if line.strip())
    return out


REFERENCE_CASES = _cases(sorted(STANDARD.glob("cases_*.jsonl.gz")))
CORPUS_CASES = _cases(sorted(CORPUS.glob("*.jsonl.gz")))


def _evaluate(raw: dict[str, Any], counters: dict[str, TokenCounter]) -> dict[str, Any]:
    snapshot = snapshot_from_dict(raw)
    strategy = for_processor(raw["processor"])
    prepared = strategy.prepare(snapshot, counters)
    assert isinstance(prepared, StandardPrepared)
    decision = strategy.decide(prepared, strategy.recorded_settings(snapshot))
    model = getattr(decision.settings, "model", None)
    return {
        "decision": decision.hit,
        "details": decision.numbers["details"],
        "event_started": started_state(prepared, model),
        "counter": prepared.counter.class_name,
        "context_max": prepared.facts.event_context_max(),
        "threshold_total": decision.total_tokens,
    }


def _disagreements(raw: dict[str, Any], got: dict[str, Any], complete: bool = True) -> list[str]:
    """Every difference; `complete`: the expected details name every field (reference cases)."""
    expected = raw["expected"]
    out = []
    if got["decision"] != expected["decision"]:
        out.append(f"decision {got['decision']} != {expected['decision']}")
    for key, value in expected["details"].items():
        if got["details"].get(key, "<absent>") != value:
            out.append(f"details.{key}: {got['details'].get(key, '<absent>')!r} != {value!r}")
    extra = set(got["details"]) - set(expected["details"])
    if extra and complete:
        out.append(f"details has extra keys {sorted(extra)}")
    if got["event_started"] != expected["event_started"]:
        out.append("event_started differs")
    if got["counter"] != expected["counter"] and expected["counter"] is not None:
        out.append(f"counter {got['counter']} != {expected['counter']}")
    if got["context_max"] != expected["context_max"]:
        out.append(f"context_max {got['context_max']} != {expected['context_max']}")
    return out


def test_reference_cases_present() -> None:
    """465 cases: 15 per processor and hook per release (RTL only in 0.1.16)."""
    per = Counter((c["openjiuwen_version"][:6], c["processor"], c["hook"]) for c in REFERENCE_CASES)
    assert len(REFERENCE_CASES) == 465
    assert set(per.values()) == {15}
    assert len(per) == 11 + 10 + 10


@pytest.mark.parametrize("raw", REFERENCE_CASES, ids=[c["id"] for c in REFERENCE_CASES])
def test_reference_case_agrees(raw: dict[str, Any], counters: dict[str, TokenCounter]) -> None:
    """Decision, every details field, the started state, counter and context_max agree."""
    got = _evaluate(raw, counters)
    assert _disagreements(raw, got) == [], raw["id"]


def test_total_tokens_is_the_compared_total(counters: dict[str, TokenCounter]) -> None:
    """`total_tokens` is the processor's own compared count (README: details.tokens or .total)."""
    checked = 0
    for raw in REFERENCE_CASES:
        details = raw["expected"]["details"]
        key = "total" if raw["processor"] == "RoundLevelCompressor" else "tokens"
        if key not in details or raw["processor"] == "MessageOffloader":
            continue
        assert _evaluate(raw, counters)["threshold_total"] == details[key], raw["id"]
        checked += 1
    assert checked >= 150


@pytest.mark.skipif(not CORPUS_CASES, reason="no differential corpus committed")
def test_differential_corpus_agrees(counters: dict[str, TokenCounter]) -> None:
    """Cases generated like the reference ones and computed by the real library agree too."""
    failures = []
    for raw in CORPUS_CASES:
        problems = _disagreements(raw, _evaluate(raw, counters), complete=False)
        if problems:
            failures.append((raw["id"], problems[:3]))
    assert failures == []
    assert len(CORPUS_CASES) >= 300
