"""The format models: strict types, unknown keys kept, NaN and huge integers refused with the
field named, the debug union on `event`, and typed `recorded` that still reads as a mapping."""

from __future__ import annotations

import json
from typing import Any

import pytest

from inspector.core.artifact import DebugRecorded, DumpRecorded, SpanCounts, recorded_value
from inspector.core.errors import FormatError
from inspector.formats import DEBUG_RECORD, DumpDocument, SnapshotEnvelope, validate
from inspector.formats.debug import (
    CompressionRetry,
    OtherEvent,
    SpanBuilt,
    ThresholdCheck,
    parse_debug_record,
)
from inspector.formats.llm_request import LlmRequestRecord
from inspector.formats.output import StatsLine, WhyLine

HUGE = 10**400
SNAPSHOT = {"messages": [{"role": "user", "content": "hi"}]}

# (model, document, field path named in the error, words the error must hold)
REFUSED: list[tuple[Any, dict[str, Any], str, str]] = [
    (SnapshotEnvelope, {**SNAPSHOT, "context_max": True}, "context_max", "must be an integer"),
    (SnapshotEnvelope, {**SNAPSHOT, "context_max": "3"}, "context_max", "got a string"),
    (SnapshotEnvelope, {**SNAPSHOT, "context_max": 3.5}, "context_max", "got a number"),
    (SnapshotEnvelope, {**SNAPSHOT, "context_max": HUGE}, "context_max", "401 digits"),
    (SnapshotEnvelope, {**SNAPSHOT, "timestamp": HUGE}, "timestamp", "out of range"),
    (SnapshotEnvelope, {**SNAPSHOT, "timestamp": float("nan")}, "timestamp", "finite"),
    (SnapshotEnvelope, {**SNAPSHOT, "timestamp": float("inf")}, "timestamp", "finite"),
    (
        SnapshotEnvelope,
        {**SNAPSHOT, "config": {"trigger_context_ratio": HUGE}},
        "config.trigger_context_ratio",
        "out of range",
    ),
    (
        SnapshotEnvelope,
        {**SNAPSHOT, "config": {"tokens_threshold": -HUGE}},
        "config.tokens_threshold",
        "out of range",
    ),
    (
        SnapshotEnvelope,
        {**SNAPSHOT, "engine_config": {"context_window_tokens": "big"}},
        "engine_config.context_window_tokens",
        "must be an integer",
    ),
    (SnapshotEnvelope, {**SNAPSHOT, "processor_family": "odd"}, "processor_family", "'forked'"),
    (SnapshotEnvelope, {**SNAPSHOT, "token_mode": "bytes"}, "token_mode", "'string_length'"),
    (SnapshotEnvelope, {**SNAPSHOT, "hook": "add"}, "hook", "'add_messages'"),
    (SnapshotEnvelope, {**SNAPSHOT, "added_from": -1}, "added_from", "must not be negative"),
    (SnapshotEnvelope, {**SNAPSHOT, "openjiuwen_version": 19}, "openjiuwen_version", "string"),
    (SnapshotEnvelope, {"processor": "CurrentRoundCompressor"}, "messages", "missing"),
    (SnapshotEnvelope, {"messages": {"role": "user"}}, "messages", "must be a list"),
    (DumpDocument, {"trigger": {"context_max": "8k"}}, "trigger.context_max", "must be an integer"),
    (DumpDocument, {"trigger": []}, "trigger", "must be an object"),
    (DumpDocument, {"span": {"protected_tail_count": -2}}, "span.protected_tail_count", "negative"),
    (DumpDocument, {"benefit": {"reduction_ratio": True}}, "benefit.reduction_ratio", "a number"),
    (DumpDocument, {"benefit": {"tokens_before": HUGE}}, "benefit.tokens_before", "out of range"),
    (
        DumpDocument,
        {"compression_response": {"usage": {"calls": "1"}}},
        "compression_response.usage.calls",
        "must be an integer",
    ),
    (
        DumpDocument,
        {"compression_request": {"messages_sent_to_model": "all"}},
        "compression_request.messages_sent_to_model",
        "must be a list",
    ),
    (DumpDocument, {"timestamp": "yesterday"}, "timestamp", "must be a number"),
    (ThresholdCheck, {"event": "threshold_check", "hit": 1}, "hit", "true or false"),
    (ThresholdCheck, {"event": "threshold_check", "total_tokens": HUGE}, "total_tokens", "range"),
    (
        SpanBuilt,
        {"event": "span_built", "protected_tail": [{"idx": "0"}]},
        "protected_tail[0].idx",
        "integer",
    ),
    (CompressionRetry, {"event": "compression_retry", "attempt": 1.0}, "attempt", "integer"),
    (
        CompressionRetry,
        {"event": "compression_retry", "delay_seconds": "0.1"},
        "delay_seconds",
        "number",
    ),
    (OtherEvent, {"event": "session_memory", "timestamp": HUGE}, "timestamp", "out of range"),
    (LlmRequestRecord, {"event": "pre_call", "sequence": True}, "sequence", "integer"),
]


