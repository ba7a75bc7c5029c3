"""openJiuwen's `llm_request.jsonl` (0.1.18+): each record one model call, made an artifact.

A record (`processor: "llm_request"`, `event: "pre_call"`, spec `openjiuwen-versions.md`
section 3) holds the final window a ReActAgent sent to its model: `messages` (system
messages first, split off the way the message-list readers do), `tools`, the model name
and provider, and `context_window_tokens`. Its artifact (kind `llm_request`) has that
window as its snapshot: `context_max` is the window size (recorded), the model name and
provider are its `engine_config` (ReActAgent sets both on the context engine, which picks
the counter from them), and its release evidence says an `llm_request.jsonl` record was
seen (written from 0.1.18). `recorded` (`LlmRequestRecorded`) says which call it was
(sequence, request_id, model) and, once the loader has linked it, which compressor
evaluations ran on the same context just before it. When exactly one forked compressor
evaluated the call and its `threshold_check` names the same window, that compressor and
the ratios its threshold and minimum imply become the snapshot's tuning, listed under
`inferred` (as a dump's are): the compressors evaluate the window just before it is sent,
so without a compression in between it is the context their check counted. Records are type-checked by
`inspector.formats.llm_request` first (via `sources.debuglog.check_debug_record`).
Must not import Textual or Rich.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from inspector.core.artifact import Artifact, LlmRequestRecorded
from inspector.core.errors import ConfigError
from inspector.core.releases.detect import ArtifactEvidence
from inspector.core.snapshot import ContextSnapshot
from inspector.core.timeline import EvaluationRun, ModelCall, run_ref
from inspector.core.tuning import DEFAULT_KEEP_RECENT, Tuning, parse_processor
from inspector.sources.debuglog import LLM_REQUEST_FILE, is_llm_request  # noqa: F401
from inspector.sources.dump_infer import infer_ratio
from inspector.sources.formats import read_message_list


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _call_id(record: Mapping[str, Any], line: int | None) -> str:
    session = _text(record.get("session_id")) or "unknown_session"
    context = _text(record.get("context_id")) or "unknown_context"
    sequence = _whole(record.get("sequence"))
    number = str(sequence) if sequence is not None else f"line{line or 0}"
    return f"{session}/{context}/llm_request#{number}"


def read_llm_request(record: Mapping[str, Any], source: str, line: int | None) -> Artifact:
    """One record as an artifact (its evaluations are added by `with_evaluations`).

    Raises FormatError naming the bad message or tool.
    """
    messages = record.get("messages") or []
    tools = record.get("tools") or []
    parsed = read_message_list(messages, {"tools": tools} if isinstance(tools, list) else None)
    window = _whole(record.get("context_window_tokens"))
    tuning, present = Tuning(), set[str]()
    if window is not None and window > 0:
        tuning, present = tuning.with_(context_max=window), {"context_max"}
    engine_config = {
        key: value
        for key, value in (
            ("model_name", _text(record.get("model"))),
            ("model_provider", _text(record.get("provider"))),
        )
        if value is not None
    }
    call_id = _call_id(record, line)
    snapshot = ContextSnapshot(
        id=call_id,
        system_messages=parsed.system_messages,
        messages=parsed.messages,
        tools=parsed.tools,
        tuning=tuning,
        recorded_fields=frozenset(present),
        extra={"format": parsed.format, "notes": list(parsed.notes), "rebuilt_from": "llm_request"},
        engine_config=engine_config,
        release_evidence=ArtifactEvidence(has_llm_request_log=True),
    )
    statistic = record.get("statistic")
    recorded = LlmRequestRecorded(
        event="pre_call",
        sequence=_whole(record.get("sequence")),
        request_id=_text(record.get("request_id")),
        model=_text(record.get("model")),
        provider=_text(record.get("provider")),
        context_window_tokens=window,
        message_count=_whole(record.get("message_count")),
        system_message_count=_whole(record.get("system_message_count")),
        context_message_count=_whole(record.get("context_message_count")),
        tool_count=_whole(record.get("tool_count")),
        statistic=dict(statistic) if isinstance(statistic, Mapping) and statistic else None,
        usage_report=record.get("usage_report") or None,
        line=line,
    )
    timestamp = record.get("timestamp")
    return Artifact(
        source=source,
        id=call_id,
        kind="llm_request",
        snapshot=snapshot,
        recorded=recorded,
        processor=None,
        session_id=_text(record.get("session_id")),
        context_id=_text(record.get("context_id")),
        timestamp=float(timestamp)
        if isinstance(timestamp, int | float) and not isinstance(timestamp, bool)
        else None,
        extra={"format": "llm_request", "timeline": []},
    )


def model_call(artifact: Artifact) -> ModelCall:
    """What the timeline needs of a call's artifact."""
    recorded = artifact.recorded
    assert isinstance(recorded, LlmRequestRecorded)
    count = recorded.message_count
    if count is None and artifact.snapshot is not None:
        count = len(artifact.snapshot.system_messages) + len(artifact.snapshot.messages)
    return ModelCall(
        id=artifact.id,
        session_id=artifact.session_id,
        context_id=artifact.context_id,
        timestamp=artifact.timestamp,
        sequence=recorded.sequence,
        request_id=recorded.request_id,
        model=recorded.model,
        message_count=count,
        source=artifact.source,
        line=recorded.line,
    )


