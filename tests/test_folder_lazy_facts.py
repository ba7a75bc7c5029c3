"""Issue 16 (2): work a load does only when it is needed, checked against doing it always.

* the debug records' release facts per folder and session (`neighbours.neighbour_facts`) are
  sorted out when a context without facts of its own first asks, not on every load;
* `call_evaluations` is not run when the load holds no model call (it links nothing then).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.synth import write_folder
from inspector.core.artifact import Artifact
from inspector.core.timeline import call_evaluations, group_runs
from inspector.core.tokens import TOKEN_MODES, TokenCounter
from inspector.sources import loader
from inspector.sources.classify import load_one
from inspector.sources.neighbours import NeighbourFacts
from tests.conftest import REFERENCE

ROOT = Path(__file__).resolve().parents[1]


def _counters() -> dict[str, TokenCounter]:
    return {mode: TokenCounter(mode) for mode in TOKEN_MODES}  # type: ignore[arg-type]


def _shape(results: list[Any]) -> list[tuple[Any, ...]]:
    out = []
    for item in results:
        if isinstance(item, Artifact):
            evidence = getattr(item.snapshot, "release_evidence", None)
            out.append((item.kind, item.source, item.id, repr(evidence), repr(item.recorded)))
        else:
            out.append(("error", item.source, repr(item)))
    return out


def _sources(tmp_path: Path) -> list[Path]:
    found = [ROOT / "sample_dumps", ROOT / "tests" / "data"]
    if REFERENCE.exists():
        found.append(REFERENCE)
    found.append(write_folder(tmp_path / "f", dumps=30, sessions=3, messages_per_dump=6))
    return found


@pytest.mark.parametrize("contexts", [True, False])
def test_facts_sorted_on_need_equal_facts_sorted_always(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, contexts: bool
) -> None:
    sources = _sources(tmp_path)
    lazy = {
        s: list(loader.load_paths([s], counters=_counters(), contexts=contexts)) for s in sources
    }
    asked: list[int] = []
    real = NeighbourFacts.facts

    def counted(self: Any) -> Any:
        asked.append(1)
        return real(self)

    monkeypatch.setattr(NeighbourFacts, "facts", counted)
    lazy_again = {
        s: list(loader.load_paths([s], counters=_counters(), contexts=contexts)) for s in sources
    }
    assert {s: _shape(r) for s, r in lazy_again.items()} == {s: _shape(r) for s, r in lazy.items()}
    if contexts:
        assert asked, "no context took its neighbours' facts: the test would check nothing"
    prepare = loader._Streamer._prepare

    def eager(self: Any) -> None:
        prepare(self)
        self.facts.facts()  # what every load did before

    monkeypatch.setattr(loader._Streamer, "_prepare", eager)
    for source in sources:
        always = list(loader.load_paths([source], counters=_counters(), contexts=contexts))
        assert _shape(always) == _shape(lazy[source])


def test_no_model_call_links_no_evaluation(tmp_path: Path) -> None:
    for source in _sources(tmp_path):
        logs = sorted(source.rglob("*.jsonl"))
        records = [r for path in logs for r in load_one(path, 0, False).records]
        runs = group_runs(records)
        assert call_evaluations(runs, []) == {}
