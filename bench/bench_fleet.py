"""Issue 16: the decision index over a generated fleet folder (`bench_fleet_data.write_fleet`).

* floor: a process that reads and parses every file once (`workers/folder.py floor`);
* `inspector index FOLDER --out NEW --jobs 1` (files per second on one core) and `--jobs 2`,
  whole processes; then a re-run that finds nothing new (manifest: size + mtime only);
* with `--spark` (needs the `spark` extra): the Spark recipe in local mode, `local[1]` and
  `local[2]`, timed around `index_with_spark` (the JVM start is reported apart).

    python -m bench.bench_fleet [--files 5000] [--spark]
    python -m bench.bench_fleet spark-worker FOLDER OUT CORES   # one Spark run (internal)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench.bench_fleet_data import write_fleet
from bench.bench_fleet_stream import measure
from bench.common import PYTHON, Result, run_process

FLOOR = str(Path(__file__).resolve().parent / "workers" / "folder.py")


def _fleet(out: Path, files: int) -> Path:
    folder = out / f"fleet-{files}"
    marker = folder / ".fleet.json"
    if not (marker.exists() and json.loads(marker.read_text()) == {"files": files}):
        shutil.rmtree(folder, ignore_errors=True)
        write_fleet(folder / "workspace", files=files)
        marker.write_text(json.dumps({"files": files}))
    return folder / "workspace"


def _index(folder: Path, jobs: int, target: Path) -> tuple[float, float]:
    """Wall and CPU seconds (this process and its pool workers) of one `inspector index`."""
    argv = [PYTHON, "-m", "inspector", "index", str(folder), "--out", str(target)]
    seconds, _, cpu = measure([*argv, "--jobs", str(jobs), "--json"])
    return seconds, cpu


def _spark(folder: Path, cores: int) -> tuple[float, float, float]:
    """Seconds indexing (JVM up), seconds starting, CPU seconds of the index phase."""
    with tempfile.TemporaryDirectory(prefix="fleet-spark-") as scratch:
        argv = [PYTHON, "-m", "bench.bench_fleet", "spark-worker", str(folder), scratch, str(cores)]
        run = run_process(argv, {"PYSPARK_PYTHON": PYTHON})
        timings = json.loads(run.stdout.strip().splitlines()[-1])
        return float(timings["index"]), float(timings["start"]), float(timings["cpu"])


def run(out: Path, files: int = 5_000, spark: bool = False) -> list[Result]:
    """Generate (or reuse) the fleet; time the floor, the index at 1 and 2 jobs, a re-run."""
    folder = _fleet(out, files)
    _, _, floor_cpu = measure([PYTHON, FLOOR, "floor", str(folder)])
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="fleet-index-") as scratch:
        one = _index(folder, 1, Path(scratch) / "one")
        two = _index(folder, 2, Path(scratch) / "two")
        again = _index(folder, 2, Path(scratch) / "two")
    for jobs, (seconds, cpu) in ((1, one), (2, two)):
        name = (
            f"inspector index, {files:,} files, --jobs {jobs}: {files / cpu:,.0f} files per "
            f"CPU-second ({files / seconds:,.0f} files/s wall)"
        )
        note = f"CPU s of the process and its workers (wall {seconds:.1f} s); floor reads + parses"
        results.append(Result("fleet", name, cpu, "s", "(info)", True, floor=floor_cpu, note=note))
    note = f"wall {again[0]:.2f} s"
    results.append(
        Result("fleet", "re-run, nothing new: CPU", again[1], "s", "(info)", True, note=note)
    )
    for cores in (1, 2) if spark else ():
        seconds, start, cpu = _spark(folder, cores)
        name = (
            f"Spark local[{cores}] mapInArrow: {files / cpu:,.0f} files per CPU-second "
            f"({files / seconds / cores:,.0f} files/s per core, wall)"
        )
        note = (
            f"CPU s of the index phase (JVM + Python workers); floor = inspector index --jobs 1 "
            f"CPU; wall {seconds:.1f} s; JVM start {start:.1f} s not counted"
        )
        results.append(Result("fleet", name, cpu, "s", "(info)", True, floor=one[1], note=note))
    return results


def _spark_worker(folder: str, target: str, cores: int) -> None:
    from pyspark.sql import SparkSession

    from inspector.index.spark import index_with_spark

    started = time.perf_counter()
    session = (
        SparkSession.builder.master(f"local[{cores}]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", str(cores))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    session.range(1).count()  # the JVM and a Python worker are up
    ready, cpu_ready = time.perf_counter(), _tree_cpu()
    index_with_spark(session, [folder], os.path.join(target, "out"), partitions=cores * 4)
    done, cpu_done = time.perf_counter(), _tree_cpu()
    session.stop()
    print(
        json.dumps({"start": ready - started, "index": done - ready, "cpu": cpu_done - cpu_ready})
    )


def _tree_cpu() -> float:
    """CPU seconds of this process and every live descendant (the JVM and its Python
    workers), from /proc (Linux)."""
    ticks = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        times[int(entry)] = (
            int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
        ) / ticks
    tree, frontier = {os.getpid()}, [os.getpid()]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in tree:
                tree.add(pid)
                frontier.append(pid)
    return sum(times.get(pid, 0.0) for pid in tree)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line (see the module docstring)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["spark-worker"]:
        _spark_worker(args[1], args[2], int(args[3]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=5_000)
    parser.add_argument("--spark", action="store_true")
    parser.add_argument("--out", type=Path, default=None)
    options = parser.parse_args(args)
    from bench.common import out_dir
    from bench.run_all import print_table

    print_table(run(out_dir(options.out), options.files, options.spark), markdown=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
