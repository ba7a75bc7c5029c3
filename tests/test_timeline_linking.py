"""Linking by bisection (`core.timeline.link_runs`) gives exactly what the plain scan over
every candidate of a key gives (the rule as first written, kept here as the reference),
on random logs and dumps: times missing, ties, dumps without a key part, retries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from inspector.core.timeline import (
    LINK_TOLERANCE_SECONDS,
    DebugRecord,
    DumpRef,
    EvaluationRun,
    _is_wild,
    _norm_key,
    _same,
    group_runs,
    link_runs,
)


def _reference_links(runs: Sequence[EvaluationRun], dumps: Sequence[DumpRef]) -> dict[str, int]:
    """dump id -> run position, by the scan over every candidate (the rule as written first)."""

    def linkable(run: EvaluationRun) -> bool:
        ended = bool(run.retries) and run.retries[-1].get("retried") is False
        return not ended and run.reason in (None, "reached_threshold")

    by_key: dict[Any, list[int]] = {}
    for position, run in enumerate(runs):
        if linkable(run):
            by_key.setdefault(_norm_key(*run.key), []).append(position)
    linked: dict[int, str] = {}
    times = [run.timestamp for run in runs]
    for dump in sorted(dumps, key=lambda d: d.timestamp if d.timestamp is not None else 1e300):
        if _is_wild(dump):
            candidates = [
                p
                for p, run in enumerate(runs)
                if linkable(run)
                and _same(run.key[0], dump.processor, "")
                and _same(run.key[1], dump.session_id, "unknown_session")
                and _same(run.key[2], dump.context_id, "unknown_context")
            ]
        else:
            candidates = by_key.get(_norm_key(dump.processor, dump.session_id, dump.context_id), [])
        best, best_time = None, float("-inf")
        for position in candidates:
            if position in linked:
                continue
            run_time = times[position]
            if dump.timestamp is not None and run_time is not None:
                if run_time > dump.timestamp + LINK_TOLERANCE_SECONDS:
                    continue
                if run_time >= best_time:
                    best, best_time = position, run_time
            elif best is None:
                best = position
        if best is not None:
            linked[best] = dump.id
    return {dump_id: position for position, dump_id in linked.items()}


_TIMES = st.one_of(st.none(), st.sampled_from([1.0, 2.0, 2.0005, 3.0, 5.0]))
_RECORD = st.tuples(
    _TIMES,
    st.sampled_from(["threshold_check"] * 3 + ["span_built", "compression_retry", "other"]),
    st.sampled_from(["s/1", "s/1", "s-1", "s2"]),
    st.sampled_from(["c", "c", "d"]),
    st.sampled_from(["reached_threshold", "below_threshold", None]),
    st.booleans(),
)
_DUMP = st.tuples(
    _TIMES,
    st.sampled_from(["CurrentRoundCompressor", None]),
    st.sampled_from(["s/1", "s/1", "s2", "unknown_session", None]),
    st.sampled_from(["c", "c", "d", None]),
)


def _record(number: int, spec: tuple[Any, ...]) -> DebugRecord:
    when, event, session, context, reason, retried = spec
    raw: dict[str, Any] = {
        "event": event,
        "processor": "CurrentRoundCompressor",
        "session_id": session,
        "context_id": context,
    }
    if when is not None:
        raw["timestamp"] = when
    if event == "threshold_check" and reason is not None:
        raw["reason"] = reason
    if event == "compression_retry":
        raw["retried"] = retried
    return DebugRecord(raw, "log.jsonl", number)


_TIE = (2.0, "threshold_check", "s/1", "c", "reached_threshold", True)


@settings(max_examples=300, deadline=None)
@given(st.lists(_RECORD, max_size=25), st.lists(_DUMP, max_size=12))
@example([_TIE, _TIE], [(3.0, "CurrentRoundCompressor", "s/1", "c")])  # a tie: the later run
@example([_TIE, (None, *_TIE[1:]), _TIE], [(None, "CurrentRoundCompressor", "s-1", "c")] * 2)
def test_bisection_links_as_the_scan(records: list[Any], dumps: list[Any]) -> None:
    runs = group_runs(_record(i, spec) for i, spec in enumerate(records))
    refs = [DumpRef(f"d{i}", *spec[1:], spec[0]) for i, spec in enumerate(dumps)]
    out, by_dump = link_runs(runs, refs)
    expected = _reference_links(runs, refs)
    assert {d: out.index(run) for d, run in by_dump.items()} == expected
    assert [run.dump_id for run in out] == [
        next((d for d, p in expected.items() if p == i), None) for i in range(len(runs))
    ]
