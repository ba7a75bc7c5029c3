"""The why / sweep / snapshot commands: both output forms, bad arguments, exit statuses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.cli import main
from tests.conftest import PARITY_CASES, REFERENCE

E_INPUT = REFERENCE / "e_target_below_min" / "input.json"


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real console entry point in a fresh interpreter."""
    return subprocess.run(
        [sys.executable, "-m", "inspector", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_why_json_reports_openjiuwen_decision() -> None:
    result = run_cli("why", str(E_INPUT), "--json")
    assert result.returncode == 0, result.stderr
    (record,) = json_lines(result.stdout)
    assert record["kind"] == "snapshot"
    assert (record["reason"], record["total_tokens"], record["threshold"]) == (
        "target_below_min",
        3765,
        3012,
    )
    assert record["target_tokens"] == 114 and record["min_target_tokens"] == 502
    assert record["span"] == {"preserved_prefix": 7, "messages_to_compress": 2, "protected_tail": 0}
    assert [c["status"] for c in record["checks"]] == ["info", "pass", "pass", "fail"]


def test_why_tuning_flags_override_recorded_values() -> None:
    result = run_cli(
        "why", str(E_INPUT), "--json", "--min-target-ratio", "0.02", "--keep-recent", "1"
    )
    (record,) = json_lines(result.stdout)
    assert record["tuning"]["min_target_ratio"] == 0.02 and record["tuning"]["keep_recent"] == 1
    assert record["tuning"]["trigger_ratio"] == 0.6, "absent flags keep the recorded values"


def test_why_human_report_shows_regions_checks_and_flips() -> None:
    result = run_cli("why", str(E_INPUT))
    assert result.returncode == 0
    out = result.stdout
    for text in (
        "DOES NOT COMPRESS",
        "preserved prefix",
        "to compress",
        "protected tail",
        "below the minimum 502",
        "Smallest change that flips the verdict",
        "min_target_context_ratio",
    ):
        assert text in out


def test_why_on_parity_jsonl_prints_one_line_per_case_in_order() -> None:
    result = run_cli("why", str(PARITY_CASES), "--json")
    assert result.returncode == 0
    records = json_lines(result.stdout)
    expected = [json.loads(line) for line in PARITY_CASES.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in records] == [c["id"] for c in expected]
    assert all(
        r["reason"] == c["expected"]["reason"] for r, c in zip(records, expected, strict=True)
    )


def test_unreadable_input_is_one_error_line_and_exit_1(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"messages": [', encoding="utf-8")
    result = run_cli("why", str(E_INPUT), str(broken), str(tmp_path / "missing.json"), "--json")
    assert result.returncode == 1
    records = json_lines(result.stdout)
    errors = [r for r in records if "error" in r]
    assert len(errors) == 2 and {e["source"] for e in errors} == {
        str(broken),
        str(tmp_path / "missing.json"),
    }
    assert any(r.get("reason") == "target_below_min" for r in records)
    assert "Traceback" not in result.stderr and "error:" in result.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["why", "x.json", "--trigger-ratio", "1.5"], "--trigger-ratio"),
        (["why", "x.json", "--keep-recent", "-2"], "--keep-recent"),
        (["why", "x.json", "--context-max", "0"], "--context-max"),
        (["why", "x.json", "--tokens", "words"], "invalid choice"),
        (["sweep", "x.json"], "--param"),
        (["sweep", "x.json", "--param", "keep_recent", "--values", "a,b"], "--values"),
        (["why", "--bogus"], "unrecognized"),
    ],
)
def test_bad_arguments_exit_2(
    args: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


def test_sweep_json_marks_the_flip() -> None:
    result = run_cli(
        "sweep",
        str(E_INPUT),
        "--param",
        "min_target_ratio",
        "--values",
        "0.1,0.05,0.022,0.023",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    points = json_lines(result.stdout)
    assert [p["value"] for p in points] == [0.1, 0.05, 0.022, 0.023]
    assert [p["hit"] for p in points] == [False, False, True, False]
    assert [p["flip"] for p in points] == [False, False, True, True]


def test_sweep_human_table() -> None:
    result = run_cli(
        "sweep",
        str(E_INPUT),
        "--param",
        "trigger_ratio",
        "--from",
        "0.5",
        "--to",
        "0.9",
        "--steps",
        "5",
    )
    assert result.returncode == 0 and "sweep of trigger_ratio" in result.stdout


def test_snapshot_round_trip_and_override(tmp_path: Path) -> None:
    result = run_cli("snapshot", str(E_INPUT), "--keep-recent", "3")
    assert result.returncode == 0
    (snapshot,) = json_lines(result.stdout)
    assert snapshot["config"]["keep_recent_messages"] == 3
    out = tmp_path / "snap.jsonl"
    out.write_text(result.stdout, encoding="utf-8")
    again = run_cli("why", str(out), "--json")
    (record,) = json_lines(again.stdout)
    assert record["tuning"]["keep_recent"] == 3 and record["total_tokens"] == 3765


def test_report_commands_never_import_textual(tmp_path: Path) -> None:
    code = (
        "import sys\nfrom inspector.cli import main\n"
        f"main(['why', {str(E_INPUT)!r}, '--json'])\n"
        "assert 'textual' not in sys.modules, 'textual was imported'\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr


def test_human_report_with_a_lone_surrogate_on_a_strict_terminal(tmp_path: Path) -> None:
    source = tmp_path / "surrogate.json"
    source.write_text(
        '{"processor": "CurrentRoundCompressor", "context_max": 1000, '
        '"messages": [{"role": "user", "content": "bad \\ud800 text"}]}',
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    result = subprocess.run(
        [sys.executable, "-m", "inspector", "why", str(source)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        encoding="utf-8",
        errors="replace",
    )
    assert result.returncode == 0 and "Traceback" not in result.stderr
    assert "DOES NOT COMPRESS" in result.stdout


def test_version_and_a_mistyped_command(capsys: pytest.CaptureFixture[str]) -> None:
    from inspector import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"inspector {__version__}"
    assert main(["shema", "snapshot"]) == 2
    err = capsys.readouterr().err
    assert "'shema' is neither a command nor an existing file" in err
    assert "inspector schema" in err
