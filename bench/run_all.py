"""Run every benchmark and print one table of results, ratios and goals.

    python bench/run_all.py                 # default sizes (a few minutes on 2 cores)
    python bench/run_all.py --quick         # tiny inputs, seconds: checks the scripts run
    python bench/run_all.py --only parity,resplit --markdown

Generated data goes to bench/out/ (git-ignored) unless --out is given. Exit status is 0
even when a goal is missed: these are measurements, not tests.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` and `inspector` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import Result, out_dir

BENCHES = ("parity", "resplit", "bigdump", "folder", "tui")
#: Issue 16's benchmarks (slower: run with --only fleet,stream; Spark with bench_fleet --spark).
EXTRA_BENCHES = ("fleet", "stream")


def _format_value(result: Result) -> str:
    if result.unit == "s":
        return f"{result.value:.3f} s"
    if result.unit == "ms":
        return f"{result.value:.3f} ms"
    if result.unit == "MB":
        return f"{result.value:.0f} MB"
    if result.unit == "x":
        return f"{result.value:.2f}x"
    return f"{result.value:g} {result.unit}"


def _rows(results: Sequence[Result]) -> list[list[str]]:
    rows = []
    for r in results:
        floor = (
            "" if r.floor is None else _format_value(Result(r.bench, "", r.floor, r.unit, "", True))
        )
        ratio = "" if r.ratio is None else f"{r.ratio:.2f}x"
        rows.append(
            [
                r.bench,
                r.name,
                _format_value(r),
                floor,
                ratio,
                r.goal,
                "yes" if r.ok else "NO",
                r.note,
            ]
        )
    return rows


HEADER = ["bench", "measure", "value", "floor", "ratio", "goal", "met", "note"]


def print_table(results: Sequence[Result], markdown: bool = False) -> None:
    """Print results as an aligned text table or a Markdown table."""
    rows = _rows(results)
    if markdown:
        print("| " + " | ".join(HEADER) + " |")
        print("|" + "---|" * len(HEADER))
        for row in rows:
            print("| " + " | ".join(cell.replace("|", "/") for cell in row) + " |")
        return
    widths = [
        max(len(h), *(len(row[i]) for row in rows)) if rows else len(h)
        for i, h in enumerate(HEADER)
    ]
    widths[-1] = len(HEADER[-1])  # notes run free at the end of the line
    print("  ".join(h.ljust(w) for h, w in zip(HEADER, widths, strict=True)))
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


def run_benches(names: Sequence[str], quick: bool, out: Path, repeats: int | None) -> list[Result]:
    """Run the named benchmarks at default (or quick) sizes; progress goes to stderr."""
    from bench import (
        bench_bigdump,
        bench_fleet,
        bench_fleet_stream,
        bench_folder,
        bench_parity,
        bench_resplit,
        bench_tui,
    )

    reps = repeats if repeats is not None else (1 if quick else 5)
    plans: dict[str, Callable[[], list[Result]]] = {
        "parity": lambda: bench_parity.run(repeats=reps),
        "resplit": lambda: bench_resplit.run(
            messages=500 if quick else 20_000, changes=50 if quick else 1_000
        ),
        "bigdump": lambda: bench_bigdump.run(
            out,
            messages=400 if quick else 20_000,
            target_mb=1.0 if quick else 100.0,
            repeats=1 if quick else min(reps, 2),
        ),
        "folder": lambda: bench_folder.run(
            out,
            dumps=40 if quick else 5_000,
            sessions=4 if quick else 50,
            repeats=1 if quick else min(reps, 2),
        ),
        "tui": lambda: bench_tui.run(
            out,
            sizes=(60, 400) if quick else (419, 20_000),
            browser=40 if quick else 5_000,
            rounds=1 if quick else 5,
        ),
        "fleet": lambda: bench_fleet.run(out, files=100 if quick else 5_000),
        "stream": lambda: bench_fleet_stream.run(
            out, megabytes=1.0 if quick else 60.0, message_mb=1.0 if quick else 40.0
        ),
    }
    results: list[Result] = []
    for name in names:
        start = time.perf_counter()
        print(f"[bench] {name} ...", file=sys.stderr, flush=True)
        results.extend(plans[name]())
        print(
            f"[bench] {name} done in {time.perf_counter() - start:.1f} s",
            file=sys.stderr,
            flush=True,
        )
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments, run, print the table."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="tiny inputs: check that everything runs"
    )
    parser.add_argument(
        "--only",
        default=",".join(BENCHES),
        help="comma-separated subset of " + ", ".join(BENCHES + EXTRA_BENCHES),
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="folder for generated data (default bench/out)"
    )
    parser.add_argument("--repeats", type=int, default=None, help="best-of-N for process timings")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args(argv)
    names = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in names if name not in BENCHES + EXTRA_BENCHES]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}")
    results = run_benches(names, args.quick, out_dir(args.out), args.repeats)
    print_table(results, markdown=args.markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
