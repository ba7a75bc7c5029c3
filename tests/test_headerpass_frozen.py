"""A load takes what it read out of the collector's scans while it yields
(`pool.freeze_heap`): only in a process without other threads and nothing frozen yet,
undone when the load ends, a header-level load and a full one alike, and with the same
results as a load that does not freeze. Run in fresh interpreters (a test worker has threads of its own).
Behaviour only; timings live in bench/."""

from __future__ import annotations

import threading

from inspector.sources.pool import freeze_heap
from tests.conftest import fresh_interpreter_json

_PROBE = """
import gc, json, sys
from pathlib import Path
from inspector.core.artifact import Artifact
from inspector.core.stats import compute_stats
from inspector.sources import loader, pool
from inspector.sources.loader import load_paths

def load(contexts):
    seen = []
    results = []
    for result in load_paths([Path("sample_dumps")], contexts=contexts):
        seen.append(gc.get_freeze_count())
        results.append(result)
    artifacts = [r for r in results if isinstance(r, Artifact)]
    names = [[type(r).__name__, r.source, getattr(r, "id", None)] for r in results]
    return seen, gc.get_freeze_count(), names, json.dumps(compute_stats(artifacts))

header = load(False)
full = load(True)
loader.freeze_heap = lambda: False
unfrozen = load(False)
full_unfrozen = load(True)
loader.freeze_heap = pool.freeze_heap
gc.freeze()
before = gc.get_freeze_count()
again = load(False)
print(json.dumps({
    "header_min": min(header[0]), "header_after": header[1],
    "full_min": min(full[0]), "full_after": full[1],
    "full_same_as_unfrozen": full[2:] == full_unfrozen[2:],
    "same_as_unfrozen": header[2:] == unfrozen[2:],
    "results": len(header[2]),
    "prefrozen_same": all(count == before for count in again[0]) and again[1] == before,
    "prefrozen_results": again[2:] == header[2:],
}))
"""


def test_header_load_freezes_while_it_yields_and_thaws() -> None:
    found = fresh_interpreter_json(_PROBE)
    assert found["results"] > 30
    assert found["header_min"] > 0  # frozen for every result
    assert found["header_after"] == 0  # and thawed when the load ended
    assert found["full_min"] > 0 and found["full_after"] == 0  # a full load alike
    assert found["full_same_as_unfrozen"]
    assert found["same_as_unfrozen"]
    assert found["prefrozen_same"]  # what another part froze is left alone
    assert found["prefrozen_results"]


def test_never_with_another_thread() -> None:
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert freeze_heap() is False
    finally:
        release.set()
        other.join()
