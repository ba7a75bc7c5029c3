"""Flips that hold: a suggested change is offered only when the changed run would really end
compressed (openJiuwen's benefit check included) or really stop.
What the source itself recorded comes first (`SourceOutcome`): a flip whose span is the one
a dump records as applied holds, since openJiuwen kept that very result; otherwise the unknown
summary of the changed run is priced with the one the source recorded (a dump's model reply),
else with a 400-token placeholder.

A flip to "compresses" is checked with what the strategy says its decision leaves in the
context (`core.strategy.after.context_after`, the strategies view's numbers): when openJiuwen
would drop the result after paying for the call (the forked processors' no-benefit
rollback), the flip would not hold and is not offered. The TUI's Why tab and the CLI's
`why`/`report` flips go through here. Pure: no I/O, no Textual, no Rich.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from inspector.core.artifact import Artifact
from inspector.core.snapshot import ContextSnapshot
from inspector.core.strategy import registry
from inspector.core.strategy.after import context_after
from inspector.core.strategy.base import Flip, Prepared, Strategy
from inspector.core.tokens import TokenCounter


@dataclass(frozen=True, slots=True)
class Offered:
    """The flips offered, and how many were left out because they would not hold."""

    flips: list[Flip]
    dropped: int


SPAN_KEYS = ("preserved_prefix", "messages_to_compress", "protected_tail")

#: The price of an unknown summary in the check (as in the strategies view).
SUMMARY_TOKENS = 400


@dataclass(frozen=True, slots=True)
class SourceOutcome:
    """What the source recorded of the compression it saw, as the check uses it."""

    #: The summary the model wrote (a dump's), which prices a changed run's.
    summary: str | None = None
    #: The processor and span counts of a compression recorded as applied (None: none was).
    applied: tuple[str, Mapping[str, int]] | None = None


def source_outcome(artifact: Artifact) -> SourceOutcome:
    """The outcome a dump records (summary, and its span when it was applied); nothing for
    other sources."""
    recorded = artifact.recorded
    span = recorded.get("span") if artifact.kind == "dump" else None
    applied = None
    if recorded.get("outcome") == "compressed" and isinstance(span, Mapping):
        counts = {key: span[key] for key in SPAN_KEYS if isinstance(span.get(key), int)}
        if artifact.processor and len(counts) == len(SPAN_KEYS):
            applied = (artifact.processor, counts)
    return SourceOutcome(artifact.summary, applied)


def summary_price(recorded_summary: str | None, counter: TokenCounter) -> int:
    """The tokens a changed run's summary is priced at: those of the summary the source
    recorded (a dump: the same model on about the same region), else `SUMMARY_TOKENS`."""
    if not recorded_summary:
        return SUMMARY_TOKENS
    return counter.text_tokens(recorded_summary)


def flip_holds(
    flip: Flip,
    snapshot: ContextSnapshot,
    current: str,
    counters: Mapping[str, TokenCounter],
    prepared: dict[str, Prepared] | None = None,
    source: SourceOutcome | None = None,
) -> bool:
    """False when `flip` says "compresses" but the result would be dropped for no benefit.

    `prepared`: contexts already prepared, by registry key (filled as needed); `source`: what
    the source recorded (`source_outcome`)."""
    if not flip.decision.hit:
        return True  # a stop holds by itself: nothing is sent
    source = source or SourceOutcome()
    if source.applied is not None:
        processor, counts = source.applied
        span = {key: flip.decision.span.get(key) for key in SPAN_KEYS}
        if flip.decision.processor == processor and span == counts:
            return True  # the source recorded this very compression as applied
    strategy = registry.get(flip.strategy or current)
    cache = prepared if prepared is not None else {}
    if strategy.key not in cache:
        cache[strategy.key] = strategy.prepare(snapshot, counters)
    mode = getattr(flip.settings, "token_mode", None)
    counter = counters.get(mode) if isinstance(mode, str) else None
    counter = counter or next(iter(counters.values()))
    price = summary_price(source.summary, counter)
    after = context_after(strategy, cache[strategy.key], flip.decision, counter, price)
    return after.compressed or after.reason != "no_benefit_rollback"


def holding_flips(
    flips: Iterable[Flip],
    snapshot: ContextSnapshot,
    current: str,
    counters: Mapping[str, TokenCounter],
    prepare: Callable[[Strategy], Prepared] | None = None,
    source: SourceOutcome | None = None,
) -> list[Flip]:
    """The flips that hold (see `flip_holds`), in their order. `prepare`: the caller's own
    prepared contexts (the context view keeps one per strategy), so nothing is counted twice;
    `source`: what the source recorded (`source_outcome`), else None."""
    flips = list(flips)
    prepared: dict[str, Prepared] = {}
    if prepare is not None:
        for key in {flip.strategy or current for flip in flips if flip.decision.hit}:
            prepared[key] = prepare(registry.get(key))
    return [
        flip for flip in flips if flip_holds(flip, snapshot, current, counters, prepared, source)
    ]


def dropped_note(dropped: int) -> str:
    """What the front ends say about the flips left out (empty when none was)."""
    if not dropped:
        return ""
    plural = "s" if dropped != 1 else ""
    return (
        f"{dropped} change{plural} would trigger a compression that openJiuwen drops for no "
        "benefit (the new context would not be smaller): not offered"
    )
