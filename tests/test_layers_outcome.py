"""The one outcome classifier (core.outcome), table-driven; the browser and `stats` agree on it."""

from __future__ import annotations

from typing import Any

import pytest

from inspector.core.artifact import Artifact
from inspector.core.outcome import classify_outcome
from inspector.core.stats import compute_stats


def _artifact(kind: str, **recorded: Any) -> Artifact:
    return Artifact(source="x.jsonl", id="a", kind=kind, snapshot=None, recorded=recorded)  # type: ignore[arg-type]


CASES = [
    # (artifact, kind, text, recorded word, reason)
    (_artifact("dump", outcome="compressed"), "compressed", "compressed", "compressed", None),
    (_artifact("dump"), "compressed", "compressed", "compressed", None),
    (
        _artifact("debug", outcome="not_compressed", reason="below_threshold"),
        "not compressed",
        "no: below_threshold",
        "not_compressed",
        "below_threshold",
    ),
    (
        _artifact("debug", outcome="silent_end", reason="reached_threshold"),
        "failed",
        "failed: silent end, no dump",
        "silent_end",
        "silent_end",
    ),
    (
        _artifact(
            "debug",
            outcome="failed",
            retries=[{"reason": "transient_backoff"}, {"reason": "retry_budget_exhausted"}],
        ),
        "failed",
        "failed: retry_budget_exhausted",
        "failed",
        "retry_budget_exhausted",
    ),
    (_artifact("debug", outcome="failed"), "failed", "failed: failed", "failed", None),
    (_artifact("debug", final_outcome="applied"), "compressed", "compressed", "applied", None),
    (
        _artifact("debug", reason="reached_threshold"),
        "failed",
        "failed: reached threshold, no dump",
        None,
        "reached_threshold",
    ),
    (
        _artifact("debug", threshold_check={"reason": "target_below_min"}),
        "not compressed",
        "no: target_below_min",
        None,
        "target_below_min",
    ),
    (_artifact("snapshot"), "not compressed", "no context", None, None),
]


@pytest.mark.parametrize(("artifact", "kind", "text", "word", "reason"), CASES)
def test_classify_outcome(artifact: Artifact, kind: str, text: str, word: Any, reason: Any) -> None:
    outcome = classify_outcome(artifact)
    assert (outcome.kind, outcome.text, outcome.recorded, outcome.reason) == (
        kind,
        text,
        word,
        reason,
    )


def test_stats_counts_what_the_classifier_says() -> None:
    artifacts = [case[0] for case in CASES]
    stats = compute_stats(artifacts)
    assert stats["by_processor"]["unknown"] == {
        "compressed": 2,
        "not_compressed": 1,
        "silent_end": 1,
        "failed": 2,
        "applied": 1,
        "unknown": 2,
    }
    assert stats["not_compressed"] == {
        "below_threshold": 1,
        "silent_end (reached_threshold, then no record)": 1,
        "failed (retry_budget_exhausted)": 1,
        "failed (unknown)": 1,
    }
