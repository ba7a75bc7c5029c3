"""Bad input: one error per broken file, the rest loads, nothing is written, nothing raises."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from inspector.core.artifact import Artifact, LoadError
from inspector.sources.jsonio import MAX_FILE_BYTES
from inspector.sources.loader import load_paths
from tests.conftest import REFERENCE

REPO = Path(__file__).resolve().parents[1]
GOOD_DUMP = next((REFERENCE / "a_current_round_plain").glob("*Compressor_*.json"))


def _fingerprint(folder: Path) -> dict[str, tuple[int, int, str]]:
    out = {}
    for path in sorted(folder.rglob("*")):
        stat = path.stat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
        out[str(path.relative_to(folder))] = (stat.st_mtime_ns, stat.st_size, digest)
    return out


def _mixed_folder(root: Path) -> Path:
    folder = root / "compression_logs"
    folder.mkdir()
    good = GOOD_DUMP.read_bytes()
    (folder / GOOD_DUMP.name).write_bytes(good)
    (folder / "1795975300000_CurrentRoundCompressor_truncated.json").write_bytes(
        good[: len(good) // 2]
    )
    (folder / "empty.json").write_bytes(b"")
    (folder / "binary.json").write_bytes(bytes(range(256)) * 8)
    wrong = json.loads(good)
    wrong["trigger"]["context_max"] = "eight thousand"
    (folder / "1795975300001_CurrentRoundCompressor_wrong-typed.json").write_text(json.dumps(wrong))
    (folder / "nested.json").write_text("[" * 100_000 + "]" * 100_000)
    (folder / "latin1.json").write_bytes('{"role": "user", "content": "café"}'.encode("latin-1"))
    (folder / "nan.json").write_text(
        '{"processor_type": "CurrentRoundCompressor", "trigger": {"context_max": NaN}, "benefit": {}}'
    )
    (folder / "notes.txt").write_text(
        "not scanned: only .json/.jsonl/.ndjson files are read in folders"
    )
    return folder


def test_mixed_folder_gives_one_error_per_broken_file(tmp_path: Path, counters: Any) -> None:
    folder = _mixed_folder(tmp_path)
    before = _fingerprint(folder)
    results = list(load_paths([folder], counters=counters))
    errors = [r for r in results if isinstance(r, LoadError)]
    artifacts = [r for r in results if isinstance(r, Artifact)]
    assert sorted(Path(e.source).name for e in errors) == sorted(
        [
            "1795975300000_CurrentRoundCompressor_truncated.json",
            "empty.json",
            "binary.json",
            "1795975300001_CurrentRoundCompressor_wrong-typed.json",
            "nested.json",
            "latin1.json",
            "nan.json",
        ]
    )
    by_name = {Path(e.source).name: e for e in errors}
    assert by_name["empty.json"].error == "empty file"
    assert "binary" in by_name["binary.json"].error and by_name["binary.json"].where == "byte 0"
    assert "UTF-8" in by_name["latin1.json"].error and by_name["latin1.json"].where == "byte 32"
    assert "nested too deeply" in by_name["nested.json"].error
    assert "NaN" in by_name["nan.json"].error and "byte" in (by_name["nan.json"].where or "")
    wrong_typed = by_name["1795975300001_CurrentRoundCompressor_wrong-typed.json"]
    assert "trigger.context_max" in wrong_typed.error and "must be an integer" in wrong_typed.error
    assert wrong_typed.where is not None
    assert wrong_typed.where.startswith("key trigger.context_max (line 1, byte ")
    truncated = by_name["1795975300000_CurrentRoundCompressor_truncated.json"]
    assert truncated.where and "byte" in truncated.where
    assert [a.kind for a in artifacts] == ["dump"] and artifacts[0].snapshot is not None
    assert _fingerprint(folder) == before


def test_cli_on_mixed_folder_reports_errors_and_exits_1(tmp_path: Path) -> None:
    folder = _mixed_folder(tmp_path)
    before = _fingerprint(folder)
    for command in (["why", "--json"], ["stats", "--json"]):
        done = subprocess.run(
            [sys.executable, "-m", "inspector", command[0], str(folder), *command[1:]],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=60,
        )
        assert done.returncode == 1, done.stderr
        assert "Traceback" not in done.stderr and "Traceback" not in done.stdout
        lines = [json.loads(line) for line in done.stdout.splitlines()]
        assert len([line for line in lines if "error" in line]) == 7
        assert all({"source", "error"} <= set(line) for line in lines if "error" in line)
        if command[0] == "why":
            assert [line["kind"] for line in lines if "error" not in line] == ["dump"]
        else:
            assert lines[-1]["kind"] == "stats" and lines[-1]["compressions"] == 1
    assert _fingerprint(folder) == before


def test_huge_file_is_refused_without_reading(tmp_path: Path, counters: Any) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:
        handle.truncate(1024**3)  # sparse: 1 GB on paper, nothing on disk
    results = list(load_paths([path], counters=counters))
    assert len(results) == 1 and isinstance(results[0], LoadError)
    assert "1.0 GB" in results[0].error and "limit" in results[0].error
    assert os.path.getsize(path) > MAX_FILE_BYTES


def test_large_json_lines_stream_and_large_documents_are_refused(
    tmp_path: Path, counters: Any
) -> None:
    from inspector.sources.jsonio import read_json_file

    record = json.dumps({"event": "threshold_check", "timestamp": 1.0, "reason": "below_threshold"})
    lines = tmp_path / "Big.jsonl"
    lines.write_text("\n".join([record] * 50) + "\n")
    streamed = read_json_file(lines, max_document_bytes=100)
    assert streamed.problem is None and len(streamed.documents) == 50 and streamed.json_lines
    document = tmp_path / "big.json"
    document.write_text(
        json.dumps({"messages": [{"role": "user", "content": "x" * 500}]}, indent=2)
    )
    refused = read_json_file(document, max_document_bytes=100)
    assert refused.problem is not None and "refused" in refused.problem.error


def test_json_lines_with_bad_lines_keep_the_good_ones(tmp_path: Path, counters: Any) -> None:
    source = (
        (REFERENCE / "f_overflow_413_retry" / "CurrentRoundCompressor.jsonl")
        .read_text()
        .splitlines()
    )
    broken = [
        source[0],
        source[1][:50],
        source[2],
        '{"event": "compression_retry", "attempt": "two"}',
        source[3],
    ]
    path = tmp_path / "CurrentRoundCompressor.jsonl"
    path.write_text("\n".join(broken) + "\n")
    results = list(load_paths([path], counters=counters))
    errors = [r for r in results if isinstance(r, LoadError)]
    assert len(errors) == 1 and errors[0].where == "line 2" and "2 records" in errors[0].error
    runs = [r for r in results if isinstance(r, Artifact)]
    assert len(runs) == 1 and len(runs[0].recorded["retries"]) == 2


def test_unknown_events_and_keys_are_kept(tmp_path: Path, counters: Any) -> None:
    lines = [
        {
            "timestamp": 1.0,
            "event": "threshold_check",
            "processor": "P",
            "session_id": "s",
            "context_id": "c",
            "total_tokens": 5,
            "threshold": 9,
            "hit": False,
            "reason": "below_threshold",
            "future_key": [1],
        },
        {
            "timestamp": 2.0,
            "event": "memory_flushed",
            "processor": "P",
            "session_id": "s",
            "context_id": "c",
            "bytes": 10,
        },
    ]
    path = tmp_path / "P.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines))
    (artifact,) = list(load_paths([path], counters=counters))
    assert isinstance(artifact, Artifact)
    assert artifact.recorded["threshold_check"]["future_key"] == [1]
    assert artifact.recorded["other_events"][0]["event"] == "memory_flushed"
    assert artifact.recorded["outcome"] == "not_compressed"


def test_older_dump_without_keys_still_loads(tmp_path: Path, counters: Any) -> None:
    raw = json.loads(GOOD_DUMP.read_text())
    for key in ("session_id", "context_id", "timestamp", "benefit"):
        raw.pop(key)
    raw["compression_request"].pop("system_messages_count")
    raw["span"].pop("protected_tail_count")
    raw["unknown_future_section"] = {"x": 1}
    path = tmp_path / GOOD_DUMP.name
    path.write_text(json.dumps(raw))
    (artifact,) = list(load_paths([path], counters=counters))
    assert isinstance(artifact, Artifact) and artifact.kind == "dump"
    assert artifact.session_id == "ojw-ref-a_current_round_plain"  # from the file name
    assert artifact.timestamp == 1795975303.278
    expected = json.loads((REFERENCE / "a_current_round_plain" / "input.json").read_text())
    assert artifact.snapshot is not None
    assert [m.to_dict() for m in artifact.snapshot.messages] == expected["messages"]
    assert "unknown_future_section" in artifact.extra["raw_keys"]


def test_missing_path_is_an_error(tmp_path: Path, counters: Any) -> None:
    results = list(load_paths([tmp_path / "nope"], counters=counters))
    assert len(results) == 1 and isinstance(results[0], LoadError) and "no such" in results[0].error
