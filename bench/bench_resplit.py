"""Issue 2 (b) and issue 8: re-split a 20,000-message context after a tuning change.

The context is counted once (`PricedContext`); then keep_recent and the trigger ratio
change 1,000 times and each change is timed: a new `Tuning` plus `evaluate`, and, as a
second line, the lead's full `diagnose` (checks and findings) the TUI shows. Goal: median
under 16 ms (one frame); under 1 ms is within reach with prefix sums.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from bench.common import Result, median_ms
from inspector.core.engine import ContextEngine, PricedContext
from inspector.core.snapshot import ContextSnapshot, snapshot_from_dict
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import Tuning
from inspector.encoding import make_counters

FRAME_MS = 16.0


def tuning_changes(count: int, messages: int, seed: int = 5) -> list[Tuning]:
    """`count` tunings, each with a new keep_recent and trigger ratio (CurrentRound, cl100k)."""
    rng = random.Random(seed)
    base = Tuning(processor="current_round", token_mode="tiktoken_cl100k", context_max=2_000_000)
    return [
        base.with_(keep_recent=rng.randrange(0, messages), trigger_ratio=rng.uniform(0.05, 0.95))
        for _ in range(count)
    ]


def time_changes(step: Callable[[Tuning], object], tunings: list[Tuning]) -> list[float]:
    """Seconds per call of `step` for each tuning."""
    samples = []
    for tuning in tunings:
        start = time.perf_counter()
        step(tuning)
        samples.append(time.perf_counter() - start)
    return samples


def resplit_results(
    snapshot: ContextSnapshot,
    label: str,
    changes: int = 1_000,
    counters: dict[str, TokenCounter] | None = None,
) -> list[Result]:
    """Median per change of evaluate (and of diagnose when the core has it) on `snapshot`.

    Counting happens once, before the timed loop (pass `counters` that already know the
    messages to skip even that).
    """
    engine = ContextEngine(snapshot, counters or make_counters())
    priced: PricedContext = engine.priced("tiktoken_cl100k")
    n = priced.n
    tunings = tuning_changes(changes, n)

    def evaluate(tuning: Tuning) -> object:
        return priced.evaluate(tuning.with_())  # with_() validates, as a UI change does

    samples = time_changes(evaluate, tunings)
    results = [
        Result(
            "resplit",
            f"{label}: evaluate after a tuning change ({n:,} messages)",
            median_ms(samples),
            "ms",
            f"median < {FRAME_MS:g} ms",
            median_ms(samples) < FRAME_MS,
            note=f"{changes} changes of keep_recent + trigger ratio; max {max(samples) * 1000:.2f} ms",
        )
    ]
    try:
        from inspector.core.diagnosis import diagnose
    except ImportError:
        return results
    samples = time_changes(lambda tuning: diagnose(engine, tuning), tunings[: max(changes // 5, 1)])
    results.append(
        Result(
            "resplit",
            f"{label}: full diagnose (checks + findings) after a change",
            median_ms(samples),
            "ms",
            f"median < {FRAME_MS:g} ms",
            median_ms(samples) < FRAME_MS,
            note=f"{len(samples)} changes; max {max(samples) * 1000:.2f} ms",
        )
    )
    return results


def run(messages: int = 20_000, changes: int = 1_000) -> list[Result]:
    """Benchmark (b) on a synthetic context of `messages` messages."""
    from bench.synth import synthetic_snapshot

    snapshot = snapshot_from_dict(synthetic_snapshot(messages))
    return resplit_results(snapshot, "synthetic", changes)


if __name__ == "__main__":
    from bench.run_all import print_table

    print_table(run())
