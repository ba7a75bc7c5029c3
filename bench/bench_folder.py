"""Issue 8: a folder of 5,000 dumps and their debug logs across 50 sessions.

* browser rows visible: `inspector.sources.entries.list_entries` (every file, each row
  named from its file name: time, processor, session) plus `entry_details` for the first
  screen's 50 dumps; the earlier prototype (bench/lazy_dump.py heads); and, for
  comparison, the time `load_paths` takes to yield its first 50 results. Goal < 1 s. The
  header read of every dump (what a background fill would do) is shown too.
* `inspector stats --json FOLDER`, a whole process, against a floor process that only
  reads and parses every file. Goal <= 1.5x.
"""

from __future__ import annotations

from pathlib import Path

from bench.common import PYTHON, Result, interleaved_best, run_process
from bench.synth import write_folder

WORKER = str(Path(__file__).resolve().parent / "workers" / "folder.py")


def run(out: Path, dumps: int = 5_000, sessions: int = 50, repeats: int = 2) -> list[Result]:
    """Generate (or reuse) the folder, then time rows, headers, stats and the floor."""
    folder = write_folder(out / f"folder-{dumps}-{sessions}", dumps=dumps, sessions=sessions)
    size_mb = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6
    files = sum(1 for p in folder.rglob("*.json*") if p.is_file())
    best = interleaved_best(
        {
            "floor": [PYTHON, WORKER, "floor", str(folder)],
            "rows": [PYTHON, WORKER, "rows", str(folder)],
            "entries": [PYTHON, WORKER, "entries", str(folder)],
            "headers": [PYTHON, WORKER, "headers", str(folder)],
            "loader": [PYTHON, WORKER, "loader-first", str(folder)],
        },
        repeats,
    )
    stats_argv = [PYTHON, "-m", "inspector", "stats", "--json", str(folder)]
    stats = run_process(stats_argv)
    if stats.seconds < 20:  # a slow run is far from the goal anyway: do not repeat it
        best["stats"] = min(
            [stats, *(run_process(stats_argv) for _ in range(repeats - 1))], key=lambda r: r.seconds
        )
    else:
        best["stats"] = stats
    floor = best["floor"].seconds
    label = f"{dumps:,} dumps + {sessions} debug logs ({files:,} files, {size_mb:.0f} MB)"
    return [
        Result(
            "folder",
            f"browser rows visible, list_entries + entry_details of 50 rows, {label}",
            best["entries"].seconds,
            "s",
            "< 1 s",
            best["entries"].seconds < 1.0,
            note="whole process: inspector.sources.entries (scan, stat, names; first screen's headers)",
        ),
        Result(
            "folder",
            f"browser rows visible, prototype (file names + lazy headers), {label}",
            best["rows"].seconds,
            "s",
            "< 1 s",
            best["rows"].seconds < 1.0,
            note="whole process: scan, rows from file names, lazy headers of the first 50 dumps",
        ),
        Result(
            "folder",
            "browser rows visible, full loader (first 50 results of load_paths)",
            best["loader"].seconds,
            "s",
            "< 1 s",
            best["loader"].seconds < 1.0,
            note="whole process; load_paths peeks every file and links every debug log before its first result",
        ),
        Result(
            "folder",
            "header keys of every dump (background fill)",
            best["headers"].seconds,
            "s",
            "(info)",
            True,
            floor=floor,
            note="streaming prototype reads ~1 chunk per dump",
        ),
        Result(
            "folder",
            "inspector stats --json over the folder, whole process (header-level load, 2 cores)",
            best["stats"].seconds,
            "s",
            "<= 1.5x floor",
            best["stats"].seconds <= 1.5 * floor,
            floor=floor,
            note="floor reads + parses every file, nothing else",
        ),
    ]


if __name__ == "__main__":
    from bench.common import out_dir
    from bench.run_all import print_table

    print_table(run(out_dir()))
