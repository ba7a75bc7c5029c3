"""`inspector index SOURCE ... --out DIR [--jobs N] [--json]`: a Parquet decision index.

One row per evaluation found (dump, debug-log evaluation, snapshot, unreadable file),
partitioned by date; a re-run adds only what is new or changed (`inspector.index.writer`).
Needs pyarrow (the `index` extra). Never imports Textual or Rich.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from inspector.cli.common import (
    UsageError,
    add_jobs_argument,
    check_jobs,
    print_json_line,
    require_sources,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Sources, --out, --jobs and --json."""
    parser.description = (
        "Write a Parquet decision index (one row per evaluation, partitioned by date) of "
        "dumps, debug logs and snapshots; re-running adds only what is new."
    )
    parser.add_argument("sources", nargs="*", metavar="SOURCE", help="dumps, logs, folders")
    parser.add_argument("--out", required=True, metavar="DIR", help="the index folder")
    add_jobs_argument(parser, "indexing")
    parser.add_argument("--json", action="store_true", help="print the summary as one JSON line")


def run(args: argparse.Namespace) -> int:
    """Index the sources; exit 1 when some file could not be read (its row says why)."""
    sources = require_sources(args.sources or [])
    jobs = check_jobs(args, "index")
    try:
        from inspector.index.writer import update_index
    except ImportError as error:
        raise UsageError(
            f"inspector index needs pyarrow ({error}): pip install 'context-inspector[index]'"
        ) from None
    from inspector.core.errors import InspectorError

    try:
        summary = update_index(sources, Path(args.out), workers=jobs)
    except InspectorError as error:
        print(f"error: {getattr(error, 'message', None) or error}", file=sys.stderr)
        return 2
    if args.json:
        print_json_line(summary.to_dict())
    else:
        print(
            f"{summary.files} files in {summary.units} units: {summary.indexed_units} indexed "
            f"({summary.indexed_files} files), {summary.skipped_units} unchanged; "
            f"{summary.rows_written} rows written, {summary.rows_removed} replaced, "
            f"{summary.errors} unreadable; {summary.seconds:.2f} s -> {args.out}"
        )
    if summary.errors:
        print(
            f"error: {summary.errors} file(s) could not be read: rows with kind='error' say why",
            file=sys.stderr,
        )
    return 1 if summary.errors else 0