@pytest.mark.parametrize(("model", "document", "path", "words"), REFUSED)
def test_bad_values_are_refused_naming_the_field(
    model: Any, document: dict[str, Any], path: str, words: str
) -> None:
    with pytest.raises(FormatError) as caught:
        validate(model, document)
    assert caught.value.where == f"key {path}"
    assert f"'{path}'" in caught.value.message and words in caught.value.message
    assert str(HUGE) not in caught.value.message  # a huge value is described, never printed


ACCEPTED: list[tuple[Any, dict[str, Any], str, Any]] = [
    (SnapshotEnvelope, {**SNAPSHOT, "context_max": 8000}, "context_max", 8000),
    (SnapshotEnvelope, {**SNAPSHOT, "timestamp": 1795975303}, "timestamp", 1795975303.0),
    (SnapshotEnvelope, {**SNAPSHOT, "token_mode": "string_length"}, "token_mode", "string_length"),
    (
        SnapshotEnvelope,
        {**SNAPSHOT, "processor_family": "standard"},
        "processor_family",
        "standard",
    ),
    (DumpDocument, {"benefit": {"reduction_ratio": 0}}, "benefit", 0.0),
    (CompressionRetry, {"event": "compression_retry", "budget_ratio": 1}, "budget_ratio", 1.0),
]


@pytest.mark.parametrize(("model", "document", "name", "expected"), ACCEPTED)
def test_good_values_are_read(
    model: Any, document: dict[str, Any], name: str, expected: Any
) -> None:
    value = getattr(validate(model, document), name)
    if name == "benefit":
        value = value.reduction_ratio
    assert value == expected and type(value) is type(expected)


def test_unknown_keys_are_kept_at_every_level() -> None:
    snapshot = validate(
        SnapshotEnvelope,
        {**SNAPSHOT, "expected": {"decision": True}, "config": {"messages_to_keep": 5}},
    )
    assert snapshot.extras() == {"expected": {"decision": True}}
    assert snapshot.config is not None and snapshot.config.extras() == {"messages_to_keep": 5}
    dump = validate(DumpDocument, {"benefit": {"tokens_before": 5, "new_key": [1]}, "x": 1})
    assert dump.extras() == {"x": 1}
    assert dump.benefit is not None and dump.benefit.extras() == {"new_key": [1]}


@pytest.mark.parametrize(
    ("record", "model"),
    [
        ({"event": "threshold_check", "reason": "below_threshold"}, ThresholdCheck),
        ({"event": "span_built", "preserved_prefix": []}, SpanBuilt),
        ({"event": "compression_retry", "attempt": 2}, CompressionRetry),
        ({"event": "pre_call", "processor": "llm_request", "messages": []}, LlmRequestRecord),
        ({"event": "memory_flush", "whatever": {"a": 1}}, OtherEvent),
    ],
)
def test_debug_records_are_a_union_on_event(record: dict[str, Any], model: type) -> None:
    assert type(parse_debug_record(record)) is model
    assert type(DEBUG_RECORD.validate_python(record)) is model
    kept = DEBUG_RECORD.validate_json(json.dumps(record))
    assert kept.model_dump(exclude_unset=True) == record  # unknown keys and events kept


def test_debug_record_with_a_bad_event_is_refused() -> None:
    with pytest.raises(FormatError) as caught:
        parse_debug_record({"event": 7, "processor": "CurrentRoundCompressor"})
    assert caught.value.where == "key event" and "must be a string" in caught.value.message


def test_typed_recorded_reads_as_the_contract_mapping() -> None:
    check = {"event": "threshold_check", "reason": "reached_threshold", "total_tokens": 10}
    dump = DumpRecorded(
        span=SpanCounts(3, 15, 0),
        tokens_before=5460,
        tokens_after=4047,
        retries=({"attempt": 1},),
        threshold_check=check,
    )
    assert dump.tokens_before == 5460 and dump.span.messages_to_compress == 15
    assert dump["span"] == {"preserved_prefix": 3, "messages_to_compress": 15, "protected_tail": 0}
    assert dump["retries"] == [{"attempt": 1}] and dump["threshold_check"] == check
    assert "stale_usage" not in dump and dump.get("stale_usage") is None  # written only when known
    assert recorded_value(dump, "threshold_check.reason") == "reached_threshold"
    assert json.loads(json.dumps(dict(dump)))["tokens_after"] == 4047
    debug = DebugRecorded(reason="below_threshold", outcome="not_compressed")
    assert set(debug) >= {"threshold_check", "silent_causes", "line"} and debug["span"] is None
    assert debug == debug.to_dict() and debug != dump


def test_why_and_stats_lines_validate_against_their_models() -> None:
    why = {
        "source": "a.json",
        "id": "a",
        "kind": "debug",
        "processor": None,
        "hit": None,
        "reason": None,
        "total_tokens": None,
        "threshold": None,
        "target_tokens": None,
        "min_target_tokens": None,
        "effective_keep": None,
        "span": None,
        "checks": [],
        "findings": [],
        "recorded": DebugRecorded(reason="below_threshold").to_dict(),
    }
    line = WhyLine.model_validate_json(json.dumps(why))
    assert isinstance(line.recorded, DebugRecorded) and line.recorded.reason == "below_threshold"
    with pytest.raises(ValueError):
        WhyLine.model_validate_json(json.dumps({**why, "kind": "folder"}))
    with pytest.raises(ValueError):
        StatsLine.model_validate_json(json.dumps({"kind": "stats"}))
