"""One context under two or more compression strategies, side by side.

For each strategy: tokens after, messages kept verbatim, LLM calls needed, tool-call pairs
kept / folded / split, and what it loses (file paths, identifiers, error messages present
before and absent after; rules in `hybrid_facts`). All token numbers are context messages
only (no system prompt, no tools: those are the same under every strategy), counted with
one TokenCounter so the strategies are comparable.

How "after" is obtained:

* **openJiuwen processors** (current_round, dialogue, round_level), from a context alone:
  an *estimate*. The span comes from the engine; "after" is the preserved prefix, one
  memory block whose summary is unknown without an LLM (priced at `summary_tokens`), a
  `<recovered_context>` message rebuilt from the files read inside the span
  (`core.reinjection`, openJiuwen's read_file/skills builders), then the protected tail. Losses are then "at
  risk": the real summary may keep some of them.
* **openJiuwen from a dump**: the dump's `context_after` is the truth and is used as is.
* **hybrid**: the pipeline replayed (`hybrid.hybrid_decision`); its levels 1 and 2 are
  exact, level 3 (if reached) is priced like an unknown LLM summary and flagged.

Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from inspector.core.compaction import DEFAULT_WRAPPERS
from inspector.core.engine import Evaluation, PricedContext
from inspector.core.hybrid import HybridResult, hybrid_decision
from inspector.core.hybrid_config import HybridConfig, config_from_tuning
from inspector.core.hybrid_facts import Losses, extract_facts, losses_between
from inspector.core.messages import Message
from inspector.core.reinjection import build_reinjection
from inspector.core.snapshot import ContextSnapshot
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import (
    DEFAULT_KEEP_RECENT,
    PROCESSOR_CLASS_NAMES,
    Tuning,
    parse_processor,
)

AfterSource = Literal["estimate", "dump", "replay"]

_SUMMARY_PLACEHOLDER = "[summary unknown without an LLM call]"


@dataclass(frozen=True, slots=True)
class PairStats:
    """Tool-call pairs (a call and its result, both present before) and what became of them."""

    total: int
    kept: int
    folded: int
    split: int
    split_ids: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "total": self.total,
            "kept": self.kept,
            "folded": self.folded,
            "split": self.split,
            "split_ids": list(self.split_ids),
        }


@dataclass(frozen=True, slots=True)
class StrategyOutcome:
    """One strategy applied to the context."""

    strategy: str
    label: str
    compressed: bool
    reason: str
    after_source: AfterSource
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    kept_verbatim: int
    truncated: int
    removed: int
    added: int
    llm_calls: int
    pairs: PairStats
    losses: Losses
    #: True when an unknown LLM summary stands in the "after": losses are at risk, not certain.
    losses_at_risk: bool
    notes: tuple[str, ...]
    after: tuple[Message, ...] = field(repr=False)
    hybrid: HybridResult | None = field(default=None, repr=False)
    evaluation: Evaluation | None = field(default=None, repr=False)

    @property
    def reduction(self) -> float:
        """Fraction of tokens saved (0.0 when nothing was saved)."""
        if self.tokens_before <= 0:
            return 0.0
        return max(self.tokens_before - self.tokens_after, 0) / self.tokens_before

    def to_dict(self, loss_limit: int | None = 20) -> dict[str, Any]:
        """JSON form for `compare --json`."""
        out: dict[str, Any] = {
            "strategy": self.strategy,
            "label": self.label,
            "compressed": self.compressed,
            "reason": self.reason,
            "after_source": self.after_source,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "reduction": round(self.reduction, 4),
            "messages_before": self.messages_before,
            "messages_after": self.messages_after,
            "kept_verbatim": self.kept_verbatim,
            "truncated": self.truncated,
            "removed": self.removed,
            "added": self.added,
            "llm_calls": self.llm_calls,
            "tool_call_pairs": self.pairs.to_dict(),
            "losses": self.losses.to_dict(loss_limit),
            "losses_at_risk": self.losses_at_risk,
            "notes": list(self.notes),
        }
        if self.hybrid is not None:
            out["hybrid"] = self.hybrid.to_json(with_outcomes=False)["hybrid"]
            out["findings"] = [f.to_dict() for f in self.hybrid.findings]
        return out


@dataclass(frozen=True, slots=True)
class Comparison:
    """The same context under several strategies."""

    snapshot_id: str
    counter_mode: str
    counter_exact: bool
    tokens_before: int
    messages_before: int
    facts_before: Mapping[str, int]
    outcomes: tuple[StrategyOutcome, ...]

    def to_dict(self, loss_limit: int | None = 20) -> dict[str, Any]:
        """JSON form for `compare --json` (one line per context)."""
        return {
            "id": self.snapshot_id,
            "counter": self.counter_mode,
            "counter_exact": self.counter_exact,
            "tokens_before": self.tokens_before,
            "messages_before": self.messages_before,
            "facts_before": dict(self.facts_before),
            "strategies": [o.to_dict(loss_limit) for o in self.outcomes],
        }


# --- message identity, pairs ------------------------------------------------------------------


def message_key(message: Message) -> tuple[Any, ...]:
    """Identity of a message for "kept verbatim": role, content, call ids and arguments (no metadata)."""
    content = message.content
    if not isinstance(content, str):
        content = json.dumps(content, sort_keys=True, ensure_ascii=False, default=str)
    calls = tuple((c.id, c.name, c.arguments) for c in message.tool_calls)
    return (message.role, content, message.tool_call_id, calls)


def count_verbatim(before: Sequence[Message], after: Sequence[Message]) -> int:
    """How many messages of `after` appear unchanged in `before` (as a multiset)."""
    available = Counter(message_key(m) for m in before)
    kept = 0
    for message in after:
        key = message_key(message)
        if available[key] > 0:
            available[key] -= 1
            kept += 1
    return kept


def pair_stats(before: Sequence[Message], after: Sequence[Message]) -> PairStats:
    """Tool-call pairs of `before` kept (call and result after), folded (neither) or split."""
    calls_before = {i for m in before if m.role == "assistant" for i in m.call_ids}
    results_before = {m.tool_call_id for m in before if m.role == "tool" and m.tool_call_id}
    pairs = sorted(calls_before & results_before)
    calls_after = {i for m in after if m.role == "assistant" for i in m.call_ids}
    results_after = {m.tool_call_id for m in after if m.role == "tool" and m.tool_call_id}
    kept = folded = 0
    split: list[str] = []
    for call_id in pairs:
        has_call, has_result = call_id in calls_after, call_id in results_after
        if has_call and has_result:
            kept += 1
        elif not has_call and not has_result:
            folded += 1
        else:
            split.append(call_id)
    return PairStats(len(pairs), kept, folded, len(split), tuple(split))


# --- openJiuwen estimate -------------------------------------------------------------------------


def tuning_for(snapshot: ContextSnapshot, processor: str) -> Tuning:
    """The snapshot's tuning with another processor (its default keep unless it is the recorded one)."""
    kind = parse_processor(processor)
    if kind == snapshot.tuning.processor:
        return snapshot.tuning
    return snapshot.tuning.with_(processor=kind, keep_recent=DEFAULT_KEEP_RECENT[kind])


