"""Issue 16 (2): the browser's on-demand load (`load_paths(on_demand=True)`).

Every dump comes as a header-level artifact whose `whole()` reads its file again; what it
gives must be exactly what a full load gives for that dump (artifact or error, with the same
links, timeline, stale-usage ids and release facts), and every other result must be the full
load's. Checked on every corpus we have, on a folder beside explicit files, and on files
that change or break after the load.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest

from bench.synth import write_folder
from inspector.core.artifact import Artifact, LoadError, LoadResult, made_whole
from inspector.core.tokens import TOKEN_MODES, TokenCounter
from inspector.sources.loader import load_paths
from tests.conftest import REFERENCE, fresh_interpreter_json

ROOT = Path(__file__).resolve().parents[1]


def _counters() -> dict[str, TokenCounter]:
    return {mode: TokenCounter(mode) for mode in TOKEN_MODES}  # type: ignore[arg-type]


def _loads(sources: list[Any]) -> tuple[list[LoadResult], list[LoadResult]]:
    """(a full load, the on-demand load) of `sources`."""
    full = list(load_paths(sources, counters=_counters()))
    lazy = list(load_paths(sources, counters=_counters(), on_demand=True))
    return full, lazy


def _folder(tmp_path: Path) -> Path:
    return write_folder(tmp_path / "f", dumps=40, sessions=3, messages_per_dump=6)


def _corpora(tmp_path: Path) -> list[list[Any]]:
    folder = _folder(tmp_path)
    dumps = sorted(folder.rglob("*_*Compressor_*.json"))
    logs = sorted(folder.rglob("*.jsonl"))
    found: list[list[Any]] = [
        [ROOT / "sample_dumps"],
        [ROOT / "tests" / "data"],
        [folder],
        # explicit files before and beside the folder they are in (read once, in plan order)
        [dumps[3], logs[0], folder, dumps[0]],
        [dumps[5], dumps[1]],
    ]
    if REFERENCE.exists():
        found.append([REFERENCE])
    return found


def test_each_dump_made_whole_is_what_a_full_load_gives(tmp_path: Path) -> None:
    for sources in _corpora(tmp_path):
        full, lazy = _loads(sources)
        on_demand = [i for i in lazy if isinstance(i, Artifact) and i.whole is not None]
        assert on_demand, f"no dump on demand in {sources}: nothing would be checked"
        for item in on_demand:
            assert item.snapshot is None and item.after is None
            assert item.extra["header_only"] is True
        assert len(lazy) == len(full)
        made = [made_whole(item) for item in lazy]
        for one, want in zip(made, full, strict=True):
            assert one == want, f"{sources}: {getattr(want, 'source', want)}"
        # a whole artifact is whole: nothing more to make
        assert all(not isinstance(i, Artifact) or i.whole is None for i in made)


@pytest.mark.parametrize("where", ["folder", "sample_dumps"])
def test_a_whole_artifact_carries_what_only_a_full_load_links(tmp_path: Path, where: str) -> None:
    """Dumps link to debug runs, have session timelines and (in sample_dumps) earlier dumps
    of their context: whole, they carry them (so the equality above compared something)."""
    source = _folder(tmp_path) if where == "folder" else ROOT / "sample_dumps"
    made = [
        made_whole(i)
        for i in load_paths([source], counters=_counters(), on_demand=True)
        if isinstance(i, Artifact) and i.whole is not None
    ]
    assert made and all(isinstance(a, Artifact) and a.snapshot is not None for a in made)
    artifacts = [a for a in made if isinstance(a, Artifact)]
    assert any(a.extra["timeline"] for a in artifacts)
    assert any(a.recorded.get("threshold_check") for a in artifacts)
    if where == "sample_dumps":  # the stale usage ids come from the earlier dumps' files
        assert any(a.recorded.get("stale_usage") for a in artifacts)


def _deep(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = [value]
    return value


def test_a_dump_that_does_not_rebuild_is_the_full_loads_error(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    dump = sorted(folder.rglob("*_*Compressor_*.json"))[7]
    data = json.loads(dump.read_text())
    data["context_after"]["messages"][0]["content"] = _deep(230)  # deeper than we read
    dump.write_text(json.dumps(data))
    full, lazy = _loads([folder])
    want = [i for i in full if i.source == str(dump)]
    assert len(want) == 1 and isinstance(want[0], LoadError), want
    found = [i for i in lazy if i.source == str(dump)]
    assert len(found) == 1 and isinstance(found[0], Artifact), "a header read stops at it"
    assert made_whole(found[0]) == want[0]


def test_a_file_that_changed_after_the_load(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    dumps = sorted(folder.rglob("*_*Compressor_*.json"))
    lazy = {i.source: i for i in load_paths([folder], counters=_counters(), on_demand=True)}
    gone, broken, rewritten = dumps[0], dumps[1], dumps[2]
    os.unlink(gone)
    broken.write_text('{"context_before": ')
    data = json.loads(rewritten.read_text())
    data["compression_response"]["extracted_summary"] = "written again"
    rewritten.write_text(json.dumps(data))
    for path, words in ((gone, "no such file"), (broken, "json")):
        made = made_whole(lazy[str(path)])
        assert isinstance(made, LoadError) and made.source == str(path)
        assert words in made.error.lower()
    made = made_whole(lazy[str(rewritten)])
    assert isinstance(made, Artifact) and made.summary == "written again"


def test_a_file_no_longer_holding_the_dump(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    dump = sorted(folder.rglob("*_*Compressor_*.json"))[4]
    header = next(i for i in load_paths([folder], on_demand=True) if i.source == str(dump))
    dump.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    made = made_whole(header)
    assert isinstance(made, LoadError) and made.source == str(dump)
    assert "no longer holds the dump" in made.error


@pytest.mark.parametrize("on_demand", [False, True])
def test_other_loads_have_no_whole(tmp_path: Path, on_demand: bool) -> None:
    """Only dumps of an on-demand load are made whole later; stats' header-level load and a
    full load give whole results (or none to make)."""
    folder = _folder(tmp_path)
    if on_demand:
        lazy = list(load_paths([folder], counters=_counters(), on_demand=True))
        assert {i.kind for i in lazy if isinstance(i, Artifact) and i.whole} == {"dump"}
    else:
        for contexts in (True, False):
            loaded = load_paths([folder], counters=_counters(), contexts=contexts)
            assert all(not isinstance(i, Artifact) or i.whole is None for i in loaded)


#: A fresh interpreter running a second thread (as the TUI does, so the pool may not fork
#: from it): the on-demand load of a folder read with helpers from the fork server (pooled
#: from two files on) and without any, each dump made whole, beside a full load.
_THREADED = """
import json, sys, threading
import inspector.sources.loader as loader
from inspector.core.artifact import made_whole
from inspector.core.tokens import TOKEN_MODES, TokenCounter
from inspector.sources.loader import load_paths

