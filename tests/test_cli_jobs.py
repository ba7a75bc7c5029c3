"""`why --json` and `stats` decide a folder's contexts on `--jobs` processes
(`ReportRun.spread`): stdout and stderr are byte for byte those of `--jobs 1`, load errors
included where the load met them, notices said once, per-context notes kept; the helpers
really decided (their process ids, recorded by a wrapped `evaluate`), and their token
counts reach the cache. `--jobs 0` is a usage error. Each run is a fresh `inspector`
process: pytest's own threads would keep everything in one process."""

from __future__ import annotations

import json
import multiprocessing
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bench.synth import write_folder
from inspector.processes import SPREAD_MIN_ITEMS
from tests.conftest import REPO

pytestmark = pytest.mark.skipif(
    (os.cpu_count() or 1) < 2 or "fork" not in multiprocessing.get_all_start_methods(),
    reason="needs a second core and the fork start method",
)

#: `inspector` with `ReportRun.evaluate` wrapped to append each deciding process's id to
#: the file named first (inherited by forked helpers), after its own id marked "main"; the
#: variables WINDOW and WINDOW_BYTES set `SPREAD_WINDOW` and `SPREAD_WINDOW_BYTES`.
_RECORDING = """
import os, sys
from inspector.cli import main, run_support

with open(sys.argv[1], "a") as out:
    out.write(f"main {os.getpid()}\\n")

run_support.SPREAD_WINDOW = int(os.environ.get("WINDOW", run_support.SPREAD_WINDOW))
run_support.SPREAD_WINDOW_BYTES = int(os.environ.get("WINDOW_BYTES", run_support.SPREAD_WINDOW_BYTES))
evaluate = run_support.ReportRun.evaluate

def recorded(self, artifact):
    with open(sys.argv[1], "a") as out:
        out.write(f"{os.getpid()}\\n")
    return evaluate(self, artifact)

run_support.ReportRun.evaluate = recorded
sys.exit(main(sys.argv[2:]))
"""


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """120 dumps of three processors over 6 sessions with their debug logs, given session
    by session, and four files that cannot be read: two inside sessions, one whose
    context does not rebuild, and one given between the first session and the others, so
    that the load meets it between dumps."""
    base = tmp_path_factory.mktemp("jobs")
    root = write_folder(
        base / "fleet", dumps=120, sessions=6, messages_per_dump=6, tool_output_chars=80
    )
    logs = sorted(root.rglob("compression_logs"))
    (logs[0] / "0000000000000_CurrentRoundCompressor_broken.json").write_text('{"processor_')
    (logs[-1] / "9999999999999_DialogueCompressor_binary.json").write_bytes(b"\x00\xff" * 40)
    # a dump whose header reads but whose context does not rebuild (nested too deeply): a
    # full load reports it in its place, an on-demand one when it is made whole
    deep = sorted(logs[2].glob("*.json"))[3]
    data = json.loads(deep.read_text())
    nested: object = "x"
    for _ in range(230):
        nested = [nested]
    data["context_after"]["messages"][0]["content"] = nested
    deep.write_text(json.dumps(data))
    between = base / "1796000000000_CurrentRoundCompressor_cut.json"
    between.write_text('{"processor_type": "CurrentRoundCompressor", "trig')
    sessions = [str(log.parent) for log in logs]
    return [sessions[0], str(between), *sessions[1:]]


def _inspector(
    *args: str, cache: Path, record: Path | None = None, **window: int
) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "CONTEXT_INSPECTOR_CACHE_DIR": str(cache), "COLUMNS": "100"}
    env.update({name.upper(): str(value) for name, value in window.items()})
    command = [sys.executable, "-m", "inspector", *args]
    if record is not None:
        command = [sys.executable, "-c", _RECORDING, str(record), *args]
    return subprocess.run(command, capture_output=True, cwd=REPO, env=env, timeout=240)


def _alone_and_spread(
    command: list[str], tmp_path: Path, name: str = "spread", **window: int
) -> tuple[subprocess.CompletedProcess[bytes], str, list[str]]:
    """`command` at `--jobs 1` and at `--jobs 2`, which must print the same bytes on both
    streams and end alike: the first run, the process id of the second, and the id of the
    process that decided each context there."""
    alone = _inspector(*command, "--jobs", "1", cache=tmp_path / "alone")
    record = tmp_path / f"{name}-pids"
    spread = _inspector(*command, "--jobs", "2", cache=tmp_path / name, record=record, **window)
    assert (spread.returncode, spread.stdout, spread.stderr) == (
        alone.returncode,
        alone.stdout,
        alone.stderr,
    )
    first, *pids = record.read_text().splitlines()
    return alone, first.split()[1], pids


