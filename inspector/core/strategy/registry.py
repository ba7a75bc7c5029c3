"""The one list of strategies. Adding a strategy is one package under `inspector.core` plus
one line in `STRATEGIES`; every front end then offers it.

Entries are "module:attribute" strings imported on first use. So that a command that
parses its flags, names the processors or resolves one strategy imports only that
strategy's module, never all of them, two static tables describe the lines of
`STRATEGIES`: `STRATEGY_TABLE` (what each strategy is called) and `TUNING_FLAGS` (the CLI's
TUNING flags, generated from every settings model by `tuning_flags`). They are used while
they describe exactly `STRATEGIES`; a line added (a plugin) makes the registry read the
imported strategies instead, and `tests/test_startup_registry.py` fails with the tables
to paste. Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING, NamedTuple

from inspector.core.errors import ConfigError

if TYPE_CHECKING:
    from inspector.core.strategy.base import Strategy


class StrategyLine(NamedTuple):
    """One registered strategy: what it is called, and where its instance lives."""

    key: str
    #: openJiuwen's class name (or the strategy's own name).
    processor: str
    family: str
    #: "module:attribute" of the instance, imported on first use.
    target: str


class TuningFlag(NamedTuple):
    """One CLI TUNING flag, as `argparse` is given it."""

    flag: str
    #: The argparse destination: the field's short alias, else its name.
    dest: str
    kind: str
    help: str
    choices: tuple[object, ...] = ()


#: Every strategy, in menu order: "module:attribute" of an instance.
STRATEGIES: tuple[str, ...] = (
    "inspector.core.forked.strategy:CURRENT_ROUND",
    "inspector.core.forked.strategy:DIALOGUE",
    "inspector.core.forked.strategy:ROUND_LEVEL",
    "inspector.core.hybrid_strategy:HYBRID",
    "inspector.core.standard.strategy:MESSAGE_SUMMARY_OFFLOADER",
    "inspector.core.standard.strategy:REASONING_TOOL_LOOP",
    "inspector.core.standard.strategy:DIALOGUE",
    "inspector.core.standard.strategy:CURRENT_ROUND",
    "inspector.core.standard.strategy:ROUND_LEVEL",
    "inspector.core.standard.strategy:MESSAGE_OFFLOADER",
    "inspector.core.standard.strategy:TOOL_RESULT_BUDGET",
    "inspector.core.standard.strategy:TOOL_RESULT_WINDOW",
    "inspector.core.standard.strategy:MICRO_COMPACT",
    "inspector.core.standard.strategy:FULL_COMPACT",
)

_F = "inspector.core.forked.strategy:"
_S = "inspector.core.standard.strategy:"

#: What each line of `STRATEGIES` is called, in the same order (`table_of(all_strategies())`).
STRATEGY_TABLE: tuple[StrategyLine, ...] = (
    StrategyLine("current_round", "CurrentRoundCompressor", "forked", _F + "CURRENT_ROUND"),
    StrategyLine("dialogue", "DialogueCompressor", "forked", _F + "DIALOGUE"),
    StrategyLine("round_level", "RoundLevelCompressor", "forked", _F + "ROUND_LEVEL"),
    StrategyLine("hybrid", "HybridCompressor", "hybrid", "inspector.core.hybrid_strategy:HYBRID"),
    StrategyLine(
        "standard.message_summary_offloader",
        "MessageSummaryOffloader",
        "standard",
        _S + "MESSAGE_SUMMARY_OFFLOADER",
    ),
    StrategyLine(
        "standard.reasoning_tool_loop",
        "ReasoningToolLoopCompactProcessor",
        "standard",
        _S + "REASONING_TOOL_LOOP",
    ),
    StrategyLine("standard.dialogue", "DialogueCompressor", "standard", _S + "DIALOGUE"),
    StrategyLine(
        "standard.current_round", "CurrentRoundCompressor", "standard", _S + "CURRENT_ROUND"
    ),
    StrategyLine("standard.round_level", "RoundLevelCompressor", "standard", _S + "ROUND_LEVEL"),
    StrategyLine(
        "standard.message_offloader", "MessageOffloader", "standard", _S + "MESSAGE_OFFLOADER"
    ),
    StrategyLine(
        "standard.tool_result_budget",
        "ToolResultBudgetProcessor",
        "standard",
        _S + "TOOL_RESULT_BUDGET",
    ),
    StrategyLine(
        "standard.tool_result_window",
        "ToolResultWindowProcessor",
        "standard",
        _S + "TOOL_RESULT_WINDOW",
    ),
    StrategyLine(
        "standard.micro_compact", "MicroCompactProcessor", "standard", _S + "MICRO_COMPACT"
    ),
    StrategyLine("standard.full_compact", "FullCompactProcessor", "standard", _S + "FULL_COMPACT"),
)


@cache
def _load(target: str) -> Strategy:
    module_name, _, attribute = target.partition(":")
    strategy: Strategy = getattr(importlib.import_module(module_name), attribute)
    return strategy


@cache
def all_strategies() -> tuple[Strategy, ...]:
    """Every registered strategy, imported once."""
    return tuple(_load(target) for target in STRATEGIES)


def _static() -> bool:
    """Whether the static tables describe `STRATEGIES` (no line added or changed)."""
    return tuple(line.target for line in STRATEGY_TABLE) == STRATEGIES


def lines() -> tuple[StrategyLine, ...]:
    """What every strategy is called, in menu order (without importing one, unless a line
    the static table does not describe was added)."""
    return STRATEGY_TABLE if _static() else table_of(all_strategies())


def flags() -> tuple[TuningFlag, ...]:
    """The CLI's TUNING flags (the static table, unless a line it does not describe was
    added)."""
    return TUNING_FLAGS if _static() else tuning_flags(all_strategies())


def strategy_keys() -> tuple[str, ...]:
    """Registry keys in menu order."""
    return tuple(line.key for line in lines())


def families() -> tuple[str, ...]:
    """The families, in menu order of their first strategy."""
    return tuple(dict.fromkeys(line.family for line in lines()))


def _normal(name: str) -> str:
    return name.strip().replace("-", "_").replace(" ", "").lower()


def resolve(name: str, family: str | None = None) -> Strategy:
    """The strategy named by key or openJiuwen class name, case-insensitively (only its
    module is imported).

    `family` narrows the match where a class name exists in several families
    (DialogueCompressor is both a forked and a standard processor).
    """
    wanted = _normal(name)
    for line in lines():
        spellings = (_normal(line.key), _normal(line.processor), _normal(line.key).replace("_", ""))
        if wanted in spellings and (family is None or line.family == family):
            return _load(line.target)
    raise ConfigError("processor", name, "one of " + ", ".join(strategy_keys()))


def get(key: str) -> Strategy:
    """The strategy with exactly this registry key (only its module is imported)."""
    for line in lines():
        if line.key == key:
            return _load(line.target)
    raise ConfigError("processor", key, "one of " + ", ".join(strategy_keys()))


def table_of(strategies: Iterable[Strategy]) -> tuple[StrategyLine, ...]:
    """The `STRATEGY_TABLE` of imported strategies, the i-th of `STRATEGIES` (in its order)."""
    return tuple(
        StrategyLine(s.key, s.processor, s.family, target)
        for s, target in zip(strategies, STRATEGIES, strict=True)
    )


def tuning_flags(strategies: Iterable[Strategy]) -> tuple[TuningFlag, ...]:
    """The TUNING flags of the strategies' settings fields, one per flag in first-seen order
    (a flag several fields share names its owners in its help)."""
    from inspector.core.strategy.fields import FieldInfo, fields_of

    grouped: dict[str, list[FieldInfo]] = {}
    for strategy in strategies:
        for info in fields_of(strategy.settings_model):
            grouped.setdefault(info.flag, []).append(info)
    out = []
    for flag, infos in grouped.items():
        info = infos[0]
        owners = sorted({i.name for i in infos})
        text = info.description + (f" [{', '.join(owners)}]" if len(owners) > 1 else "")
        if info.kind not in ("bool", "choice"):
            text = f"{info.range_text()}: {text}"
        out.append(TuningFlag(flag, info.alias or info.name, info.kind, text, info.choices))
    return tuple(out)


#: The CLI's TUNING flags, in `--help` order (`tuning_flags(all_strategies())`).
TUNING_FLAGS: tuple[TuningFlag, ...] = (
    TuningFlag(
        "--trigger-ratio",
        "trigger_ratio",
        "float",
        "0 < trigger_context_ratio < 1: Compress when the window total reaches int(context_max x ratio). [compression_threshold, trigger_context_ratio]",
    ),
    TuningFlag(
        "--min-target-ratio",
        "min_target_ratio",
        "float",
        "0 <= min_target_context_ratio < 1: Skip when the region to compress counts below int(context_max x ratio).",
    ),
    TuningFlag(
        "--context-max",
        "context_max",
        "int",
        "0 < context_max: The context window in tokens the engine resolved for the processor. [context_max, max_context_tokens]",
    ),
    TuningFlag(
        "--tokens",
        "token_mode",
        "choice",
        "How tokens are counted: tiktoken_cl100k, len_div_4 (no counter) or string_length (0.1.19's StringLengthCounter).",
        ("tiktoken_cl100k", "len_div_4", "string_length"),
    ),
    TuningFlag(
        "--openjiuwen",
        "openjiuwen_version",
        "text",
        "any text: The openJiuwen release whose rules decide (counter selection, character fallbacks, usage-baseline tail): 0.1.17 or later.",
    ),
    TuningFlag(
        "--no-tool-boundary",
        "tool_boundary",
        "bool",
        "Keep tool calls with their results (openJiuwen always does; off is a what-if).",
    ),
    TuningFlag(
        "--keep-recent",
        "keep_recent",
        "int",
        "0 <= keep_recent_messages: Trailing messages kept out of compression (widened by the tool-boundary rule). [keep_recent_messages, preserve_recent_turns]",
    ),
    TuningFlag(
        "--max-tool-output-length",
        "max_tool_output_length",
        "int",
        "0 < max_tool_output_length: Agent config: level-1 cap per tool output, in characters.",
    ),
    TuningFlag(
        "--context-window",
        "context_window",
        "int",
        "0 < context_window: Model config: the window the model declares, in tokens.",
    ),
    TuningFlag(
        "--reserved-output-tokens",
        "reserved_output_tokens",
        "int",
        "0 <= reserved_output_tokens: Model config: tokens kept free for the reply.",
    ),
    TuningFlag(
        "--turn-unit",
        "turn_unit",
        "choice",
        "What one turn is: 'step' = one model call, 'user' = one real user message to the next (the spec is silent; our choice).",
        ("step", "user"),
    ),
    TuningFlag(
        "--estimator",
        "estimator",
        "choice",
        "The water-level estimator: chars_div_4 (the strategy's own) or counter (a what-if: our token counter decides instead).",
        ("chars_div_4", "counter"),
    ),
    TuningFlag(
        "--large-message-threshold",
        "large_message_threshold",
        "int",
        "0 < large_message_threshold: A new message larger than this (tokens, +3) is summarised.",
    ),
    TuningFlag(
        "--offload-message-type",
        "offload_message_type",
        "text",
        "any text: Roles of new messages that may be offloaded.",
    ),
    TuningFlag(
        "--protected-tool-names",
        "protected_tool_names",
        "text",
        "any text: Tool results never offloaded: 'name' or 'name:pattern' on an argument.",
    ),
    TuningFlag(
        "--compression-model",
        "model",
        "text",
        "any text: Name of the processor's compression model (config.model.model_name); decides RoundLevelCompressor's and MessageSummaryOffloader's budgets.",
    ),
    TuningFlag(
        "--summary-max-tokens",
        "summary_max_tokens",
        "int",
        "0 < summary_max_tokens: Summary length asked for in the prompt (tokens).",
    ),
    TuningFlag(
        "--enable-precise-step",
        "enable_precise_step",
        "bool",
        "Ask the model for the task line with an extra call.",
    ),
    TuningFlag(
        "--step-summary-max-context-messages",
        "step_summary_max_context_messages",
        "int",
        "0 < step_summary_max_context_messages: Messages shown to the task-line call.",
    ),
    TuningFlag(
        "--content-max-chars-for-compression",
        "content_max_chars_for_compression",
        "int",
        "0 < content_max_chars_for_compression: Content cut for the overflow retries (characters).",
    ),
    TuningFlag("--enabled", "enabled", "bool", "Fold repeated reasoning/tool loops."),
    TuningFlag(
        "--consecutive-threshold",
        "consecutive_threshold",
        "int",
        "2 <= consecutive_threshold: Rounds with the same reasoning and tool set that trigger.",
    ),
    TuningFlag(
        "--reasoning-min-chars",
        "reasoning_min_chars",
        "int",
        "1 <= reasoning_min_chars: Shorter reasoning (stripped) does not make a tool round.",
    ),
    TuningFlag(
        "--reasoning-preview-max-chars",
        "reasoning_preview_max_chars",
        "int",
        "1 <= reasoning_preview_max_chars: Reasoning characters shown in the fold.",
    ),
    TuningFlag(
        "--language", "language", "text", "any text: Fold text language: 'en', else Chinese."
    ),
    TuningFlag(
        "--messages-threshold",
        "messages_threshold",
        "text",
        "0 < messages_threshold: More context messages than this: compress.",
    ),
    TuningFlag(
        "--tokens-threshold",
        "tokens_threshold",
        "int",
        "0 < tokens_threshold: More context-message tokens than this: compress (absolute).",
    ),
    TuningFlag(
        "--messages-to-keep",
        "messages_to_keep",
        "text",
        "0 < messages_to_keep: The newest messages never compressed; fewer messages: no trigger.",
    ),
    TuningFlag(
        "--keep-last-round",
        "keep_last_round",
        "bool",
        "Never compress the last completed round (up to the last final reply).",
    ),
    TuningFlag(
        "--compression-target-tokens",
        "compression_target_tokens",
        "int",
        "0 < compression_target_tokens: Summary size asked for in the prompt (tokens).",
    ),
    TuningFlag(
        "--custom-compression-prompt",
        "custom_compression_prompt",
        "text",
        "any text: Replaces the system prompt.",
    ),
    TuningFlag(
        "--min-selected-tokens-for-compression",
        "min_selected_tokens_for_compression",
        "int",
        "0 < min_selected_tokens_for_compression: The span must hold at least this many tokens.",
    ),
    TuningFlag(
        "--summary-merge-target-tokens",
        "summary_merge_target_tokens",
        "int",
        "0 < summary_merge_target_tokens: Merged-summary size asked for in the prompt (tokens).",
    ),
    TuningFlag(
        "--accumulated-summary-token-limit",
        "accumulated_summary_token_limit",
        "int",
        "0 < accumulated_summary_token_limit: A run of memory blocks larger than this is merged.",
    ),
    TuningFlag(
        "--summary-merge-min-blocks",
        "summary_merge_min_blocks",
        "int",
        "2 <= summary_merge_min_blocks: Consecutive memory blocks needed for a merge.",
    ),
    TuningFlag(
        "--prior-context-window-size",
        "prior_context_window_size",
        "int",
        "0 < prior_context_window_size: Earlier plain messages shown to the summary call.",
    ),
    TuningFlag(
        "--trigger-context-ratio",
        "trigger_context_ratio",
        "float",
        "0 < trigger_context_ratio <= 1: Trigger at this share of the compression model's budget.",
    ),
    TuningFlag(
        "--target-total-tokens",
        "target_total_tokens",
        "int",
        "0 < target_total_tokens: Compress until the window holds at most this many tokens.",
    ),
    TuningFlag(
        "--keep-recent-messages",
        "keep_recent_messages",
        "int",
        "0 <= keep_recent_messages: Newest messages kept out of the first phase (add hook only).",
    ),
    TuningFlag(
        "--compression-call-max-tokens",
        "compression_call_max_tokens",
        "int",
        "0 < compression_call_max_tokens: Prompt budget of one compression call (tokens).",
    ),
    TuningFlag(
        "--first-pass-target-tokens",
        "first_pass_target_tokens",
        "int",
        "0 < first_pass_target_tokens: Prompt hint, first pass.",
    ),
    TuningFlag(
        "--second-pass-target-tokens",
        "second_pass_target_tokens",
        "int",
        "0 < second_pass_target_tokens: Prompt hint, second pass.",
    ),
    TuningFlag(
        "--third-pass-target-tokens",
        "third_pass_target_tokens",
        "int",
        "0 < third_pass_target_tokens: Prompt hint, third pass.",
    ),
    TuningFlag(
        "--truncate-head-ratio",
        "truncate_head_ratio",
        "float",
        "0 < truncate_head_ratio < 1: Head share of the hard truncation.",
    ),
    TuningFlag("--truncated-marker", "truncated_marker", "text", "any text: Truncation joiner."),
    TuningFlag(
        "--compression-marker",
        "compression_marker",
        "text",
        "any text: First line of a round-level memory block.",
    ),
    TuningFlag(
        "--trim-size",
        "trim_size",
        "int",
        "0 < trim_size: Characters kept in the placeholder (< large_message_threshold).",
    ),
    TuningFlag(
        "--tool-name-allowlist",
        "tool_name_allowlist",
        "text",
        "any text: Tools whose results are never offloaded.",
    ),
    TuningFlag(
        "--offload-file-prefix",
        "offload_file_prefix",
        "text",
        "any text: File-name prefix of offload files.",
    ),
    TuningFlag(
        "--tool-names",
        "tool_names",
        "text",
        "any text: Tool-name suffixes whose results are windowed (empty: never).",
    ),
    TuningFlag(
        "--keep-last-k",
        "keep_last_k",
        "int",
        "0 < keep_last_k: Newest matching results left untouched.",
    ),
    TuningFlag(
        "--min-offload-chars",
        "min_offload_chars",
        "int",
        "0 <= min_offload_chars: 0.1.17+: shorter results are compacted in place, not persisted.",
    ),
    TuningFlag(
        "--small-result-trim-size",
        "small_result_trim_size",
        "int",
        "0 < small_result_trim_size: 0.1.17+: preview characters of a result compacted in place.",
    ),
    TuningFlag(
        "--trigger-threshold",
        "trigger_threshold",
        "int",
        "0 < trigger_threshold: Results of one tool beyond keep_recent_per_tool that trigger.",
    ),
    TuningFlag(
        "--compactable-tool-names",
        "compactable_tool_names",
        "text",
        "any text: Tools whose old results are cleared (exact names).",
    ),
    TuningFlag(
        "--keep-recent-per-tool",
        "keep_recent_per_tool",
        "int",
        "0 <= keep_recent_per_tool: Newest results of each tool kept.",
    ),
    TuningFlag(
        "--cleared-marker", "cleared_marker", "text", "any text: Content of a cleared result."
    ),
    TuningFlag(
        "--trigger-total-tokens",
        "trigger_total_tokens",
        "int",
        "0 < trigger_total_tokens: More context-message tokens than this: compact.",
    ),
    TuningFlag(
        "--session-memory-enabled",
        "session_memory_enabled",
        "bool",
        "Try the session-memory notes first.",
    ),
    TuningFlag(
        "--keep-tool-message-pairs",
        "keep_tool_message_pairs",
        "bool",
        "Widen the kept tail to the calls of kept tool results.",
    ),
    TuningFlag(
        "--state-snapshot-max-chars",
        "state_snapshot_max_chars",
        "int",
        "0 < state_snapshot_max_chars: Characters of one re-injected state message.",
    ),
    TuningFlag(
        "--reinject-recent-skills",
        "reinject_recent_skills",
        "int",
        "0 <= reinject_recent_skills: API rounds that read a SKILL.md re-injected after compaction.",
    ),
    TuningFlag("--marker", "marker", "text", "any text: Boundary system message marker."),
    TuningFlag(
        "--session-memory-marker",
        "session_memory_marker",
        "text",
        "any text: Session-memory boundary marker.",
    ),
)
