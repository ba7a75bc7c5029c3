"""Typed live events: gateway frames, trajectory updates and file-follow changes.

Everything a live source reports is one of the frozen dataclasses below (the `LiveEvent`
union). Parsing is lenient: every field of a payload is optional, unknown fields are kept in
`raw`, and a frame that cannot be understood becomes a `GatewayEvent` carrying it whole,
never an exception. Pure: no I/O; imports only the standard library and `inspector.core`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from inspector.core.artifact import Artifact, LoadError

#: Terminal statuses of one compression operation (`started` is the only non-terminal one).
TERMINAL_STATUSES = frozenset({"completed", "compressed", "noop", "skipped", "failed"})
#: Legacy frame names of very old gateways, mapped as the web UI maps them.
LEGACY_EVENT_NAMES: dict[str, str] = {
    "connection_ack": "connection.ack",
    "content_chunk": "chat.delta",
    "content": "chat.final",
    "error": "chat.error",
    "processing_status": "chat.processing_status",
    "context_compression_state": "context.compression_state",
}


def _int(value: Any) -> int | None:
    """An int from an int, float or digit string; None otherwise (bools are not numbers)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def _float(value: Any) -> float | None:
    """A float from a number or numeric string; None otherwise."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        if isinstance(value, int | float):
            number = float(value)
        elif isinstance(value, str):
            number = float(value.strip())
        else:
            return None
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _str(value: Any) -> str:
    return "" if value is None else str(value)


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


@dataclass(frozen=True, slots=True)
class TokenPoint:
    """Messages and tokens at one side of a compression (`before` / `after`)."""

    messages: int | None = None
    tokens: int | None = None
    context_percent: int | None = None
    time: str | None = None

    @classmethod
    def parse(cls, raw: Any) -> TokenPoint | None:
        """Read `{time?, messages, tokens, context_percent}`; None for a missing or odd value."""
        if not isinstance(raw, Mapping):
            return None
        return cls(
            messages=_int(raw.get("messages")),
            tokens=_int(raw.get("tokens")),
            context_percent=_int(raw.get("context_percent")),
            time=_opt_str(raw.get("time")),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form, same keys as the gateway payload."""
        return {
            "messages": self.messages,
            "tokens": self.tokens,
            "context_percent": self.context_percent,
            "time": self.time,
        }


