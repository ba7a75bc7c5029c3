"""Flips that hold: a suggested change is offered only when the changed run would really end
compressed (openJiuwen's benefit check included) or really stop.

A flip to "compresses" is checked with the strategies view's estimate of the context after
it (`core.strategy.after.context_after`, what `C` shows): when that says the result is
rolled back for no benefit (the new context would not count fewer tokens than the old),
openJiuwen drops the result after paying for the call, so the flip would not hold and is
not offered. No Textual, no Rich.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from inspector.core.compare import CompareOptions
from inspector.core.strategy import registry
from inspector.core.strategy.after import context_after
from inspector.core.strategy.base import Flip, Prepared, Strategy
from inspector.core.tokens import TokenCounter

#: The reason an estimate gives when the benefit check rolls the result back.
ROLLED_BACK = "no_benefit_rollback"


def flip_holds(
    flip: Flip,
    current: Strategy,
    prepared_of: Callable[[Strategy], Prepared],
    counters: Mapping[str, TokenCounter],
) -> bool:
    """False when `flip` says "compresses" but the benefit check would drop the result."""
    if not flip.decision.hit:
        return True  # a stop holds by itself: nothing is sent
    strategy = registry.get(flip.strategy) if flip.strategy else current
    mode = str(getattr(flip.settings, "token_mode", "len_div_4"))
    counter = counters.get(mode) or counters["len_div_4"]
    made = context_after(
        strategy, prepared_of(strategy), flip.decision, counter, CompareOptions().summary_tokens
    )
    return made.compressed or made.reason != ROLLED_BACK


def holding_flips(
    flips: Iterable[Flip],
    current: Strategy,
    prepared_of: Callable[[Strategy], Prepared],
    counters: Mapping[str, TokenCounter],
) -> list[Flip]:
    """The flips that hold (see `flip_holds`), in their order."""
    return [flip for flip in flips if flip_holds(flip, current, prepared_of, counters)]
