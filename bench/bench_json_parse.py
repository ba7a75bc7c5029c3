"""Issue 16, the strict JSON parse: the stdlib decoder (`loads_strict` before its fast path)
against `loads_strict` with `pydantic_core.from_json` (and `loads_strict_bytes`), in the
same run, as CPU-time ratios (old / new: above 1 is faster):

* (a) a debug log of `--mb` MB (bench_fleet_stream's generator), line by line, as
  `debugstream._record` parses it (`loads_strict(raw.decode("utf-8"))`) and with bytes;
* (b) a dump whose size is one tool message of `--message-mb` MB, its whole text parsed
  once (as `read_json_file` does for a document under `STREAM_MIN_BYTES`; from 32 MB it
  streams the file through `jsonstream` instead, which this does not time);
* (c) every `.json` dump of a folder of small dumps (`--folder`, default bench/out/
  folder-5000-50 of the main checkout when present; read, never written), parsed as
  `classify._dump_the_short_way` does (`loads_strict(data.decode("utf-8-sig"))`).

Old and new take turns `--repeat` times on data read into memory first; the best CPU time
of each counts. Every value the new path returns is checked equal to the old one.

    python -m bench.bench_json_parse [--mb 60] [--message-mb 40] [--folder DIR]
        [--repeat 3] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.bench_fleet_stream import write_big_message_dump, write_log
from inspector.sources import jsonio
from inspector.sources.jsonio import loads_strict, loads_strict_bytes

_OLD_DECODER = json.JSONDecoder(
    parse_constant=jsonio._reject_constant, parse_float=jsonio._finite_float
)
_MAIN_FOLDER = Path("/work/main/bench/out/folder-5000-50")


def old_loads_strict(text: str) -> Any:
    """`loads_strict` as it was: the stdlib decoder with the two hooks, after a BOM check."""
    if text.startswith("\ufeff"):
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    return _OLD_DECODER.decode(text)


def _cpu(run: Callable[[], Any]) -> tuple[float, Any]:
    start = time.process_time()
    result = run()
    return time.process_time() - start, result


def compare(
    label: str, ways: dict[str, Callable[[], Any]], repeat: int, unit_count: int
) -> dict[str, float]:
    """Run each way `repeat` times in turn; print best CPU times and old/new ratios."""
    best: dict[str, float] = {}
    results: dict[str, Any] = {}
    for _ in range(repeat):
        for name, run in ways.items():
            seconds, result = _cpu(run)
            best[name] = min(best.get(name, seconds), seconds)
            results.setdefault(name, result)
    reference = results["old"]
    for name, result in results.items():
        if result != reference:
            raise SystemExit(f"{label}: {name} gives a different result than old")
    old = best["old"]
    for name, seconds in best.items():
        per = seconds / max(unit_count, 1) * 1e6
        ratio = "" if name == "old" else f"  old/new {old / seconds:5.2f}x"
        print(f"{label:<28} {name:<14} {seconds:8.3f} s CPU  {per:9.2f} us/unit{ratio}")
    return best


def bench_log(path: Path, repeat: int) -> dict[str, float]:
    """(a) every line of a debug log, parsed on its own."""
    lines = [raw for raw in path.read_bytes().splitlines() if raw.strip()]
    return compare(
        f"(a) log {path.stat().st_size / 1e6:.0f} MB ({len(lines)} lines)",
        {
            "old": lambda: [old_loads_strict(raw.decode("utf-8")) for raw in lines],
            "new": lambda: [loads_strict(raw.decode("utf-8")) for raw in lines],
            "new bytes": lambda: [loads_strict_bytes(raw) for raw in lines],
        },
        repeat,
        len(lines),
    )


def bench_big_dump(path: Path, repeat: int) -> dict[str, float]:
    """(b) one dump whose size is one message, its whole text parsed."""
    data = path.read_bytes()
    return compare(
        f"(b) dump {len(data) / 1e6:.0f} MB, whole text",
        {
            "old": lambda: old_loads_strict(data.decode("utf-8-sig")),
            "new": lambda: loads_strict(data.decode("utf-8-sig")),
            "new bytes": lambda: loads_strict_bytes(data),
        },
        repeat,
        1,
    )


def bench_folder(folder: Path, repeat: int) -> dict[str, float] | None:
    """(c) every dump of a folder of small dumps, parsed whole as the short way does."""
    paths = sorted(folder.rglob("*.json"))
    datas = [p.read_bytes() for p in paths if not p.name.startswith(".")]
    if not datas:
        print(f"(c) no dumps under {folder}: skipped")
        return None
    return compare(
        f"(c) folder {len(datas)} dumps",
        {
            "old": lambda: [old_loads_strict(d.decode("utf-8-sig")) for d in datas],
            "new": lambda: [loads_strict(d.decode("utf-8-sig")) for d in datas],
            "new bytes": lambda: [loads_strict_bytes(d) for d in datas],
        },
        repeat,
        len(datas),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the three comparisons and print their ratios."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=60.0)
    parser.add_argument("--message-mb", type=float, default=40.0)
    parser.add_argument("--folder", type=Path, default=_MAIN_FOLDER)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("/tmp/bench-json-parse"))
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    bench_log(write_log(args.out / f"log-{args.mb:g}mb.jsonl", args.mb), args.repeat)
    dump = write_big_message_dump(args.out / f"msg-{args.message_mb:g}mb.json", args.message_mb)
    bench_big_dump(dump, args.repeat)
    if args.folder.is_dir():
        bench_folder(args.folder, args.repeat)
    else:
        print(f"(c) {args.folder} is not a folder: skipped")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
