"""Big debug logs given alone are streamed record by record (`inspector.sources.debugstream`):
the same `why --json` lines as the batch loader, evaluations yielded before the file is
read to its end, bad records reported once, memory bounded by the open runs."""

from __future__ import annotations

import io
import json
import tracemalloc
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import main, run_support
from inspector.core.artifact import Artifact, LoadError
from inspector.sources.debugstream import stream_debug_log, streamable
from tests.conftest import REPO

LOGS = sorted((REPO / "sample_dumps").rglob("context_debug/*.jsonl"))
KEY = {"processor": "CurrentRoundCompressor", "session_id": "big/s1", "context_id": "ctx"}


def _why(args: list[str]) -> tuple[int, list[dict[str, Any]]]:
    out = io.StringIO()
    with redirect_stdout(out):
        status = main(["why", "--json", *args])
    return status, [json.loads(line) for line in out.getvalue().splitlines()]


def _write_log(path: Path, runs: int, extra: str = "") -> Path:
    lines = []
    for number in range(runs):
        when = 1795900000.0 + number
        hit = number % 10 == 9
        lines.append(json.dumps({"timestamp": when, "event": "threshold_check", **KEY, "total_tokens": 9000 if hit else 1000 + number, "context_max": 10000, "threshold": 8000, "hit": hit, "reason": "reached_threshold" if hit else "below_threshold"}))  # fmt: skip
        if hit:
            lines.append(json.dumps({"timestamp": when + 0.5, "event": "compression_retry", **KEY, "attempt": 1, "error_type": "context_overflow", "error_message": "413 " + "x" * 200, "retried": False, "reason": "retry_budget_exhausted"}))  # fmt: skip
    path.write_text("\n".join(lines) + "\n" + extra, encoding="utf-8")
    return path


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.parent.parent.name)
def test_a_streamed_log_reports_what_the_loader_reports(
    log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    batch_status, batch = _why([str(log)])
    monkeypatch.setattr(run_support, "STREAM_MIN_BYTES", 0)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the loader was used")

    monkeypatch.setattr(run_support, "load_paths", refuse)
    status, streamed = _why([str(log)])
    assert (status, streamed) == (batch_status, batch) and len(batch) >= 5


def test_only_debug_logs_given_alone_and_big_enough_stream(tmp_path: Path) -> None:
    log = _write_log(tmp_path / "CurrentRoundCompressor.jsonl", 20)
    assert streamable([str(log)], 0) == [log]
    assert streamable([str(log)], log.stat().st_size + 1) is None
    assert streamable([str(log), str(REPO / "sample_dumps")], 0) is None
    dump = next((REPO / "sample_dumps").rglob("compression_logs/*.json"))
    assert streamable([str(log), str(dump)], 0) is None
    (tmp_path / "llm_request.jsonl").write_text(log.read_text())
    assert streamable([str(tmp_path / "llm_request.jsonl")], 0) is None


def test_bad_records_are_one_error_after_the_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    extra = "{broken\n" + json.dumps({"event": "threshold_check", **KEY, "hit": "yes"}) + "\n"
    log = _write_log(tmp_path / "CurrentRoundCompressor.jsonl", 30, extra + "x" * 5000 + "\n")
    items = list(stream_debug_log(log, max_line_bytes=4096))
    runs = [i for i in items if isinstance(i, Artifact)]
    assert len(runs) == 30 and isinstance(items[-1], LoadError)
    assert items[-1].error.startswith("3 records cannot be read")
    batch_status, batch = _why([str(log)])
    monkeypatch.setattr(run_support, "STREAM_MIN_BYTES", 0)
    status, streamed = _why([str(log)])
    assert status == batch_status == 1
    assert [line for line in streamed if "error" not in line] == [
        line for line in batch if "error" not in line
    ]
    (error,) = [line for line in streamed if "error" in line]
    (batch_error,) = [line for line in batch if "error" in line]
    # both name every unreadable record and the first one's line (the batch reader's line
    # limit is higher, so it refuses the long line for its JSON instead)
    assert error["error"].startswith("3 records cannot be read; first:")
    assert batch_error["error"].startswith("3 records cannot be read; first:")
    assert error["where"] == batch_error["where"]


def test_runs_come_out_while_reading_and_memory_stays_bounded(tmp_path: Path) -> None:
    log = _write_log(tmp_path / "CurrentRoundCompressor.jsonl", 12_000)
    size = log.stat().st_size
    stream = stream_debug_log(log)
    first = next(stream)
    assert isinstance(first, Artifact) and first.recorded["reason"] == "below_threshold"
    tracemalloc.start()
    count = 1
    for item in stream:
        assert isinstance(item, Artifact)
        count += 1
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert count == 12_000
    assert peak < size / 10, (peak, size)


@pytest.mark.parametrize("log", LOGS[:2], ids=lambda p: p.parent.parent.name)
def test_stats_over_a_streamed_log_equal_the_loaders(
    log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def stats() -> dict[str, Any]:
        out = io.StringIO()
        with redirect_stdout(out):
            assert main(["stats", "--json", str(log)]) == 0
        return json.loads(out.getvalue().splitlines()[-1])

    batch = stats()
    monkeypatch.setattr(run_support, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(run_support, "load_paths", lambda *a, **k: iter(()))  # must not be used
    assert stats() == batch and batch["artifacts"]["debug"] >= 5
