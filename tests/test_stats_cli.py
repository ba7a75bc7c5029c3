"""`inspector stats`: the Rich report and --json over the reference folder and sample_dumps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli import main
from tests.conftest import REFERENCE

REPO = Path(__file__).resolve().parents[1]


def test_stats_json_over_reference(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", str(REFERENCE), "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 1
    stats = lines[0]
    assert stats["kind"] == "stats" and stats["compressions"] == 16
    assert stats["by_processor"]["CurrentRoundCompressor"] == {
        "compressed": 12,
        "silent_end": 6,
        "failed": 2,
        "not_compressed": 4,
    }
    assert stats["not_compressed"]["failed (retry_budget_exhausted)"] == 1
    assert stats["retries_by_error_type"]["transient:rate_limit"] == {"transient_backoff": 4}
    assert (
        stats["biggest"][0]["reduction"] == 17974
        and stats["least_effective"][0]["reduction_ratio"] == 0.1162
    )
    assert stats["tokens_saved"] == stats["tokens_before"] - stats["tokens_after"] == 43520


def test_stats_report_renders_every_section(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", str(REPO / "sample_dumps")]) == 0
    out = capsys.readouterr().out
    for heading in (
        "Runs per processor and outcome",
        "Reduction ratio distribution",
        "why not compressed",
        "retries by error type",
        "Biggest compressions",
        "Least effective compressions",
    ):
        assert heading in out
    assert "retry_budget_exhausted" in out and "transient:server_unstable" in out


def test_stats_with_an_unreadable_input_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "broken.json").write_text('{"processor_type": "CurrentRoundCompressor", "span": ')
    assert main(["stats", str(tmp_path), "--json"]) == 1
    captured = capsys.readouterr()
    lines = [json.loads(line) for line in captured.out.splitlines()]
    assert lines[0]["error"].startswith("not valid JSON") and lines[-1]["errors"] == 1
    assert "Traceback" not in captured.err


def test_stats_never_imports_textual() -> None:
    import subprocess
    import sys

    code = (
        "import sys, io, contextlib\n"
        "from inspector.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    status = main(['stats', {str(REPO / 'sample_dumps')!r}])\n"
        "print(status, any(m == 'textual' or m.startswith('textual.') for m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60
    )
    assert done.stdout.split() == ["0", "False"], done.stderr