counters = {mode: TokenCounter(mode) for mode in TOKEN_MODES}
held = threading.Event()
threading.Thread(target=held.wait, daemon=True).start()
entered = []
leave = loader.ChunkSharing.__exit__
def spy(self, *exc_info):
    entered.append([self.method, len(self.processes)])  # the helpers that started
    return leave(self, *exc_info)
loader.ChunkSharing.__exit__ = spy

def shape(pool_from, on_demand):
    loader.POOL_MIN_FILES = pool_from
    found = load_paths([sys.argv[1]], counters=counters, on_demand=on_demand)
    return [made_whole(item) for item in found]

pooled = shape(2, True)
serial = shape(10**9, True)
full = shape(10**9, False)
held.set()
print(json.dumps({"pooled_is_serial": pooled == serial, "serial_is_full": serial == full,
                  "results": len(full), "entered": entered}))
"""


def test_the_browsers_load_reads_with_helpers_beside_other_threads(tmp_path: Path) -> None:
    got = fresh_interpreter_json(_THREADED, str(_folder(tmp_path)))
    assert got["pooled_is_serial"] and got["serial_is_full"]
    assert got["results"] > 40
    if (os.cpu_count() or 1) > 1 and "forkserver" in multiprocessing.get_all_start_methods():
        method, helpers = got["entered"][0]
        assert method == "forkserver" and helpers >= 1
