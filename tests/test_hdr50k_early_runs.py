"""The runs no dump can link to, settled and made into debug artifacts while the pool's
helpers read dumps (`loader._Streamer._unlinkable_early`), then linked around
(`_Streamer._linked`): the same runs, links and results as linking every run after the
read. Behaviour only; timings live in bench/."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.synth import write_folder
from inspector.core.timeline import DumpRef, group_runs, link_runs, may_link
from inspector.sources.loader import _Streamer
from tests.conftest import fresh_interpreter_json
from tests.test_folderstats_pool import _odd_files
from tests.test_timeline_linking import _DUMP, _RECORD, _record

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_dumps"


def _streamer(refs: list[DumpRef]) -> Any:
    """What `_unlinkable_early` and `_linked` read of a load over one folder."""
    return SimpleNamespace(
        plan=[(0, Path("folder/log.jsonl"), False)],
        refs=refs,
        _early_settled={},
        _early_debug={},
        _early_runs=(-1, []),
        _timeline_of=lambda session: list,
    )


@settings(max_examples=300, deadline=None)
@given(st.lists(_RECORD, max_size=25), st.lists(_DUMP, max_size=12))
def test_runs_settled_early_link_and_settle_as_link_runs_does(
    records: list[Any], dumps: list[Any]
) -> None:
    runs = group_runs(_record(i, spec) for i, spec in enumerate(records))
    refs = [DumpRef(f"d{i}", *spec[1:], spec[0]) for i, spec in enumerate(dumps)]
    streamer = _streamer(refs)
    _Streamer._unlinkable_early(streamer, runs, [])
    streamer._early_runs = (len(records), runs)
    assert set(streamer._early_settled) == {p for p, run in enumerate(runs) if not may_link(run)}
    assert _Streamer._linked(streamer, runs, True) == link_runs(runs, refs, True)


def test_no_run_is_settled_early_outside_a_folder() -> None:
    """Files given alone: whether their dumps were visible is known only after the read."""
    below = (1.0, "threshold_check", "s/1", "c", "below_threshold", True)
    runs = group_runs(_record(i, spec) for i, spec in enumerate([below] * 3))
    streamer = _streamer([])
    streamer.plan = [(0, Path("log.jsonl"), True)]
    _Streamer._unlinkable_early(streamer, runs, [])
    assert streamer._early_settled == {} and streamer._early_debug == {}


#: A fresh interpreter (one thread, so the pool may fork, with a helper even on one core):
#: the header-level load of a folder with the early pass and without it, and what it made.
_EARLY_VS_LATE = """
import json, os, sys
import inspector.sources.loader as loader
from inspector.core.artifact import LoadError
from inspector.sources.loader import load_paths

loader.POOL_MIN_FILES = 2
os.cpu_count = lambda: 2
made = []
early = loader._Streamer._unlinkable_early
def spy(self, runs, loads):
    early(self, runs, loads)
    made.append([len(self._early_settled), len(self._early_debug)])
loader._Streamer._unlinkable_early = spy
used = []
attach = loader._Streamer._attach_debug_artifacts
def taken(self, grouped):
    used.append(grouped is self._early_runs[1])
    attach(self, grouped)
loader._Streamer._attach_debug_artifacts = taken

def summary():
    rows = []
    for item in load_paths([sys.argv[1]], contexts=False):
        if isinstance(item, LoadError):
            rows.append(["error", item.to_dict()])
        else:
            rows.append([item.kind, item.source, item.id, item.session_id, item.timestamp,
                         item.recorded.to_dict(), sorted(dict(item.extra).items()),
                         None if item.snapshot is None else item.snapshot.id])
    return rows

early_rows = summary()
loader._Streamer._unlinkable_early = lambda self, runs, loads: None
late_rows = summary()
print(json.dumps({"early": early_rows, "late": late_rows, "made": made, "used": used},
                 default=repr))
"""


def _folder(tmp_path: Path, snapshots: bool, odd: bool = False) -> Path:
    """The sample workspace (with or without its snapshot files, which give debug runs
    their contexts) beside a small synthetic one (dumps and their logs); `odd`: also files
    named like dumps holding something else (one a debug record: the runs grouped early
    are then not the runs)."""
    folder = tmp_path / "folder"
    shutil.copytree(SAMPLES, folder / "samples")
    if not snapshots:
        for file in (folder / "samples").rglob("inspector_snapshots.jsonl"):
            file.unlink()
    write_folder(folder / "synth", dumps=80, sessions=3, messages_per_dump=4, tool_output_chars=40)
    if odd:
        _odd_files(folder)
    return folder


@pytest.mark.parametrize(
    ("snapshots", "odd"),
    [(False, False), (True, False), (False, True)],
    ids=["no-snapshots", "snapshots", "odd-dump-names"],
)
def test_a_header_load_with_the_early_pass_gives_what_it_gives_without(
    tmp_path: Path, snapshots: bool, odd: bool
) -> None:
    folder = _folder(tmp_path, snapshots, odd)
    got: dict[str, Any] = fresh_interpreter_json(_EARLY_VS_LATE, str(folder))
    assert got["early"] == got["late"]
    kinds = {row[0] for row in got["early"]}
    assert {"dump", "debug"} <= kinds
    outcomes = {row[5]["outcome"] for row in got["early"] if row[0] == "debug"}
    assert {"not_compressed", "failed"} <= outcomes  # runs no dump can link to
    settled, artifacts = got["made"][0]
    if snapshots:
        # a snapshot read with the logs may be a run's context: nothing is made early
        assert settled == artifacts == 0
        assert any(row[7] for row in got["early"] if row[0] == "debug")
    else:
        assert artifacts == settled > 0
        # a debug record in a file named like a dump: the runs are grouped again
        assert got["used"][0] is (not odd)


def test_the_synthetic_folder_has_runs_of_every_kind(tmp_path: Path) -> None:
    """The folder above holds runs no dump can link to and runs that link (so the test
    above compares both kinds)."""
    folder = _folder(tmp_path, False)
    logs = sorted((folder / "synth").rglob("*.jsonl"))
    records = [json.loads(line) for log in logs for line in log.read_text().splitlines()]
    reasons = {r.get("reason") for r in records if r["event"] == "threshold_check"}
    assert {"below_threshold", "reached_threshold"} <= reasons
