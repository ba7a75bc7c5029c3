"""What-if: flips sit on the real boundary; sweeps agree with single evaluations."""

from __future__ import annotations

import json

import pytest

from inspector.core.engine import ContextEngine
from inspector.core.errors import ConfigError
from inspector.core.snapshot import snapshot_from_dict
from inspector.core.tokens import TokenCounter
from inspector.core.whatif import (
    RATIO_STEP,
    default_sweep_values,
    flip_points,
    smallest_flips,
    sweep,
)
from tests.conftest import PARITY_CASES

CASES = [json.loads(line) for line in PARITY_CASES.read_text(encoding="utf-8").splitlines()[:80]]
STEP = {
    "trigger_ratio": RATIO_STEP,
    "min_target_ratio": RATIO_STEP,
    "keep_recent": 1,
    "context_max": 1,
}


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_flips_are_the_real_boundary(case: dict, counters: dict[str, TokenCounter]) -> None:
    snapshot = snapshot_from_dict(case)
    engine = ContextEngine(snapshot, counters)
    tuning = snapshot.tuning
    base = engine.evaluate(tuning)
    for flip in smallest_flips(engine, tuning):
        assert flip.evaluation.hit != base.hit
        assert engine.evaluate(flip.tuning) == flip.evaluation
        if flip.param not in STEP:
            continue
        step = STEP[flip.param]
        direction = 1 if flip.value < flip.current else -1
        back = flip.value + direction * step
        if isinstance(step, float):
            back = round(back, 3)
        if (back - flip.current) * direction > 0:  # stepping back passed the current value
            continue
        before = engine.evaluate(tuning.with_(**{flip.param: back}))
        assert before.hit == base.hit, f"{flip.param}: {back} should keep the old verdict"


def test_some_flips_exist_for_each_numeric_parameter(counters: dict[str, TokenCounter]) -> None:
    seen = set()
    for case in CASES:
        engine = ContextEngine(snapshot_from_dict(case), counters)
        seen.update(f.param for f in smallest_flips(engine, engine.snapshot.tuning))
    assert {"trigger_ratio", "min_target_ratio", "keep_recent", "context_max"} <= seen


def test_sweep_matches_single_evaluations(counters: dict[str, TokenCounter]) -> None:
    engine = ContextEngine(snapshot_from_dict(CASES[0]), counters)
    tuning = engine.snapshot.tuning
    for param in ("trigger_ratio", "min_target_ratio", "keep_recent", "context_max"):
        values = default_sweep_values(engine, tuning, param)
        points = sweep(engine, tuning, param, values)
        assert [p.value for p in points] == values
        for point in points:
            assert point.evaluation == engine.evaluate(tuning.with_(**{param: point.value}))
        for index in flip_points(points):
            assert points[index].evaluation.hit != points[index - 1].evaluation.hit


def test_sweep_rejects_bad_parameter_and_values(counters: dict[str, TokenCounter]) -> None:
    engine = ContextEngine(snapshot_from_dict(CASES[0]), counters)
    with pytest.raises(ConfigError):
        sweep(engine, engine.snapshot.tuning, "nope")
    with pytest.raises(ConfigError):
        sweep(engine, engine.snapshot.tuning, "trigger_ratio", [1.5])
