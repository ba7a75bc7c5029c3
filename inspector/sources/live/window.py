"""Rebuild a session's latest context window from trajectory `context.window.commit` events.

Pure state machine for spec/jiuwenswarm-live.md section 7.1: seed from a checkpoint, merge
record pages (blobs cached by hash), collect schema-v2 events from spans and span events
(deduplicated by event id), order them by epoch and subject sequence, replay commits
(baselines and insert/remove/move/replace deltas), detect gaps, and turn the latest window
into a core `ContextSnapshot`. No I/O: the HTTP client feeds it response bodies.
Imports the standard library and `inspector.core` only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inspector.core.artifact import Artifact
from inspector.core.errors import InspectorError
from inspector.core.messages import Message
from inspector.core.snapshot import ContextSnapshot
from inspector.core.tuning import Tuning

EVENT_KINDS = frozenset(
    {"context.window.commit", "compaction.completed", "ask_user.requested", "ask_user.resolved"}
)
BASELINE_TRANSITIONS = frozenset({"epoch_baseline", "trim_baseline"})
SEQ_PREFIX = "@oj-seq:"


def attribute_value(value: Any) -> Any:
    """The Python value of one OTLP/JSON attribute value (`intValue` strings become ints)."""
    if not isinstance(value, Mapping):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return value["intValue"]
    if "doubleValue" in value:
        return value["doubleValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "arrayValue" in value:
        items = (
            value["arrayValue"].get("values", [])
            if isinstance(value["arrayValue"], Mapping)
            else []
        )
        return [attribute_value(v) for v in items]
    return None


def attributes(raw: Any) -> dict[str, Any]:
    """An OTLP attribute list as a dict."""
    out: dict[str, Any] = {}
    if isinstance(raw, list):
        for item in raw:
            if isinstance(item, Mapping) and isinstance(item.get("key"), str):
                out[item["key"]] = attribute_value(item.get("value"))
    return out


def record_spans(record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The span(s) of one record's `otlp` body (normally exactly one)."""
    spans: list[Mapping[str, Any]] = []
    otlp = record.get("otlp")
    if not isinstance(otlp, Mapping):
        return spans
    for resource in otlp.get("resourceSpans") or []:
        for scope in (resource or {}).get("scopeSpans") or []:
            for span in (scope or {}).get("spans") or []:
                if isinstance(span, Mapping):
                    spans.append(span)
    return spans


@dataclass(frozen=True, slots=True)
class TrajectoryEvent:
    """One schema-v2 event (`context.window.commit`, `compaction.completed`, `ask_user.*`)."""

    event_id: str
    kind: str
    subject_id: str
    epoch: str
    sequence: int
    recorded_at: int
    payload: Mapping[str, Any]
    span_id: str
    change_seq: int
    parent_span_id: str | None = None


def events_of_record(record: Mapping[str, Any]) -> list[TrajectoryEvent]:
    """The v2 events a record carries: the span itself, or events on it (attributes merged)."""
    out: list[TrajectoryEvent] = []
    change_seq = _as_int(record.get("change_seq")) or 0
    for span in record_spans(record):
        span_attrs = attributes(span.get("attributes"))
        candidates = [span_attrs]
        for span_event in span.get("events") or []:
            if isinstance(span_event, Mapping):
                candidates.append({**span_attrs, **attributes(span_event.get("attributes"))})
        for attrs in candidates:
            kind = attrs.get("openjiuwen.trajectory.event_kind")
            if kind not in EVENT_KINDS:
                continue
            payload_text = attrs.get("openjiuwen.trajectory.payload")
            try:
                payload = json.loads(payload_text) if isinstance(payload_text, str) else {}
            except ValueError:
                payload = {"_invalid_payload": payload_text}
            out.append(
                TrajectoryEvent(
                    event_id=str(
                        attrs.get("openjiuwen.trajectory.event_id")
                        or f"{span.get('spanId')}:{kind}"
                    ),
                    kind=str(kind),
                    subject_id=str(
                        attrs.get("openjiuwen.trajectory.subject_id")
                        or attrs.get("openjiuwen.execution.subject.id")
                        or "main"
                    ),
                    epoch=str(attrs.get("openjiuwen.trajectory.sequence_epoch") or ""),
                    sequence=_as_int(attrs.get("openjiuwen.trajectory.subject_sequence")) or 0,
                    recorded_at=_as_int(attrs.get("openjiuwen.trajectory.recorded_at_unix_nano"))
                    or 0,
                    payload=payload if isinstance(payload, Mapping) else {"_payload": payload},
                    span_id=str(span.get("spanId") or ""),
                    change_seq=change_seq,
                    parent_span_id=span.get("parentSpanId"),
                )
            )
    return out


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return None


