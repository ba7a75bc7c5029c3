"""What-if: the smallest single change that flips the verdict, and sweeps of one parameter.

The verdict (hit or not) is monotone in each numeric parameter: the total does not depend
on the tuning, the threshold and the minimum grow with their ratio and with context_max, and
the region to compress shrinks as keep_recent grows. So each flip point is found by binary
search, and the result is the real boundary: one step further back gives the old verdict.
Ratios move on a grid of 0.001. Must not import anything outside the standard library and
`inspector.core`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.core.engine import ContextEngine, Evaluation
from inspector.core.errors import ConfigError
from inspector.core.tokens import TOKEN_MODES
from inspector.core.tuning import DEFAULT_KEEP_RECENT, PROCESSOR_KINDS, Tuning

SWEEP_PARAMS = ("trigger_ratio", "min_target_ratio", "keep_recent", "context_max")
RATIO_STEP = 0.001
_RATIO_SCALE = 1000
_CONTEXT_MAX_LIMIT = 1 << 40


@dataclass(frozen=True, slots=True)
class Flip:
    """Setting `param` from `current` to `value` flips the verdict to `evaluation`."""

    param: str
    current: Any
    value: Any
    tuning: Tuning
    evaluation: Evaluation
    sentence: str


@dataclass(frozen=True, slots=True)
class SweepPoint:
    """The verdict and numbers at one value of the swept parameter."""

    value: Any
    evaluation: Evaluation


def _ratio_value(k: int) -> float:
    return round(k / _RATIO_SCALE, 3)


def _first_differing(hit_at: Callable[[int], bool], base: bool, near: int, far: int) -> int | None:
    """The candidate nearest to `near` (towards `far`, both included) whose verdict differs from `base`.

    Assumes the verdict is monotone along the way, so a binary search finds the boundary.
    """
    step = 1 if far >= near else -1
    if (far - near) * step < 0 or hit_at(far) == base:
        return None
    if hit_at(near) != base:
        return near
    same, differs = near, far
    while abs(differs - same) > 1:
        mid = (same + differs) // 2
        if hit_at(mid) == base:
            same = mid
        else:
            differs = mid
    return differs


def _nearest_flip(
    hit_at: Callable[[int], bool], base: bool, current: float, low: int, high: int
) -> int | None:
    """The grid point nearest to `current` (which may lie between grid points) that flips the verdict."""
    up = _first_differing(hit_at, base, math.floor(current) + 1, high) if current < high else None
    down = _first_differing(hit_at, base, math.ceil(current) - 1, low) if current > low else None
    if up is None:
        return down
    if down is None:
        return up
    return up if up - current <= current - down else down


def _verdict_words(evaluation: Evaluation) -> str:
    return "compresses" if evaluation.hit else f"does not compress ({evaluation.reason})"


def smallest_flips(engine: ContextEngine, tuning: Tuning) -> list[Flip]:
    """For each parameter, the smallest single change that flips the verdict (if any)."""
    if tuning.processor == "hybrid":
        return []
    priced = engine.priced(tuning.token_mode)
    base = priced.evaluate(tuning)
    flips: list[Flip] = []

    def add(param: str, current: Any, value: Any, changed: Tuning) -> None:
        evaluation = engine.evaluate(changed)
        if evaluation.hit == base.hit:
            return
        sentence = f"{param} {current} -> {value}: {_verdict_words(evaluation)}"
        flips.append(Flip(param, current, value, changed, evaluation, sentence))

    def ratio_flip(param: str, low: int) -> None:
        current_value: float = getattr(tuning, param)

        def hit_at(k: int) -> bool:
            return priced.evaluate(tuning.with_(**{param: _ratio_value(k)})).hit

        found = _nearest_flip(hit_at, base.hit, current_value * _RATIO_SCALE, low, _RATIO_SCALE - 1)
        if found is not None:
            add(
                param,
                current_value,
                _ratio_value(found),
                tuning.with_(**{param: _ratio_value(found)}),
            )

    ratio_flip("trigger_ratio", 1)
    ratio_flip("min_target_ratio", 0)
    if tuning.processor in ("current_round", "round_level"):
        upper = max(priced.n + 1, tuning.keep_recent)
        found_keep = _nearest_flip(
            lambda k: priced.evaluate(tuning.with_(keep_recent=k)).hit,
            base.hit,
            tuning.keep_recent,
            0,
            upper,
        )
        if found_keep is not None:
            add("keep_recent", tuning.keep_recent, found_keep, tuning.with_(keep_recent=found_keep))
    high = max(_CONTEXT_MAX_LIMIT, tuning.context_max)
    found_max = _nearest_flip(
        lambda c: priced.evaluate(tuning.with_(context_max=c)).hit,
        base.hit,
        tuning.context_max,
        1,
        high,
    )
    if found_max is not None:
        add("context_max", tuning.context_max, found_max, tuning.with_(context_max=found_max))
    add(
        "tool_boundary",
        tuning.tool_boundary,
        not tuning.tool_boundary,
        tuning.with_(tool_boundary=not tuning.tool_boundary),
    )
    for mode in TOKEN_MODES:
        if mode != tuning.token_mode:
            add("token_mode", tuning.token_mode, mode, tuning.with_(token_mode=mode))
    for processor in PROCESSOR_KINDS:
        if processor not in (tuning.processor, "hybrid"):
            changed = tuning.with_(processor=processor, keep_recent=DEFAULT_KEEP_RECENT[processor])
            add("processor", tuning.processor, processor, changed)
    return flips


def default_sweep_values(
    engine: ContextEngine, tuning: Tuning, param: str, steps: int = 20
) -> list[Any]:
    """A sensible range for `param`: ratios over (0, 1), keep_recent over 0..n, context_max around the current value."""
    if param in ("trigger_ratio", "min_target_ratio"):
        start = 0.05 if param == "trigger_ratio" else 0.0
        values = [round(start + (0.95 - start) * i / (steps - 1), 3) for i in range(steps)]
        return sorted(set(values) | {getattr(tuning, param)})
    if param == "keep_recent":
        top = engine.priced(tuning.token_mode).n
        if top + 1 <= steps * 2:
            return list(range(0, top + 1))
        return sorted({round(top * i / (steps - 1)) for i in range(steps)} | {tuning.keep_recent})
    if param == "context_max":
        current = tuning.context_max
        sizes = {max(1, round(current * (0.25 * (16 ** (i / (steps - 1)))))) for i in range(steps)}
        return sorted(sizes | {current})
    raise ConfigError("param", param, "one of " + ", ".join(SWEEP_PARAMS))


def sweep(
    engine: ContextEngine, tuning: Tuning, param: str, values: Sequence[Any] | None = None
) -> list[SweepPoint]:
    """Evaluate the tuning with `param` set to each value (validated like any tuning)."""
    if param not in SWEEP_PARAMS:
        raise ConfigError("param", param, "one of " + ", ".join(SWEEP_PARAMS))
    chosen = list(values) if values is not None else default_sweep_values(engine, tuning, param)
    return [SweepPoint(v, engine.evaluate(tuning.with_(**{param: v}))) for v in chosen]


def flip_points(points: Sequence[SweepPoint]) -> list[int]:
    """Indices in a sweep where the verdict differs from the previous point."""
    return [
        i for i in range(1, len(points)) if points[i].evaluation.hit != points[i - 1].evaluation.hit
    ]
