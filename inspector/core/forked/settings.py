"""Settings of openJiuwen's forked compressors, in openJiuwen's field names.

One model per processor, because their fields and defaults differ: DialogueCompressor has
no `keep_recent_messages` (its tail starts at the last real user message), RoundLevel keeps
4 messages by default. `context_max` and `token_mode` are what the engine resolved for the
context; `tool_boundary` is a what-if openJiuwen itself cannot switch off.
Must not import anything outside the standard library, pydantic and `inspector.core`.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from inspector.core.releases.profiles import NEWEST_PROFILE, profile_for_release
from inspector.core.strategy.base import Settings
from inspector.core.tokens import TokenMode
from inspector.core.tuning import DEFAULT_CONTEXT_MAX, ProcessorKind, Tuning


class ForkedSettings(Settings):
    """The fields every forked compressor has."""

    trigger_context_ratio: float = Field(
        0.8,
        gt=0,
        lt=1,
        description="Compress when the window total reaches int(context_max x ratio).",
        json_schema_extra={"flag": "--trigger-ratio", "tuning": "trigger_ratio"},
    )
    min_target_context_ratio: float = Field(
        0.1,
        ge=0,
        lt=1,
        description="Skip when the region to compress counts below int(context_max x ratio).",
        json_schema_extra={"flag": "--min-target-ratio", "tuning": "min_target_ratio"},
    )
    context_max: int = Field(
        DEFAULT_CONTEXT_MAX,
        gt=0,
        description="The context window in tokens the engine resolved for the processor.",
        json_schema_extra={"flag": "--context-max", "tuning": "context_max"},
    )
    token_mode: TokenMode = Field(
        "len_div_4",
        description="How tokens are counted: tiktoken_cl100k, len_div_4 (no counter) or "
        "string_length (0.1.19's StringLengthCounter).",
        json_schema_extra={"flag": "--tokens", "tuning": "token_mode", "sweep": False},
    )
    openjiuwen_version: str = Field(
        NEWEST_PROFILE.newest_release,
        description="The openJiuwen release whose rules decide (counter selection, character "
        "fallbacks, usage-baseline tail): 0.1.17 or later.",
        json_schema_extra={"flag": "--openjiuwen", "sweep": False},
    )
    tool_boundary: bool = Field(
        True,
        description="Keep tool calls with their results (openJiuwen always does; off is a what-if).",
        json_schema_extra={
            "flag": "--no-tool-boundary",
            "tuning": "tool_boundary",
            "what_if": True,
            "sweep": False,
        },
    )

    @field_validator("openjiuwen_version")
    @classmethod
    def _known_release(cls, value: str) -> str:
        """A release string with forked compressors (0.1.17 or later), normalised."""
        return profile_for_release(value).release


class DialogueSettings(ForkedSettings):
    """DialogueCompressor: the kept tail starts at the last real user message."""


class CurrentRoundSettings(ForkedSettings):
    """CurrentRoundCompressor: compresses the current round after the last real user message."""

    keep_recent_messages: int = Field(
        0,
        ge=0,
        description="Trailing messages kept out of compression (widened by the tool-boundary rule).",
        json_schema_extra={"flag": "--keep-recent", "tuning": "keep_recent"},
    )


class RoundLevelSettings(ForkedSettings):
    """RoundLevelCompressor: compresses everything before the kept tail."""

    keep_recent_messages: int = Field(
        4,
        ge=0,
        description="Trailing messages kept out of compression (widened by the tool-boundary rule).",
        json_schema_extra={"flag": "--keep-recent", "tuning": "keep_recent"},
    )


#: Our Tuning field -> the settings field (the one mapping between the two).
TUNING_TO_SETTINGS: dict[str, str] = {
    "trigger_ratio": "trigger_context_ratio",
    "min_target_ratio": "min_target_context_ratio",
    "keep_recent": "keep_recent_messages",
    "context_max": "context_max",
    "token_mode": "token_mode",
    "tool_boundary": "tool_boundary",
}


def settings_from_tuning(
    model: type[ForkedSettings], tuning: Tuning, release: str | None = None
) -> ForkedSettings:
    """The settings a recorded Tuning stands for (fields the model lacks are dropped)."""
    values: dict[str, Any] = {} if release is None else {"openjiuwen_version": release}
    for tuning_name, field_name in TUNING_TO_SETTINGS.items():
        if field_name in model.model_fields:
            values[field_name] = getattr(tuning, tuning_name)
    return model.build(values)


def tuning_from_settings(kind: ProcessorKind, settings: ForkedSettings) -> Tuning:
    """The engine's Tuning for a processor and its settings."""
    keep = getattr(settings, "keep_recent_messages", 0)
    return Tuning(
        processor=kind,
        trigger_ratio=settings.trigger_context_ratio,
        min_target_ratio=settings.min_target_context_ratio,
        keep_recent=keep,
        context_max=settings.context_max,
        token_mode=settings.token_mode,
        tool_boundary=settings.tool_boundary,
    )
