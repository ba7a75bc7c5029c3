"""Diagnosis sentences and findings on small contexts and reference scenarios."""

from __future__ import annotations

from inspector.core.artifact import Artifact
from inspector.core.diagnosis import diagnose
from inspector.core.engine import ContextEngine
from inspector.core.forked.strategy import CURRENT_ROUND
from inspector.core.snapshot import ContextSnapshot, snapshot_from_dict
from inspector.core.strategy.report import why_json
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import Tuning
from tests.conftest import REFERENCE, call, load_json, msg


def engine_for(name: str, counters: dict[str, TokenCounter]) -> ContextEngine:
    return ContextEngine(snapshot_from_dict(load_json(REFERENCE / name / "input.json")), counters)


def test_target_below_min_sentence_matches_openjiuwen_numbers(
    counters: dict[str, TokenCounter],
) -> None:
    engine = engine_for("e_target_below_min", counters)
    result = diagnose(engine, engine.snapshot.tuning)
    by_key = {c.key: c for c in result.checks}
    assert by_key["threshold"].status == "pass"
    assert by_key["threshold"].sentence.startswith(
        "total 3,765 >= threshold 3,012 (0.6 x 5,020): counted with cl100k"
    )
    assert "2 system messages, 9 context messages and 6 tools" in by_key["threshold"].sentence
    assert by_key["min_target"].status == "fail"
    assert by_key["min_target"].sentence == (
        "target_below_min: the region to compress holds 2 messages, 114 tokens: below the minimum 502 (0.1 x 5,020)"
    )


def test_below_threshold_skips_later_checks(counters: dict[str, TokenCounter]) -> None:
    engine = engine_for("c_below_threshold", counters)
    result = diagnose(engine, engine.snapshot.tuning)
    statuses = [c.status for c in result.checks]
    assert statuses[1] == "fail" and statuses[2:] == ["skip", "skip"]
    assert "short" in result.checks[1].sentence


def test_no_real_user_explained(counters: dict[str, TokenCounter]) -> None:
    engine = engine_for("d2_no_real_user_message", counters)
    span = next(c for c in diagnose(engine, engine.snapshot.tuning).checks if c.key == "span")
    assert span.status == "fail" and "no real user message" in span.sentence


def test_tool_boundary_and_usage_findings(counters: dict[str, TokenCounter]) -> None:
    engine = engine_for("k_long_coding_session", counters)
    result = diagnose(engine, engine.snapshot.tuning)
    keys = {f.key: f for f in result.findings}
    assert keys["tool_boundary_widened"].numbers["effective_keep"] == 7
    assert keys["usage_baseline_used"].numbers["usage_total_tokens"] > 0
    threshold = next(c for c in result.checks if c.key == "threshold")
    assert "usage baseline" in threshold.sentence


def test_reused_ids_named_in_finding(counters: dict[str, TokenCounter]) -> None:
    messages = (
        msg("user", "go"),
        msg("assistant", "", tool_calls=[call("call_0")]),
        msg("tool", "r1", tool_call_id="call_0"),
        msg("user", "again"),
        msg("assistant", "", tool_calls=[call("call_0")]),
        msg("tool", "r2", tool_call_id="call_0"),
    )
    snapshot = ContextSnapshot(
        "s", (), messages, (), Tuning(processor="round_level", keep_recent=1)
    )
    result = diagnose(ContextEngine(snapshot, counters), snapshot.tuning)
    finding = next(f for f in result.findings if f.key == "tool_boundary_widened")
    assert finding.severity == "warning" and "'call_0' at #1, #4" in finding.sentence


def test_hypothetical_and_mode_findings(counters: dict[str, TokenCounter]) -> None:
    engine = engine_for("a_current_round_plain", counters)
    artifact = Artifact(
        "x", "x", "snapshot", engine.snapshot, recorded_token_mode="tiktoken_cl100k"
    )
    tuning = engine.snapshot.tuning.with_(tool_boundary=False, token_mode="len_div_4")
    keys = {f.key for f in diagnose(engine, tuning, artifact).findings}
    assert {"hypothetical_no_tool_boundary", "token_mode_differs"} <= keys


def test_recorded_threshold_check_compared(counters: dict[str, TokenCounter]) -> None:
    engine = engine_for("e_target_below_min", counters)
    record = {"reason": "target_below_min", "total_tokens": 3765, "threshold": 3012}
    same = Artifact("x", "x", "debug", engine.snapshot, recorded={"threshold_check": record})
    assert "recorded_matches" in {
        f.key for f in diagnose(engine, engine.snapshot.tuning, same).findings
    }
    other = Artifact(
        "x",
        "x",
        "dump",
        engine.snapshot,
        recorded={"threshold_check": {**record, "total_tokens": 4000}},
    )
    finding = next(
        f
        for f in diagnose(engine, engine.snapshot.tuning, other).findings
        if f.key == "recorded_differs"
    )
    assert "4000" in finding.sentence and "stale" in finding.sentence


def test_why_json_contract_keys(counters: dict[str, TokenCounter]) -> None:
    engine = engine_for("e_target_below_min", counters)
    artifact = Artifact("src", "id1", "snapshot", engine.snapshot)
    prepared = CURRENT_ROUND.prepare(engine.snapshot, counters)
    decision = CURRENT_ROUND.decide(
        prepared, CURRENT_ROUND.recorded_settings(engine.snapshot), artifact
    )
    record = why_json(artifact, decision)
    for key in (
        "source",
        "id",
        "kind",
        "processor",
        "hit",
        "reason",
        "total_tokens",
        "threshold",
        "target_tokens",
        "min_target_tokens",
        "effective_keep",
        "span",
        "checks",
        "findings",
        "recorded",
    ):
        assert key in record
    assert record["processor"] == "CurrentRoundCompressor" and record["min_target_tokens"] == 502
    empty = why_json(
        Artifact("src", "id2", "debug", None, recorded={"reason": "below_threshold"}), None
    )
    assert (
        empty["hit"] is None
        and empty["span"] is None
        and empty["recorded"]["reason"] == "below_threshold"
    )
