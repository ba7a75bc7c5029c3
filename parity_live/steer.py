"""Move random cases near a decision boundary, using our own count of each context.

`steer(case, rng, counters)` picks `context_max` (and for the span minimum the min-target
ratio) so that the case lands where the outcome is decided by a few tokens: total =
threshold + d or target = min + d with small d, or, for the rest, well inside one of the
four outcomes. Our count is only a guide (it uses one profile's rules, picked at random);
what the case really decides is always computed by the release.
"""

from __future__ import annotations

import math
import random
from typing import Any

from inspector.core.engine import PricedContext
from inspector.core.releases import PROFILES, ReleaseProfile
from inspector.core.snapshot import snapshot_from_dict
from inspector.core.tokens import EncodeLen


def _priced(case: dict[str, Any], profile: ReleaseProfile, encode_len: EncodeLen | None) -> Any:
    mode = profile.default_token_mode(case.get("engine_config"))
    snapshot = snapshot_from_dict({**case, "token_mode": mode})
    priced = PricedContext.from_snapshot(snapshot, profile.counter(mode, encode_len))
    return snapshot, priced


def _context_max_for_threshold(threshold: int, ratio: float) -> int:
    """A context_max whose int(C x ratio) is `threshold`, or the nearest above."""
    guess = max(int(math.ceil(threshold / ratio)), 1)
    for candidate in range(max(guess - 3, 1), guess + 4):
        if max(int(candidate * ratio), 1) == threshold:
            return candidate
    return guess


def _min_ratio_for(target: int, context_max: int) -> float:
    """A min_target_context_ratio whose int(C x m) is `target` (or close), 0 <= m < 1."""
    if target <= 0:
        return 0.0
    for digits in (4, 5, 6, 8):
        ratio = round(target / context_max, digits)
        for step in (0, 1, -1, 2):
            value = ratio + step * 10**-digits
            if 0 <= value < 1 and int(context_max * value) == target:
                return value
    return min(max(round(target / context_max, 6), 0.0), 0.999)


def steer(
    case: dict[str, Any],
    rng: random.Random,
    encode_len: EncodeLen | None,
    profile: ReleaseProfile | None = None,
) -> dict[str, Any]:
    """The case with context_max (and maybe min ratio) set for a boundary or an outcome.

    Counts with `profile`'s rules (a random profile when None).
    """
    profile = profile or rng.choice(PROFILES)
    snapshot, priced = _priced(case, profile, encode_len)
    tuning = snapshot.tuning
    total = priced.window_total
    span = priced.span(tuning)
    target = priced.count_range(*span.compress)
    ratio = case["config"]["trigger_context_ratio"]
    roll = rng.random()
    has_span = span.compress[1] > span.compress[0] and target > 3
    aim: str
    if roll < 0.45 or (roll < 0.7 and not has_span):
        aim = "threshold_boundary"
        threshold = max(total + rng.randint(-3, 3), 1)
        case["context_max"] = _context_max_for_threshold(threshold, ratio)
    elif roll < 0.7:
        aim = "min_target_boundary"
        threshold = max(int(total * rng.uniform(0.3, 0.98)), 1)
        context_max = _context_max_for_threshold(threshold, ratio)
        case["context_max"] = context_max
        wanted = max(target + rng.randint(-3, 3), 0)
        case["config"]["min_target_context_ratio"] = _min_ratio_for(wanted, context_max)
    elif roll < 0.85:
        aim = "below_threshold"
        threshold = max(int(total * rng.uniform(1.05, 3.0)) + 1, 2)
        case["context_max"] = _context_max_for_threshold(threshold, ratio)
    elif roll < 0.97:
        aim = "reached"
        threshold = max(int(total * rng.uniform(0.2, 0.95)), 1)
        context_max = _context_max_for_threshold(threshold, ratio)
        case["context_max"] = context_max
        if target > 0 and rng.random() < 0.5:
            wanted = int(target * rng.uniform(0.3, 1.6))
            case["config"]["min_target_context_ratio"] = _min_ratio_for(wanted, context_max)
    else:
        aim = "unsteered"
    case["generator"] = {**case["generator"], "steered_toward": aim, "steered_with": profile.name}
    return case
