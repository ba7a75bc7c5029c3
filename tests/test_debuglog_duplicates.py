"""A debug log appended to itself, or a copy of it beside it, gives the runs of the log once:
each record logged twice is read once and counted (`recorded.duplicate_records`), so retries
no longer pile onto one twin run while the other shows none."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from inspector.core.artifact import Artifact
from inspector.sources.loader import load_paths
from tests.conftest import REFERENCE, REPO

LOG = REFERENCE / "f_overflow_413_retry" / "CurrentRoundCompressor.jsonl"


def _runs(path: Path) -> list[dict[str, Any]]:
    found = [a for a in load_paths([path]) if isinstance(a, Artifact) and a.kind == "debug"]
    return [
        {
            "id": a.id.rsplit("/", 1)[-1],
            "outcome": a.recorded.get("outcome"),
            "retries": len(a.recorded.get("retries") or ()),
            "reason": a.recorded.get("reason"),
            "duplicates": a.recorded.get("duplicate_records"),
        }
        for a in found
    ]


def test_a_log_appended_to_itself_reads_as_the_log(tmp_path: Path) -> None:
    alone = tmp_path / "alone" / LOG.name
    alone.parent.mkdir()
    shutil.copy(LOG, alone)
    twice = tmp_path / "twice" / LOG.name
    twice.parent.mkdir()
    text = LOG.read_text(encoding="utf-8")
    twice.write_text(text + text, encoding="utf-8")
    once, doubled = _runs(alone), _runs(twice)
    assert once and any(run["retries"] for run in once)  # the case has retries to pile up
    assert [dict(r, duplicates=None) for r in doubled] == once
    lines = [line for line in text.splitlines() if line.strip()]
    assert sum(r["duplicates"] or 0 for r in doubled) == len(lines)
    assert all(r["duplicates"] is None for r in once)  # nothing is added to a clean log


def test_a_copy_beside_the_log_adds_no_runs(tmp_path: Path) -> None:
    folder = tmp_path / "debug"
    folder.mkdir()
    shutil.copy(LOG, folder / LOG.name)
    shutil.copy(LOG, folder / ("copy of " + LOG.name))
    single = tmp_path / "single"
    single.mkdir()
    shutil.copy(LOG, single / LOG.name)
    assert [dict(r, duplicates=None) for r in _runs(folder)] == _runs(single)


def test_why_json_says_how_many_records_were_twins(tmp_path: Path) -> None:
    twice = tmp_path / LOG.name
    text = LOG.read_text(encoding="utf-8")
    twice.write_text(text + text, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "inspector", "why", str(twice), "--json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    counts = [line["recorded"].get("duplicate_records") for line in lines]
    assert sum(c or 0 for c in counts) == len([x for x in text.splitlines() if x.strip()])
