"""Settings models of the standard processors: openJiuwen's field names, defaults and ranges.

One model per processor config class (`CE/schema/config.py` and the processors' own
config classes, spec section 6). `model` holds the compression model's name (openJiuwen's
`model.model_name`): it decides the budgets of RoundLevelCompressor and
MessageSummaryOffloader. Must not import anything outside pydantic and `inspector.core`.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from inspector.core.strategy.base import Settings

Role = Literal["user", "assistant", "tool"]
_NO_SWEEP: dict[str, Any] = {"sweep": False}


def _tool_roles() -> list[Role]:
    return ["tool"]


_MODEL = Field(
    default=None,
    description="Name of the processor's compression model (config.model.model_name); "
    "decides RoundLevelCompressor's and MessageSummaryOffloader's budgets.",
    json_schema_extra={"sweep": False, "flag": "--compression-model"},
)


def optional_int(value: Any) -> Any:
    """An optional count given as text (a CLI flag, a Tune field): "5" -> 5, "none" -> None."""
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("", "none", "null", "off"):
            return None
        if text.lstrip("-").isdigit():
            return int(text)
    return value


class StandardSettings(Settings):
    """What every standard processor's settings have: the release whose rules decide."""

    openjiuwen_version: str | None = Field(
        None,
        description="The openJiuwen release whose rules decide (counter, estimates, window "
        "table): 0.1.16, 0.1.17 or 0.1.19; empty: the snapshot's, else the newest.",
        json_schema_extra={"flag": "--openjiuwen", "sweep": False},
    )

    @field_validator("openjiuwen_version", mode="before")
    @classmethod
    def _release_string(cls, value: Any) -> Any:
        """A release string such as 0.1.19.post2 ("" or "none": the snapshot's)."""
        if isinstance(value, str):
            text = value.strip()
            if text.lower() in ("", "none", "null"):
                return None
            if not re.match(r"^v?\d+\.\d+\.\d+", text):
                raise ValueError("a release such as 0.1.16, 0.1.17 or 0.1.19.post2")
            return text
        return value


class MessageSummaryOffloaderSettings(StandardSettings):
    """`MessageSummaryOffloaderConfig`."""

    large_message_threshold: int = Field(
        1000, gt=0, description="A new message larger than this (tokens, +3) is summarised."
    )
    offload_message_type: list[Role] = Field(
        default_factory=_tool_roles,
        description="Roles of new messages that may be offloaded.",
        json_schema_extra=_NO_SWEEP,
    )
    protected_tool_names: list[str] = Field(
        default_factory=lambda: ["read_file"],
        description="Tool results never offloaded: 'name' or 'name:pattern' on an argument.",
        json_schema_extra=_NO_SWEEP,
    )
    model: str | None = _MODEL
    summary_max_tokens: int = Field(
        900, gt=0, description="Summary length asked for in the prompt (tokens)."
    )
    enable_precise_step: bool = Field(
        False, description="Ask the model for the task line with an extra call."
    )
    step_summary_max_context_messages: int = Field(
        8, gt=0, description="Messages shown to the task-line call."
    )
    content_max_chars_for_compression: int = Field(
        200000, gt=0, description="Content cut for the overflow retries (characters)."
    )


class MessageOffloaderSettings(StandardSettings):
    """`MessageOffloaderConfig`."""

    messages_threshold: int | None = Field(
        None, gt=0, description="More messages than this: offload (if a candidate exists)."
    )
    tokens_threshold: int = Field(
        20000, gt=0, description="More tokens than this (stored + new counted apart): offload."
    )
    large_message_threshold: int = Field(
        1000, gt=0, description="A message longer than this (characters) is a candidate."
    )
    offload_message_type: list[Role] = Field(
        default_factory=_tool_roles,
        description="Roles that may be offloaded.",
        json_schema_extra=_NO_SWEEP,
    )
    protected_tool_names: list[str] = Field(
        default_factory=lambda: ["read_file"],
        description="Tool results never offloaded: 'name' or 'name:pattern' on an argument.",
        json_schema_extra=_NO_SWEEP,
    )
    trim_size: int = Field(
        100, gt=0, description="Characters kept in the placeholder (< large_message_threshold)."
    )
    messages_to_keep: int | None = Field(
        None, gt=0, description="The newest messages never offloaded (< messages_threshold)."
    )
    keep_last_round: bool = Field(
        True, description="Never offload at or after the last assistant message."
    )

    _optional_counts = field_validator("messages_threshold", "messages_to_keep", mode="before")(
        optional_int
    )

    @model_validator(mode="after")
    def _limits(self) -> MessageOffloaderSettings:
        if self.trim_size >= self.large_message_threshold:
            raise ValueError("trim_size must be smaller than large_message_threshold")
        if (
            self.messages_to_keep is not None
            and self.messages_threshold is not None
            and self.messages_to_keep >= self.messages_threshold
        ):
            raise ValueError("messages_to_keep must be smaller than messages_threshold")
        return self


