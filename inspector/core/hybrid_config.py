"""Configuration of the HybridCompressor strategy and the budget/window alignment check.

The fields and defaults are those of `spec/hybrid-compressor.md` (agent config and model
config). `config_from_tuning` maps our `Tuning` onto them. Must not import anything
outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

from inspector.core.diagnosis import Finding
from inspector.core.errors import ConfigError
from inspector.core.tuning import Tuning

TurnUnit = Literal["step", "user"]
TURN_UNITS: tuple[TurnUnit, ...] = ("step", "user")
EstimatorKind = Literal["chars_div_4", "counter"]
ESTIMATORS: tuple[EstimatorKind, ...] = ("chars_div_4", "counter")


@dataclass(frozen=True, slots=True)
class HybridConfig:
    """The agent-config and model-config fields of the spec, plus our documented choices."""

    #: Agent config: the engine's context budget in (estimated) tokens.
    max_context_tokens: int = 128_000
    #: Agent config: trigger water level as a ratio of the budget; 0 < r <= 1.
    compression_threshold: float = 0.8
    #: Agent config: the last N turns are never folded or summarised; >= 0.
    preserve_recent_turns: int = 5
    #: Agent config: level-1 cap per tool output, in characters; > 0.
    max_tool_output_length: int = 2000
    #: Model config: the window the model declares, in tokens.
    context_window: int = 128_000
    #: Model config: tokens kept free for the reply.
    reserved_output_tokens: int = 4096
    #: Our choice (spec silent): "step" = one model call (user inputs, the assistant reply
    #: and the tool results answering it); "user" = everything from one real user message
    #: to the next.
    turn_unit: TurnUnit = "step"
    #: The water-level estimator: "chars_div_4" (the strategy's own, default) or "counter"
    #: (a what-if: our TokenCounter in the context's token mode decides instead).
    estimator: EstimatorKind = "chars_div_4"
    #: Level 1, JSON branch: characters kept from the end.
    json_tail_chars: int = 200
    #: Level 1, list branch: a list needs more than this many lines.
    list_min_lines: int = 20
    #: Level 1, list branch: a line counts as short up to this many characters (our choice).
    list_short_line_chars: int = 120
    list_head_lines: int = 15
    list_tail_lines: int = 10
    #: Level 1, default branch: characters kept from the start and from the end.
    head_chars: int = 1200
    tail_chars: int = 600
    #: Level 3: the summary's word limit.
    summary_max_words: int = 400
    #: Level 3 without an LLM (decision only): the summary is priced at this many tokens.
    placeholder_summary_tokens: int = 400
    #: Which model-config values were given rather than assumed from the spec defaults.
    given: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        for name in (
            "max_context_tokens",
            "max_tool_output_length",
            "context_window",
            "list_head_lines",
            "summary_max_words",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ConfigError(name, value, "an integer > 0")
        for name in (
            "preserve_recent_turns",
            "reserved_output_tokens",
            "json_tail_chars",
            "list_min_lines",
            "list_short_line_chars",
            "list_tail_lines",
            "head_chars",
            "tail_chars",
            "placeholder_summary_tokens",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(name, value, "an integer >= 0")
        ratio = self.compression_threshold
        if isinstance(ratio, bool) or not isinstance(ratio, int | float) or not 0 < ratio <= 1:
            raise ConfigError("compression_threshold", ratio, "a number with 0 < r <= 1")
        if self.estimator not in ESTIMATORS:
            raise ConfigError("estimator", self.estimator, "one of " + ", ".join(ESTIMATORS))
        if self.turn_unit not in TURN_UNITS:
            raise ConfigError("turn_unit", self.turn_unit, "one of " + ", ".join(TURN_UNITS))

    def with_(self, **changes: Any) -> HybridConfig:
        """A copy with some fields changed (validated)."""
        return dataclasses.replace(self, **changes)

    @property
    def threshold(self) -> int:
        """floor(budget x ratio): `estimate > threshold` is the spec's `estimate > budget x ratio`."""
        return int(self.max_context_tokens * self.compression_threshold)

    @property
    def usable_window(self) -> int:
        """The model's usable window: context_window - reserved_output_tokens."""
        return self.context_window - self.reserved_output_tokens


