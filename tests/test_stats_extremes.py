"""`compute_stats`'s biggest and least effective compressions: the first `TOP_N` of the
compressions sorted as the CLI contract says (stable: ties keep the artifacts' order),
checked against that sort over generated dumps with many ties and unknown numbers."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.artifact import Artifact, DumpRecorded
from inspector.core.stats import TOP_N, compute_stats

NUMBERS = st.one_of(st.none(), st.integers(min_value=0, max_value=4))
RATIOS = st.one_of(st.none(), st.sampled_from([0.0, 0.25, 0.5]))


def _dump(index: int, before: Any, after: Any, reduction: Any, ratio: Any) -> Artifact:
    recorded = DumpRecorded(
        tokens_before=before, tokens_after=after, reduction=reduction, reduction_ratio=ratio
    )
    return Artifact(f"s{index}", f"d{index}", "dump", None, recorded, "P", f"session{index % 3}")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(NUMBERS, NUMBERS, NUMBERS, RATIOS), max_size=30))
def test_extremes_are_the_contract_sort(numbers: list[tuple[Any, ...]]) -> None:
    artifacts = [_dump(i, *values) for i, values in enumerate(numbers)]
    stats = compute_stats(artifacts)
    rows = []
    for artifact in artifacts:
        before, after, reduction, ratio = numbers[int(artifact.id[1:])]
        if ratio is None and before and reduction is not None:
            ratio = round(reduction / before, 4)
        if reduction is None and before is not None and after is not None:
            reduction = max(before - after, 0)
        rows.append(
            {
                "id": artifact.id,
                "source": artifact.source,
                "processor": "P",
                "session_id": artifact.session_id,
                "tokens_before": before,
                "tokens_after": after,
                "reduction": reduction,
                "reduction_ratio": None if ratio is None else float(ratio),
            }
        )
    known = [r for r in rows if r["reduction"] is not None]
    rated = [r for r in rows if r["reduction_ratio"] is not None]
    assert stats["compressions"] == len(rows)
    assert stats["biggest"] == sorted(known, key=lambda r: -r["reduction"])[:TOP_N]
    assert (
        stats["least_effective"]
        == sorted(rated, key=lambda r: (r["reduction_ratio"], r["reduction"] or 0))[:TOP_N]
    )
    assert [list(r) for r in stats["biggest"]] == [list(rows[0]) for _ in stats["biggest"]]
