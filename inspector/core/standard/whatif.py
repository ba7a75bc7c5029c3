"""What-if over a standard processor's own settings: nearest flips and sweeps.

Every numeric threshold of the standard processors moves the trigger monotonically (a
larger threshold never makes it fire where a smaller one did not, and the keep counts
only remove candidates), so the flip point is found by exponential probing then binary
search, and checked: one step back gives the old decision. Ratios move on a 0.001 grid.
Booleans are flipped outright. Must not import anything outside the standard library,
pydantic and `inspector.core`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from pydantic.fields import FieldInfo

from inspector.core.errors import ConfigError
from inspector.core.strategy.base import Settings

RATIO_SCALE = 1000
_INT_LIMIT = 1 << 40


def _bounds(info: FieldInfo, integral: bool) -> tuple[float | None, float | None]:
    """Inclusive bounds: integers step past gt/lt; for numbers the grid step does it."""
    low: float | None = None
    high: float | None = None
    step = 1 if integral else 0
    for item in info.metadata:
        if getattr(item, "gt", None) is not None:
            low = item.gt + step
        if getattr(item, "ge", None) is not None:
            low = item.ge
        if getattr(item, "lt", None) is not None:
            high = item.lt - step
        if getattr(item, "le", None) is not None:
            high = item.le
    return low, high


def field_kind(model: type[Settings], name: str) -> str | None:
    """ "int", "float", "bool" for a sweepable field, else None (lists, texts, sweep False)."""
    info = model.model_fields[name]
    extra = info.json_schema_extra
    if isinstance(extra, dict) and extra.get("sweep") is False:
        return None
    annotation = str(info.annotation)
    if "bool" in annotation:
        return "bool"
    if "float" in annotation:
        return "float"
    if "int" in annotation and "list" not in annotation:
        return "int"
    return None


def sweepable(model: type[Settings]) -> tuple[str, ...]:
    """Fields of `model` that flips and sweeps move."""
    return tuple(name for name in model.model_fields if field_kind(model, name) is not None)


def _first_differing(
    hit_at: Callable[[int], bool | None], base: bool, near: int, far: int
) -> int | None:
    """Nearest grid value from `near` towards `far` whose decision differs (monotone search)."""
    step = 1 if far >= near else -1
    if (far - near) * step < 0:
        return None
    same = near - step
    distance = 1
    probe = near
    while True:
        result = hit_at(probe)
        if result is not None and result != base:
            break
        same = probe
        if probe == far:
            return None
        distance *= 2
        probe = near + step * (distance - 1)
        if (probe - far) * step > 0:
            probe = far
    differs = probe
    while abs(differs - same) > 1:
        mid = (same + differs) // 2
        result = hit_at(mid)
        if result is not None and result != base:
            differs = mid
        else:
            same = mid
    return differs


def nearest_flip(
    settings: Settings,
    name: str,
    hit_of: Callable[[Settings], bool],
    upper_hint: int,
) -> tuple[Any, Settings] | None:
    """The value of `name` nearest to the current one that flips `hit_of`, with the settings."""
    model = type(settings)
    kind = field_kind(model, name)
    current = getattr(settings, name)
    base = hit_of(settings)
    if kind == "bool":
        try:
            changed = settings.with_(**{name: not current})
        except ConfigError:
            return None
        return (not current, changed) if hit_of(changed) != base else None
    low, high = _bounds(model.model_fields[name], kind == "int")
    scale = RATIO_SCALE if kind == "float" else 1

    def value_of(k: int) -> Any:
        return round(k / scale, 3) if kind == "float" else k

    def hit_at(k: int) -> bool | None:
        try:
            return hit_of(settings.with_(**{name: value_of(k)}))
        except ConfigError:
            return None

    lo = math.ceil((low if low is not None else 0) * scale)
    if kind == "float":
        hi = math.floor((high if high is not None else 1) * scale)
        if low is not None and lo / scale <= low:
            lo += 1
    else:
        hi = int(high) if high is not None else min(max(upper_hint, 16), _INT_LIMIT)
    if current is None:
        found = _first_differing(hit_at, base, hi, lo)
        candidates = [found] if found is not None else []
    else:
        position = current * scale
        up = _first_differing(hit_at, base, math.floor(position) + 1, hi) if position < hi else None
        down = (
            _first_differing(hit_at, base, math.ceil(position) - 1, lo) if position > lo else None
        )
        candidates = [c for c in (up, down) if c is not None]
        candidates.sort(key=lambda c: abs(c - position))
    for k in candidates:
        try:
            changed = settings.with_(**{name: value_of(k)})
        except ConfigError:
            continue
        if hit_of(changed) != base:
            return value_of(k), changed
    return None


def sweep_values(settings: Settings, name: str, upper_hint: int, steps: int = 21) -> list[Any]:
    """A sensible range for `name` around its current value."""
    model = type(settings)
    kind = field_kind(model, name)
    if kind is None:
        raise ConfigError("param", name, "one of " + ", ".join(sweepable(model)))
    current = getattr(settings, name)
    if kind == "bool":
        return [False, True]
    low, high = _bounds(model.model_fields[name], kind == "int")
    if kind == "float":
        lo = float(low) if low is not None else 0.0
        hi = float(high) if high is not None else 1.0
        values = {round(lo + (hi - lo) * i / (steps - 1), 3) for i in range(steps)}
        values = {v for v in values if v > (low or 0) or (low is None)}
        return sorted(values | ({current} if current is not None else set()))
    lo_int = int(low) if low is not None else 0
    top = max(upper_hint, 2 * (current or 0), lo_int + steps)
    if high is not None:
        top = min(top, int(high))
    values_int = {round(lo_int + (top - lo_int) * i / (steps - 1)) for i in range(steps)}
    if current is not None:
        values_int.add(current)
    return sorted(values_int)


def decisions_at(
    settings: Settings,
    name: str,
    values: Sequence[Any],
    decide: Callable[[Settings], Any],
    skip_invalid: bool = False,
) -> list[tuple[Any, Any]]:
    """`(value, decision)` for each value; a value the settings refuse raises ConfigError,
    or is left out with `skip_invalid` (default ranges may cross another field's limit)."""
    out: list[tuple[Any, Any]] = []
    for value in values:
        try:
            changed = settings.with_(**{name: value})
        except ConfigError:
            if skip_invalid:
                continue
            raise
        out.append((value, decide(changed)))
    return out
