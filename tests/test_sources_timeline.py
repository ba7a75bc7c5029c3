"""The session timeline: runs split per key, dumps linked by key and time, outcomes and silent causes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspector.core.session_timelines import session_timeline
from inspector.core.timeline import (
    SILENT_CAUSES,
    DebugRecord,
    DumpRef,
    group_runs,
    link_runs,
    safe_name,
    settle_alone,
)


def rec(
    t: float,
    event: str,
    session: str = "s/1",
    context: str = "c",
    processor: str = "CurrentRoundCompressor",
    **values: Any,
) -> DebugRecord:
    raw = {
        "timestamp": t,
        "event": event,
        "processor": processor,
        "session_id": session,
        "context_id": context,
        **values,
    }
    return DebugRecord(raw, "log.jsonl", int(t))


def check(t: float, reason: str, **kw: Any) -> DebugRecord:
    return rec(
        t,
        "threshold_check",
        reason=reason,
        hit=reason == "reached_threshold",
        total_tokens=100,
        threshold=80,
        **kw,
    )


def retry(t: float, error_type: str, reason: str, retried: bool, **kw: Any) -> DebugRecord:
    return rec(
        t,
        "compression_retry",
        error_type=error_type,
        reason=reason,
        retried=retried,
        attempt=1,
        **kw,
    )


def test_runs_split_at_each_check_and_keep_unknown_events() -> None:
    records = [
        check(1, "below_threshold"),
        check(2, "reached_threshold"),
        rec(
            2.1,
            "span_built",
            preserved_prefix=[{}],
            messages_to_compress=[{}, {}],
            protected_tail=[],
        ),
        retry(2.2, "context_overflow", "budget_ratio_shrink", True),
        rec(2.3, "brand_new_event"),
        check(3, "reached_threshold", session="other"),
    ]
    runs = group_runs(records)
    mine = [r for r in runs if r.session_id == "s/1"]
    assert [r.index for r in mine] == [1, 2]
    assert mine[1].span_counts == {
        "preserved_prefix": 1,
        "messages_to_compress": 2,
        "protected_tail": 0,
    }
    assert len(mine[1].retries) == 1 and mine[1].other_events[0]["event"] == "brand_new_event"
    assert [r.session_id for r in runs].count("other") == 1


def test_dump_links_to_latest_earlier_reached_run_of_its_key() -> None:
    records = [
        check(1, "reached_threshold"),
        check(5, "reached_threshold"),
        check(9, "below_threshold"),
        check(6, "reached_threshold", context="d"),
    ]
    dumps = [
        DumpRef("dumpA", "CurrentRoundCompressor", "s/1", "c", 5.5),
        DumpRef("dumpB", "CurrentRoundCompressor", "s-1", None, 1.4),
    ]
    runs, by_dump = link_runs(group_runs(records), dumps)
    assert (
        by_dump["dumpA"].timestamp == 5 and by_dump["dumpB"].timestamp == 1
    )  # safe() form of the session matches
    outcomes = {(r.context_id, r.timestamp): r.outcome for r in runs}
    assert outcomes == {
        ("c", 1.0): "compressed",
        ("c", 5.0): "compressed",
        ("c", 9.0): "not_compressed",
        ("d", 6.0): "silent_end",
    }


def test_failed_runs_are_never_linked_and_silent_causes_are_narrowed() -> None:
    records = [
        check(1, "reached_threshold"),
        retry(1.1, "context_overflow", "retry_budget_exhausted", False),
        check(2, "reached_threshold"),
        retry(2.1, "transient:rate_limit", "transient_backoff", True),
        retry(2.2, "transient:rate_limit", "transient_backoff", True),
        check(3, "reached_threshold"),
    ]
    runs, by_dump = link_runs(
        group_runs(records), [DumpRef("late", "CurrentRoundCompressor", "s/1", "c", 1.5)]
    )
    assert (
        "late" not in by_dump
    )  # the only earlier run ended with retried=false: it cannot have a dump
    first, second, third = sorted(runs, key=lambda r: r.timestamp or 0)
    assert first.outcome == "failed" and first.dump_id is None and first.silent_causes == ()
    assert (
        second.outcome == "silent_end"
        and second.silent_causes[0] == SILENT_CAUSES["transient_exhausted"]
    )
    assert (
        third.outcome == "silent_end" and third.silent_causes[0] == SILENT_CAUSES["non_retryable"]
    )


def test_transient_retries_make_exhaustion_the_likeliest_silent_cause() -> None:
    records = [
        check(2, "reached_threshold"),
        retry(2.1, "transient:timeout", "transient_backoff", True),
        retry(2.2, "transient:timeout", "transient_backoff", True),
    ]
    (run,), _ = link_runs(group_runs(records), [])
    assert (
        run.outcome == "silent_end" and run.silent_causes[0] == SILENT_CAUSES["transient_exhausted"]
    )
    assert set(run.silent_causes) == set(SILENT_CAUSES.values())


def test_session_timeline_orders_runs_and_unlinked_dumps() -> None:
    runs, _ = link_runs(
        group_runs([check(1, "below_threshold"), check(3, "reached_threshold")]), []
    )
    timeline = session_timeline(
        runs, [DumpRef("orphan", "DialogueCompressor", "s/1", "x", 2.0)], "s/1"
    )
    assert [(e["kind"], e["timestamp"]) for e in timeline] == [
        ("evaluation", 1.0),
        ("dump", 2.0),
        ("evaluation", 3.0),
    ]
    assert timeline[2]["outcome"] == "silent_end" and timeline[2]["silent_causes"]
    assert session_timeline(runs, [], "someone-else") == []


def test_safe_name_matches_openjiuwen() -> None:
    assert safe_name("ojw-ref/a_current_round_plain") == "ojw-ref-a_current_round_plain"
    assert safe_name("//") == "unknown" and len(safe_name("x" * 200)) == 80


def test_a_debug_log_given_alone_may_have_compressed(tmp_path: Path) -> None:
    """Loaded alone (its dumps not among the sources), a silent end may be a success whose
    dump is elsewhere: that cause comes first and the outcome is unknown, not failed. The
    same log read with its folder is a failure (the folder would hold the dump)."""
    from inspector.core.outcome import classify_outcome
    from inspector.sources.loader import load_paths

    folder = tmp_path / "s_context" / "context_debug"
    folder.mkdir(parents=True)
    log = folder / "CurrentRoundCompressor.jsonl"
    log.write_text(
        json.dumps({"event": "threshold_check", "timestamp": 5.0, "processor": "CurrentRoundCompressor",
                    "session_id": "s", "context_id": "c", "total_tokens": 900, "threshold": 800,
                    "hit": True, "reason": "reached_threshold"}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    (alone,) = [a for a in load_paths([log]) if getattr(a, "kind", "") == "debug"]
    assert alone.recorded["silent_causes"][0] == SILENT_CAUSES["dump_not_loaded"]
    outcome = classify_outcome(alone)
    assert outcome.kind == "unknown" and "dump not loaded" in outcome.text
    (in_folder,) = [a for a in load_paths([tmp_path]) if getattr(a, "kind", "") == "debug"]
    assert in_folder.recorded["silent_causes"][0] != SILENT_CAUSES["dump_not_loaded"]
    assert classify_outcome(in_folder).kind == "failed"


def test_a_torn_last_line_loses_only_that_line(tmp_path: Path) -> None:
    """A log cut mid-line (the agent still writing) keeps every complete run; the torn line is
    one located error."""
    from inspector.core.artifact import LoadError
    from inspector.sources.loader import load_paths

    lines = [
        json.dumps({"event": "threshold_check", "timestamp": float(t), "processor": "CurrentRoundCompressor",
                    "session_id": "s", "context_id": "c", "total_tokens": 100 * t, "threshold": 800,
                    "hit": False, "reason": "below_threshold"})
        for t in (1, 2, 3)
    ]  # fmt: skip
    log = tmp_path / "CurrentRoundCompressor.jsonl"
    log.write_text("\n".join(lines) + "\n" + lines[0][:40], encoding="utf-8")
    found = list(load_paths([log]))
    errors = [r for r in found if isinstance(r, LoadError)]
    runs = [r for r in found if getattr(r, "kind", "") == "debug"]
    assert len(runs) == 3 and [r.recorded["total_tokens"] for r in runs] == [100, 200, 300]
    (error,) = errors
    assert error.where == "line 4"


def test_a_run_settled_alone_is_the_run_link_runs_gives_without_dumps() -> None:
    records = [
        check(1, "below_threshold"),
        check(2, "reached_threshold"),
        rec(2.1, "span_built", preserved_prefix=[], messages_to_compress=[{"idx": 0}]),
        retry(2.2, "transient:timeout", "transient_backoff", True),
        retry(2.3, "transient:rate_limit", "transient_backoff", True),
        rec(2.4, "some_new_event"),
        check(3, "reached_threshold"),
        retry(3.1, "context_overflow", "no_smaller_span", False),
        check(4, "reached_threshold"),
        rec(5, "span_built", session="s/2"),
        rec(6, "threshold_check", session="s/3"),
    ]
    runs = group_runs(records)
    assert len(runs) >= 6
    outcomes = set()
    for run in runs:
        (linked,), _ = link_runs([run], [], dumps_loaded=False)
        assert settle_alone(run) == linked
        outcomes.add(linked.outcome)
    assert {"not_compressed", "silent_end", "failed", "unknown"} <= outcomes
