"""Flips that hold: a suggested change is offered only when the changed run would really end
compressed (openJiuwen's benefit check included) or really stop.

A flip to "compresses" under one of openJiuwen's forked processors is checked with the
strategies view's estimate (`core.compare.openjiuwen_outcome`): when the new context would
not count fewer tokens than the old one, openJiuwen drops the result after paying for the
call, so the flip would not hold and is not offered. No Textual, no Rich.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from inspector.core.compare import openjiuwen_outcome
from inspector.core.snapshot import ContextSnapshot
from inspector.core.strategy.base import Flip
from inspector.core.strategy.fields import fields_of
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import apply_overrides

#: The forked processors openJiuwen's benefit check applies to.
CHECKED = ("current_round", "dialogue", "round_level")


def _overrides(flip: Flip, processor: str) -> dict[str, Any]:
    changes: dict[str, Any] = {
        info.alias: getattr(flip.settings, info.name)
        for info in fields_of(type(flip.settings))
        if info.alias is not None
    }
    changes["processor"] = processor
    return changes


def flip_holds(
    flip: Flip,
    snapshot: ContextSnapshot,
    current: str,
    counters: Mapping[str, TokenCounter],
) -> bool:
    """False when `flip` says "compresses" but the benefit check would drop the result."""
    if not flip.decision.hit:
        return True  # a stop holds by itself: nothing is sent
    processor = flip.strategy or current
    if processor not in CHECKED:
        return True
    try:
        tuning = apply_overrides(snapshot.tuning, _overrides(flip, processor))
    except Exception:  # noqa: BLE001 - settings our tuning cannot spell: keep the flip
        return True
    counter = counters.get(tuning.token_mode) or next(iter(counters.values()))
    outcome = openjiuwen_outcome(snapshot, processor, counter, tuning=tuning)
    return outcome.compressed or outcome.reason != "no_benefit_rollback"


def holding_flips(
    flips: Iterable[Flip],
    snapshot: ContextSnapshot,
    current: str,
    counters: Mapping[str, TokenCounter],
) -> list[Flip]:
    """The flips that hold (see `flip_holds`), in their order."""
    return [flip for flip in flips if flip_holds(flip, snapshot, current, counters)]
