"""Shared helpers of the benchmarks: results, timing of subprocesses, the output folder.

Every benchmark compares against a floor measured in the same run, so results are ratios
that mean the same on a fast laptop and a busy CI box. Timings are wall clock, best of N
(the least disturbed run); nothing here asserts on time.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

#: The repository root (bench/..), put on sys.path of every worker subprocess.
REPO_ROOT = Path(__file__).resolve().parents[1]
#: Generated data goes here unless a folder is given; git-ignored.
DEFAULT_OUT = REPO_ROOT / "bench" / "out"
PYTHON = sys.executable
#: The token cache folder variable (inspector.sources.cache.CACHE_DIR_ENV).
CACHE_DIR_ENV = "CONTEXT_INSPECTOR_CACHE_DIR"


@dataclass(frozen=True)
class Result:
    """One measured line of the results table.

    `value` is in `unit`; `floor` (same unit) is what the ratio divides by, when there is
    one; `goal` is the text of the goal and `ok` whether this run met it.
    """

    bench: str
    name: str
    value: float
    unit: str
    goal: str
    ok: bool
    floor: float | None = None
    note: str = ""

    @property
    def ratio(self) -> float | None:
        """value / floor, or None without a floor."""
        if self.floor is None or self.floor <= 0:
            return None
        return self.value / self.floor


@dataclass(frozen=True)
class ProcessRun:
    """Wall time, peak resident memory and output of one finished subprocess."""

    seconds: float
    max_rss_bytes: int
    stdout: str


def run_process(argv: Sequence[str], env: dict[str, str] | None = None) -> ProcessRun:
    """Run a command to completion; wall time and the child's max RSS (Linux wait4).

    Unless `env` names a token cache folder (CONTEXT_INSPECTOR_CACHE_DIR), the process gets
    a fresh, empty one that is deleted afterwards: every run starts cold and nothing is
    written into the user's cache.
    """
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.setdefault("PYTHONHASHSEED", "0")
    if env:
        full_env.update(env)
    private_cache = None
    if not (env and CACHE_DIR_ENV in env):
        private_cache = tempfile.mkdtemp(prefix="ci-bench-cold-")
        full_env[CACHE_DIR_ENV] = private_cache
    start = time.perf_counter()
    try:
        proc = subprocess.Popen(
            list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full_env, text=True
        )
        stdout, stderr = proc.communicate()
        seconds = time.perf_counter() - start
    finally:
        if private_cache is not None:
            shutil.rmtree(private_cache, ignore_errors=True)
    # communicate() reaps the child without its rusage, so workers print their own peak.
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}):\n{stderr[-2000:]}")
    return ProcessRun(seconds, _peak_from_output(stdout), stdout)


def _peak_from_output(stdout: str) -> int:
    for line in reversed(stdout.splitlines()):
        if line.startswith("PEAK_RSS "):
            return int(line.split()[1])
    return 0


def best_of(
    argv: Sequence[str], repeats: int, env: dict[str, str] | None = None
) -> tuple[float, ProcessRun]:
    """Fastest wall time of `repeats` runs, and that run."""
    runs = [run_process(argv, env) for _ in range(max(repeats, 1))]
    best = min(runs, key=lambda r: r.seconds)
    return best.seconds, best


def interleaved_best(
    commands: dict[str, Sequence[str]], repeats: int, env: dict[str, str] | None = None
) -> dict[str, ProcessRun]:
    """Best run of each command, alternating them so background load hits all alike."""
    best: dict[str, ProcessRun] = {}
    for _ in range(max(repeats, 1)):
        for label, argv in commands.items():
            run = run_process(argv, env)
            if label not in best or run.seconds < best[label].seconds:
                best[label] = run
    return best


def peak_rss_bytes() -> int:
    """This process's peak resident set size so far.

    Linux: VmHWM of /proc/self/status, which starts afresh at exec; ru_maxrss does not
    (it keeps the peak of the parent that forked us). Elsewhere: ru_maxrss.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource

    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB elsewhere
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def print_peak() -> None:
    """Print the PEAK_RSS line a parent reads back (workers call this last)."""
    print(f"PEAK_RSS {peak_rss_bytes()}", flush=True)


def time_call(func: Callable[[], object], repeats: int) -> float:
    """Best wall time of calling `func` `repeats` times."""
    times = []
    for _ in range(max(repeats, 1)):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def median_ms(samples: Sequence[float]) -> float:
    """Median of durations in seconds, in milliseconds."""
    return statistics.median(samples) * 1000.0


def out_dir(path: str | os.PathLike[str] | None = None) -> Path:
    """The folder for generated data (created)."""
    target = Path(path) if path else DEFAULT_OUT
    target.mkdir(parents=True, exist_ok=True)
    return target
