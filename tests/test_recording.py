"""Recordings of `inspector watch --json --snapshots` read back by `why` and `index`.

Each recording is made by the real `watch` command: over the sample dumps (a folder) and
over a live window of a real trajectory server on 127.0.0.1. `why` on the recording must
decide every recorded context exactly as `why` on the original files does; `index` must give
a live window a `live_window` row with its session, window and time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from inspector.sources.recording import NO_CONTEXTS
from tests.conftest import REPO
from tests.servers.fake_trajectory import SESSION, FakeTrajectory

duckdb = pytest.importorskip("duckdb")  # in the `test` extra: present wherever tests run
SAMPLES = REPO / "sample_dumps"
#: What a decision is, compared field by field between a recording and its sources.
_FIELDS = ("processor", "hit", "reason", "total_tokens", "threshold", "span", "effective_keep")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inspector", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )


def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _record(path: Path, *source: str) -> list[dict[str, Any]]:
    done = _cli("watch", *source, "--json", "--snapshots", "--once")
    assert done.returncode == 0, done.stderr
    path.write_text(done.stdout)
    return _lines(done.stdout)


def test_why_on_a_folder_recording_decides_as_on_the_files(tmp_path: Path) -> None:
    recording = tmp_path / "watch.jsonl"
    events = _record(recording, str(SAMPLES))
    contexts = [e for e in events if e["event"] == "artifact" and "snapshot" in e]
    assert len(contexts) >= 10 and any(e["event"] == "state" for e in events)
    replayed = _cli("why", "--json", str(recording))
    original = _cli("why", "--json", str(SAMPLES))
    assert replayed.returncode == 0, replayed.stderr
    by_id = {o["id"]: o for o in _lines(original.stdout) if o.get("total_tokens") is not None}
    again = _lines(replayed.stdout)
    assert len(again) == len(contexts)  # one decision per context; state lines are not contexts
    compared = 0
    for decision in again:
        assert decision["kind"] == "snapshot" and decision["source"] == str(recording)
        if decision["id"] in by_id:
            source = by_id[decision["id"]]
            assert {f: decision.get(f) for f in _FIELDS} == {f: source.get(f) for f in _FIELDS}
            compared += 1
    assert compared >= 10


def test_a_live_window_recording_is_a_context_and_a_live_window_row(tmp_path: Path) -> None:
    recording = tmp_path / "live.jsonl"
    with FakeTrajectory() as server:
        events = _record(recording, server.session_url())
    [window] = [e for e in events if e["event"] == "artifact"]
    assert window["live"]["api_generation"] == "gen3"
    why = _cli("why", "--json", "--context-max", "1000", str(recording))
    assert why.returncode == 0, why.stderr
    [decision] = _lines(why.stdout)
    assert decision["id"] == f"{SESSION}/main/main:window-7"
    assert decision["hit"] is False and decision["reason"]
    out = tmp_path / "index"
    done = _cli("index", str(recording), "--out", str(out), "--jobs", "1")
    assert done.returncode == 0, done.stderr
    con = duckdb.connect()
    rows = con.execute(
        "SELECT kind, id, session_id, time, evaluated, messages FROM read_parquet("
        f"'{out}/**/*.parquet', hive_partitioning = true)"
    ).fetchall()
    [(kind, row_id, session, time, evaluated, messages)] = rows
    assert (kind, row_id, session, evaluated) == (
        "live_window",
        window["id"],
        window["session_id"],
        True,
    )
    assert messages == window["messages"] and time is not None


def test_a_recording_without_snapshots_says_how_to_record_one(tmp_path: Path) -> None:
    done = _cli("watch", str(SAMPLES), "--json", "--once")
    assert done.returncode == 0, done.stderr
    recording = tmp_path / "no-snapshots.jsonl"
    recording.write_text(done.stdout)
    why = _cli("why", "--json", str(recording))
    assert why.returncode != 0
    assert NO_CONTEXTS in why.stdout + why.stderr
    assert "Traceback" not in why.stderr