class DeltaError(InspectorError):
    """A commit's delta violates a precondition (spec 6.3); the commit is invalid."""


def apply_delta(base: Sequence[Mapping[str, Any]], delta: Sequence[Any]) -> list[Mapping[str, Any]]:
    """Apply insert/remove/move/replace ops in order to a copy of `base` (spec 6.3)."""
    window = list(base)

    def position(message_id: Any) -> int:
        for index, message in enumerate(window):
            if message.get("message_id") == message_id:
                return index
        raise DeltaError(f"message {message_id!r} is not in the base window")

    for number, op in enumerate(delta):
        if not isinstance(op, Mapping):
            raise DeltaError(f"delta[{number}] is not an object")
        kind = op.get("op")
        message_id = op.get("message_id")
        index = op.get("index")
        if kind == "insert":
            if any(m.get("message_id") == message_id for m in window):
                raise DeltaError(f"insert of {message_id!r}, which already exists")
            message = op.get("message")
            if (
                not isinstance(message, Mapping)
                or not isinstance(index, int)
                or not 0 <= index <= len(window)
            ):
                raise DeltaError(
                    f"delta[{number}]: insert needs a message and an index <= {len(window)}"
                )
            window.insert(index, message)
        elif kind == "remove":
            del window[position(message_id)]
        elif kind == "replace":
            message = op.get("message")
            if not isinstance(message, Mapping):
                raise DeltaError(f"delta[{number}]: replace needs a message")
            window[position(message_id)] = message
        elif kind == "move":
            at = position(message_id)
            if not isinstance(index, int) or not 0 <= index < len(window):
                raise DeltaError(f"delta[{number}]: move index out of range")
            window.insert(index, window.pop(at))
        else:
            raise DeltaError(f"delta[{number}]: unknown op {kind!r}")
    return window


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


@dataclass(slots=True)
class WindowState:
    """The result of a replay: the latest window and everything noticed on the way."""

    subject_id: str
    window_id: str | None = None
    messages: list[Mapping[str, Any]] = field(default_factory=list)
    partial: bool = False
    diagnostics: list[str] = field(default_factory=list)
    compactions: list[Mapping[str, Any]] = field(default_factory=list)
    commits: int = 0
    last_event_id: str | None = None
    #: Every window seen in the replay, by id (to diff a compaction's input and output).
    windows: dict[str, list[Mapping[str, Any]]] = field(default_factory=dict)


