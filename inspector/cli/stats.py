"""`inspector stats SOURCE ... [--json]`: what compressed, how well, and why the rest did not.

Counts per processor and outcome, the reduction-ratio distribution, tokens saved, reasons
of non-compression, retries by error type, the biggest and least effective compressions.
`--json` prints JSON Lines: one line per unreadable input (with `error`), then one stats
object (`"kind": "stats"`). Never imports Textual.
"""

from __future__ import annotations

import argparse

from inspector.cli.common import print_json_line
from inspector.cli.run_support import ReportRun
from inspector.core.stats import compute_stats


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Sources and --json."""
    parser.description = "Statistics over dumps and debug logs."
    parser.add_argument("sources", nargs="*", metavar="SOURCE", help="dumps, logs, folders")
    parser.add_argument("--json", action="store_true", help="JSON Lines instead of a report")


def run(args: argparse.Namespace) -> int:
    """Load every source, compute the statistics, print them."""
    # stats reads only what each artifact recorded: no context is rebuilt or counted
    report = ReportRun(args, contexts=False)
    # one pass over the artifacts as they load (a streamed debug log is never held whole);
    # the errors are counted during that pass
    stats = compute_stats(report.artifacts())
    stats["errors"] = report.errors
    if report.json:
        print_json_line({"kind": "stats", "sources": report.sources, **stats})
    else:
        from rich.console import Console

        from inspector.render.stats_report import stats_report

        Console().print(stats_report(stats, report.sources))
    return report.exit_status
