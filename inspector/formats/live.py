"""Live wire formats: jiuwenswarm's web-gateway frames and the trajectory API's record pages.

A gateway frame is `{"type": "event"|"req"|"res", ...}`; event frames carry `event` and a
`payload`, modelled per event for the ones the inspector reads (`context.compression_state`,
`context.usage`, `context.compressed`, `trace.updated`, `connection.ack`); any other event is
an `OtherEvent` checked only for its envelope. A trajectory page is `GET
/api/trajectory/sessions/<sid>/subjects/<subject>/records`. Unknown keys are kept
everywhere (jiuwenswarm adds fields), numbers are strict and finite. Must not import
anything outside pydantic and `inspector.core`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Discriminator, Field, Tag, TypeAdapter

from inspector.formats.base import Count, FormatModel, Int, Number


class Snapshot(FormatModel):
    """The context before or after one compression operation, as the frame reports it."""

    time: str | None = None
    messages: Count | None = None
    tokens: Count | None = Field(
        None, description="conversation tokens (no system prompt, no tools)"
    )
    context_percent: Number | None = Field(
        None, description="tokens as a percent of the frame's context_max (default 200,000)"
    )


class Saved(FormatModel):
    """What the operation saved."""

    messages: Int | None = None
    tokens: Int | None = None
    percent: Number | None = None


class CompressionUsage(FormatModel):
    """The model calls the compression itself made."""

    calls: Count | None = None
    input_tokens: Count | None = None
    output_tokens: Count | None = None
    total_tokens: Count | None = None
    cache_tokens: Count | None = None
    model_name: str | None = None


class CompressionState(FormatModel):
    """`context.compression_state`: one processor's operation started, completed, noop or failed."""

    status: str = Field(description="started, completed, noop or failed")
    processor: str | None = None
    operation_id: str | None = None
    phase: str | None = Field(None, description="add_messages, get_context_window, active_compress")
    model: str | None = None
    before: Snapshot | None = None
    after: Snapshot | None = None
    saved: Saved | None = None
    statistic: dict[str, Any] | None = None
    compression_usage: CompressionUsage | None = None
    duration_ms: Number | None = None
    context_max: Count | None = None
    summary: str | None = None
    compact_summary: str | None = None
    error: Any = None
    session_id: str | None = None


class Usage(FormatModel):
    """`context.usage`: the context's share of the window after a model call."""

    rate: Number | None = Field(None, description="percent of context_max")
    context_max: Count | None = None
    tokens_used: Count | None = None
    session_id: str | None = None


class Compressed(FormatModel):
    """`context.compressed`: a manual compaction's before and after."""

    rate: Number | None = None
    beforeCompressed: Count | None = None  # noqa: N815 - the wire's spelling
    afterCompressed: Count | None = None  # noqa: N815 - the wire's spelling
    session_id: str | None = None


class TraceUpdated(FormatModel):
    """`trace.updated`: the trajectory of a session has new records."""

    session_id: str | None = None
    trace_id: str | None = None
    revision: Count | None = None
    lifecycle: str | None = None


class Ack(FormatModel):
    """`connection.ack`: the gateway accepted the socket."""

    session_id: str | None = None
    protocol_version: str | None = None
    transport: str | None = Field(None, description="'tui' on jiuwenswarm's TUI route")


#: The events modelled here, by the tag of their model in `GatewayFrame`.
_EVENTS = {
    "context.compression_state": "compression_state",
    "context.usage": "usage",
    "context.compressed": "compressed",
    "trace.updated": "trace",
    "connection.ack": "ack",
}


class _Event(FormatModel):
    type: Literal["event"]
    event: str


class CompressionStateFrame(_Event):
    """A compression operation's state."""

    event: Literal["context.compression_state"]
    payload: CompressionState


class UsageFrame(_Event):
    """Context usage."""

    event: Literal["context.usage"]
    payload: Usage


class CompressedFrame(_Event):
    """A manual compaction."""

    event: Literal["context.compressed"]
    payload: Compressed


class TraceFrame(_Event):
    """New trajectory records."""

    event: Literal["trace.updated"]
    payload: TraceUpdated


class AckFrame(_Event):
    """The connection was accepted."""

    event: Literal["connection.ack"]
    payload: Ack


class OtherEvent(_Event):
    """Any other event: only the envelope is checked."""

    model_config = ConfigDict(
        json_schema_extra={
            # exclusive with the modelled events, as the reader tells them apart
            "not": {
                "properties": {"event": {"enum": list(_EVENTS)}},
                "required": ["event"],
            }
        }
    )
    payload: Any = None


class Request(FormatModel):
    """A request the client sends (`session.list`, ...)."""

    type: Literal["req"]
    id: str
    method: str
    params: dict[str, Any] = Field(default_factory=dict)


class Response(FormatModel):
    """The gateway's answer to a request."""

    type: Literal["res"]
    id: str
    ok: bool
    payload: Any = None
    error: Any = None


def _frame_kind(value: Any) -> str:
    if isinstance(value, Mapping):
        kind = value.get("type")
        if kind == "event":
            return _EVENTS.get(str(value.get("event")), "other")
        if kind in ("req", "res"):
            return str(kind)
    return "other"


#: One gateway frame, by its type and event.
GatewayFrame = Annotated[
    Annotated[CompressionStateFrame, Tag("compression_state")]
    | Annotated[UsageFrame, Tag("usage")]
    | Annotated[CompressedFrame, Tag("compressed")]
    | Annotated[TraceFrame, Tag("trace")]
    | Annotated[AckFrame, Tag("ack")]
    | Annotated[Request, Tag("req")]
    | Annotated[Response, Tag("res")]
    | Annotated[OtherEvent, Tag("other")],
    Discriminator(_frame_kind),
]
GATEWAY_FRAME: TypeAdapter[Any] = TypeAdapter(GatewayFrame, config=ConfigDict(defer_build=True))


class TrajectoryRecord(FormatModel):
    """One record of a trajectory page: an OTLP span batch with its bookkeeping."""

    record_id: str
    trace_id: str | None = None
    span_id: str | None = None
    ingest_seq: Count | None = None
    change_seq: Count | None = None
    record_revision: Count | None = None
    lifecycle: str | None = None
    operation: str | None = None
    otlp: dict[str, Any] | None = None


class TrajectoryPage(FormatModel):
    """One page of `GET .../subjects/<subject>/records?since_revision=N`."""

    schema_version: Int
    session_id: str
    subject_id: str
    revision: Count
    reset: bool
    records: list[TrajectoryRecord]
