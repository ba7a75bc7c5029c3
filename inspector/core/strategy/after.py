"""The context a strategy leaves behind: what `compare` sets side by side.

A strategy may say exactly what its decision makes of the context by implementing the
optional `ProducesAfter.after` method (the forked compressors build openJiuwen's memory block
and `<recovered_context>`, the HybridCompressor returns its replay). Every other strategy
gets `after_from_regions`: messages of the kept regions stay, each summarised region becomes
one summary priced at `summary_tokens`, each offloaded message a short marker. That
estimate is labelled as such in the notes. Must not import anything outside the standard
library, pydantic and `inspector.core`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from inspector.core.checks import Finding
from inspector.core.messages import Message
from inspector.core.strategy.base import Decision, Prepared, RegionRange
from inspector.core.tokens import TokenCounter

AfterSource = Literal["estimate", "dump", "replay"]

#: Regions whose messages a strategy keeps as they are.
KEPT_REGIONS = frozenset({"prefix", "tail", "outside"})
#: Regions replaced by one model-written summary.
SUMMARY_REGIONS = frozenset({"compress", "summary", "fold"})

SUMMARY_PLACEHOLDER = "[summary unknown without an LLM call]"
OFFLOAD_MARKER = "[offloaded: content kept in offload storage]"


@dataclass(frozen=True, slots=True)
class After:
    """What one strategy made of a context, before the comparison numbers are computed."""

    compressed: bool
    reason: str
    source: AfterSource
    messages: Sequence[Message]
    #: Context-message tokens after, with unknown summaries priced at the summary price.
    tokens_after: int
    llm_calls: int
    #: True when an unknown LLM summary stands in the "after": losses are at risk, not certain.
    at_risk: bool
    notes: Sequence[str]
    #: Messages shortened in place (kept, but not verbatim).
    truncated: int = 0
    #: The strategy's findings about its own result.
    findings: Sequence[Finding] = ()
    #: Extra JSON the strategy adds to its `compare --json` column.
    record: Mapping[str, Any] = field(default_factory=dict)
    #: The strategy's native result (for that strategy's own reports only).
    native: Any = field(default=None, repr=False, compare=False)


@runtime_checkable
class ProducesAfter(Protocol):
    """A strategy that can say exactly what its decision leaves in the context."""

    def after(
        self,
        prepared: Prepared,
        decision: Decision,
        counter: TokenCounter,
        summary_tokens: int,
    ) -> After:
        """The context after `decision`, counted with `counter` (comparable across strategies)."""
        ...


def not_compressed(decision: Decision, counter: TokenCounter, before: Sequence[Message]) -> After:
    """The context unchanged, with the decision's reason and numbers as the note."""
    note = f"not compressed: {decision.reason}"
    if decision.total_tokens is not None and decision.threshold is not None:
        note += f" (total {decision.total_tokens}, threshold {decision.threshold})"
    return After(
        False, decision.reason, "estimate", before, counter.count_messages(before), 0, False, [note]
    )


def _placeholder(role: str, content: str) -> Message:
    return Message(role=role, content=content, metadata={"estimated": True})


def _offloaded(message: Message) -> Message:
    """The message with its content replaced by a marker; calls and call ids kept."""
    return Message(
        role=message.role,
        content=OFFLOAD_MARKER,
        tool_calls=message.tool_calls,
        tool_call_id=message.tool_call_id,
        metadata={"estimated": True},
    )


def after_from_regions(
    decision: Decision,
    before: Sequence[Message],
    counter: TokenCounter,
    summary_tokens: int,
) -> After:
    """The estimate any strategy gets from its regions (see the module docstring)."""
    if not decision.hit:
        return not_compressed(decision, counter, before)
    after: list[Message] = []
    summaries = offloaded = 0
    covered = 0
    for region in _covering(decision.regions, len(before)):
        chunk = before[region.start : region.end]
        covered += len(chunk)
        if region.name in SUMMARY_REGIONS:
            if chunk:
                after.append(_placeholder("user", SUMMARY_PLACEHOLDER))
                summaries += 1
        elif region.name == "offload":
            after.extend(_offloaded(message) for message in chunk)
            offloaded += len(chunk)
        else:
            after.extend(chunk)
    placeholder = counter.text_tokens(SUMMARY_PLACEHOLDER)
    tokens_after = counter.count_messages(after) + summaries * (summary_tokens - placeholder)
    calls = 1 if summaries and decision.numbers.get("llm_call") else 0
    notes = [
        "estimate from the processor's regions: kept regions as they are"
        + (f", {summaries} summary priced at {summary_tokens} tokens" if summaries else "")
        + (f", {offloaded} offloaded message(s) replaced by a marker" if offloaded else "")
    ]
    return After(
        True,
        decision.reason,
        "estimate",
        after,
        tokens_after,
        calls,
        summaries > 0,
        notes,
        truncated=offloaded,
        findings=decision.findings,
    )


def _covering(regions: Sequence[RegionRange], count: int) -> list[RegionRange]:
    """The regions in order, gaps filled with "outside" ranges, clipped to `count`."""
    out: list[RegionRange] = []
    position = 0
    for region in sorted(regions, key=lambda r: r.start):
        start, end = max(region.start, position), min(region.end, count)
        if start > position:
            out.append(RegionRange("outside", position, start, "outside"))
        if end > start:
            out.append(RegionRange(region.name, start, end, region.label))
            position = end
    if position < count:
        out.append(RegionRange("outside", position, count, "outside"))
    return out


def context_after(
    strategy: object,
    prepared: Prepared,
    decision: Decision,
    counter: TokenCounter,
    summary_tokens: int,
) -> After:
    """The strategy's own `after` when it has one, else the estimate from its regions."""
    if isinstance(strategy, ProducesAfter):
        return strategy.after(prepared, decision, counter, summary_tokens)
    return after_from_regions(decision, prepared.snapshot.messages, counter, summary_tokens)