@pytest.mark.parametrize(
    "command",
    [
        ["why", "--json", "--context-window", "5000", "--pin", "900"],
        ["why", "--context-window", "5000", "--pin", "900"],
        ["stats", "--json"],
        ["stats"],
    ],
    ids=["why-json", "why-text", "stats-json", "stats-text"],
)
def test_jobs_print_what_one_process_prints(
    sources: list[str], tmp_path: Path, command: list[str]
) -> None:
    alone, main, pids = _alone_and_spread([*command, *sources], tmp_path)
    assert alone.returncode == 1  # the unreadable files
    # decided by this process and the one helper of `--jobs 2`
    assert main in pids
    assert len(set(pids)) == 2
    if command[0] == "stats":
        # each dump that rebuilds decided once (a debug run alone has no context)
        assert len(pids) == 119
    elif "--json" not in command:  # a panel for each dump and debug run (errors: stderr)
        assert alone.stdout.count("╭─".encode()) == len(pids) > 200
        assert alone.stderr.count(b"error: ") == 4
    else:
        lines = [json.loads(line) for line in alone.stdout.splitlines()]
        assert len(pids) == len(lines) - 4  # each dump and debug run decided once
        errors = [i for i, line in enumerate(lines) if "error" in line]
        assert len(errors) == 4
        assert any("nested too deeply" in lines[i]["error"] for i in errors)
        # one error between decisions: reported where the load met it, not all at first
        assert any("error" not in lines[i - 1] and "error" not in lines[i + 1] for i in errors)
        said = alone.stderr.decode().splitlines()
        # a notice per processor, once; the pin's note for every dump that rebuilds, once
        assert sum("--context-window does not apply" in line for line in said) == 3
        assert sum("pins beyond its 6 messages ignored" in line for line in said) == 119


def test_windows_of_artifacts_print_what_one_process_prints(
    sources: list[str], tmp_path: Path
) -> None:
    command = ["why", "--json", "--context-window", "5000", *sources]
    alone, main, pids = _alone_and_spread(command, tmp_path, window=100)
    decided = [line for line in alone.stdout.splitlines() if b'"error"' not in line]
    assert 200 < len(pids) == len(decided) <= 300
    # windows of 100, each decided here and by a helper of its own (forked once the window
    # is loaded), but the last, too small for helpers (`SPREAD_MIN_ITEMS`): here alone
    sizes = [100] * (len(pids) // 100) + [len(pids) % 100]
    assert sizes[-1] < SPREAD_MIN_ITEMS
    assert len(set(pids)) == 1 + len(sizes) - 1
    assert main in pids


def test_a_window_ends_when_it_has_grown_this_process_enough(
    sources: list[str], tmp_path: Path
) -> None:
    command = ["why", "--json", *sources]
    # no growth allowed: a window of each artifact, too few for helpers
    _, main, pids = _alone_and_spread(command, tmp_path, window_bytes=-1)
    assert set(pids) == {main}  # all decided here
    _, main, pids = _alone_and_spread(command, tmp_path, "big")
    assert len(set(pids)) == 2  # as usual


def test_helpers_counts_reach_the_token_cache(sources: list[str], tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    exact = ("--tokens", "tiktoken_cl100k")
    done = _inspector("why", "--json", "--jobs", "2", *exact, *sources, cache=cache)
    assert done.returncode == 1, done.stderr
    with sqlite3.connect(cache / "token-counts-v1.sqlite3") as connection:
        (stored,) = connection.execute("SELECT count(*) FROM pieces").fetchone()
    # the 120 dumps' messages, counted in the helpers (nothing is counted here)
    assert stored >= 120
    again = _inspector("why", "--json", "--jobs", "1", *exact, *sources, cache=cache)
    assert again.stdout == done.stdout


def test_jobs_below_one_is_a_usage_error(sources: list[str], tmp_path: Path) -> None:
    for command in (["why", "--json"], ["stats"]):
        done = _inspector(*command, "--jobs", "0", *sources, cache=tmp_path)
        assert done.returncode == 2
        assert b"--jobs must be at least 1" in done.stderr
        assert done.stdout == b""


def test_a_usage_error_comes_after_the_load_errors_before_it(
    sources: list[str], tmp_path: Path
) -> None:
    # `--family standard` cannot decide a forked dump: a usage error at the first context
    command = ["why", "--json", "--family", "standard", *sources]
    alone, _, _ = _alone_and_spread(command, tmp_path)
    assert alone.returncode == 2
    assert alone.stdout.count(b'"error"') == 1  # the one met before the first context
    assert alone.stderr.count(b"error: ") == 1
    assert b"must be a processor of the standard family" in alone.stderr


def test_a_notes_file_name_reaches_stderr_escaped(sources: list[str], tmp_path: Path) -> None:
    dump = sorted(Path(sources[0]).rglob("*_agent-s*.json"))[5]
    odd = tmp_path / "1796000000001_CurrentRoundCompressor_ctl\x1b[31m\x07x.json"
    odd.write_bytes(dump.read_bytes())
    done = _inspector("why", "--json", "--pin", "900", str(odd), cache=tmp_path / "c")
    assert done.returncode == 0, done.stderr
    assert b"\x1b" not in done.stderr and b"\x07" not in done.stderr
    assert b"ctl\\x1b[31m\\x07x: pins beyond its" in done.stderr
