"""Issues 8 and 16 (2): a folder of dumps and their debug logs in openJiuwen's layout.

Two cases: 5,000 dumps + 50 debug logs (`run`), and 50,000 tiny dumps + 500 debug logs
(`run_big`, `python -m bench.bench_folder --big`: 6 messages, 80-character tool outputs,
~8 KB a dump).

* browser rows visible: `inspector.sources.entries.list_entries` (every file, each row
  named from its file name: time, processor, session) plus `entry_details` for the first
  screen's 50 dumps, and the time `load_paths` takes to yield its first 50 results.
  Goal < 1 s.
* the full load (every result of `load_paths`, with the token cache: what `why` and the
  browser loaded until 2026-12-02) against a floor process that only reads and parses every
  file. Goal <= 1.5x.
* the browser's load (`browse`): `load_paths(on_demand=True)` read in a thread beside the
  main one, as the TUI's load worker reads (helpers from a fork server, not forked; the
  collector paused through the load, then the heap frozen, as the browser and the app
  do), every row's recorded fields; each dump's context is rebuilt when its row is opened
  (the worker then opens 50 and prints the mean per open). Goal <= 1.5x.
* the TUI's fill (`tui`, information): the app run headless (`App.run_test`) on the folder
  until the browser's load is done and no row is pending, beside the full load it shows.
* `inspector why FOLDER` (`why-text`, information): the text report, each context decided
  and its panel laid out on `--jobs` processes, beside the same at `--jobs 1` with render
  helpers laying out only (`render.parallel`, one per core: how it ran before) and at
  `--jobs 1` alone, in the same rounds.
* `inspector stats --json --no-findings FOLDER` (the header-level pass: the issue's
  "stats <= 1.5x the parse floor" was set on it, when `stats` had no findings) and, for
  information, `inspector stats --json` (findings: every context rebuilt and diagnosed,
  which no parse floor bounds). Goal <= 1.5x.
* `inspector why --json FOLDER` (`why-json`, information) and `stats --json` as users run
  them (`--jobs` at its default: the cores, at most 4), each beside itself at `--jobs 1`
  (one process decides every context) in the same rounds.

Whole processes, best of N by wall time, interleaved with the floor; CPU time (user +
system of the process and its children) beside wall, and the load average, in each note.
`--old DIR` runs each measure also with the `inspector` package of another checkout
(`git archive main inspector | tar -x -C DIR`), interleaved in the same rounds, and puts
new/old wall and CPU ratios in the notes. Every process writes bytecode (as an installed
package has it), whatever PYTHONDONTWRITEBYTECODE says outside.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Sequence
from pathlib import Path

from bench.common import PYTHON, REPO_ROOT, Result, run_process
from bench.synth import write_folder

WORKER = str(Path(__file__).resolve().parent / "workers" / "folder.py")
#: Environment of every measured process (see the module docstring).
ENV = {"PYTHONDONTWRITEBYTECODE": ""}


#: Every measure of `measure`, by the key `--only` takes.
MEASURES = (
    "entries", "first", "full", "browse", "stats-header", "stats", "why-json", "tui", "why-text"
)  # fmt: skip
#: Measures run twice in the same rounds: as the user runs them (`--jobs` left to its
#: default: the cores, at most 4) and with `--jobs 1` (everything decided in one process).
ONE_JOB = ("stats", "why-json", "why-text")
#: The text `why` at `--jobs 1` with render helpers (`render.parallel`, one per core): how
#: it ran before its contexts were decided on `--jobs` processes (`ReportRun.spread`).
RENDER_ONLY = {"CONTEXT_INSPECTOR_RENDER_HELPERS": str(os.cpu_count() or 1)}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: Sequence[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall, CPU) seconds of one whole process (`env`: on top of `ENV`)."""
    before = _children_cpu()
    start = time.perf_counter()
    run_process(argv, {**ENV, **(env or {})})
    return time.perf_counter() - start, _children_cpu() - before


def old_env(old: Path) -> dict[str, str]:
    """The environment that runs the `inspector` package of checkout `old` (this checkout's
    `bench` still importable behind it; no current directory on the path)."""
    return {"PYTHONPATH": f"{old}{os.pathsep}{REPO_ROOT}", "PYTHONSAFEPATH": "1"}