def reinjection_estimate(
    messages: Sequence[Message], compress: tuple[int, int], processor: str = "current_round"
) -> Message | None:
    """openJiuwen's `<recovered_context>` message for a span (`core.reinjection`), or None."""
    start, end = compress
    built = build_reinjection(processor, messages, [*messages[:start], *messages[end:]])
    if built.content is None:
        return None
    return Message(role="user", content=built.content, metadata={"estimated": True})


def memory_block(processor: str, summary: str) -> Message:
    """The memory block openJiuwen writes around `summary` (the wrapper of `core.compaction`)."""
    content = DEFAULT_WRAPPERS[processor].wrap(summary)
    return Message(role="user", content=content, metadata={"estimated": True})


@dataclass(frozen=True, slots=True)
class _After:
    """What one strategy made of the context, before the comparison numbers are computed."""

    strategy: str
    label: str
    compressed: bool
    reason: str
    source: AfterSource
    after: Sequence[Message]
    tokens_after: int
    llm_calls: int
    at_risk: bool
    notes: Sequence[str]
    truncated: int = 0
    hybrid: HybridResult | None = None
    evaluation: Evaluation | None = None


def _outcome(
    made: _After, before: Sequence[Message], counter: TokenCounter, facts: Any
) -> StrategyOutcome:
    verbatim = count_verbatim(before, made.after)
    removed = len(before) - verbatim - made.truncated
    return StrategyOutcome(
        strategy=made.strategy,
        label=made.label,
        compressed=made.compressed,
        reason=made.reason,
        after_source=made.source,
        tokens_before=counter.count_messages(before),
        tokens_after=made.tokens_after,
        messages_before=len(before),
        messages_after=len(made.after),
        kept_verbatim=verbatim,
        truncated=made.truncated,
        removed=removed,
        added=len(made.after) - verbatim - made.truncated,
        llm_calls=made.llm_calls,
        pairs=pair_stats(before, made.after),
        losses=losses_between(facts, made.after),
        losses_at_risk=made.at_risk,
        notes=tuple(made.notes),
        after=tuple(made.after),
        hybrid=made.hybrid,
        evaluation=made.evaluation,
    )


