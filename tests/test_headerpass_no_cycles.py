"""A load leaves no reference cycle holding what it read: once its results are dropped,
the collector finds nothing (what it held is freed by reference counting, not by a full
collection, which at the end of `inspector stats` walked 130,000 objects again); and what
artifacts make on first read (a debug run's timeline) reads the same after the load ended
as during it. Run in a fresh interpreter (the collector is turned off there). Behaviour
only; timings live in bench/."""

from __future__ import annotations

from tests.conftest import fresh_interpreter_json

_PROBE = """
import gc, json
from pathlib import Path
from inspector.core.artifact import Artifact
from inspector.sources.loader import load_paths

def extras(results):
    return json.dumps(
        [dict(r.extra) for r in results if isinstance(r, Artifact)], default=str, sort_keys=True
    )

gc.collect()
gc.disable()
out = {}
for contexts in (False, True):
    during = []
    for result in load_paths([Path("sample_dumps")], contexts=contexts):
        during.append(extras([result]))
    results = list(load_paths([Path("sample_dumps")], contexts=contexts))
    after = [extras([result]) for result in results]
    out[str(contexts)] = {
        "results": len(results),
        "same": during == after,
        "timelines": sum('"kind": "evaluation"' in text for text in after),
    }
    del during, after, results, result
    out[str(contexts)]["cyclic"] = gc.collect()
print(json.dumps(out))
"""


def test_a_load_leaves_no_cycle_and_reads_alike_after() -> None:
    found = fresh_interpreter_json(_PROBE)
    for contexts in ("False", "True"):
        assert found[contexts]["results"] > 30
        assert found[contexts]["same"]
        assert found[contexts]["cyclic"] == 0
    assert found["True"]["timelines"] > 0  # made on first read (a header-level load has none)