def config_from_tuning(
    tuning: Tuning,
    base: HybridConfig | None = None,
    *,
    keep_recent_is_turns: bool | None = None,
) -> HybridConfig:
    """Map a Tuning: context_max -> max_context_tokens, trigger_ratio -> compression_threshold.

    `keep_recent` becomes `preserve_recent_turns` only when it speaks about hybrid turns:
    by default when `tuning.processor == "hybrid"` and keep_recent > 0 (our Tuning's hybrid
    default is 0, which would mean "protect no turn"; the spec default 5 is kept instead).
    Pass `keep_recent_is_turns=True` when the user set --keep-recent explicitly for hybrid
    (then 0 is honoured), False to never map it.
    """
    start = base or HybridConfig()
    changes: dict[str, Any] = {
        "max_context_tokens": tuning.context_max,
        "compression_threshold": tuning.trigger_ratio,
    }
    if keep_recent_is_turns is None:
        keep_recent_is_turns = tuning.processor == "hybrid" and tuning.keep_recent > 0
    if keep_recent_is_turns:
        changes["preserve_recent_turns"] = tuning.keep_recent
    changes["given"] = start.given | {"max_context_tokens"}
    return start.with_(**changes)


def alignment_check(config: HybridConfig) -> Finding | None:
    """Flag an engine budget that disagrees with the model's usable window, or None if equal.

    Two failure modes follow from a mismatch: with budget > usable window the engine may
    not compress while the model already rejects the request as too long; with budget <
    usable window the engine compresses early and loses information the model had room for.
    """
    budget, usable = config.max_context_tokens, config.usable_window
    window_given = bool({"context_window", "reserved_output_tokens"} & config.given)
    if "max_context_tokens" in config.given and not window_given:
        return Finding(
            "model_window_unknown",
            "info",
            f"the engine budget ({budget}) comes from the context, but the model's window is not "
            "known, so budget and window cannot be checked against each other; give "
            "context_window and reserved_output_tokens (spec defaults "
            f"{config.context_window} - {config.reserved_output_tokens} = {usable}).",
            {"max_context_tokens": budget, "usable_window_if_defaults": usable},
        )
    if budget == usable:
        return None
    assumed = not window_given
    data: dict[str, Any] = {
        "max_context_tokens": budget,
        "context_window": config.context_window,
        "reserved_output_tokens": config.reserved_output_tokens,
        "usable_window": usable,
        "threshold": config.threshold,
        "model_window_assumed": assumed,
    }
    source = " (model window assumed from the spec defaults; give the real one)" if assumed else ""
    both = (
        " Both failure modes of a mismatch: (1) budget above the usable window: the engine "
        "does not compress but the model rejects the request as too long; (2) budget below "
        "it: the model still has room but the engine compresses early and loses information."
    )
    if budget > usable:
        if config.threshold > usable:
            mode = (
                f"the trigger ({config.threshold}) lies above the usable window ({usable}): "
                f"requests of {usable + 1}..{config.threshold} tokens are sent uncompressed and "
                "rejected by the model (failure mode 1)"
            )
        else:
            mode = (
                f"the trigger ({config.threshold}) still fires below the usable window "
                f"({usable}), but only {usable - config.threshold} tokens of headroom remain "
                "for the next tool output and the reply; past that, failure mode 1"
            )
        data["failure_mode"] = "model_rejects"
        message = f"engine budget {budget} exceeds the model's usable window {usable}: {mode}."
    else:
        data["failure_mode"] = "compresses_early"
        message = (
            f"engine budget {budget} is below the model's usable window {usable}: "
            f"{usable - budget} tokens of room are never used and the engine compresses early, "
            "losing information (failure mode 2)."
        )
    return Finding("budget_window_mismatch", "warning", message + source + both, data)