def openjiuwen_outcome(
    snapshot: ContextSnapshot,
    processor: str,
    counter: TokenCounter,
    *,
    tuning: Tuning | None = None,
    summary_tokens: int = 400,
    priced: PricedContext | None = None,
    facts: Any = None,
) -> StrategyOutcome:
    """An openJiuwen processor on the context: span from the engine, summary priced by estimate."""
    kind = parse_processor(processor)
    effective = tuning or tuning_for(snapshot, kind)
    context = priced or PricedContext.from_snapshot(snapshot, counter)
    evaluation = context.evaluate(effective)
    before = snapshot.messages
    facts = facts or extract_facts(before)
    label = PROCESSOR_CLASS_NAMES[kind]
    if not evaluation.hit:
        note = (
            f"not compressed: {evaluation.reason} (total {evaluation.total_tokens}, "
            f"threshold {evaluation.threshold})"
        )
        made = _After(
            kind, label, False, evaluation.reason, "estimate", before,
            counter.count_messages(before), 0, False, [note], evaluation=evaluation,
        )  # fmt: skip
        return _outcome(made, before, counter, facts)
    span = evaluation.span
    block = memory_block(kind, _SUMMARY_PLACEHOLDER)
    recovered = reinjection_estimate(before, span.compress, kind)
    after: list[Message] = [*before[slice(*span.prefix)], block]
    if recovered is not None:
        after.append(recovered)
    after.extend(before[slice(*span.tail)])
    tokens_after = (
        counter.count_messages(after) - counter.text_tokens(_SUMMARY_PLACEHOLDER) + summary_tokens
    )
    notes = [
        f"estimate: the memory block's summary is unknown without an LLM call, priced at {summary_tokens} tokens",
        f"span {span.counts['preserved_prefix']}/{span.counts['messages_to_compress']}/{span.counts['protected_tail']}",
    ]
    if recovered is not None:
        notes.append(
            f"recovered_context estimated from files read in the span: {counter.piece_tokens(recovered)} tokens"
        )
    tokens_before = counter.count_messages(before)
    if tokens_after >= tokens_before:
        # openJiuwen keeps a result only when the new context counts fewer tokens than the old
        notes.append(
            f"no benefit: {tokens_after} tokens after >= {tokens_before} before with a {summary_tokens}-token "
            "summary, so openJiuwen would drop the result after paying for the call"
        )
        made = _After(
            kind, label, False, "no_benefit_rollback", "estimate", before, tokens_before, 1,
            False, notes, evaluation=evaluation,
        )  # fmt: skip
        return _outcome(made, before, counter, facts)
    made = _After(
        kind, label, True, evaluation.reason, "estimate", after, tokens_after, 1, True, notes,
        evaluation=evaluation,
    )  # fmt: skip
    return _outcome(made, before, counter, facts)


def dump_outcome(
    snapshot: ContextSnapshot,
    processor: str,
    after: Sequence[Message],
    counter: TokenCounter,
    *,
    llm_calls: int = 1,
    facts: Any = None,
) -> StrategyOutcome:
    """An openJiuwen processor as a dump recorded it: `context_after` is the truth."""
    kind = parse_processor(processor)
    before = snapshot.messages
    facts = facts or extract_facts(before)
    made = _After(
        kind, PROCESSOR_CLASS_NAMES[kind], True, "applied (dump)", "dump", after,
        counter.count_messages(after), llm_calls, False,
        ["from the dump: context_after as openJiuwen wrote it"],
    )  # fmt: skip
    return _outcome(made, before, counter, facts)


