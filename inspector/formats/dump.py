"""openJiuwen's compression dump (`<ms>_<Processor>_<safe session>.json`), section by section.

Schema: `reference/openjiuwen/README.md`, "Compression dump". Every key is optional (older
engine versions lack some); a key present with the wrong type is an error naming its path.
The message lists are read by `inspector.core.messages`. Must not import anything outside
pydantic and `inspector.core`.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from inspector.formats.base import Count, FormatModel, MessageList, Number, ToolList


class Trigger(FormatModel):
    """Why the compression ran."""

    context_max: Count | None = Field(None, description="context size the processor resolved")
    total_tokens_before: Count | None = Field(
        None, description="count of the context messages only (no system messages, no tools)"
    )
    target_tokens: Count | None = Field(
        None, description="count of the messages actually sent for compression"
    )


class DumpSpan(FormatModel):
    """The span used, after any overflow shrink."""

    preserved_prefix_count: Count | None = None
    messages_to_compress_count: Count | None = None
    protected_tail_count: Count | None = None


class CompressionRequest(FormatModel):
    """What was sent to the compressor model."""

    prompt: str | None = None
    exclude_recent_messages: Count | None = None
    system_messages_count: Count | None = None
    tools_count: Count | None = None
    tools: ToolList | None = None
    messages_sent_to_model: MessageList | None = None


class DumpUsage(FormatModel):
    """Usage summed over the successful model call(s)."""

    calls: Count | None = None
    input_tokens: Count | None = None
    output_tokens: Count | None = None
    total_tokens: Count | None = None
    cache_tokens: Count | None = None
    input_cost: Number | None = None
    output_cost: Number | None = None
    total_cost: Number | None = None
    model_name: str | None = None
    details: list[dict[str, Any]] | None = None


class CompressionResponse(FormatModel):
    """What the compressor model answered."""

    raw_content: str | None = None
    extracted_summary: str | None = None
    usage: DumpUsage | None = None


class ContextAfter(FormatModel):
    """The new context."""

    messages: MessageList | None = None
    total_tokens_after: Count | None = None


class Benefit(FormatModel):
    """What the compression saved."""

    tokens_before: Count | None = None
    tokens_after: Count | None = None
    reduction: Count | None = None
    reduction_ratio: Number | None = None


class DumpDocument(FormatModel):
    """One compression dump, written after an applied compression."""

    processor_type: str | None = Field(
        None, description="CurrentRoundCompressor, DialogueCompressor or RoundLevelCompressor"
    )
    session_id: str | None = Field(None, description="raw session id")
    context_id: str | None = None
    trigger: Trigger | None = None
    span: DumpSpan | None = None
    compression_request: CompressionRequest | None = None
    compression_response: CompressionResponse | None = None
    context_after: ContextAfter | None = None
    benefit: Benefit | None = None
    timestamp: Number | None = Field(None, description="epoch seconds, added last")