class WindowRebuilder:
    """Accumulates trajectory responses for one subject and replays them into a window."""

    def __init__(self, subject_id: str = "main") -> None:
        self.subject_id = subject_id
        self.blobs: dict[str, str] = {}
        self.sequences: dict[str, list[str]] = {}
        self.events: dict[str, TrajectoryEvent] = {}
        self.seed_window_id: str | None = None
        self.seed_messages: list[Mapping[str, Any]] | None = None
        self.seed_epoch: str | None = None
        self.seed_next_sequence: int = 1
        self.seed_partial = False
        self.diagnostics_seed: list[str] = []

    def reset(self) -> None:
        """Forget everything except the blob cache (content-addressed, never stale)."""
        blobs = self.blobs
        self.__init__(self.subject_id)  # type: ignore[misc]
        self.blobs = blobs

    def merge_content(self, body: Mapping[str, Any]) -> None:
        """Cache the `sequences` and `blobs` of any response body."""
        sequences = body.get("sequences")
        if isinstance(sequences, Mapping):
            for chain, hashes in sequences.items():
                if isinstance(hashes, list):
                    self.sequences[str(chain)] = [str(h) for h in hashes]
        blobs = body.get("blobs")
        if isinstance(blobs, Mapping):
            for blob_hash, text in blobs.items():
                if isinstance(text, str):
                    self.blobs[str(blob_hash)] = text

    def resolve_chain(self, chain_hash: str) -> tuple[list[Any], bool]:
        """The JSON elements of a content-addressed chain, and whether all were found."""
        hashes = self.sequences.get(chain_hash)
        if hashes is None:
            return [], False
        elements: list[Any] = []
        complete = True
        for blob_hash in hashes:
            text = self.blobs.get(blob_hash)
            if text is None:
                complete = False
                continue
            try:
                elements.append(json.loads(text))
            except ValueError:
                complete = False
        return elements, complete

    def missing_chains(self) -> list[str]:
        """Chain hashes the seed needs whose blobs are not cached (fetch via /sequences)."""
        return [h for h in self.sequences if any(b not in self.blobs for b in self.sequences[h])]

    def seed_checkpoint(self, body: Mapping[str, Any]) -> bool:
        """Seed from a `/checkpoints` response; True when it had one for this subject."""
        self.merge_content(body)
        for checkpoint in body.get("checkpoints") or []:
            if (
                not isinstance(checkpoint, Mapping)
                or checkpoint.get("subject_id") != self.subject_id
            ):
                continue
            v2 = ((checkpoint.get("state") or {}).get("v2") or {}).get(self.subject_id)
            if not isinstance(v2, Mapping):
                continue
            window = v2.get("window") or {}
            ref = window.get("messages") or {}
            chain = ref.get("hash") if isinstance(ref, Mapping) else None
            messages, complete = self.resolve_chain(str(chain)) if chain else ([], False)
            depth = _as_int(ref.get("depth")) if isinstance(ref, Mapping) else None
            if depth is not None and depth != len(messages):
                complete = False
            self.seed_window_id = window.get("id")
            self.seed_messages = [m for m in messages if isinstance(m, Mapping)]
            self.seed_epoch = v2.get("sequence_epoch")
            self.seed_next_sequence = _as_int(v2.get("next_sequence")) or 1
            self.seed_partial = not complete
            if not complete:
                self.diagnostics_seed.append(
                    f"checkpoint window {self.seed_window_id} has missing content"
                )
            if v2.get("blocked"):
                self.seed_partial = True
                self.diagnostics_seed.append(
                    "checkpoint says the subject's event chain was blocked"
                )
            return True
        return False

    def add_records(self, body: Mapping[str, Any]) -> int:
        """Merge one `/records` page; returns how many new v2 events of this subject it held."""
        self.merge_content(body)
        added = 0
        for record in body.get("records") or []:
            if not isinstance(record, Mapping):
                continue
            for event in events_of_record(record):
                if event.subject_id != self.subject_id:
                    continue
                known = self.events.get(event.event_id)
                if known is None:
                    added += 1
                    self.events[event.event_id] = event
                elif known.span_id == event.span_id and event.change_seq >= known.change_seq:
                    self.events[event.event_id] = event
        return added

    def ordered_events(self) -> list[TrajectoryEvent]:
        """Events grouped by epoch (oldest epoch first), then by subject sequence."""
        epoch_start: dict[str, int] = {}
        for event in self.events.values():
            start = epoch_start.get(event.epoch)
            if start is None or event.recorded_at < start:
                epoch_start[event.epoch] = event.recorded_at
        if self.seed_epoch is not None:
            epoch_start[self.seed_epoch] = min([*epoch_start.values(), 0]) - 1
        return sorted(
            self.events.values(),
            key=lambda e: (epoch_start[e.epoch], e.epoch, e.sequence, e.recorded_at, e.event_id),
        )

    def rebuild(self) -> WindowState:
        """Replay the seed and every event into the latest window of the subject."""
        state = WindowState(self.subject_id, diagnostics=list(self.diagnostics_seed))
        windows = state.windows
        expected: dict[str, int] = {}
        blocked: set[str] = set()
        if self.seed_window_id is not None and self.seed_messages is not None:
            windows[self.seed_window_id] = list(self.seed_messages)
            state.window_id = self.seed_window_id
            state.messages = list(self.seed_messages)
            state.partial = self.seed_partial
            if self.seed_epoch is not None:
                expected[self.seed_epoch] = self.seed_next_sequence
        for event in self.ordered_events():
            want = expected.get(
                event.epoch, 1 if event.epoch != self.seed_epoch else self.seed_next_sequence
            )
            if event.epoch == self.seed_epoch and event.sequence < self.seed_next_sequence:
                continue  # folded into the checkpoint already
            if event.sequence != want and event.sequence > 0:
                if event.sequence > want:
                    state.diagnostics.append(
                        f"sequence gap in {event.epoch}: expected {want}, got {event.sequence}"
                    )
                    blocked.add(event.epoch)
            expected[event.epoch] = max(want, event.sequence + 1)
            state.last_event_id = event.event_id
            if event.kind == "compaction.completed":
                state.compactions.append({"event_id": event.event_id, **event.payload})
                continue
            if event.kind != "context.window.commit":
                continue
            self._replay_commit(event, windows, state, blocked)
        return state

    def _replay_commit(
        self,
        event: TrajectoryEvent,
        windows: dict[str, list[Mapping[str, Any]]],
        state: WindowState,
        blocked: set[str],
    ) -> None:
        payload = event.payload
        window_id = payload.get("window_id")
        if not isinstance(window_id, str):
            state.diagnostics.append(f"{event.event_id}: commit without window_id ignored")
            return
        stated_raw = payload.get("messages")
        full = isinstance(stated_raw, list)
        stated: list[Mapping[str, Any]] = []
        if isinstance(stated_raw, list):
            stated = [m for m in stated_raw if isinstance(m, Mapping)]
        base_id = payload.get("base_window_id")
        if event.epoch in blocked and not full:
            state.partial = True
            state.diagnostics.append(
                f"{event.event_id}: skipped, epoch {event.epoch} is blocked by a gap"
            )
            return
        if payload.get("transition_kind") in BASELINE_TRANSITIONS and full:
            result: list[Mapping[str, Any]] = stated
        else:
            base = [] if base_id is None else windows.get(str(base_id))
            if base is None:
                if full:
                    result = stated
                else:
                    state.partial = True
                    state.diagnostics.append(
                        f"{event.event_id}: base window {base_id} unknown; kept the last window"
                    )
                    return
            else:
                try:
                    result = apply_delta(base, payload.get("delta") or [])
                except DeltaError as error:
                    state.partial = True
                    state.diagnostics.append(
                        f"{event.event_id}: invalid commit ({error}); kept the last window"
                    )
                    return
                if full and _canonical(result) != _canonical(stated):
                    state.diagnostics.append(
                        f"{event.event_id}: rebuilt window differs from the stated messages; using the stated ones"
                    )
                    result = stated
        if full:
            blocked.discard(event.epoch)
        windows[window_id] = result
        state.window_id = window_id
        state.messages = result
        state.commits += 1


