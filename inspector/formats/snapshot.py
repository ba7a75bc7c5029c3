"""The snapshot envelope: our interchange format (one JSON object, or JSON Lines of them).

Keys (DESIGN.md, CLI contract): `id`, `processor`, `processor_family`, `openjiuwen_version`,
`config` (the processor's own fields, by openJiuwen's names), `engine_config`,
`context_max`, `token_mode`, `system_messages`, `messages`, `tools`, `tool_boundary`, the
standard family's `hook` and `added_from`, and the keys that tie a snapshot to a logged
evaluation (`session_id`, `context_id`, `timestamp`), and the what-if `pins` (message indices
kept verbatim, `inspector.core.pins`). Other keys (`expected`,
`generator`, a scenario's `library_analysis_before`, ...) are kept. The messages are read
by `inspector.core.messages`. Must not import anything outside pydantic and `inspector.core`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from inspector.formats.base import (
    Count,
    FormatModel,
    Int,
    MessageList,
    Number,
    ToolList,
    extras_in_range,
)

TokenMode = Literal["tiktoken_cl100k", "len_div_4", "string_length"]
ProcessorFamily = Literal["forked", "standard"]
Hook = Literal["add_messages", "get_context_window"]


class ProcessorConfig(FormatModel):
    """A processor's config by openJiuwen's field names; the forked compressors' keys typed."""

    trigger_context_ratio: Number | None = Field(
        None, description="forked: compress when the total reaches this share of context_max"
    )
    min_target_context_ratio: Number | None = Field(
        None, description="forked: skip when the span to compress holds less than this share"
    )
    keep_recent_messages: Int | None = Field(
        None, description="forked CurrentRound/RoundLevel: messages kept after the span"
    )

    @model_validator(mode="after")
    def _numbers_in_range(self) -> ProcessorConfig:
        """Every other processor's own numbers (tokens_threshold, ...) within a float's range."""
        extras_in_range(self.__pydantic_extra__)
        return self


class EngineConfig(FormatModel):
    """The `ContextEngineConfig` fields recorded with a context."""

    context_window_tokens: Count | None = None
    model_context_window_tokens: dict[str, Count] | None = Field(
        None, description="context windows by model name"
    )
    model_name: str | None = None
    enable_tiktoken_counter: bool | None = None

    @model_validator(mode="after")
    def _numbers_in_range(self) -> EngineConfig:
        """Every other number within a float's range."""
        extras_in_range(self.__pydantic_extra__)
        return self


class SnapshotEnvelope(FormatModel):
    """One context snapshot: everything one compressor decision depends on."""

    id: str | None = Field(None, description="a name for the snapshot, unique in its file")
    processor: str | None = Field(
        None, description="openJiuwen's class name (CurrentRoundCompressor) or our short name"
    )
    processor_family: ProcessorFamily = Field(
        "forked", description="`forked` (the default) or `standard`"
    )
    openjiuwen_version: str | None = Field(
        None, description="the release the snapshot is for, e.g. 0.1.19.post2"
    )
    config: ProcessorConfig | None = None
    engine_config: EngineConfig | None = None
    context_max: Int | None = Field(None, description="the context window, in tokens")
    token_mode: TokenMode | None = Field(
        None,
        description="tiktoken_cl100k, len_div_4 (0.1.17's no-counter estimate) or "
        "string_length (0.1.19's StringLengthCounter)",
    )
    tool_boundary: bool | None = Field(
        None, description="false: a what-if without the tool-boundary rule"
    )
    hook: Hook | None = Field(None, description="standard family: which processor hook decided")
    added_from: Count | None = Field(
        None, description="add hook: index of the first message of the incoming batch"
    )
    session_id: str | None = Field(None, description="raw session id, as debug records write it")
    context_id: str | None = None
    timestamp: Number | None = Field(
        None, description="epoch seconds of the threshold_check whose context this is"
    )
    system_messages: MessageList | None = None
    messages: MessageList
    tools: ToolList | None = None
    pins: list[Count] | None = Field(
        None,
        description="what-if marks: indices of messages kept verbatim (never compressed); "
        "openJiuwen has no pins (see inspector.core.pins)",
    )
