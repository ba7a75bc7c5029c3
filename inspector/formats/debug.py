"""Debug-log records (`<Processor>.jsonl`): a union on `event`, unknown events kept.

Known events: `threshold_check`, `span_built`, `compression_retry` (schema in
`reference/openjiuwen/README.md`, "Debug records"), and 0.1.19's `llm_request.jsonl`
`pre_call` record. Any other event (openJiuwen adds new ones; SessionMemory writes its
own) is an `OtherEvent`, checked only for the common keys. Must not import anything
outside pydantic and `inspector.core`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Discriminator, Field, Tag, TypeAdapter

from inspector.formats.base import Count, FormatModel, Int, Number, validate
from inspector.formats.llm_request import LlmRequestRecord


class DebugRecordBase(FormatModel):
    """The keys every record has."""

    event: str
    timestamp: Number | None = Field(None, description="epoch seconds")
    processor: str | None = Field(None, description="the processor type that wrote the record")
    session_id: str | None = Field(None, description="raw session id")
    context_id: str | None = None
    phase: str | None = None


class ThresholdCheck(DebugRecordBase):
    """One trigger evaluation."""

    event: Literal["threshold_check"]
    total_tokens: Count | None = None
    context_max: Count | None = None
    threshold: Count | None = None
    hit: bool | None = None
    reason: str | None = Field(
        None,
        description="below_threshold, no_compressible_span, target_below_min or reached_threshold",
    )
    target_tokens: Count | None = None
    min_target_tokens: Count | None = None


class SpanEntry(FormatModel):
    """One message of a span_built list (`tokens` is a rough len//4 preview)."""

    idx: Count | None = None
    role: str | None = None
    tokens: Int | None = None
    preview: str | None = None


class SpanBuilt(DebugRecordBase):
    """The span first built, at the start of the compression step."""

    event: Literal["span_built"]
    preserved_prefix: list[SpanEntry] | None = None
    messages_to_compress: list[SpanEntry] | None = None
    protected_tail: list[SpanEntry] | None = None


class CompressionRetry(DebugRecordBase):
    """One failed model call that was handled."""

    event: Literal["compression_retry"]
    attempt: Int | None = None
    error_type: str | None = Field(
        None, description="context_overflow or transient:<rate_limit|timeout|...>"
    )
    error_message: str | None = None
    retried: bool | None = None
    reason: str | None = Field(
        None,
        description="budget_ratio_shrink, no_smaller_span, retry_budget_exhausted or transient_backoff",
    )
    budget_ratio: Number | None = None
    delay_seconds: Number | None = None


class OtherEvent(DebugRecordBase):
    """Any other event: kept in the run it falls in."""

    event: str = Field(
        json_schema_extra={
            "not": {"enum": ["threshold_check", "span_built", "compression_retry", "pre_call"]}
        }
    )


#: The model for each known event.
EVENT_MODELS: dict[str, type[DebugRecordBase] | type[LlmRequestRecord]] = {
    "threshold_check": ThresholdCheck,
    "span_built": SpanBuilt,
    "compression_retry": CompressionRetry,
    "pre_call": LlmRequestRecord,
}


def _event_tag(value: Any) -> str:
    event = value.get("event") if isinstance(value, Mapping) else getattr(value, "event", None)
    return event if isinstance(event, str) and event in EVENT_MODELS else "other"


DebugRecord = Annotated[
    Annotated[ThresholdCheck, Tag("threshold_check")]
    | Annotated[SpanBuilt, Tag("span_built")]
    | Annotated[CompressionRetry, Tag("compression_retry")]
    | Annotated[LlmRequestRecord, Tag("pre_call")]
    | Annotated[OtherEvent, Tag("other")],
    Discriminator(_event_tag),
]
"""One debug-log line, by its `event`."""

DEBUG_RECORD = TypeAdapter(DebugRecord, config=ConfigDict(defer_build=True))


def parse_debug_record(raw: Any) -> DebugRecordBase | LlmRequestRecord:
    """The record as its event's model; FormatError naming the first bad key."""
    model = EVENT_MODELS.get(_event_tag(raw), OtherEvent)
    return validate(model, raw)  # type: ignore[arg-type]
