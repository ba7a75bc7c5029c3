"""Issue 8: open a 20,000-message, ~100 MB compression dump.

Whole-process timings (bench/workers/bigdump.py), best of N, against floors run alongside:

* first screen: dump header and the first 50 rows, with today's sources (whole-document
  parse, no counting) and with the head-only prototype in bench/lazy_dump.py. Goal < 1 s.
* full cl100k counts: the product path against a floor that parses the file and tokenizes
  each text once. Goal <= 1.3x. Measured serial, with both cores, and through the loader.
* peak memory of the full open (max RSS of the process) against the file size, with
  `jsonio.read_json_file` (streams documents of 32 MB and more) and, for comparison, with
  the whole-file read it did before. Goal <= 3x.
* reopen with the token cache (a temp folder, never the user's) against the first open:
  directly, through the loader, and as the user meets it (`inspector why --json`, two
  whole processes). Goal >= 5x faster.
* re-split after a tuning change on the dump's 20,000 messages. Goal < 16 ms.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from bench.common import PYTHON, Result, interleaved_best, run_process
from bench.synth import write_big_dump

WORKER = str(Path(__file__).resolve().parent / "workers" / "bigdump.py")


def _payload(stdout: str) -> dict:
    return json.loads(next(line for line in stdout.splitlines() if line.startswith("{")))


def run(
    out: Path, messages: int = 20_000, target_mb: float = 100.0, repeats: int = 2
) -> list[Result]:
    """All big-dump measurements; generates the dump into `out` first (reused if present)."""
    dump = write_big_dump(out, messages=messages, target_mb=target_mb)
    size = dump.stat().st_size
    size_mb = size / 1e6
    label = f"{messages:,}-message {size_mb:.0f} MB dump"
    cache_dir = Path(tempfile.mkdtemp(prefix="ci-bench-cache-"))
    env = {"CONTEXT_INSPECTOR_CACHE_DIR": str(cache_dir)}
    results: list[Result] = []
    try:
        screens = interleaved_best(
            {
                "parse": [PYTHON, WORKER, "parse", str(dump)],
                "screen": [PYTHON, WORKER, "first-screen", str(dump)],
                "lazy": [PYTHON, WORKER, "lazy-screen", str(dump)],
            },
            repeats,
            env,
        )
        for key, what in (
            ("screen", "today's sources: whole-document parse (streamed), no counting"),
            ("lazy", "head-only prototype bench/lazy_dump.py:read_head"),
        ):
            run_ = screens[key]
            results.append(
                Result(
                    "bigdump",
                    f"first screen (header + 50 rows), {what}",
                    run_.seconds,
                    "s",
                    "< 1 s",
                    run_.seconds < 1.0,
                    floor=screens["parse"].seconds,
                    note="floor = process that only parses the whole file",
                )
            )
        counts = interleaved_best(
            {
                "floor": [PYTHON, WORKER, "floor", str(dump)],
                "serial": [PYTHON, WORKER, "open", str(dump), "--workers", "1"],
                "parallel": [PYTHON, WORKER, "open", str(dump)],
                "whole": [PYTHON, WORKER, "open", str(dump), "--whole", "--workers", "1"],
            },
            repeats,
            env,
        )
        floor = counts["floor"].seconds
        for key, what in (
            ("serial", "one core"),
            ("parallel", "both cores (compute_pieces)"),
            ("whole", "one core, whole-file read as before streaming"),
        ):
            seconds = counts[key].seconds
            results.append(
                Result(
                    "bigdump",
                    f"full cl100k counts, {label}, {what}",
                    seconds,
                    "s",
                    "<= 1.3x floor",
                    seconds <= 1.3 * floor,
                    floor=floor,
                    note="floor parses + tokenizes each text once, one core",
                )
            )
        loader = run_process([PYTHON, WORKER, "open", str(dump), "--loader"], env)
        results.append(
            Result(
                "bigdump",
                "full cl100k counts through loader.load_file (one core)",
                loader.seconds,
                "s",
                "<= 1.3x floor",
                loader.seconds <= 1.3 * floor,
                floor=floor,
                note="load_file (with the counters passed in) then PricedContext.from_snapshot, one core",
            )
        )
        for key, what in (
            ("serial", "jsonio.read_json_file (streams >= 32 MB)"),
            ("whole", "whole-file read as before (json.loads of the whole text)"),
        ):
            peak = counts[key].max_rss_bytes / 1e6
            results.append(
                Result(
                    "bigdump",
                    f"peak memory of the full open, {what}",
                    peak / size_mb,
                    "x",
                    "<= 3x file size",
                    peak <= 3 * size_mb,
                    note=f"{peak:.0f} MB peak RSS (VmHWM) for a {size_mb:.0f} MB file; parse-only process "
                    f"{screens['parse'].max_rss_bytes / 1e6:.0f} MB, floor {counts['floor'].max_rss_bytes / 1e6:.0f} MB",
                )
            )
        results.extend(_reopen(dump, cache_dir, env, repeats))
        resplit = run_process(
            [PYTHON, WORKER, "resplit", str(dump), "--cache", str(cache_dir)], env
        )
        for line in resplit.stdout.splitlines():
            if line.startswith("{"):
                results.append(Result(**json.loads(line)))
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    return results


def _reopen(dump: Path, cache_dir: Path, env: dict[str, str], repeats: int) -> list[Result]:
    """First open into an empty cache, then reopen from it (both paths)."""
    results = []
    for what, extra in (
        ("direct (price_snapshot_cached)", []),
        ("through loader.load_file", ["--loader"]),
    ):
        firsts, agains = [], []
        for _ in range(max(repeats, 1)):
            shutil.rmtree(cache_dir, ignore_errors=True)
            firsts.append(
                run_process(
                    [PYTHON, WORKER, "open", str(dump), "--cache", str(cache_dir), *extra], env
                )
            )
            agains.append(
                run_process(
                    [PYTHON, WORKER, "open", str(dump), "--cache", str(cache_dir), *extra], env
                )
            )
        first = min(r.seconds for r in firsts)
        again = min(agains, key=lambda r: r.seconds)
        same = (
            _payload(again.stdout)["messages_tokens"]
            == _payload(firsts[0].stdout)["messages_tokens"]
        )
        results.append(
            Result(
                "bigdump",
                f"reopen with the token cache, {what}: speed-up over first open",
                first / again.seconds,
                "x",
                ">= 5x",
                first / again.seconds >= 5 and same,
                note=f"first {first:.2f} s, reopen {again.seconds:.2f} s; counts identical: {same}",
            )
        )
    results.extend(_reopen_why(dump, cache_dir, env, repeats))
    return results


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall, CPU of the process and its children, stdout) of one whole process."""
    import resource
    import time

    def cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    before, start = cpu(), time.perf_counter()
    run = run_process(argv, env)
    return time.perf_counter() - start, cpu() - before, run.stdout