def interleaved(
    commands: dict[str, Sequence[str]],
    repeats: int,
    slow: float = 30.0,
    envs: dict[str, dict[str, str]] | None = None,
) -> dict[str, tuple[float, float]]:
    """Best (wall, CPU) of each command, alternating them so background load hits all alike;
    a command slower than `slow` seconds runs once. `envs`: extra environment by label."""
    best: dict[str, tuple[float, float]] = {}
    for round_ in range(max(repeats, 1)):
        for label, argv in commands.items():
            if round_ and best[label][0] > slow:
                continue
            run = timed(argv, (envs or {}).get(label))
            if label not in best or run[0] < best[label][0]:
                best[label] = run
    return best


def _load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def run(
    out: Path,
    dumps: int = 5_000,
    sessions: int = 50,
    repeats: int = 2,
    only: Sequence[str] = MEASURES,
    old: Path | None = None,
) -> list[Result]:
    """The 5,000-dump case (folder generated or reused)."""
    folder = write_folder(out / f"folder-{dumps}-{sessions}", dumps=dumps, sessions=sessions)
    return measure(folder, f"{dumps:,} dumps + {sessions} debug logs", repeats, only, old)


def run_big(
    out: Path,
    dumps: int = 50_000,
    sessions: int = 500,
    repeats: int = 2,
    only: Sequence[str] = MEASURES,
    old: Path | None = None,
) -> list[Result]:
    """The 50,000-file case, tiny dumps (folder generated or reused; ~3 min the first time)."""
    folder = write_folder(
        out / f"folder-{dumps}-{sessions}-tiny",
        dumps=dumps,
        sessions=sessions,
        messages_per_dump=6,
        tool_output_chars=80,
    )
    return measure(folder, f"{dumps:,} tiny dumps + {sessions} debug logs", repeats, only, old)


def measure(
    folder: Path,
    what: str,
    repeats: int,
    only: Sequence[str] = MEASURES,
    old: Path | None = None,
) -> list[Result]:
    """Rows, full load and stats against the floor, on one folder (`only`: those measures;
    `old`: each also with that checkout's `inspector`, see the module docstring)."""
    size_mb = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6
    files = sum(1 for p in folder.rglob("*.json*") if p.is_file())
    label = f"{what} ({files:,} files, {size_mb:.0f} MB)"
    stats = [PYTHON, "-m", "inspector", "stats", "--json"]
    commands = {
        "floor": [PYTHON, WORKER, "floor", str(folder)],
        "entries": [PYTHON, WORKER, "entries", str(folder)],
        "first": [PYTHON, WORKER, "loader-first", str(folder)],
        "stats-header": [*stats, "--no-findings", str(folder)],
        "full": [PYTHON, WORKER, "loader-all", str(folder)],
        "browse": [PYTHON, WORKER, "loader-demand", str(folder)],
        "stats": [*stats, str(folder)],
        "why-json": [PYTHON, "-m", "inspector", "why", "--json", str(folder)],
        "tui": [PYTHON, WORKER, "tui-fill", str(folder)],
        "why-text": [PYTHON, "-m", "inspector", "why", str(folder)],
    }
    chosen: dict[str, Sequence[str]] = {
        key: argv for key, argv in commands.items() if key == "floor" or key in only
    }
    envs: dict[str, dict[str, str]] = {}
    if "why-text" in chosen:  # and laid out by render helpers only, in the same rounds
        chosen["why-text render"] = [
            *chosen["why-text"][:-1],
            "--jobs",
            "1",
            chosen["why-text"][-1],
        ]
        envs["why-text render"] = RENDER_ONLY
    for key in [key for key in ONE_JOB if key in chosen]:  # and these decided in one process
        chosen[f"{key} alone"] = [*chosen[key][:-1], "--jobs", "1", chosen[key][-1]]
    if old is not None:
        # the old tree has no on-demand load: its browser's was the full one (`full old`)
        for key in [
            key
            for key in chosen
            if key != "floor" and key != "browse" and not key.endswith((" alone", " render"))
        ]:
            chosen[f"{key} old"] = chosen[key]
            envs[f"{key} old"] = old_env(old)
    best = interleaved(chosen, repeats, envs=envs)
    floor, floor_cpu = best["floor"]
    load = _load()

    def row(key: str, name: str, goal: str, ok: bool, note: str, ratio: bool) -> Result | None:
        if key not in best:
            return None
        wall, cpu = best[key]
        extra = f"; CPU {cpu:.2f} s" + (f" (floor {floor_cpu:.2f} s)" if ratio else "")
        if f"{key} old" in best:
            old_wall, old_cpu = best[f"{key} old"]
            extra += (
                f"; old tree {old_wall:.2f} s, CPU {old_cpu:.2f} s:"
                f" new/old wall {wall / old_wall:.2f}x, CPU {cpu / old_cpu:.2f}x"
            )
        return Result(
            "folder",
            name,
            wall,
            "s",
            goal,
            ok,
            floor=floor if ratio else None,
            note=f"{note}{extra}; {load}",
        )

    rows = [
        row(
            "entries",
            f"browser rows visible, list_entries + entry_details of 50 rows, {label}",
            "< 1 s",
            best.get("entries", (0.0, 0.0))[0] < 1.0,
            "whole process: inspector.sources.entries (scan, stat, names; first screen's headers)",
            False,
        ),
        row(
            "first",
            f"first 50 results of load_paths, {label}",
            "(info)",
            True,
            "whole process; load_paths peeks every file and links every debug log first",
            False,
        ),
        row(
            "full",
            f"full load (every result of load_paths, token cache), {label}",
            "<= 1.5x floor",
            best.get("full", (0.0, 0.0))[0] <= 1.5 * floor,
            "whole process: every dump rebuilt, token mode inferred, debug runs linked",
            True,
        ),
        row(
            "browse",
            f"the browser's load (on demand, beside another thread), {label}",
            "<= 1.5x floor",
            best.get("browse", (0.0, 0.0))[0] <= 1.5 * floor,
            "whole process: load_paths(on_demand=True) read in a thread (as the TUI reads),"
            " every row's recorded fields, dumps rebuilt only when opened; then 50 opens",
            True,
        ),
        row(
            "stats-header",
            f"inspector stats --json --no-findings (header-level pass), {label}",
            "<= 1.5x floor",
            best.get("stats-header", (0.0, 0.0))[0] <= 1.5 * floor,
            "floor reads + parses every file, nothing else",
            True,
        ),
        row(
            "stats",
            f"inspector stats --json (findings: every context diagnosed), {label}",
            "(info)",
            True,
            "every context rebuilt, counted and diagnosed, on --jobs processes"
            + _alone(best, "stats"),
            True,
        ),
        row(
            "why-json",
            f"inspector why --json (every context decided), {label}",
            "(info)",
            True,
            "every context rebuilt, counted, decided and diagnosed, on --jobs processes"
            + _alone(best, "why-json"),
            True,
        ),
        row(
            "tui",
            f"the TUI's fill (headless, every row in), {label}",
            "(info)",
            True,
            "whole process: app started, browser loaded until no row is pending"
            + (
                f"; {best['tui'][0] / best['full'][0]:.2f}x the full load"
                if "full" in best and "tui" in best
                else ""
            ),
            True,
        ),
        row(
            "why-text",
            f"inspector why (the text report), {label}",
            "(info)",
            True,
            "every context diagnosed, its flips found and its panel laid out, on --jobs processes"
            + _alone(best, "why-text")
            + (
                f"; {best['why-text'][0] / best['why-text render'][0]:.2f}x the same at --jobs 1"
                f" laid out by render helpers ({best['why-text render'][0]:.2f} s,"
                f" CPU {best['why-text render'][1]:.2f} s)"
                if "why-text render" in best
                else ""
            ),
            False,
        ),
    ]
    return [result for result in rows if result is not None]


