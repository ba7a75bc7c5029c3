"""The header-level load's process pool (`sources.pool`): what crosses between processes
comes back equal, and a pooled load gives what a serial one gives, also when a file named
like a dump holds something else. Behaviour only; timings live in bench/."""

from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path
from typing import Any

import pytest

from inspector.sources.loader import scan_folder
from inspector.sources.pool import header_job, packed, unpacked
from tests.conftest import REFERENCE, fresh_interpreter_json

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_dumps"

_RECORD = {
    "timestamp": 1796245607.004,
    "event": "threshold_check",
    "processor": "CurrentRoundCompressor",
    "session_id": "only-in-a-dump-name",
    "context_id": "ctx_odd",
    "phase": "get_context_window",
    "total_tokens": 451,
    "context_max": 3000,
    "threshold": 1800,
    "hit": False,
    "reason": "below_threshold",
}


def _odd_files(folder: Path) -> None:
    """Files named like dumps that are no well-formed dump: a debug record (its run must
    still be grouped), broken JSON (an error), unrelated JSON (skipped), a dump with a bad
    key (an error), and a dump under a name that is not its own session's."""
    logs = folder / "odd" / "compression_logs"
    logs.mkdir(parents=True)
    name = "1796245607004_CurrentRoundCompressor_{}.json"
    (logs / name.format("record")).write_text(json.dumps(_RECORD))
    (logs / name.format("broken")).write_text('{"processor_type": "CurrentRoundCompressor", "sp')
    (logs / name.format("unrelated")).write_text('{"context_changed": true, "scenarios": []}')
    dumps = sorted(SAMPLES.rglob("*Compressor_*.json"))
    dump = json.loads(dumps[0].read_text())
    (logs / name.format("renamed")).write_text(json.dumps(dump))
    dump["compression_request"] = "not an object"
    (logs / name.format("badkey")).write_text(json.dumps(dump))


def _files(tmp_path: Path) -> list[Path]:
    folder = tmp_path / "odd-folder"
    folder.mkdir()
    _odd_files(folder)
    return [
        *scan_folder(SAMPLES),
        *scan_folder(folder),
        *[p for p in scan_folder(REFERENCE) if p.stat().st_size < 2_000_000][:40],
    ]


def test_a_load_sent_between_processes_comes_back_equal(tmp_path: Path) -> None:
    files = _files(tmp_path)
    kinds = set()
    for index, file in enumerate(files):
        job = (file, index % 3, index % 2 == 0, 64 * 1024 * 1024)
        load = header_job(job)
        sent = pickle.dumps(packed(load))
        assert b"pathlib" not in sent  # the path stays behind: the job has it
        back = unpacked(pickle.loads(sent), job)
        assert back == load, file
        kinds.update(
            kind
            for kind in ("dumps", "records", "errors", "skips", "artifacts")
            if getattr(load, kind)
        )
    assert kinds == {"dumps", "records", "errors", "skips", "artifacts"}


#: A fresh interpreter (one thread, so the pool may fork): the header-level load of a folder
#: pooled from two files on and not pooled at all, and how many helpers read files.
_POOLED_VS_SERIAL = """
import json, sys
import inspector.sources.loader as loader
from inspector.core.artifact import LoadError
from inspector.sources.loader import load_paths

def summary(pool_from):
    loader.POOL_MIN_FILES = pool_from
    skipped = []
    rows = []
    for item in load_paths([sys.argv[1]], contexts=False, skipped=skipped):
        if isinstance(item, LoadError):
            rows.append(["error", item.to_dict()])
        else:
            rows.append([item.kind, item.source, item.id, item.session_id, item.timestamp,
                         item.recorded.to_dict()])
    return [rows, [[s.source, s.reason] for s in skipped]]

helpers = []
enter = loader.ChunkSharing.__enter__
def spy(self):
    entered = enter(self)
    helpers.append(len(self.processes))
    return entered
loader.ChunkSharing.__enter__ = spy
pooled = summary(2)
serial = summary(10**9)
# the full load's message counts after compression, which the header-level load takes
# from what its readers (helpers or not) counted
after = {item.id: item.recorded.to_dict()["messages_after"]
         for item in load_paths([sys.argv[1]]) if not isinstance(item, LoadError) and item.kind == "dump"}
# each load the pool yields is the one of the job its index names
from pathlib import Path
from inspector.sources.pool import ChunkSharing, header_job
jobs = [(path, 0, False, 1 << 26) for path in loader.scan_folder(Path(sys.argv[1]))]
with ChunkSharing(jobs, 1) as sharing:
    delivered = [[index, str(load.path), load == header_job(jobs[index])] for index, load in sharing.results()]
print(json.dumps({"pooled": pooled, "serial": serial, "helpers": helpers, "after": after,
                  "delivered": sorted(delivered), "jobs": [str(job[0]) for job in jobs]}, default=repr))
"""


@pytest.mark.parametrize("odd", [False, True], ids=["samples", "odd-dump-names"])
def test_a_pooled_header_load_gives_what_a_serial_one_gives(tmp_path: Path, odd: bool) -> None:
    folder = tmp_path / "many"
    shutil.copytree(SAMPLES, folder)
    if odd:
        _odd_files(folder)
    got: dict[str, Any] = fresh_interpreter_json(_POOLED_VS_SERIAL, str(folder))
    assert got["pooled"] == got["serial"]
    rows, skipped = got["serial"]
    assert len(rows) > 10
    if odd:
        assert any(row[0] == "debug" and row[3] == "only-in-a-dump-name" for row in rows)
        assert any(row[0] == "error" and "badkey" in row[1]["source"] for row in rows)
        assert any("unrelated" in source for source, _ in skipped)
    dumps = {row[2]: row[5]["messages_after"] for row in rows if row[0] == "dump"}
    assert dumps and dumps == {key: got["after"][key] for key in dumps}
    if (os.cpu_count() or 1) > 1:
        assert got["helpers"][0] >= 1  # helper processes really read some files
        expected = [[index, path, True] for index, path in enumerate(got["jobs"])]
        assert got["delivered"] == expected