def hybrid_outcome(
    snapshot: ContextSnapshot,
    counter: TokenCounter,
    *,
    config: HybridConfig | None = None,
    facts: Any = None,
    result: HybridResult | None = None,
) -> StrategyOutcome:
    """The HybridCompressor replayed; `result` is a run made elsewhere (e.g. with a real level-3 LLM).

    Without `result` no LLM is called: level 3, if reached, is priced by placeholder.
    """
    cfg = result.config if result is not None else config or config_from_tuning(snapshot.tuning)
    if result is None:
        result = hybrid_decision(snapshot, cfg, counter)
    if result.counted_after is None:
        raise ValueError("the hybrid result must be computed with a counter")
    before = snapshot.messages
    facts = facts or extract_facts(before)
    notes = [
        f"water level ({result.estimator}): "
        + " -> ".join(f"{w.stage} {w.estimated_tokens}" for w in result.water_levels)
        + f" vs threshold {result.threshold}; stopped at level {result.stopped_at} ({result.reason})"
    ]
    if result.summary_source == "placeholder":
        notes.append(
            f"estimate: level 3's LLM summary is not run, priced at {cfg.placeholder_summary_tokens} tokens"
        )
    elif result.summary_source == "llm":
        notes.append("level 3 ran: the summary was written by the model")
    elif result.summary_source == "fallback":
        notes.append(f"level 3 failed ({result.level3_error}): the level-2 rule summary was kept")
    at_risk = result.summary_source == "placeholder"
    truncated = len(result.truncated) - sum(
        1 for i in result.folded if result.rows.truncations[i].cut
    )
    made = _After(
        "hybrid", "HybridCompressor", result.stopped_at > 1 or bool(result.truncated),
        result.reason, "replay", result.messages_after, result.counted_after, result.llm_calls,
        at_risk, notes, truncated=truncated, hybrid=result,
    )  # fmt: skip
    return _outcome(made, before, counter, facts)


@dataclass(frozen=True, slots=True)
class CompareOptions:
    """How each strategy is run in a comparison."""

    #: openJiuwen processor -> its tuning (default: the snapshot's, with that processor's keep).
    tunings: Mapping[str, Tuning] = field(default_factory=dict)
    hybrid_config: HybridConfig | None = None
    #: Tokens a summary is priced at when no LLM is called.
    summary_tokens: int = 400
    #: A dump's context after compression: the truth for the dump's processor.
    dump_after: Sequence[Message] | None = None
    dump_processor: str | None = None
    dump_llm_calls: int = 1
    #: A hybrid run made elsewhere (e.g. with a real level-3 LLM).
    hybrid_result: HybridResult | None = None


def compare_strategies(
    snapshot: ContextSnapshot,
    processors: Sequence[str],
    counter: TokenCounter,
    options: CompareOptions | None = None,
) -> Comparison:
    """The context under each processor, in the order given; a dump's after-context wins for its processor."""
    options = options or CompareOptions()
    tunings, hybrid_config = options.tunings, options.hybrid_config
    summary_tokens, dump_after = options.summary_tokens, options.dump_after
    dump_processor, dump_llm_calls = options.dump_processor, options.dump_llm_calls
    hybrid_result = options.hybrid_result
    facts = extract_facts(snapshot.messages)
    priced = PricedContext.from_snapshot(snapshot, counter)
    dump_kind = parse_processor(dump_processor) if dump_processor else None
    outcomes: list[StrategyOutcome] = []
    for name in processors:
        kind = parse_processor(name)
        if kind == "hybrid":
            config = hybrid_config or config_from_tuning(snapshot.tuning)
            if summary_tokens != config.placeholder_summary_tokens and hybrid_config is None:
                config = config.with_(placeholder_summary_tokens=summary_tokens)
            outcomes.append(
                hybrid_outcome(snapshot, counter, config=config, facts=facts, result=hybrid_result)
            )
        elif dump_after is not None and kind == dump_kind:
            outcomes.append(
                dump_outcome(
                    snapshot, kind, dump_after, counter, llm_calls=dump_llm_calls, facts=facts
                )
            )
        else:
            tuning = tunings.get(kind)
            outcomes.append(
                openjiuwen_outcome(
                    snapshot,
                    kind,
                    counter,
                    tuning=tuning,
                    summary_tokens=summary_tokens,
                    priced=priced,
                    facts=facts,
                )
            )
    return Comparison(
        snapshot_id=snapshot.id,
        counter_mode=counter.mode,
        counter_exact=counter.exact,
        tokens_before=counter.count_messages(snapshot.messages),
        messages_before=len(snapshot.messages),
        facts_before=facts.counts,
        outcomes=tuple(outcomes),
    )
