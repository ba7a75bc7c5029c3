"""`stats` over a streamed debug log counts runs from their records (`tally_debug_runs`,
`DebugRunTally.add_alone`): the counts are those of the full path, which makes each settled
run (`stream_debug_runs`), its debug artifact (`run_artifact`) and classifies it
(`compute_stats`), on every test log, the sample logs and generated logs holding every event
kind, outcome, retry kind, bad line and wrong-typed field; and the span entries' shape memo
of `plainly_valid` gives the whole walk's verdict.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.cli import main, run_support
from inspector.core.artifact import LoadError
from inspector.core.outcome import run_outcome
from inspector.core.stats import DebugRunTally, compute_stats, count_findings
from inspector.core.timeline import EvaluationRun
from inspector.sources import debuglog
from inspector.sources.debugstream import run_artifact, stream_debug_runs, tally_debug_runs

ROOT = Path(__file__).resolve().parent.parent
_LOGS = sorted(
    p
    for base in (ROOT / "tests" / "data", ROOT / "sample_dumps")
    for p in base.rglob("*.jsonl")
    if p.name != "llm_request.jsonl"
)
_KEYS: list[dict[str, Any]] = [
    {"processor": "CurrentRoundCompressor", "session_id": "s1", "context_id": "c1"},
    {"processor": "DialogueCompressor", "session_id": "s/2", "context_id": "c2"},
    {"session_id": "s1"},
    {"processor": 7, "session_id": ["x"], "context_id": "c1"},
]
_REASONS = ["below_threshold", "reached_threshold", "no_compressible_span", None, 7, ""]
_ERRORS = ["transient:timeout", "transient:rate_limit", "overflow:413", None, "auth:401", 3]
_RETRY_REASONS = ["transient_backoff", "budget_ratio_shrink", "retry_budget_exhausted", None, 5]
_ODD_LINES = [
    "{not json",
    "[1, 2]",
    '"text"',
    "   ",
    '{"event": 3, "processor": "P"}',
    '{"no_event": true}',
    '{"event": "threshold_check", "total_tokens": -1}',
    '{"event": "threshold_check", "total_tokens": "9000"}',
    '{"event": "threshold_check", "total_tokens": ' + "9" * 400 + "}",
    '{"event": "threshold_check", "timestamp": 1e999}',
    '{"event": "threshold_check", "timestamp": NaN}',
    '{"event": "threshold_check", "hit": 1}',
    '{"event": "compression_retry", "attempt": true}',
    '{"event": "span_built", "messages_to_compress": [{"idx": -1}]}',
    '{"event": "span_built", "messages_to_compress": [3]}',
    '{"event": "pre_call", "processor": "llm_request", "session_id": "s1"}',
    "[" * 300 + "]" * 300,
    '{"event": "threshold_check", "x": ' + "[" * 250 + "]" * 250 + "}",
]


def _entry(rng: random.Random) -> Any:
    """A span entry, mostly well formed."""
    entry: dict[str, Any] = {"idx": rng.randrange(50), "role": "tool", "tokens": 100}
    if rng.random() < 0.3:
        entry["preview"] = "x" * rng.randrange(5)
    if rng.random() < 0.08:
        entry[rng.choice(["idx", "tokens", "role"])] = rng.choice([-3, 1.5, None, True, "7"])
    return entry


def _record(rng: random.Random, event: str, when: float, key: dict[str, Any]) -> dict[str, Any]:
    """One record of `event` with varied fields (some of the wrong type)."""
    record: dict[str, Any] = {"timestamp": when, "event": event, **key}
    if event == "threshold_check":
        reason = rng.choice(_REASONS)
        if reason is not None or rng.random() < 0.5:
            record["reason"] = reason
        record["hit"] = rng.choice([True, False, None])  # not tied to the reason
        record["total_tokens"] = rng.choice([9000, 100, 0, None])
        record["threshold"] = 8000
    elif event == "span_built":
        for name in ("preserved_prefix", "messages_to_compress", "protected_tail"):
            if rng.random() < 0.8:
                record[name] = [_entry(rng) for _ in range(rng.randrange(4))]
    elif event == "compression_retry":
        record.update(
            attempt=rng.choice([1, 2, 3]),
            error_type=rng.choice(_ERRORS),
            reason=rng.choice(_RETRY_REASONS),
            retried=rng.choice([True, False, None]),
            delay_seconds=rng.choice([0.05, 1, None]),
        )
    if rng.random() < 0.05:
        record.pop("timestamp")
    return record


def varied_log(path: Path, seed: int, runs: int = 400) -> Path:
    """A log with every event kind and outcome, unknown events, bad and odd lines, keys
    without parts or with parts of the wrong type, records out of time order."""
    rng = random.Random(seed)
    lines: list[str] = []
    when = 1795900000.0
    for _ in range(runs):
        key = rng.choice(_KEYS)
        when += rng.choice([1.0, -0.5, 0.001])
        events = ["threshold_check"] if rng.random() < 0.9 else []
        events += ["span_built"] * rng.choice([0, 0, 1, 2])
        events += ["compression_retry"] * rng.choice([0, 0, 0, 1, 2, 3])
        events += ["mine"] * (rng.random() < 0.15)
        for event in events:
            lines.append(json.dumps(_record(rng, event, when, key)))
        if rng.random() < 0.08:
            lines.append(rng.choice(_ODD_LINES))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _logs(tmp_path: Path) -> list[Path]:
    return [*_LOGS, *(varied_log(tmp_path / f"v{seed}.jsonl", seed) for seed in range(6))]


def _errors(items: list[Any]) -> list[dict[str, Any]]:
    return [item.to_dict() for item in items if isinstance(item, LoadError)]


def test_the_generated_log_reaches_every_outcome_and_bad_line(tmp_path: Path) -> None:
    items = list(stream_debug_runs(varied_log(tmp_path / "v.jsonl", 0)))
    runs = [item for item in items if isinstance(item, EvaluationRun)]
    assert {"not_compressed", "silent_end", "failed", "unknown"} <= {r.outcome for r in runs}
    assert any(r.span_built is not None for r in runs) and any(r.other_events for r in runs)
    assert any(r.processor is None for r in runs)
    (error,) = _errors(items)
    assert "line" in (error.get("where") or "")


def test_the_tally_counts_what_the_full_path_counts(tmp_path: Path) -> None:
    logs = _logs(tmp_path)
    assert len(logs) > 20
    runs_seen = 0
    for log in logs:
        items = list(stream_debug_runs(log))
        runs = [item for item in items if isinstance(item, EvaluationRun)]
        artifacts = [run_artifact(run) for run in runs]
        full = compute_stats(artifacts)
        by_run = DebugRunTally()
        for run in runs:
            by_run.add(run.processor, run_outcome(run), run.retries)
        tally = DebugRunTally()
        errors = [error.to_dict() for error in tally_debug_runs(log, tally.add_alone)]
        assert errors == _errors(items), log
        assert json.dumps(tally.stats()) == json.dumps(full), log
        assert json.dumps(by_run.stats()) == json.dumps(full), log
        runs_seen += len(runs)
    assert runs_seen > 1000


def test_the_tally_of_a_short_line_limit_names_the_long_lines(tmp_path: Path) -> None:
    log = varied_log(tmp_path / "v.jsonl", 3)
    long = json.dumps({"event": "threshold_check", "reason": "x" * 300})
    log.write_text(long + "\n" + log.read_text(encoding="utf-8"), encoding="utf-8")
    items = list(stream_debug_runs(log, max_line_bytes=200))
    tally = DebugRunTally()
    errors = list(tally_debug_runs(log, tally.add_alone, max_line_bytes=200))
    assert [e.to_dict() for e in errors] == _errors(items)
    assert "over the line limit" in json.dumps(_errors(items))
    runs = [run_artifact(item) for item in items if isinstance(item, EvaluationRun)]
    assert json.dumps(tally.stats()) == json.dumps(compute_stats(runs))


def test_an_unreadable_log_is_one_error_for_the_tally(tmp_path: Path) -> None:
    missing = tmp_path / "gone.jsonl"
    tally = DebugRunTally()
    (error,) = tally_debug_runs(missing, tally.add_alone)
    assert error.to_dict() == _errors(list(stream_debug_runs(missing)))[0]
    assert tally.count == 0


def _stats_cli(paths: list[Path], *flags: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        status = main(["stats", *flags, *map(str, paths)])
    return status, out.getvalue()


def test_streamed_stats_json_is_the_stats_of_the_streamed_artifacts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_support, "STREAM_MIN_BYTES", 0)
    logs = [varied_log(tmp_path / f"w{seed}.jsonl", seed) for seed in range(2)]
    status, text = _stats_cli(logs, "--json")
    lines = [json.loads(line) for line in text.splitlines()]
    items = [item for log in logs for item in stream_debug_runs(log)]
    artifacts = [run_artifact(item) for item in items if isinstance(item, EvaluationRun)]
    expected = compute_stats(artifacts, errors=len(_errors(items)))
    expected.update(count_findings([[]] * len(artifacts)))
    assert lines[:-1] == _errors(items)
    assert lines[-1] == {"kind": "stats", "sources": [str(p) for p in logs], **expected}
    assert status != 0  # the bad lines


def _walked(record: dict[str, Any]) -> bool:
    """`plainly_valid` without the shape memos: the whole walk."""
    event = record.get("event")
    if type(event) is not str or event in debuglog._OWN_MODEL:
        return False
    return debuglog._all_hold(record, debuglog._SPECS.get(event, debuglog.COMMON_KEYS))


_value = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.sampled_from([10**400, -(10**400), 1.5, float("inf")]),
    st.text(max_size=2),
)
_numbers = st.one_of(
    st.integers(-2, 3), st.sampled_from([10**400, -(10**400), 1.5, True]), st.none()
)
_texts = st.one_of(st.text(max_size=2), st.none(), st.integers(0, 1))
_entry_dicts = st.fixed_dictionaries(
    {},
    optional={"idx": _numbers, "role": _texts, "tokens": _numbers, "preview": _texts, "x": _value},
)
_entries = st.lists(st.one_of(_entry_dicts, _entry_dicts, _entry_dicts, _value), max_size=3)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["preserved_prefix", "protected_tail", "x"]), _entries)),
    st.lists(_entries, min_size=1, max_size=4),
)
def test_the_span_entry_memo_gives_the_walks_verdict(
    pairs: list[tuple[str, Any]], refills: list[Any]
) -> None:
    first = {"event": "span_built", **dict(pairs), "messages_to_compress": refills[0]}
    records = [first, *({**first, "messages_to_compress": spans} for spans in refills)]
    for record in records:
        assert debuglog.plainly_valid(record) == _walked(record), record


@pytest.mark.parametrize(
    ("entries", "plain"),
    [
        ([{"idx": 1, "role": "tool", "tokens": 3}], True),
        ([{"idx": -1}], False),
        ([{"idx": 1}, {"idx": -1}], False),
        ([{"tokens": 10**400}], False),
        ([{"tokens": -2}, {"idx": 0, "preview": "p"}], True),
        ([{"idx": True}], False),
        ([{"idx": 1.0}], False),
        ([{"role": 3}], False),
        ([{"x": [1], "idx": None}], True),
        ([3], False),
    ],
)
def test_span_entries_are_checked_by_value_after_their_shape(
    entries: list[Any], plain: bool
) -> None:
    for _ in range(2):  # the second time from the shape memo
        record = {"event": "span_built", "messages_to_compress": entries}
        assert debuglog.plainly_valid(record) is plain
        assert _walked(record) is plain