class ToolResultBudgetSettings(StandardSettings):
    """`ToolResultBudgetProcessorConfig`."""

    tokens_threshold: int = Field(
        50000, gt=0, description="Tool-result tokens allowed per dialogue round."
    )
    large_message_threshold: int = Field(
        10000, gt=0, description="A tool result larger than this (tokens) may be offloaded."
    )
    trim_size: int = Field(3000, gt=0, description="Preview characters kept in the placeholder.")
    tool_name_allowlist: list[str] | None = Field(
        None, description="Tools whose results are never offloaded.", json_schema_extra=_NO_SWEEP
    )
    offload_file_prefix: str = Field(
        "ToolResultBudgetProcessor",
        description="File-name prefix of offload files.",
        json_schema_extra=_NO_SWEEP,
    )

    @model_validator(mode="after")
    def _limits(self) -> ToolResultBudgetSettings:
        if self.trim_size >= self.large_message_threshold:
            raise ValueError("trim_size must be smaller than large_message_threshold")
        return self


class ToolResultWindowSettings(StandardSettings):
    """`ToolResultWindowProcessorConfig` (min_offload_chars, small_result_trim_size: 0.1.17+)."""

    tool_names: list[str] = Field(
        default_factory=list,
        description="Tool-name suffixes whose results are windowed (empty: never).",
        json_schema_extra=_NO_SWEEP,
    )
    keep_last_k: int = Field(3, gt=0, description="Newest matching results left untouched.")
    trim_size: int = Field(3000, gt=0, description="Preview characters kept in the placeholder.")
    offload_file_prefix: str = Field(
        "ToolResultWindowProcessor",
        description="File-name prefix of offload files.",
        json_schema_extra=_NO_SWEEP,
    )
    min_offload_chars: int = Field(
        0, ge=0, description="0.1.17+: shorter results are compacted in place, not persisted."
    )
    small_result_trim_size: int = Field(
        800, gt=0, description="0.1.17+: preview characters of a result compacted in place."
    )


class DialogueSettings(StandardSettings):
    """`DialogueCompressorConfig`."""

    messages_threshold: int | None = Field(
        None, gt=0, description="More context messages than this: compress."
    )
    tokens_threshold: int = Field(
        10000, gt=0, description="More context-message tokens than this: compress (absolute)."
    )
    messages_to_keep: int | None = Field(
        None, gt=0, description="The newest messages never compressed; fewer messages: no trigger."
    )
    keep_last_round: bool = Field(
        True, description="Never compress the last completed round (up to the last final reply)."
    )
    compression_target_tokens: int = Field(
        1800, gt=0, description="Summary size asked for in the prompt (tokens)."
    )
    custom_compression_prompt: str | None = Field(
        None, description="Replaces the system prompt.", json_schema_extra=_NO_SWEEP
    )
    model: str | None = _MODEL

    _optional_counts = field_validator("messages_threshold", "messages_to_keep", mode="before")(
        optional_int
    )


class CurrentRoundSettings(StandardSettings):
    """`CurrentRoundCompressorConfig`."""

    tokens_threshold: int = Field(
        100000, gt=0, description="More context-message tokens than this: compress (absolute)."
    )
    messages_to_keep: int = Field(
        3, gt=0, description="The newest messages never compressed; fewer messages: no trigger."
    )
    min_selected_tokens_for_compression: int = Field(
        20000, gt=0, description="The span must hold at least this many tokens."
    )
    compression_target_tokens: int = Field(
        4000, gt=0, description="Summary size asked for in the prompt (tokens)."
    )
    summary_merge_target_tokens: int = Field(
        4000, gt=0, description="Merged-summary size asked for in the prompt (tokens)."
    )
    accumulated_summary_token_limit: int = Field(
        20000, gt=0, description="A run of memory blocks larger than this is merged."
    )
    summary_merge_min_blocks: int = Field(
        3, ge=2, description="Consecutive memory blocks needed for a merge."
    )
    prior_context_window_size: int = Field(
        10, gt=0, description="Earlier plain messages shown to the summary call."
    )
    custom_compression_prompt: str | None = Field(
        None, description="Replaces the built-in prompt.", json_schema_extra=_NO_SWEEP
    )
    model: str | None = _MODEL


