"""One context under two or more compression strategies, side by side.

For each strategy: tokens after, messages kept verbatim, LLM calls needed, tool-call pairs
kept / folded / split, and what it loses (file paths, identifiers, error messages present
before and absent after; rules in `hybrid_facts`). All token numbers are context messages
only (no system prompt, no tools: those are the same under every strategy), counted with
one TokenCounter so the strategies are comparable.

Every strategy is reached through the protocol: its decision, then the context it leaves
(`strategy.after.context_after`: exact where the strategy can say it, an estimate from its
regions otherwise, always labelled). A result recorded elsewhere wins for its strategy:
a dump's `context_after` (`dump_after`), or a pipeline run with a real model.

Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from inspector.core.artifact import Artifact
from inspector.core.checks import Finding
from inspector.core.errors import ConfigError
from inspector.core.hybrid_facts import Facts, Losses, extract_facts, losses_between
from inspector.core.messages import Message
from inspector.core.snapshot import ContextSnapshot
from inspector.core.strategy.after import After, AfterSource, context_after
from inspector.core.strategy.base import Settings, Strategy
from inspector.core.strategy.registry import resolve
from inspector.core.strategy.selection import select
from inspector.core.tokens import TokenCounter


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
    #: The registry key of the strategy's family ("forked", "standard", "hybrid").
    family: str = "forked"
    findings: tuple[Finding, ...] = ()
    #: Extra JSON the strategy adds to its column.
    record: Mapping[str, Any] = field(default_factory=dict)
    #: The strategy's native result (for its own detail reports only).
    native: Any = field(default=None, repr=False, compare=False)

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
        out.update(self.record)
        if self.findings:
            out["findings"] = [f.to_dict() for f in self.findings]
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


# --- strategies side by side ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CompareEntry:
    """One column: a strategy under its settings."""

    strategy: Strategy
    settings: Settings
    #: The user's overrides this strategy has no field for (said in its notes).
    ignored: tuple[str, ...] = ()


def entries_for(
    snapshot: ContextSnapshot, names: Sequence[str], overrides: Mapping[str, Any]
) -> list[CompareEntry]:
    """Each named strategy (key or class name; the snapshot's family first) with the
    snapshot's recorded settings for it and the user's same-named overrides on top."""
    entries: list[CompareEntry] = []
    for name in names:
        chosen = select(snapshot, {**overrides, "processor": name, "family": None})
        if all(entry.strategy.key != chosen.strategy.key for entry in entries):
            entries.append(CompareEntry(chosen.strategy, chosen.settings, chosen.ignored))
    return entries


def default_names(snapshot: ContextSnapshot, current: Strategy, limit: int = 6) -> list[str]:
    """The current strategy, the other strategies of its family, then the hybrid pipeline."""
    from inspector.core.strategy.registry import all_strategies

    names = [current.key]
    for strategy in all_strategies():
        if strategy.family == current.family and strategy.key not in names:
            names.append(strategy.key)
    names = names[: limit - 1]
    if "hybrid" not in names:
        names.append("hybrid")
    return names


def recorded_after(
    before: Sequence[Message], after: Sequence[Message], counter: TokenCounter, llm_calls: int = 1
) -> After:
    """A dump's `context_after`: the truth for the dump's processor."""
    return After(
        True,
        "applied (dump)",
        "dump",
        after,
        counter.count_messages(after),
        llm_calls,
        False,
        ["from the dump: context_after as openJiuwen wrote it"],
    )


def artifact_afters(artifact: Artifact, counter: TokenCounter) -> dict[str, After]:
    """What the artifact recorded as truth: a dump's after-context, for its processor."""
    snapshot = artifact.snapshot
    if artifact.kind != "dump" or artifact.after is None or snapshot is None:
        return {}
    if not artifact.processor:
        return {}
    try:
        key = resolve(artifact.processor, snapshot.family).key
    except ConfigError:
        return {}
    calls = artifact.recorded.get("model_calls") if artifact.recorded else None
    llm_calls = calls if isinstance(calls, int) and not isinstance(calls, bool) else 1
    return {key: recorded_after(snapshot.messages, artifact.after, counter, llm_calls)}


def column_mode(
    settings: Settings, snapshot: ContextSnapshot, counters: Mapping[str, TokenCounter]
) -> str:
    """The token mode the columns are counted with: the current settings' own, else exact
    cl100k when it is available, else the snapshot's."""
    mode = getattr(settings, "token_mode", None)
    if isinstance(mode, str) and mode in counters:
        return mode
    exact = counters.get("tiktoken_cl100k")
    if exact is not None and exact.exact:
        return "tiktoken_cl100k"
    return snapshot.tuning.token_mode


@dataclass(frozen=True, slots=True)
class CompareOptions:
    """How each strategy is run in a comparison."""

    #: Tokens a summary is priced at when no LLM is called.
    summary_tokens: int = 400
    #: Results recorded or run elsewhere, by registry key (a dump's after, a real level 3).
    afters: Mapping[str, After] = field(default_factory=dict)
    #: How cl100k counting is available (passed to each strategy's prepare).
    counting_note: str = ""
    #: Messages kept verbatim (the what-if of `core.pins`), by context index.
    pins: frozenset[int] = frozenset()
    #: The context's facts, when the caller already extracted them (`extract_facts` reads
    #: every message: a comparison made in steps extracts them once, not once per step).
    facts: Facts | None = None


def _outcome(
    entry: CompareEntry,
    made: After,
    before: Sequence[Message],
    counter: TokenCounter,
    facts: Facts,
) -> StrategyOutcome:
    verbatim = count_verbatim(before, made.messages)
    notes = list(made.notes)
    if entry.ignored:
        notes.append("not a setting of this processor: " + ", ".join(entry.ignored))
    return StrategyOutcome(
        strategy=entry.strategy.key,
        label=entry.strategy.processor,
        compressed=made.compressed,
        reason=made.reason,
        after_source=made.source,
        tokens_before=counter.count_messages(before),
        tokens_after=made.tokens_after,
        messages_before=len(before),
        messages_after=len(made.messages),
        kept_verbatim=verbatim,
        truncated=made.truncated,
        removed=len(before) - verbatim - made.truncated,
        added=len(made.messages) - verbatim - made.truncated,
        llm_calls=made.llm_calls,
        pairs=pair_stats(before, made.messages),
        losses=losses_between(facts, made.messages),
        losses_at_risk=made.at_risk,
        notes=tuple(notes),
        after=tuple(made.messages),
        family=entry.strategy.family,
        findings=tuple(made.findings),
        record=dict(made.record),
        native=made.native,
    )


def _pinned_after(
    snapshot: ContextSnapshot,
    entry: CompareEntry,
    counters: Mapping[str, TokenCounter],
    counter: TokenCounter,
    options: CompareOptions,
) -> After | None:
    """The column with `options.pins` kept verbatim, or None when no pin changes it (a pin
    in a region the strategy keeps anyway): the strategy decides on the context with the
    pinned messages held beside the system messages (`core.pins`), and those messages are
    kept, verbatim, at the front of what it leaves. A result recorded elsewhere (a dump's
    after) is not the pinned one: the column is the strategy's own estimate then."""
    if not options.pins:
        return None
    from inspector.core.pins import WHAT_IF_NOTE, apply_pins, format_pins

    strategy = entry.strategy
    pinned = apply_pins(
        strategy, snapshot, entry.settings, counters, options.pins, None, options.counting_note
    )
    if not pinned.lifted:
        return None
    decision = strategy.decide(pinned.prepared, entry.settings)
    made = context_after(strategy, pinned.prepared, decision, counter, options.summary_tokens)
    held = tuple(snapshot.messages[i] for i in sorted(pinned.lifted))
    messages = (*held, *made.messages)
    note = f"{WHAT_IF_NOTE}: pinned {format_pins(pinned.lifted)} kept verbatim"
    if strategy.key in options.afters:
        note += "; the recorded after-context is the run without pins, so this is an estimate"
    return replace(
        made,
        messages=messages,
        tokens_after=counter.count_messages(messages),
        notes=(*made.notes, note),
    )


def compare_strategies(
    snapshot: ContextSnapshot,
    entries: Sequence[CompareEntry],
    counters: Mapping[str, TokenCounter],
    counter: TokenCounter,
    options: CompareOptions | None = None,
) -> Comparison:
    """The context under each strategy, in the order given (`counters`: per token mode, for
    the strategies' own counting; `counter`: the one the columns are counted with)."""
    options = options or CompareOptions()
    before = snapshot.messages
    facts = options.facts if options.facts is not None else extract_facts(before)
    outcomes: list[StrategyOutcome] = []
    for entry in entries:
        made = _pinned_after(snapshot, entry, counters, counter, options)
        if made is None:
            made = options.afters.get(entry.strategy.key)
        if made is None:
            prepared = entry.strategy.prepare(snapshot, counters, options.counting_note)
            decision = entry.strategy.decide(prepared, entry.settings)
            made = context_after(
                entry.strategy, prepared, decision, counter, options.summary_tokens
            )
        outcomes.append(_outcome(entry, made, before, counter, facts))
    return Comparison(
        snapshot_id=snapshot.id,
        counter_mode=counter.mode,
        counter_exact=counter.exact,
        tokens_before=counter.count_messages(before),
        messages_before=len(before),
        facts_before=facts.counts,
        outcomes=tuple(outcomes),
    )