@dataclass(frozen=True, slots=True)
class Saved:
    """What one compression saved: messages, tokens (may be negative), percent."""

    messages: int | None = None
    tokens: int | None = None
    percent: float | None = None

    @classmethod
    def parse(cls, raw: Any) -> Saved | None:
        """Read `{messages, tokens, percent}`; None when absent."""
        if not isinstance(raw, Mapping):
            return None
        return cls(
            messages=_int(raw.get("messages")),
            tokens=_int(raw.get("tokens")),
            percent=_float(raw.get("percent")),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form, same keys as the gateway payload."""
        return {"messages": self.messages, "tokens": self.tokens, "percent": self.percent}


class LiveEventBase:
    """Common behaviour: every event has a `kind` and a JSON form (`to_dict`)."""

    kind: ClassVar[str] = "event"

    def to_dict(self) -> dict[str, Any]:  # pragma: no cover - overridden
        """The JSON object `inspector watch --json` prints for this event."""
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class SourceState(LiveEventBase):
    """A live source's connection state changed (the visible "live" indicator).

    `state` is one of `connecting`, `connected`, `ready` (gateway backend acknowledged),
    `following` (files), `polling` (trajectory), `loaded` (an archive, read once),
    `unavailable` (no trajectory API next to the gateway; not an error), `reconnecting`
    (with `retry_in` and `attempt`), `closed` (`detail` says why; "stopped" when asked to).
    """

    kind: ClassVar[str] = "state"
    source: str
    state: str
    detail: str = ""
    retry_in: float | None = None
    attempt: int = 0

    @property
    def text(self) -> str:
        """Short human label, e.g. `reconnecting in 2s (attempt 3)`."""
        if self.state == "reconnecting" and self.retry_in is not None:
            label = f"reconnecting in {self.retry_in:g}s"
            if self.attempt:
                label += f" (attempt {self.attempt})"
        else:
            label = self.state
        return f"{label}: {self.detail}" if self.detail else label

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "event": self.kind,
            "source": self.source,
            "state": self.state,
            "detail": self.detail,
            "retry_in": self.retry_in,
            "attempt": self.attempt,
        }


@dataclass(frozen=True, slots=True)
class CompressionState(LiveEventBase):
    """One `context.compression_state` frame (or a trajectory `compaction.completed` payload)."""

    kind: ClassVar[str] = "context.compression_state"
    source: str
    operation_id: str
    status: str
    phase: str = ""
    processor: str = ""
    model: str = ""
    before: TokenPoint | None = None
    after: TokenPoint | None = None
    saved: Saved | None = None
    duration_ms: int | None = None
    context_max: int | None = None
    summary: str = ""
    compact_summary: str = ""
    error: str | None = None
    session_id: str | None = None
    statistic: Mapping[str, Any] | None = None
    compression_usage: Mapping[str, Any] | None = None
    modified_messages: tuple[Mapping[str, Any], ...] = ()
    origin: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, payload: Mapping[str, Any], source: str = "") -> CompressionState:
        """Read a payload leniently; thin 0.2.3 frames (status, phase, processor, summary) work."""
        modified = payload.get("modified_messages")
        statistic = payload.get("statistic")
        usage = payload.get("compression_usage")
        return cls(
            source=source,
            operation_id=_str(payload.get("operation_id")),
            status=_str(payload.get("status")) or "unknown",
            phase=_str(payload.get("phase")),
            processor=_str(payload.get("processor")),
            model=_str(payload.get("model")),
            before=TokenPoint.parse(payload.get("before")),
            after=TokenPoint.parse(payload.get("after")),
            saved=Saved.parse(payload.get("saved")),
            duration_ms=_int(payload.get("duration_ms")),
            context_max=_int(payload.get("context_max")),
            summary=_str(payload.get("summary")),
            compact_summary=_str(payload.get("compact_summary")),
            error=_opt_str(payload.get("error")),
            session_id=_opt_str(payload.get("session_id")),
            statistic=statistic if isinstance(statistic, Mapping) else None,
            compression_usage=usage if isinstance(usage, Mapping) else None,
            modified_messages=tuple(m for m in modified if isinstance(m, Mapping))
            if isinstance(modified, list)
            else (),
            origin=_opt_str(payload.get("source")),
            raw=dict(payload),
        )

    @property
    def is_terminal(self) -> bool:
        """True for completed / compressed / noop / skipped / failed."""
        return self.status in TERMINAL_STATUSES

    @property
    def is_compaction_boundary(self) -> bool:
        """The official TUI's "Conversation compacted" rule (something saved, no error)."""
        saved_something = bool(
            self.compact_summary
            or (self.saved and ((self.saved.tokens or 0) > 0 or (self.saved.messages or 0) > 0))
        )
        return (
            saved_something
            and not self.error
            and self.status not in ("error", "failed", "skipped", "started")
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form: the parsed fields plus every unknown payload key under `extra`."""
        known = {
            "event_type",
            "type",
            "operation_id",
            "status",
            "phase",
            "processor",
            "model",
            "before",
            "after",
            "saved",
            "duration_ms",
            "context_max",
            "summary",
            "compact_summary",
            "error",
            "session_id",
            "statistic",
            "compression_usage",
            "modified_messages",
            "source",
        }
        return {
            "event": self.kind,
            "source": self.source,
            "session_id": self.session_id,
            "operation_id": self.operation_id,
            "status": self.status,
            "phase": self.phase,
            "processor": self.processor,
            "model": self.model,
            "before": self.before.to_dict() if self.before else None,
            "after": self.after.to_dict() if self.after else None,
            "saved": self.saved.to_dict() if self.saved else None,
            "duration_ms": self.duration_ms,
            "context_max": self.context_max,
            "summary": self.summary,
            "compact_summary": self.compact_summary,
            "error": self.error,
            "statistic": dict(self.statistic) if self.statistic is not None else None,
            "compression_usage": dict(self.compression_usage)
            if self.compression_usage is not None
            else None,
            "modified_messages": [dict(m) for m in self.modified_messages],
            "origin": self.origin,
            "extra": {k: v for k, v in self.raw.items() if k not in known},
        }


@dataclass(frozen=True, slots=True)
class ContextUsage(LiveEventBase):
    """One `context.usage` frame: how full the context window is after a model call."""

    kind: ClassVar[str] = "context.usage"
    source: str
    rate: float | None = None
    context_max: int | None = None
    tokens_used: int | None = None
    role: str | None = None
    member_name: str | None = None
    session_id: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, payload: Mapping[str, Any], source: str = "") -> ContextUsage:
        """Read a payload leniently; `rate` is computed when only tokens and max are given."""
        rate = _float(payload.get("rate"))
        context_max = _int(payload.get("context_max"))
        tokens_used = _int(payload.get("tokens_used"))
        if rate is None and context_max and tokens_used is not None:
            rate = tokens_used / context_max * 100
        return cls(
            source=source,
            rate=rate,
            context_max=context_max,
            tokens_used=tokens_used,
            role=_opt_str(payload.get("role")),
            member_name=_opt_str(payload.get("member_name")),
            session_id=_opt_str(payload.get("session_id")),
            raw=dict(payload),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        known = {
            "event_type",
            "rate",
            "context_max",
            "tokens_used",
            "role",
            "member_name",
            "session_id",
        }
        return {
            "event": self.kind,
            "source": self.source,
            "session_id": self.session_id,
            "rate": self.rate,
            "context_max": self.context_max,
            "tokens_used": self.tokens_used,
            "role": self.role,
            "member_name": self.member_name,
            "extra": {k: v for k, v in self.raw.items() if k not in known},
        }


@dataclass(frozen=True, slots=True)
class ContextCompressed(LiveEventBase):
    """One `context.compressed` frame (manual `/compact`): tokens before and after, rate."""

    kind: ClassVar[str] = "context.compressed"
    source: str
    rate: float | None = None
    before_tokens: int | None = None
    after_tokens: int | None = None
    session_id: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, payload: Mapping[str, Any], source: str = "") -> ContextCompressed:
        """Read camelCase (`beforeCompressed`) or snake_case (`before_compressed`) payloads."""
        before = payload.get("beforeCompressed", payload.get("before_compressed"))
        after = payload.get("afterCompressed", payload.get("after_compressed"))
        return cls(
            source=source,
            rate=_float(payload.get("rate")),
            before_tokens=_int(before),
            after_tokens=_int(after),
            session_id=_opt_str(payload.get("session_id")),
            raw=dict(payload),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        known = {
            "event_type",
            "rate",
            "beforeCompressed",
            "afterCompressed",
            "before_compressed",
            "after_compressed",
            "session_id",
        }
        return {
            "event": self.kind,
            "source": self.source,
            "session_id": self.session_id,
            "rate": self.rate,
            "before_tokens": self.before_tokens,
            "after_tokens": self.after_tokens,
            "extra": {k: v for k, v in self.raw.items() if k not in known},
        }


@dataclass(frozen=True, slots=True)
class TraceUpdated(LiveEventBase):
    """One `trace.updated` poke: records of a trace changed up to `revision`; re-read them."""

    kind: ClassVar[str] = "trace.updated"
    source: str
    session_id: str | None = None
    trace_id: str | None = None
    revision: int | None = None
    store_epoch: str | None = None
    lifecycle: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, payload: Mapping[str, Any], source: str = "") -> TraceUpdated:
        """Read a payload leniently."""
        return cls(
            source=source,
            session_id=_opt_str(payload.get("session_id")),
            trace_id=_opt_str(payload.get("trace_id")),
            revision=_int(payload.get("revision")),
            store_epoch=_opt_str(payload.get("store_epoch")),
            lifecycle=_opt_str(payload.get("lifecycle")),
            raw=dict(payload),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "event": self.kind,
            "source": self.source,
            "session_id": self.session_id,
            "trace_id": self.trace_id,
            "revision": self.revision,
            "store_epoch": self.store_epoch,
            "lifecycle": self.lifecycle,
        }


@dataclass(frozen=True, slots=True)
class GatewayEvent(LiveEventBase):
    """Any other gateway frame, kept whole: other events, responses, unparseable text.

    `frame_type` is `event`, `res`, `legacy` or `invalid`; `name` is the event name, the
    response id, or "" for invalid frames.
    """

    kind: ClassVar[str] = "gateway"
    source: str
    frame_type: str
    name: str
    payload: Any = None
    raw: Any = None

    @property
    def session_id(self) -> str | None:
        """The payload's session_id, when it has one."""
        if isinstance(self.payload, Mapping):
            return _opt_str(self.payload.get("session_id"))
        return None

    def to_dict(self) -> dict[str, Any]:
        """JSON form: the frame is kept raw."""
        return {
            "event": self.kind,
            "source": self.source,
            "frame_type": self.frame_type,
            "name": self.name,
            "session_id": self.session_id,
            "raw": self.raw,
        }


@dataclass(frozen=True, slots=True)
class NewArtifact(LiveEventBase):
    """A new or changed artifact: a dump or log record that appeared, or a rebuilt window.

    `change` is `added` or `updated` (same source and id as an artifact reported before).
    """

    kind: ClassVar[str] = "artifact"
    artifact: Artifact
    change: str = "added"

    def to_dict(self) -> dict[str, Any]:
        """JSON form: identity, sizes and what the artifact recorded (not the whole context)."""
        art = self.artifact
        snapshot = art.snapshot
        return {
            "event": self.kind,
            "change": self.change,
            "source": art.source,
            "id": art.id,
            "kind": art.kind,
            "processor": art.processor,
            "session_id": art.session_id,
            "system_messages": len(snapshot.system_messages) if snapshot else None,
            "messages": len(snapshot.messages) if snapshot else None,
            "tools": len(snapshot.tools) if snapshot else None,
            "recorded": _jsonable(dict(art.recorded)),
            "live": _jsonable(dict(art.extra.get("live", {})))
            if isinstance(art.extra.get("live"), Mapping)
            else None,
        }


@dataclass(frozen=True, slots=True)
class SourceProblem(LiveEventBase):
    """A file that stayed unreadable once it stopped changing, or a failed live request."""

    kind: ClassVar[str] = "error"
    error: LoadError

    def to_dict(self) -> dict[str, Any]:
        """JSON form: the CLI's error line plus the event name."""
        return {"event": self.kind, **self.error.to_dict()}


@dataclass(frozen=True, slots=True)
class SourceRemoved(LiveEventBase):
    """A followed file disappeared (`id` None), or one artifact of it is gone (`id` set).

    An artifact goes when a reload merges it into another (a debug run linked to the dump
    that just appeared is shown by the dump).
    """

    kind: ClassVar[str] = "removed"
    source: str
    id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"event": self.kind, "source": self.source, "id": self.id}


LiveEvent = (
    SourceState
    | CompressionState
    | ContextUsage
    | ContextCompressed
    | TraceUpdated
    | GatewayEvent
    | NewArtifact
    | SourceProblem
    | SourceRemoved
)


def _jsonable(value: Any) -> Any:
    """A JSON-safe copy (unknown objects become strings)."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


#: Digits an integer in a frame may have: beyond this it is out of float range, refused.
MAX_INT_DIGITS = 308
#: How much of an unreadable frame an error quotes.
_QUOTE = 120


class FrameRefused(ValueError):
    """A frame is valid JSON but not a value we accept (NaN, Infinity, out-of-range numbers)."""


def _no_constant(name: str) -> Any:
    raise FrameRefused(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise FrameRefused(f"number {text[:40]} is beyond float range")
    return number


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise FrameRefused(f"an integer of {len(text.lstrip('-'))} digits is beyond float range")
    return int(text)


def _refused(source: str, why: str, text: str) -> SourceProblem:
    """A frame reported and skipped: the stream goes on."""
    quote = text[:_QUOTE].encode("unicode_escape", "backslashreplace").decode("ascii")
    return SourceProblem(
        LoadError(source or "gateway", f"unreadable frame skipped: {why}", f"frame {quote!s}")
    )


def parse_frame(text: str | bytes, source: str = "") -> LiveEvent:
    """Turn one gateway text frame into a typed event; never raises.

    Invalid JSON stays a raw `GatewayEvent` ("invalid"); a frame we refuse (NaN,
    Infinity, a number beyond float range, nesting too deep, a payload no parser could
    read) becomes a `SourceProblem` saying why, so a follower reports it and goes on.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            return GatewayEvent(source, "invalid", "", None, repr(text[:200]))
    try:
        frame = json.loads(
            text,
            parse_constant=_no_constant,
            parse_float=_finite_float,
            parse_int=_bounded_int,
        )
    except FrameRefused as error:
        return _refused(source, str(error), text)
    except RecursionError:
        return _refused(source, "nested too deeply", text)
    except ValueError:
        return GatewayEvent(source, "invalid", "", None, text[:2000])
    try:
        return _typed_frame(frame, source)
    except RecursionError:
        return _refused(source, "nested too deeply", text)
    except Exception as error:  # noqa: BLE001 - one odd frame must not end a watch
        return _refused(source, f"{type(error).__name__}: {error}", text)


def _typed_frame(frame: Any, source: str) -> LiveEvent:
    if not isinstance(frame, Mapping):
        return GatewayEvent(source, "invalid", "", None, frame)
    frame_type = frame.get("type")
    if frame_type == "event":
        name = _str(frame.get("event"))
        payload = frame.get("payload")
        return parse_event(name, payload, source, frame)
    if frame_type == "res":
        return GatewayEvent(source, "res", _str(frame.get("id")), frame.get("payload"), frame)
    if isinstance(frame_type, str) and frame_type in LEGACY_EVENT_NAMES:
        return parse_event(LEGACY_EVENT_NAMES[frame_type], frame.get("payload"), source, frame)
    return GatewayEvent(
        source, "legacy" if frame_type else "invalid", _str(frame_type), frame.get("payload"), frame
    )


def parse_event(name: str, payload: Any, source: str = "", frame: Any = None) -> LiveEvent:
    """Turn one event (name + payload) into a typed event; unknown names stay raw."""
    if isinstance(payload, Mapping):
        if name == "context.compression_state":
            return CompressionState.parse(payload, source)
        if name == "context.usage":
            return ContextUsage.parse(payload, source)
        if name == "context.compressed":
            return ContextCompressed.parse(payload, source)
        if name == "trace.updated":
            return TraceUpdated.parse(payload, source)
    return GatewayEvent(
        source,
        "event",
        name,
        payload,
        frame if frame is not None else {"event": name, "payload": payload},
    )