class RoundLevelSettings(StandardSettings):
    """`RoundLevelCompressorConfig`."""

    trigger_context_ratio: float = Field(
        0.9, gt=0, le=1, description="Trigger at this share of the compression model's budget."
    )
    target_total_tokens: int = Field(
        160000, gt=0, description="Compress until the window holds at most this many tokens."
    )
    keep_recent_messages: int = Field(
        0, ge=0, description="Newest messages kept out of the first phase (add hook only)."
    )
    model: str | None = _MODEL
    compression_call_max_tokens: int = Field(
        250000, gt=0, description="Prompt budget of one compression call (tokens)."
    )
    first_pass_target_tokens: int = Field(30000, gt=0, description="Prompt hint, first pass.")
    second_pass_target_tokens: int = Field(20000, gt=0, description="Prompt hint, second pass.")
    third_pass_target_tokens: int = Field(10000, gt=0, description="Prompt hint, third pass.")
    truncate_head_ratio: float = Field(
        0.2, gt=0, lt=1, description="Head share of the hard truncation."
    )
    truncated_marker: str = Field(
        "...[TRUNCATED]...", description="Truncation joiner.", json_schema_extra=_NO_SWEEP
    )
    compression_marker: str = Field(
        "[ROUND_LEVEL_MEMORY_BLOCK]",
        description="First line of a round-level memory block.",
        json_schema_extra=_NO_SWEEP,
    )


class FullCompactSettings(StandardSettings):
    """`FullCompactProcessorConfig` (the text fields keep openJiuwen's defaults)."""

    trigger_total_tokens: int = Field(
        180000, gt=0, description="More context-message tokens than this: compact."
    )
    compression_call_max_tokens: int = Field(
        200000, gt=0, description="Prompt budget of the summary call (tokens)."
    )
    messages_to_keep: int = Field(10, ge=0, description="The newest active messages kept verbatim.")
    session_memory_enabled: bool = Field(True, description="Try the session-memory notes first.")
    model: str | None = _MODEL
    keep_tool_message_pairs: bool = Field(
        True, description="Widen the kept tail to the calls of kept tool results."
    )
    state_snapshot_max_chars: int = Field(
        4000, gt=0, description="Characters of one re-injected state message."
    )
    reinject_recent_skills: int = Field(
        3, ge=0, description="API rounds that read a SKILL.md re-injected after compaction."
    )
    marker: str = Field(
        "[FULL_COMPACT_BOUNDARY]",
        description="Boundary system message marker.",
        json_schema_extra=_NO_SWEEP,
    )
    session_memory_marker: str = Field(
        "[SESSION_MEMORY_BOUNDARY]",
        description="Session-memory boundary marker.",
        json_schema_extra=_NO_SWEEP,
    )


class MicroCompactSettings(StandardSettings):
    """`MicroCompactProcessorConfig`."""

    trigger_threshold: int = Field(
        5, gt=0, description="Results of one tool beyond keep_recent_per_tool that trigger."
    )
    compactable_tool_names: list[str] = Field(
        default_factory=lambda: ["grep", "glob", "read_file", "web_search", "web_fetch"],
        description="Tools whose old results are cleared (exact names).",
        json_schema_extra=_NO_SWEEP,
    )
    keep_recent_per_tool: int = Field(15, ge=0, description="Newest results of each tool kept.")
    cleared_marker: str = Field(
        "[Old tool result content cleared]",
        description="Content of a cleared result.",
        json_schema_extra=_NO_SWEEP,
    )


class ReasoningToolLoopSettings(StandardSettings):
    """`ReasoningToolLoopCompactConfig` (0.1.16 only)."""

    enabled: bool = Field(True, description="Fold repeated reasoning/tool loops.")
    consecutive_threshold: int = Field(
        3, ge=2, description="Rounds with the same reasoning and tool set that trigger."
    )
    reasoning_min_chars: int = Field(
        4, ge=1, description="Shorter reasoning (stripped) does not make a tool round."
    )
    reasoning_preview_max_chars: int = Field(
        512, ge=1, description="Reasoning characters shown in the fold."
    )
    language: str = Field(
        "cn", description="Fold text language: 'en', else Chinese.", json_schema_extra=_NO_SWEEP
    )
