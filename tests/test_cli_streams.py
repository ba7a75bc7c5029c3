"""The command line when its output cannot go where it was sent: a reader that goes away
(`| head`) ends a report with 0, text or JSON, at any `--jobs`; a full disk
(`/dev/full`) and a closed stdout say so in one line and exit 1; a closed stderr drops its
messages and nothing else. Never a traceback. Real processes with real descriptors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.synth import write_folder
from tests.conftest import REPO

INSPECTOR = [sys.executable, "-m", "inspector"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """100 dumps and their debug logs, and a truncated file (exit status 1 when read)."""
    root = write_folder(
        tmp_path_factory.mktemp("streams") / "f",
        dumps=100,
        sessions=2,
        messages_per_dump=6,
        tool_output_chars=80,
    )
    (next(root.rglob("compression_logs")) / "0_CurrentRoundCompressor_cut.json").write_text("{")
    return root


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "CONTEXT_INSPECTOR_CACHE_DIR": str(tmp_path / "c"), "COLUMNS": "100"}


def _inspector(tmp_path: Path, *args: str, **streams: Any) -> subprocess.CompletedProcess[Any]:
    """`inspector ARGS` in a process of its own, its streams as `streams` say."""
    return subprocess.run(
        [*INSPECTOR, *args], cwd=REPO, env=_env(tmp_path), timeout=120, check=False, **streams
    )


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("command", [["why"], ["why", "--json"], ["stats"]])
def test_a_reader_that_goes_away_ends_with_0(
    folder: Path, tmp_path: Path, command: list[str], jobs: str
) -> None:
    shell = " ".join([*INSPECTOR, *command, "--jobs", jobs, str(folder)])
    done = subprocess.run(
        ["bash", "-c", f"{shell} | head -c 100 > /dev/null; exit ${{PIPESTATUS[0]}}"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=_env(tmp_path),
        timeout=120,
    )
    # a report cut short ends with 0; `stats` writes its one table whole, then says 1 for
    # the truncated file, as without the pipe
    assert done.returncode == (1 if command == ["stats"] else 0), done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("command", [["why", "--json"], ["why"]])
def test_a_full_disk_is_one_line_and_exit_1(
    folder: Path, tmp_path: Path, command: list[str]
) -> None:
    with open("/dev/full", "w") as full:
        done = _inspector(
            tmp_path, *command, str(folder), stdout=full, stderr=subprocess.PIPE, text=True
        )
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        "inspector: cannot write the output: No space left on device"
    )
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr


def test_a_closed_stdout_is_one_line_and_exit_1(folder: Path, tmp_path: Path) -> None:
    done = _inspector(
        tmp_path,
        "why",
        "--json",
        str(folder),
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: os.close(1),
    )
    assert done.returncode == 1
    assert done.stderr == "inspector: standard output is closed: nowhere to write\n"


def test_a_closed_stderr_drops_its_messages_only(folder: Path, tmp_path: Path) -> None:
    both = _inspector(tmp_path, "why", "--json", str(folder), capture_output=True)
    closed = _inspector(
        tmp_path,
        "why",
        "--json",
        str(folder),
        stdout=subprocess.PIPE,
        preexec_fn=lambda: os.close(2),
    )
    assert both.stderr.startswith(b"error: ")  # the truncated file is said there
    assert (closed.returncode, closed.stdout) == (both.returncode, both.stdout) == (1, both.stdout)
    assert closed.stdout.count(b"\n") > 200
