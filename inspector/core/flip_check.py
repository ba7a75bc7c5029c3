"""Flips that hold: a suggested change is offered only when the changed run would really end
compressed (openJiuwen's benefit check included) or really stop.

A flip to "compresses" is checked with what the strategy says its decision leaves in the
context (`core.strategy.after.context_after`, the strategies view's numbers): when openJiuwen
would drop the result after paying for the call (the forked processors' no-benefit
rollback), the flip would not hold and is not offered. The TUI's Why tab and the CLI's
`why`/`report` flips go through here. Pure: no I/O, no Textual, no Rich.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

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


#: The price of the unknown summary in the check (as in the strategies view).
SUMMARY_TOKENS = 400


def flip_holds(
    flip: Flip,
    snapshot: ContextSnapshot,
    current: str,
    counters: Mapping[str, TokenCounter],
    prepared: dict[str, Prepared] | None = None,
) -> bool:
    """False when `flip` says "compresses" but the result would be dropped for no benefit.

    `prepared`: contexts already prepared, by registry key (filled as needed)."""
    if not flip.decision.hit:
        return True  # a stop holds by itself: nothing is sent
    strategy = registry.get(flip.strategy or current)
    cache = prepared if prepared is not None else {}
    if strategy.key not in cache:
        cache[strategy.key] = strategy.prepare(snapshot, counters)
    mode = getattr(flip.settings, "token_mode", None)
    counter = counters.get(mode) if isinstance(mode, str) else None
    counter = counter or next(iter(counters.values()))
    after = context_after(strategy, cache[strategy.key], flip.decision, counter, SUMMARY_TOKENS)
    return after.compressed or after.reason != "no_benefit_rollback"


def holding_flips(
    flips: Iterable[Flip],
    snapshot: ContextSnapshot,
    current: str,
    counters: Mapping[str, TokenCounter],
    prepare: Callable[[Strategy], Prepared] | None = None,
) -> list[Flip]:
    """The flips that hold (see `flip_holds`), in their order. `prepare`: the caller's own
    prepared contexts (the context view keeps one per strategy), so nothing is counted twice."""
    flips = list(flips)
    prepared: dict[str, Prepared] = {}
    if prepare is not None:
        for key in {flip.strategy or current for flip in flips if flip.decision.hit}:
            prepared[key] = prepare(registry.get(key))
    return [flip for flip in flips if flip_holds(flip, snapshot, current, counters, prepared)]


def dropped_note(dropped: int) -> str:
    """What the front ends say about the flips left out (empty when none was)."""
    if not dropped:
        return ""
    plural = "s" if dropped != 1 else ""
    return (
        f"{dropped} change{plural} would trigger a compression that openJiuwen drops for no "
        "benefit (the new context would not be smaller): not offered"
    )
