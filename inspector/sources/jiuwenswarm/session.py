"""A jiuwenswarm home folder read into artifacts: per session, one per processor of the chain.

For each session the context the agent held is, in order of preference:
1. the checkpoint's stored context (`agent/.checkpoint/checkpoint.db`, the messages the
   context engine saved after the last turn, with its memory blocks: exact as of that save);
2. the transcript (`history.jsonl`) with the compressions the logs recorded folded in
   (the first `before - after + 1` messages of each completed compression become one
   memory message carrying its compact summary): approximated, and said so.
Each processor of the agent's chain (`config.py`) gets one snapshot of that context with
its own merged config, release 0.1.16 and the add hook, so `why`, `tune` and `sweep`
evaluate it with the agent's thresholds; its `recorded` says what the logs show it did
(states started / noop / completed, each compression with time and sizes, or that it never
triggered) and what the whole chain does now (`core.standard.pipeline`).
Must not import Textual or Rich.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.core.artifact import Artifact, LoadError, LoadResult
from inspector.core.errors import InspectorError
from inspector.core.snapshot import ContextSnapshot, snapshot_from_dict
from inspector.core.standard.pipeline import PipelineResult, evaluate_pipeline, jiuwenswarm_chain
from inspector.core.tokens import TokenCounter
from inspector.sources.jiuwenswarm.config import OPENJIUWEN_VERSION, SwarmConfig, read_config
from inspector.sources.jiuwenswarm.history import Transcript, read_history
from inspector.sources.jiuwenswarm.home import SwarmTarget
from inspector.sources.jiuwenswarm.records import (
    CheckpointFacts,
    RecordedOperation,
    read_checkpoint,
    read_log,
)

AGENT = f"jiuwenswarm (openJiuwen {OPENJIUWEN_VERSION})"
#: Keys of a stored message that the snapshot format carries.
_MESSAGE_KEYS = ("role", "content", "name", "tool_calls", "tool_call_id", "metadata")
_MEMORY = "[DIALOGUE_MEMORY_BLOCK]"


def _plain_message(raw: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: raw[k] for k in _MESSAGE_KEYS if raw.get(k) is not None}
    if not isinstance(out.get("content"), str | list):
        out["content"] = json.dumps(out.get("content"), ensure_ascii=False, default=str)
    calls = out.get("tool_calls")
    if isinstance(calls, list):
        out["tool_calls"] = [
            {k: v for k, v in c.items() if k != "__class__"}
            for c in calls
            if isinstance(c, Mapping)
        ]
    return out


def held_from_transcript(
    transcript: Sequence[Mapping[str, Any]], operations: Sequence[RecordedOperation]
) -> tuple[list[dict[str, Any]], list[str]]:
    """The transcript with each recorded compression folded in; and what is approximated."""
    held: list[dict[str, Any]] = []
    pending = list(transcript)
    notes = [
        "messages come from the transcript: the agent's own wrapping of each user turn "
        "(the message envelope) and its system prompt are not in it"
    ]
    for op in operations:
        if not op.compressed or op.before_messages is None or op.after_messages is None:
            continue
        while len(held) < op.before_messages and pending:
            held.append(dict(pending.pop(0)))
        folded = op.before_messages - op.after_messages + 1
        if folded < 2 or folded > len(held):
            continue
        summary = op.compact_summary or "(the summary text is not in the logs)"
        held[:folded] = [{"role": "user", "content": f"{_MEMORY}\n{summary}"}]
        notes.append(
            f"{op.processor} at {op.time or '?'}: the first {folded} messages were folded into "
            "one memory message (which ones exactly is not recorded)"
        )
    held.extend(dict(m) for m in pending)
    return held, notes


def _snapshot(
    sid: str,
    name: str,
    config: Mapping[str, Any],
    messages: list[dict[str, Any]],
    swarm: SwarmConfig,
) -> ContextSnapshot:
    return snapshot_from_dict(
        {
            "id": f"{sid}/{name}",
            "processor": name,
            "processor_family": "standard",
            "openjiuwen_version": OPENJIUWEN_VERSION,
            "config": dict(config),
            "context_max": swarm.engine_context_max,
            "messages": messages,
            "hook": "add_messages",
            "added_from": max(len(messages) - 1, 0),
        }
    )


def _states_text(operations: Sequence[RecordedOperation]) -> str:
    if not operations:
        return "none recorded"
    counts = Counter(op.status for op in operations)
    return ", ".join(f"{status} {count}" for status, count in sorted(counts.items()))


def _why_not(name: str, operations: Sequence[RecordedOperation], pipeline: PipelineResult) -> str:
    if any(op.compressed for op in operations):
        return ""
    step = next((s for s in pipeline.steps if s.processor == name), None)
    now = f"; on the context now: {step.decision.reason}" if step and step.decision else ""
    if not operations:
        return (
            "its trigger never fired (openJiuwen sends no state for an evaluation that does "
            "not trigger)" + now
        )
    return f"triggered {sum(op.status == 'started' for op in operations)}×, changed nothing" + now


def _recorded(
    name: str,
    operations: Sequence[RecordedOperation],
    pipeline: PipelineResult,
    origin: str,
    notes: Sequence[str],
) -> dict[str, Any]:
    compressions = [op for op in operations if op.compressed]
    recorded: dict[str, Any] = {
        "agent": AGENT,
        "context": origin,
        "states": _states_text(operations),
        "compressions": len(compressions),
    }
    for index, op in enumerate(compressions, 1):
        recorded[f"compression {index}"] = op.line()
    why_not = _why_not(name, operations, pipeline)
    if why_not:
        recorded["why not"] = why_not
    recorded["pipeline"] = pipeline.sentence
    recorded["chain"] = " → ".join(step.processor for step in pipeline.steps)
    if notes:
        recorded["unrecoverable"] = list(notes)
    return recorded


#: The context id jiuwenswarm's agent uses for its conversation.
DEFAULT_CONTEXT = "default_context_id"


def _session_artifacts(
    target: SwarmTarget,
    sid: str,
    swarm: SwarmConfig,
    facts: CheckpointFacts,
    operations: Sequence[RecordedOperation],
    counters: Mapping[str, TokenCounter],
) -> Iterator[LoadResult]:
    folder = target.sessions_dir / sid
    history = folder / "history.jsonl"
    source = str(history if history.exists() else folder)
    transcript = Transcript()
    try:
        transcript = read_history(history)
    except OSError as error:
        if sid not in facts.contexts:
            yield LoadError(source, f"cannot read the transcript: {error}")
            return
    for number, problem in transcript.problems:
        yield LoadError(source, problem, f"line {number}")
    stored = facts.contexts.get(sid) or {}
    slots = [k for k in stored if k.endswith(".messages")]
    contexts: list[tuple[str | None, list[dict[str, Any]], str, list[str]]] = []
    for slot in sorted(slots, key=lambda k: (k != f"{DEFAULT_CONTEXT}.messages", k)):
        messages = [_plain_message(m) for m in stored[slot]]
        origin = f"checkpoint ({slot}): the stored context at the last save, exact"
        contexts.append((slot[: -len(".messages")], messages, origin, []))
    if not contexts:
        messages, notes = held_from_transcript(transcript.messages, operations)
        origin = "history.jsonl with the logged compressions folded in (approximated)"
        contexts.append((None, messages, origin, notes))
    extra = {"home": str(target.home)}
    for context_id, messages, origin, notes in contexts:
        own = list(operations)
        if len(contexts) > 1:  # several contexts: each gets the states naming it
            own = [op for op in operations if op.context_id in (None, context_id)]
        yield from context_artifacts(
            SessionContext(sid, context_id, source, origin, extra),
            messages,
            notes,
            own,
            swarm,
            counters,
        )


@dataclass(frozen=True, slots=True)
class SessionContext:
    """Which context of which session, where it was read and how."""

    session_id: str
    #: The context id (None: not known, the transcript stands for the conversation).
    context_id: str | None
    source: str
    origin: str
    extra: Mapping[str, Any]


def context_artifacts(
    where: SessionContext,
    messages: list[dict[str, Any]],
    notes: Sequence[str],
    operations: Sequence[RecordedOperation],
    swarm: SwarmConfig,
    counters: Mapping[str, TokenCounter],
) -> Iterator[LoadResult]:
    """One artifact per processor of the chain for one context of a session (or an error)."""
    if not messages:
        yield LoadError(where.source, "the session holds no messages yet")
        return
    sid = where.session_id
    base = sid if where.context_id in (None, DEFAULT_CONTEXT) else f"{sid}/{where.context_id}"
    try:
        snapshots = {n: _snapshot(base, n, c, messages, swarm) for n, c in swarm.chain}
        first = next(iter(snapshots.values()))
        pipeline = evaluate_pipeline(first, swarm.chain, counters)
    except (InspectorError, ValueError) as error:
        yield LoadError(where.source, f"cannot evaluate the session: {error}")
        return
    for name, snapshot in snapshots.items():
        own = [op for op in operations if op.processor == name]
        yield Artifact(
            source=where.source,
            id=snapshot.id,
            kind="snapshot",
            snapshot=snapshot,
            recorded=_recorded(name, own, pipeline, where.origin, notes),
            processor=name,
            session_id=sid,
            context_id=where.context_id,
            extra={"jiuwenswarm": {**where.extra, "pipeline": pipeline.to_dict()}},
        )


def _operations(
    target: SwarmTarget, logs: Sequence[Path]
) -> tuple[list[RecordedOperation], list[LoadError]]:
    found: list[RecordedOperation] = []
    errors: list[LoadError] = []
    candidates = sorted(target.logs_dir.glob("*.log")) if target.logs_dir.is_dir() else []
    for path in [*candidates, *logs]:
        try:
            found.extend(read_log(path))
        except OSError as error:
            errors.append(LoadError(str(path), f"cannot read the log: {error}"))
    return found, errors


def load_home(
    target: SwarmTarget,
    counters: Mapping[str, TokenCounter] | None = None,
    logs: Sequence[Path] = (),
) -> Iterator[LoadResult]:
    """Every artifact and error of one home folder (and stdout logs given beside it)."""
    if counters is None:
        from inspector.encoding import make_counters

        counters = make_counters()
    try:
        swarm = read_config(target.home)
    except (OSError, ValueError) as error:
        yield LoadError(str(target.home / "config" / "config.yaml"), f"unreadable config: {error}")
        swarm = SwarmConfig("", tuple(jiuwenswarm_chain({})), None, None)
    facts = CheckpointFacts()
    if target.checkpoint.is_file():
        try:
            facts = read_checkpoint(target.checkpoint)
        except (OSError, ValueError) as error:
            yield LoadError(str(target.checkpoint), str(error))
    for problem in facts.problems:
        yield LoadError(str(target.checkpoint), problem)
    operations, errors = _operations(target, logs)
    yield from errors
    sessions = target.session_ids()
    if not sessions:
        yield LoadError(str(target.sessions_dir), "no session with a transcript in this home")
    for sid in sessions:
        own = [op for op in operations if op.session_id in (None, sid)]
        ordered = sorted((op for op in own if op.status != "started"), key=lambda op: op.time or "")
        yield from _session_artifacts(
            target,
            sid,
            swarm,
            facts,
            ordered + [op for op in own if op.status == "started"],
            counters,
        )


def load_logs(logs: Sequence[Path]) -> Iterator[LoadResult]:
    """A stdout log alone (no home folder): per session, what its compression lines say."""
    by_session: dict[str, list[RecordedOperation]] = {}
    for path in logs:
        try:
            for op in read_log(path):
                by_session.setdefault(op.session_id or "?", []).append(op)
        except OSError as error:
            yield LoadError(str(path), f"cannot read the log: {error}")
    for sid, operations in by_session.items():
        for name in dict.fromkeys(op.processor for op in operations):
            own = [op for op in operations if op.processor == name]
            compressions = [op for op in own if op.compressed]
            recorded: dict[str, Any] = {
                "agent": AGENT,
                "context": "none: a log alone holds no messages (give the home folder too)",
                "states": _states_text(own),
                "compressions": len(compressions),
            }
            for index, op in enumerate(compressions, 1):
                recorded[f"compression {index}"] = op.line()
            yield Artifact(
                source=str(logs[0]) if len(logs) == 1 else ", ".join(map(str, logs)),
                id=f"{sid}/{name}",
                kind="debug",
                snapshot=None,
                recorded=recorded,
                processor=name,
                session_id=sid,
            )