def _tuning_of_check(
    snapshot: ContextSnapshot, runs: Sequence[EvaluationRun]
) -> tuple[ContextSnapshot, dict[str, Any]]:
    """The snapshot with the one forked compressor's processor and ratios (module docstring)."""
    kinds = []
    for run in runs:
        try:
            kinds.append((parse_processor(run.processor or ""), run))
        except ConfigError:
            continue
    if len(kinds) != 1 or kinds[0][1].threshold_check is None:
        return snapshot, {}
    kind, run = kinds[0]
    check = run.threshold_check or {}
    context_max = snapshot.tuning.context_max
    if _whole(check.get("context_max")) != context_max:
        return snapshot, {}
    values: dict[str, Any] = {"processor": kind, "keep_recent": DEFAULT_KEEP_RECENT[kind]}
    inferred: dict[str, Any] = {
        "processor": {"value": run.processor, "from": f"the evaluation {run.processor}#{run.index}"}
    }
    for name, key, floor_one in (
        ("trigger_ratio", "threshold", True),
        ("min_target_ratio", "min_target_tokens", False),
    ):
        value = _whole(check.get(key))
        ratio = None if value is None else infer_ratio(context_max, value, floor_one)
        if ratio is not None:
            values[name] = ratio
            inferred[name] = {"value": ratio, "from": f"threshold_check.{key} = {value}"}
    try:
        tuning = snapshot.tuning.with_(**values)
    except ConfigError:
        return snapshot, {}
    present = snapshot.recorded_fields | {k for k in values if k != "keep_recent"}
    return replace(snapshot, tuning=tuning, recorded_fields=frozenset(present)), inferred


def with_evaluations(
    artifact: Artifact, runs: Sequence[EvaluationRun], timeline: list[dict[str, Any]]
) -> Artifact:
    """The call's artifact with the compressor evaluations of the same call (and the tuning
    of the one compressor that evaluated it) and its session's timeline."""
    recorded = artifact.recorded
    assert isinstance(recorded, LlmRequestRecorded)
    evaluations = tuple(run_ref(run) for run in runs)
    snapshot, inferred = artifact.snapshot, dict[str, Any]()
    if snapshot is not None:
        snapshot, inferred = _tuning_of_check(snapshot, runs)
    return replace(
        artifact,
        snapshot=snapshot,
        processor=None,
        recorded=replace(recorded, evaluations=evaluations, inferred=inferred),
        extra={**artifact.extra, "timeline": timeline},
    )
