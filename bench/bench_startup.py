"""Issue 16, start cost: what a headless command costs before it reads anything big.

Whole processes, each a fresh child whose CPU time (user + system) and max RSS come from
`os.wait4`: `inspector why --json TINY_DUMP`, `inspector stats --json TINY_DUMP` (TINY_DUMP:
a 57 KB sample dump), `inspector stats --json TINY_LOG` with the log streamed as one of
32 MB would be (`STREAM_MIN_BYTES` set to 0 in the child: the start cost of the 60 MB
log's stats in bench_fleet_stream) and `inspector --help`, beside two floors measured in the same run,
`python -c pass` and `python -c "import pydantic"` (what any pydantic program pays).
`--old DIR` adds the same commands with another checkout's `inspector` package first on
the path (e.g. `git archive main inspector | tar -x -C /tmp/imp-old`), for before/after.

Every process writes bytecode (as an installed package has it), whatever
PYTHONDONTWRITEBYTECODE says outside, and one untimed run of each fills it first; every
inspector run gets an empty token and result cache (a first open). Runs are interleaved
`--repeat` times (the machine may be shared); the best CPU time and the least RSS count.
Nothing here asserts on time.

    python -m bench.bench_startup [--repeat 5] [--old DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.common import CACHE_DIR_ENV, PYTHON, REPO_ROOT, Result

#: The tiny dump every inspector command reads.
TINY_DUMP = (
    REPO_ROOT
    / "sample_dumps/workspace/context/ops-incident-42_context/compression_logs"
    / "1796159289784_CurrentRoundCompressor_ops-incident-42.json"
)
#: The tiny debug log (3 KB) the streamed `stats` reads.
TINY_LOG = (
    REPO_ROOT
    / "sample_dumps/workspace/context/ops-incident-42_context/context_debug"
    / "CurrentRoundCompressor.jsonl"
)
#: `inspector ARGS` with every log given alone streamed, whatever its size.
_STREAMED = (
    "import sys\n"
    "import inspector.cli.run_support as run_support\n"
    "run_support.STREAM_MIN_BYTES = 0\n"
    "from inspector.cli import main\n"
    "raise SystemExit(main(sys.argv[1:]))\n"
)
FLOORS: dict[str, list[str]] = {
    "python -c pass": [PYTHON, "-c", "pass"],
    "python -c 'import pydantic'": [PYTHON, "-c", "import pydantic"],
}


def commands() -> dict[str, list[str]]:
    """The inspector commands measured, by label."""
    cli = [PYTHON, "-m", "inspector"]
    return {
        "why --json TINY_DUMP": [*cli, "why", "--json", str(TINY_DUMP)],
        "stats --json TINY_DUMP": [*cli, "stats", "--json", str(TINY_DUMP)],
        "stats --json TINY_LOG, streamed": [
            PYTHON,
            "-c",
            _STREAMED,
            "stats",
            "--json",
            str(TINY_LOG),
        ],
        "--help": [*cli, "--help"],
    }


def measure(argv: Sequence[str], tree: Path | None) -> tuple[float, int]:
    """CPU seconds (user + system) and max RSS (bytes) of one fresh child; `tree`: the
    checkout whose `inspector` package is imported (first on the path), else none."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    # the checkout alone decides which `inspector` runs: not the current directory
    env["PYTHONSAFEPATH"] = "1"
    env["PYTHONPATH"] = str(tree) if tree is not None else ""
    cache = tempfile.mkdtemp(prefix="ci-bench-startup-")
    env[CACHE_DIR_ENV] = cache
    try:
        child = subprocess.Popen(
            list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
        )
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    if child.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {child.returncode}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


@dataclass
class _Best:
    """The least CPU time and the least RSS seen over the runs of one process."""

    cpu: float = float("inf")
    rss: int = 0

    def take(self, run: tuple[float, int]) -> None:
        """Keep the better of this run and the best so far."""
        self.cpu = min(self.cpu, run[0])
        self.rss = run[1] if not self.rss else min(self.rss, run[1])


def _runs(old: Path | None) -> dict[str, tuple[list[str], Path | None]]:
    """Every process measured, by label: the floors, then each command per tree."""
    runs: dict[str, tuple[list[str], Path | None]] = {k: (v, None) for k, v in FLOORS.items()}
    trees = {"this tree": REPO_ROOT} | ({"old tree": old} if old is not None else {})
    for tree_label, tree in trees.items():
        for label, argv in commands().items():
            runs[f"inspector {label} ({tree_label})"] = (argv, tree)
    return runs


def run(repeat: int = 5, old: Path | None = None) -> list[Result]:
    """Measure every process `repeat` times, interleaved, after one untimed run each."""
    runs = _runs(old)
    for argv, tree in runs.values():
        measure(argv, tree)  # writes the bytecode
    best = {label: _Best() for label in runs}
    for _ in range(max(repeat, 1)):
        for label, (argv, tree) in runs.items():
            best[label].take(measure(argv, tree))
    floor = best["python -c 'import pydantic'"]
    note = (
        f"best of {repeat}, interleaved; floors: python -c pass {best['python -c pass'].cpu:.3f} s"
    )
    results: list[Result] = []
    for label in runs:
        if label in FLOORS:
            continue
        ours = best[label]
        results.append(
            Result("startup", f"{label}: CPU", ours.cpu, "s", "informative", True, floor.cpu, note)
        )
        rss_note = (
            f"floors: python -c pass {best['python -c pass'].rss / 1e6:.1f} MB, "
            f"import pydantic {floor.rss / 1e6:.1f} MB"
        )
        results.append(
            Result(
                "startup",
                f"{label}: max RSS",
                ours.rss / 1e6,
                "MB",
                "informative",
                True,
                floor.rss / 1e6,
                rss_note,
            )  # fmt: skip
        )
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """Command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5, help="runs of each process")
    parser.add_argument("--old", type=Path, default=None, help="another checkout to compare")
    options = parser.parse_args(argv)
    from bench.run_all import print_table

    print_table(run(options.repeat, options.old), markdown=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