def _hash_seconds(dump: Path) -> float:
    """Best of 3: SHA-256 of the whole file (what the result cache pays on every reopen)."""
    import hashlib
    import time

    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        with dump.open("rb") as handle:
            hashlib.file_digest(handle, "sha256")
        best = min(best, time.perf_counter() - start)
    return best


def _reopen_why(dump: Path, cache_dir: Path, env: dict[str, str], repeats: int) -> list[Result]:
    """`inspector why --json DUMP` into an empty cache, then again from it (whole processes):
    from the whole-file result cache, and with the token cache alone (result cache off).
    Bytecode is written (as an installed package has it)."""
    import os

    argv = [PYTHON, "-m", "inspector", "why", "--json", str(dump)]
    env = {**env, "PYTHONDONTWRITEBYTECODE": ""}
    counts_only = {**env, "CONTEXT_INSPECTOR_NO_RESULT_CACHE": "1"}
    firsts, agains, counted = [], [], []
    for _ in range(max(repeats, 1)):
        shutil.rmtree(cache_dir, ignore_errors=True)
        firsts.append(_timed(argv, env))
        agains.append(_timed(argv, env))
        counted.append(_timed(argv, counts_only))
    first = min(firsts)
    again = min(agains)
    tokens = min(counted)
    same = again[2] == firsts[0][2] == tokens[2]
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    hashed = _hash_seconds(dump)
    results = []
    for run_, what, extra in (
        (again, "whole-file result cache", f"; SHA-256 of the file {hashed:.2f} s"),
        (tokens, "token cache only (result cache off)", ""),
    ):
        ratio = first[0] / run_[0]
        results.append(
            Result(
                "bigdump",
                f"reopen, inspector why --json (whole process), {what}: speed-up over first open",
                ratio,
                "x",
                ">= 5x",
                ratio >= 5 and same,
                note=f"first {first[0]:.2f} s wall / {first[1]:.2f} s CPU (both cores), reopen "
                f"{run_[0]:.2f} s / {run_[1]:.2f} s CPU{extra}; output identical: {same}; "
                f"load average {load}",
            )
        )
    return results


def run_reopen(out: Path, repeats: int = 2) -> list[Result]:
    """Only the `inspector why --json` reopen rows (`python -m bench.bench_bigdump --reopen`)."""
    dump = write_big_dump(out, messages=20_000, target_mb=100.0)
    cache_dir = Path(tempfile.mkdtemp(prefix="ci-bench-cache-"))
    try:
        return _reopen_why(
            dump, cache_dir, {"CONTEXT_INSPECTOR_CACHE_DIR": str(cache_dir)}, repeats
        )
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)


if __name__ == "__main__":
    import sys

    from bench.common import out_dir
    from bench.run_all import print_table

    print_table(run_reopen(out_dir()) if "--reopen" in sys.argv[1:] else run(out_dir()))
