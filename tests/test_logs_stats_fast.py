"""The log fast paths give what the slow paths give.

* `stats` over streamed debug logs counts runs (`DebugRunTally`, `run_outcome`) without
  building artifacts: equal to `compute_stats` of the runs' artifacts plus the findings
  `run_findings` gives each of them;
* a debug artifact without a context has no finding (`cli.stats._found` skips looking):
  `run_findings` agrees on every such artifact the loader makes of the test logs;
* `plainly_valid` remembers what a record's shape decides: its verdict is the one the
  whole walk (`_all_hold`) gives, on random records of repeated shapes.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.findings import FindingInput, run_findings
from inspector.core.outcome import classify_outcome, run_outcome
from inspector.core.stats import DebugRunTally, compute_stats, count_findings
from inspector.sources import debuglog
from inspector.sources.debugstream import run_artifact, stream_debug_runs
from inspector.sources.loader import load_paths

ROOT = Path(__file__).resolve().parent.parent
_LOGS = sorted(
    p
    for base in (ROOT / "tests" / "data", ROOT / "sample_dumps")
    for p in base.rglob("*.jsonl")
    if p.name != "llm_request.jsonl"
)


def _varied_log(path: Path, seed: int) -> Path:
    """A log with every outcome: checks of each reason, retries of each kind and reason,
    runs ended by a retry, silent ends after two transient errors, keys without parts,
    unknown events, records out of time order, bad lines."""
    rng = random.Random(seed)
    lines: list[str] = []
    when = 1795900000.0
    reasons = ["below_threshold", "reached_threshold", "no_compressible_span", None, 7]
    errors = ["transient:timeout", "transient:rate_limit", "overflow:413", None, "auth:401"]
    retry_reasons = ["transient_backoff", "budget_ratio_shrink", "retry_budget_exhausted", None]
    for _ in range(300):
        key = {
            "processor": rng.choice(["CurrentRoundCompressor", "DialogueCompressor", None]),
            "session_id": rng.choice(["s1", "s/2", None]),
            "context_id": rng.choice(["c1", "c2"]),
        }
        key = {k: v for k, v in key.items() if v is not None or rng.random() < 0.5}
        when += rng.choice([1.0, -0.5, 0.001])
        reason = rng.choice(reasons)
        check: dict[str, Any] = {"timestamp": when, "event": "threshold_check", **key}
        if reason is not None:
            check["reason"] = reason
        check["hit"] = reason == "reached_threshold"
        if rng.random() < 0.9:
            lines.append(json.dumps(check))
        for _ in range(rng.choice([0, 0, 1, 2, 3])):
            retry = {
                "timestamp": when + 0.1,
                "event": "compression_retry",
                **key,
                "error_type": rng.choice(errors),
                "reason": rng.choice(retry_reasons),
                "retried": rng.choice([True, False, None]),
            }
            lines.append(json.dumps(retry))
        if rng.random() < 0.2:
            lines.append(json.dumps({"timestamp": when + 0.2, "event": "mine", **key}))
        if rng.random() < 0.05:
            lines.append("{not json")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _logs(tmp_path: Path) -> list[Path]:
    return [*_LOGS, *(_varied_log(tmp_path / f"v{seed}.jsonl", seed) for seed in range(4))]


def test_streamed_stats_from_runs_equal_stats_of_their_artifacts(tmp_path: Path) -> None:
    logs = _logs(tmp_path)
    assert len(logs) > 20
    for log in logs:
        runs = [r for r in stream_debug_runs(log) if not hasattr(r, "error")]
        artifacts = [run_artifact(run) for run in runs]  # type: ignore[arg-type]
        slow = compute_stats(artifacts)
        slow.update(
            count_findings(run_findings(FindingInput(snapshot=None, artifact=a)) for a in artifacts)
        )
        tally = DebugRunTally()
        for run in runs:
            assert run_outcome(run) == classify_outcome(run_artifact(run)), (log, run)  # type: ignore[arg-type]
            tally.add(run.processor, run_outcome(run), run.retries)  # type: ignore[union-attr]
        fast = tally.stats()
        fast.update(count_findings([[]] * tally.count))
        assert json.dumps(fast) == json.dumps(slow), log


def test_the_varied_log_reaches_every_outcome(tmp_path: Path) -> None:
    runs = list(stream_debug_runs(_varied_log(tmp_path / "v.jsonl", 1)))
    outcomes = {getattr(r, "outcome", None) for r in runs}
    assert {"not_compressed", "silent_end", "failed", "unknown"} <= outcomes
    assert any(hasattr(r, "error") for r in runs)  # the bad lines


def test_a_debug_artifact_without_context_has_no_finding(tmp_path: Path) -> None:
    seen = 0
    for log in _logs(tmp_path):
        for item in load_paths([log]):
            if getattr(item, "kind", None) == "debug" and item.snapshot is None:  # type: ignore[union-attr]
                assert run_findings(FindingInput(snapshot=None, artifact=item)) == []  # type: ignore[arg-type]
                seen += 1
    assert seen > 100


_odd = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.sampled_from([10**400, -(10**400)]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=2),
    st.lists(
        st.dictionaries(st.sampled_from(["idx", "role", "tokens", "x"]), st.integers(-1, 1)),
        max_size=2,
    ),
)
_keys = st.sampled_from(
    ["timestamp", "processor", "total_tokens", "hit", "reason", "attempt", "delay_seconds",
     "preserved_prefix", "budget_ratio", "other"]
)  # fmt: skip


def _walked(record: dict[str, Any]) -> bool:
    """`plainly_valid` without the shape memo: the whole walk."""
    event = record.get("event")
    if type(event) is not str or event in debuglog._OWN_MODEL:
        return False
    return debuglog._all_hold(record, debuglog._SPECS.get(event, debuglog.COMMON_KEYS))


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(["threshold_check", "span_built", "compression_retry", "mine", "pre_call"]),
    st.lists(st.tuples(_keys, _odd), max_size=6),
    st.lists(st.lists(_odd, min_size=6, max_size=6), min_size=1, max_size=4),
)
def test_the_shape_memo_gives_the_walks_verdict(
    event: str, pairs: list[tuple[str, Any]], refills: list[list[Any]]
) -> None:
    first = {"event": event, **dict(pairs)}
    records = [first]
    for values in refills:  # the same keys, other values: shapes repeat, values differ
        records.append({"event": event, **dict(zip(first, [event, *values], strict=False))})
    for record in records:
        assert debuglog.plainly_valid(record) == _walked(record), record


@pytest.mark.parametrize("record", [{"event": 3}, [], {"event": "pre_call"}])
def test_plainly_valid_refuses_what_is_not_a_plain_record(record: Any) -> None:
    assert not debuglog.plainly_valid(record)


def test_a_streamed_run_is_settled_as_settle_alone_settles_it(tmp_path: Path) -> None:
    import dataclasses

    from inspector.core.timeline import EvaluationRun, settle_alone

    checked = 0
    for log in _logs(tmp_path):
        for run in stream_debug_runs(log):
            if isinstance(run, EvaluationRun):
                bare = dataclasses.replace(run, outcome="unknown", silent_causes=())
                assert settle_alone(bare) == run, run
                checked += 1
    assert checked > 500


def test_the_typed_debug_record_is_classified_as_its_plain_mapping(tmp_path: Path) -> None:
    import dataclasses

    from inspector.core.artifact import Artifact

    checked = 0
    for log in _logs(tmp_path):
        for item in [*load_paths([log]), *(run_artifact(r) for r in _runs_of(log))]:
            if isinstance(item, Artifact) and item.kind == "debug":
                plain = dataclasses.replace(item, recorded=dict(item.recorded))
                assert classify_outcome(item) == classify_outcome(plain), item.id
                checked += 1
    assert checked > 1000


def _runs_of(log: Path) -> list[Any]:
    from inspector.core.timeline import EvaluationRun

    return [r for r in stream_debug_runs(log) if isinstance(r, EvaluationRun)]
