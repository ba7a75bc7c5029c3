"""`why --json` output bytes over a fixed corpus, for before/after checks of speed work.

    python scripts/why_bytes.py record OUT.json [--extra FILE ...] [--stats] [--text]
    python scripts/why_bytes.py diff BEFORE.json AFTER.json

`record` runs `inspector why --json` in this process (result cache off, a private empty
token cache; the inspector package Python finds, e.g. by PYTHONPATH, on the data of the
current directory, by relative paths) on each unit: sample_dumps/, every scenario and file of
/work/shared/reference/{openjiuwen,standard,parity}, each child of tests/data, and each
`--extra` path; then every `.jsonl` file found there once more with the streamed
debug-log path forced (`STREAM_MIN_BYTES` = 0, as for a log of 32 MB and more). `--stats`
adds `stats --json`, `stats --json --no-findings` and the text table (120 columns) of each
unit, and `stats --json` and the table of each log streamed; `--text` adds the text `why`
of each unit, plain and with `FORCE_COLOR=1` (a long one laid out by render helpers). For
each run it stores the SHA-256 and size of stdout and stderr and the exit status; `diff` names
the runs that differ. Record both runs from the same directory (a folder's files are
listed in the order the file system gives, and some sources print absolute paths), e.g.
`cd CHECKOUT && PYTHONPATH=OLD python scripts/why_bytes.py record before.json`, then
`PYTHONPATH=NEW ...`. Not a test: a tool for the person changing the output path.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path

REFERENCE = Path("/work/shared/reference")


def _units(extra: list[str]) -> list[str]:
    """Every path `why` is run on, in a fixed order."""
    units = ["sample_dumps"]  # relative to the current directory
    for root in (REFERENCE / "openjiuwen", REFERENCE / "standard", REFERENCE / "parity"):
        if root.is_dir():
            units += [str(p) for p in sorted(root.iterdir()) if p.name != "README.md"]
    data = Path("tests") / "data"
    units += [str(p) for p in sorted(data.iterdir()) if p.name != "tui"]
    return units + extra


def _logs(units: list[str]) -> list[str]:
    """Every `.jsonl` file under the units (and the units that are one)."""
    found: list[str] = []
    for unit in units:
        path = Path(unit)
        if path.is_file() and path.suffix == ".jsonl":
            found.append(unit)
        elif path.is_dir():
            found += [str(p) for p in sorted(path.rglob("*.jsonl"))]
    return found


def _run(argv: list[str]) -> dict[str, object]:
    """One in-process `inspector` run: hashes of its output, its exit status."""
    from inspector.cli import main

    out, err = io.BytesIO(), io.StringIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    status: object
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exit_:
            status = exit_.code
    stdout.flush()
    data = out.getvalue()
    return {
        "stdout": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
        "stderr": hashlib.sha256(err.getvalue().encode("utf-8", "replace")).hexdigest(),
        "status": status,
    }


#: The `stats` runs `--stats` adds for each unit, by name; and for each log streamed.
_STATS = {
    "stats-json": ["stats", "--json"],
    "stats-header": ["stats", "--json", "--no-findings"],
    "stats-table": ["stats"],
}
_STREAMED_STATS = ("stats-json", "stats-table")
#: The text `why` runs `--text` adds for each unit: environment set around each.
_TEXT = {"why-text": {}, "why-text-colour": {"FORCE_COLOR": "1"}}


def _with_env(env: dict[str, str], argv: list[str]) -> dict[str, object]:
    """`_run(argv)` with `env` set in this process's environment meanwhile."""
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        return _run(argv)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def record(out: Path, extra: list[str], stats: bool = False, text: bool = False) -> int:
    """Run every unit (then every log streamed) and write the hashes to `out`."""
    os.environ["COLUMNS"] = "120"  # the text table's width, whatever the terminal
    os.environ["CONTEXT_INSPECTOR_NO_RESULT_CACHE"] = "1"
    os.environ["CONTEXT_INSPECTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="why-bytes-")
    import inspector.cli.run_support as run_support

    print(f"inspector from {Path(run_support.__file__).parent.parent}", file=sys.__stderr__)

    units = _units(extra)
    runs: dict[str, object] = {}
    for unit in units:
        runs[f"why {unit}"] = _run(["why", "--json", unit])
        for name, argv in _STATS.items() if stats else ():
            runs[f"{name} {unit}"] = _run([*argv, unit])
        for name, env in _TEXT.items() if text else ():
            done = _with_env(env, ["why", unit])
            if env:  # FORCE_COLOR makes stderr a terminal too: its progress bar's frames vary
                done["stderr"] = "(a progress bar: not compared)"
            runs[f"{name} {unit}"] = done
        print(f"why {unit}", file=sys.__stderr__)
    run_support.STREAM_MIN_BYTES = 0  # type: ignore[misc]
    for log in _logs(units):
        runs[f"streamed {log}"] = _run(["why", "--json", log])
        for name in _STREAMED_STATS if stats else ():
            runs[f"streamed {name} {log}"] = _run([*_STATS[name], log])
    out.write_text(json.dumps(runs, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(runs)} runs -> {out}", file=sys.__stderr__)
    return 0


def diff(before: Path, after: Path) -> int:
    """Name every run whose output differs; exit 1 if any does."""
    old = json.loads(before.read_text(encoding="utf-8"))
    new = json.loads(after.read_text(encoding="utf-8"))
    bad = [name for name in sorted(set(old) | set(new)) if old.get(name) != new.get(name)]
    for name in bad:
        print(f"DIFFERS: {name}\n  before {old.get(name)}\n  after  {new.get(name)}")
    print(f"{len(set(old) | set(new))} runs, {len(bad)} differ")
    return 1 if bad else 0


def main() -> int:
    """Command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("out", type=Path)
    rec.add_argument("--extra", nargs="*", default=[])
    rec.add_argument("--stats", action="store_true", help="also every unit's `stats` outputs")
    rec.add_argument(
        "--text", action="store_true", help="also every unit's text `why`, plain and coloured"
    )
    dif = sub.add_parser("diff")
    dif.add_argument("before", type=Path)
    dif.add_argument("after", type=Path)
    options = parser.parse_args()
    if options.command == "record":
        return record(options.out, options.extra, options.stats, options.text)
    return diff(options.before, options.after)


if __name__ == "__main__":
    raise SystemExit(main())