def context_message(raw: Mapping[str, Any]) -> Message:
    """A canonical ContextMessage as a core Message (ids, origin, source_kind kept in extra)."""
    data = dict(raw)
    content = data.get("content")
    if content is not None and not isinstance(content, str | list):
        data["content"] = json.dumps(content, ensure_ascii=False)
    if not isinstance(data.get("role"), str):
        data["role"] = str(data.get("role") or "unknown")
    if data.get("tool_calls") is not None and not isinstance(data["tool_calls"], list):
        data["tool_calls"] = []
    return Message.from_dict(data)


def window_snapshot(
    state: WindowState, snapshot_id: str, tuning: Tuning | None = None
) -> ContextSnapshot:
    """The window as a core snapshot: leading system messages apart, the rest as context."""
    messages = tuple(context_message(m) for m in state.messages)
    leading = next((i for i, m in enumerate(messages) if m.role != "system"), len(messages))
    return ContextSnapshot(
        id=snapshot_id,
        system_messages=messages[:leading],
        messages=messages[leading:],
        tools=(),
        tuning=tuning or Tuning(),
        recorded_fields=frozenset({"context_max"}) if tuning is not None else frozenset(),
    )


def window_artifact(
    state: WindowState,
    *,
    source: str,
    session_id: str,
    revision: int | None = None,
    store_epoch: str | None = None,
    api_generation: str | None = None,
    tuning: Tuning | None = None,
) -> Artifact:
    """The rebuilt window as an Artifact of kind `messages`; `extra["live"]` says where from."""
    artifact_id = f"{session_id}/{state.subject_id}/{state.window_id or 'empty'}"
    snapshot = window_snapshot(state, artifact_id, tuning)
    last = state.compactions[-1] if state.compactions else None
    recorded: dict[str, Any] = {"window_id": state.window_id, "compactions": len(state.compactions)}
    if last is not None:
        recorded["last_compaction"] = {
            key: last.get(key)
            for key in (
                "operation_id",
                "status",
                "processor",
                "summary",
                "before",
                "after",
                "saved",
            )
            if key in last
        }
    return Artifact(
        source=source,
        id=artifact_id,
        kind="messages",
        snapshot=snapshot,
        recorded=recorded,
        processor=(last or {}).get("processor") or None,
        session_id=session_id,
        extra={
            "live": {
                "origin": "trajectory",
                "api_generation": api_generation,
                "subject_id": state.subject_id,
                "window_id": state.window_id,
                "revision": revision,
                "store_epoch": store_epoch,
                "partial": state.partial,
                "commits": state.commits,
                "diagnostics": list(state.diagnostics),
            },
            "compactions": [dict(c) for c in state.compactions],
            "context_messages": [dict(m) for m in state.messages],
        },
    )
