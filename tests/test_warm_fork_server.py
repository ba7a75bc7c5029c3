"""A header-level load beside other threads (the TUI's browser) takes its helpers from a
fork server (`sources.fork_server`), started early: by the app's factory when a source is
a folder, and by the load as soon as its walk shows `POOL_MIN_FILES` files (through
`files.scan_files(many=...)`), not after the walk. Never for a load without other threads
(it forks), a full load or a small folder; the results are those of a load without
helpers; the module starts the server without importing the loading modules.
Behaviour only; timings live in bench/."""

from __future__ import annotations

import multiprocessing
import os
import shutil
from pathlib import Path

import pytest

from inspector.sources import fork_server
from inspector.sources.files import scan_files
from inspector.tui.app import create_app
from tests.conftest import fresh_interpreter_json, loaded_modules

SAMPLES = Path(__file__).resolve().parents[1] / "sample_dumps"


def _tree(root: Path, folders: int, files: int) -> Path:
    for folder in range(folders):
        here = root / f"f{folder}"
        here.mkdir(parents=True)
        for file in range(files):
            (here / f"{file}.json").write_text("{}")
    return root


def test_the_walk_calls_once_when_it_has_found_that_many(tmp_path: Path) -> None:
    root = _tree(tmp_path / "t", folders=4, files=3)
    calls: list[int] = []
    plain, _ = scan_files(root, (".json",))
    counted, _ = scan_files(root, (".json",), (5, lambda: calls.append(len(calls))))
    assert counted == plain and len(plain) == 12
    assert calls == [0]  # once, though 12 were found in the end
    found_at: list[int] = []
    scan_files(root, (".json",), (4, lambda: found_at.append(1)))
    assert found_at == [1]
    scan_files(root, (".json",), (13, lambda: calls.append(99)))
    assert calls == [0]  # never reached


#: A fresh interpreter: which loads call `warm_fork_server`, before their helpers start,
#: and whether a fork server process then runs (a child of this process).
_PROBE = """
import json, os, sys, threading, time
import inspector.sources.loader as loader
from inspector.core.artifact import made_whole
from inspector.core.tokens import TOKEN_MODES, TokenCounter
from inspector.sources.loader import load_paths

counters = {mode: TokenCounter(mode) for mode in TOKEN_MODES}
events = []
warm = loader.warm_fork_server
loader.warm_fork_server = lambda: (events.append("warm"), warm())[1]
enter = loader.ChunkSharing.__enter__
def spy(self):
    if self.helpers:  # entered with jobs to share
        events.append("helpers:" + self.method)
    return enter(self)
loader.ChunkSharing.__enter__ = spy

def server_children():
    names = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = open(f"/proc/{pid}/stat").read()
            cmdline = open(f"/proc/{pid}/cmdline", "rb").read()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid() and b"forkserver" in cmdline:
            names.append(pid)
    return names

def load(**options):
    del events[:]
    return [made_whole(item) for item in load_paths([sys.argv[1]], counters=counters, **options)], list(events)

loader.POOL_MIN_FILES = 2
alone, alone_events = load(on_demand=True)  # no other thread: forked helpers
held = threading.Event()
threading.Thread(target=held.wait, daemon=True).start()
before = server_children()
pooled, pooled_events = load(on_demand=True)
running = server_children()
_, header_events = load(contexts=False)
_, full_events = load()
loader.POOL_MIN_FILES = 10**9
serial, small_events = load(on_demand=True)
held.set()
print(json.dumps({"alone": alone_events, "pooled": pooled_events, "header": header_events,
                  "full": full_events, "small": small_events, "before": len(before),
                  "running": len(running), "same": pooled == serial == alone,
                  "results": len(serial)}))
"""


@pytest.mark.skipif(
    (os.cpu_count() or 1) < 2 or "forkserver" not in multiprocessing.get_all_start_methods(),
    reason="a fork server needs a second core and the forkserver start method",
)
def test_a_threaded_header_load_starts_the_server_during_the_walk(tmp_path: Path) -> None:
    folder = tmp_path / "many"
    shutil.copytree(SAMPLES, folder)
    got = fresh_interpreter_json(_PROBE, str(folder))
    assert got["results"] > 30 and got["same"]
    assert got["alone"] == ["helpers:fork"]  # no other thread: no server, forked helpers
    assert got["pooled"] == ["warm", "helpers:forkserver"]  # warmed before the helpers
    assert got["before"] == 0 and got["running"] == 1  # a real server, one
    assert got["header"] == ["warm", "helpers:forkserver"]  # `stats` in a thread alike
    assert got["full"] == []  # a full load has no helpers
    assert got["small"] == []  # too few files: neither


def test_the_app_factory_starts_the_server_for_a_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    monkeypatch.setattr(fork_server, "warm_fork_server", lambda: calls.append("warm"))
    dump = next(SAMPLES.rglob("*Compressor_*.json"))
    create_app([str(dump)])
    assert calls == []  # a file alone: no folder load to help
    create_app([str(SAMPLES)], loader=lambda sources: iter(()))
    assert calls == []  # a loader of its own: not the folder load
    create_app([str(dump), str(SAMPLES)])
    assert calls == ["warm"]


_LIGHT = """
import json, sys
from inspector.sources import fork_server
fork_server.warm_fork_server()
fork_server.warm_fork_server()  # once per process
print(json.dumps({"modules": sorted(sys.modules), "serves": fork_server.can_serve()}))
"""


def test_the_server_starts_before_any_loading_module_is_imported() -> None:
    got = fresh_interpreter_json(_LIGHT)
    assert loaded_modules(got, ("inspector",)) == [
        "inspector",
        "inspector.sources",
        "inspector.sources.fork_server",
    ]
    assert loaded_modules(got, ("pydantic", "textual")) == []
