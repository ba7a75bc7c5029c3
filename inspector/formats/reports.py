"""The JSON of the other report commands (the CLI contract as models): a `compare --json`
line, a `sweep --json` point and the `rerun --json` object.

Like `inspector.formats.output`, every model keeps unknown keys, so a line with more keys
still validates; strategies add their own numbers beside these keys. Must not import
anything outside pydantic and `inspector.core`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from inspector.formats.base import Count, FormatModel, Int, Number
from inspector.formats.output import FindingLine, SpanCounts


class PairsLine(FormatModel):
    """Tool-call pairs present before, and what became of them."""

    total: Count
    kept: Count
    folded: Count
    split: Count
    split_ids: list[str]


class LossesLine(FormatModel):
    """Facts present before and absent after (a sample of each kind, and the counts)."""

    counts: dict[str, Count]
    before: dict[str, Count]
    file_paths: list[str]
    identifiers: list[str]
    error_messages: list[str]


class StrategyColumn(FormatModel):
    """One strategy's column of a comparison."""

    strategy: str = Field(description="the registry key (current_round, hybrid, standard.*)")
    label: str = Field(description="openJiuwen's class name")
    compressed: bool
    reason: str
    after_source: Literal["estimate", "dump", "replay"]
    tokens_before: Count
    tokens_after: Count
    reduction: Number
    messages_before: Count
    messages_after: Count
    kept_verbatim: Count
    truncated: Count
    removed: Int
    added: Int
    llm_calls: Count
    tool_call_pairs: PairsLine
    losses: LossesLine
    losses_at_risk: bool
    notes: list[str]
    findings: list[FindingLine] = Field(default_factory=list)


class CompareLine(FormatModel):
    """One `compare --json` line: one context under several strategies."""

    source: str
    kind: str
    id: str
    counter: str
    counter_exact: bool
    tokens_before: Count
    messages_before: Count
    facts_before: dict[str, Count]
    strategies: list[StrategyColumn]


class SweepLine(FormatModel):
    """One `sweep --json` point: the decision at one value of the swept setting."""

    source: str
    id: str
    param: str
    value: Any
    hit: bool
    reason: str
    verdict: str
    total_tokens: Int | None
    threshold: Int | None
    target_tokens: Int | None
    min_target_tokens: Int | None
    span: SpanCounts | dict[str, Count]
    flip: bool = Field(description="the decision differs from the previous point's")


class RerunTrigger(FormatModel):
    """The trigger decision under the re-run's tuning."""

    hit: bool
    reason: str
    total_tokens: Int | None
    threshold: Int | None


class RerunLine(FormatModel):
    """The `rerun --json` object: one real compaction re-run against a model."""

    source: str
    id: str
    kind: str
    processor: str
    model: str
    outcome: str
    openjiuwen_would_apply: bool | None
    explanation: str
    trigger: RerunTrigger
    span_first: SpanCounts
    span_sent: SpanCounts
    tokens_before: Count | None
    tokens_after: Count | None
    reduction: Int | None
    reduction_ratio: Number | None
    messages_after: Count | None
    summary: str | None
    failure: str | None
    attempts: list[dict[str, Any]]
    findings: list[dict[str, Any]]
    lost: list[dict[str, Any]]
    usage: dict[str, Any] | None
    openjiuwen_version: str
    release_profile: str
    exact_counting: bool
    written: dict[str, Any]