def _alone(best: dict[str, tuple[float, float]], key: str) -> str:
    """How `key` compares with itself at `--jobs 1` in the same rounds (a note's end)."""
    if f"{key} alone" not in best or key not in best:
        return ""
    (wall, _), (alone, alone_cpu) = best[key], best[f"{key} alone"]
    return (
        f"; {wall / alone:.2f}x the same at --jobs 1 ({alone:.2f} s, CPU {alone_cpu:.2f} s;"
        f" {os.cpu_count()} cores)"
    )


def main(argv: Sequence[str]) -> None:
    """`python -m bench.bench_folder [--big] [--repeats N] [--only full,stats-header,...]`."""
    import argparse

    from bench.common import out_dir
    from bench.run_all import print_table

    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--big", action="store_true", help="the 50,000-file folder")
    parser.add_argument("--repeats", type=int, default=2, help="rounds (best of; default 2)")
    parser.add_argument("--only", default=",".join(MEASURES), help="measures, comma-separated")
    parser.add_argument(
        "--old", type=Path, help="another checkout's root (its inspector package) measured beside"
    )
    args = parser.parse_args(argv)
    only = [name for name in args.only.split(",") if name]
    unknown = sorted(set(only) - set(MEASURES))
    if unknown:
        parser.error(f"unknown measure(s) {', '.join(unknown)}; known: {', '.join(MEASURES)}")
    chosen = run_big if args.big else run
    old = args.old.resolve() if args.old is not None else None
    print_table(chosen(out_dir(), repeats=args.repeats, only=only, old=old))


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
