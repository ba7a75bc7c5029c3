"""Compressor choice and the tunable numbers, with openJiuwen's defaults and ranges.

A `Tuning` is immutable; change one value with `tuning.with_(field=value)`, which
validates again. Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from inspector.core.errors import ConfigError
from inspector.core.tokens import TOKEN_MODES, TokenMode

ProcessorKind = Literal["current_round", "dialogue", "round_level", "hybrid"]
PROCESSOR_KINDS: tuple[ProcessorKind, ...] = ("current_round", "dialogue", "round_level", "hybrid")

#: openJiuwen class names and our short names, both accepted wherever a processor is named.
PROCESSOR_CLASS_NAMES: dict[ProcessorKind, str] = {
    "current_round": "CurrentRoundCompressor",
    "dialogue": "DialogueCompressor",
    "round_level": "RoundLevelCompressor",
    "hybrid": "HybridCompressor",
}
#: keep_recent_messages defaults (Dialogue has none: its tail starts at the last real user).
DEFAULT_KEEP_RECENT: dict[ProcessorKind, int] = {
    "current_round": 0,
    "dialogue": 0,
    "round_level": 4,
    "hybrid": 0,
}
DEFAULT_CONTEXT_MAX = 200_000


def parse_processor(name: str) -> ProcessorKind:
    """Accept `CurrentRoundCompressor`, `current_round`, `current-round`, case-insensitively."""
    wanted = name.strip().replace("-", "_").lower()
    for kind, class_name in PROCESSOR_CLASS_NAMES.items():
        if wanted in (kind, class_name.lower(), kind.replace("_", "")):
            return kind
    raise ConfigError("processor", name, "one of " + ", ".join(PROCESSOR_KINDS))


@dataclass(frozen=True, slots=True)
class Tuning:
    """Everything a trigger decision depends on apart from the context itself."""

    processor: ProcessorKind = "current_round"
    #: Compress when the window total reaches int(context_max x trigger_ratio); 0 < r < 1.
    trigger_ratio: float = 0.8
    #: Skip when the region to compress counts below int(context_max x ratio); 0 <= r < 1.
    min_target_ratio: float = 0.1
    #: Trailing messages kept out of compression (CurrentRound, RoundLevel); >= 0.
    keep_recent: int = 0
    #: The context window in tokens the processor resolved; > 0.
    context_max: int = DEFAULT_CONTEXT_MAX
    #: How tokens are counted: `tiktoken_cl100k` or `len_div_4` (openJiuwen's default).
    token_mode: TokenMode = "len_div_4"
    #: openJiuwen always keeps tool calls with their results; False is a what-if only.
    tool_boundary: bool = True

    def __post_init__(self) -> None:
        validate_field("processor", self.processor)
        validate_field("trigger_ratio", self.trigger_ratio)
        validate_field("min_target_ratio", self.min_target_ratio)
        validate_field("keep_recent", self.keep_recent)
        validate_field("context_max", self.context_max)
        validate_field("token_mode", self.token_mode)

    def with_(self, **changes: Any) -> Tuning:
        """A copy with some fields changed (validated)."""
        return dataclasses.replace(self, **changes)

    @property
    def threshold(self) -> int:
        """max(int(context_max x trigger_ratio), 1), the product in doubles as Python does."""
        return max(int(self.context_max * self.trigger_ratio), 1)

    @property
    def min_target_tokens(self) -> int:
        """int(context_max x min_target_ratio), may be 0."""
        return int(self.context_max * self.min_target_ratio)

    @property
    def processor_class(self) -> str:
        """openJiuwen's class name of the processor."""
        return PROCESSOR_CLASS_NAMES[self.processor]


def apply_overrides(recorded: Tuning, overrides: Mapping[str, Any]) -> Tuning:
    """The effective tuning: recorded values with the user's changes on top.

    Switching processor without giving keep_recent takes that processor's default keep.
    Overrides that are not Tuning fields (another strategy's settings) are left out.
    """
    changes = {k: v for k, v in overrides.items() if k in _TUNING_FIELDS}
    if "processor" in changes and changes["processor"] not in PROCESSOR_KINDS:
        changes["processor"] = parse_processor(str(changes["processor"]))
    if (
        "processor" in changes
        and "keep_recent" not in changes
        and changes["processor"] != recorded.processor
    ):
        changes["keep_recent"] = DEFAULT_KEEP_RECENT[parse_processor(changes["processor"])]
    return recorded.with_(**changes)


_TUNING_FIELDS = frozenset(f.name for f in dataclasses.fields(Tuning))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def validate_field(name: str, value: Any) -> None:
    """Raise ConfigError naming the field and its allowed range when `value` is out of it."""
    if name == "processor":
        if value not in PROCESSOR_KINDS:
            raise ConfigError(name, value, "one of " + ", ".join(PROCESSOR_KINDS))
    elif name == "trigger_ratio":
        if not _is_number(value) or not 0 < value < 1:
            raise ConfigError(name, value, "a number with 0 < trigger_ratio < 1")
    elif name == "min_target_ratio":
        if not _is_number(value) or not 0 <= value < 1:
            raise ConfigError(name, value, "a number with 0 <= min_target_ratio < 1")
    elif name == "keep_recent":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(name, value, "an integer >= 0")
    elif name == "context_max":
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ConfigError(name, value, "an integer > 0")
    elif name == "token_mode":
        if value not in TOKEN_MODES:
            raise ConfigError(name, value, "one of " + ", ".join(TOKEN_MODES))
