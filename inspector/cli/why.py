"""`inspector why SOURCE ... [TUNING] [--json]`: the decision explained, per context found.

Rich and the text report are imported only for a text report (`--json` never needs them);
what runs the report only when it runs (`why --help` builds its parser from the registry's
tables alone). Never imports Textual."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from inspector.cli.common import add_jobs_argument, add_tuning_arguments, check_jobs
from inspector.cli.report import add_pin_argument
from inspector.sources.jsonio import STREAM_MIN_BYTES

if TYPE_CHECKING:
    from rich.console import RenderableType

    from inspector.core.artifact import Artifact


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Sources, tuning flags and --json."""
    parser.description = "Explain why each context found did or did not compress."
    parser.add_argument(
        "sources",
        nargs="*",
        metavar="SOURCE",
        help="dumps, logs, folders, snapshots, message lists",
    )
    add_pin_argument(parser)
    add_tuning_arguments(parser)
    parser.add_argument("--json", action="store_true", help="JSON Lines, one object per context")
    add_jobs_argument(parser, "deciding (and laying out the text report)", memory=True)


def run(args: argparse.Namespace) -> int:
    """Print the report (Rich) or JSON Lines; exit 1 if any input was unreadable. A --json
    run over files alone is replayed from the whole-file result cache when nothing changed,
    except for debug logs streamed (`debugstream.streamable`): their output, about 2.5x the
    log, is more than an entry may hold, so recording it would only cost memory."""
    from inspector.sources.debugstream import streamable
    from inspector.sources.result_cache import cached_run

    check_jobs(args, "why")
    if streamable(list(getattr(args, "sources", None) or []), STREAM_MIN_BYTES) is not None:
        return _run(args)
    return cached_run("why", args, _run)


def _run(args: argparse.Namespace) -> int:
    from inspector.cli.common import json_line_bytes, write_json_line
    from inspector.cli.report import pins_of, with_pins
    from inspector.cli.run_support import ReportRun
    from inspector.core.strategy.report import why_json

    report = ReportRun(args)
    pins = pins_of(args)
    report.warn_inexact()
    if report.json:

        def line(artifact: Artifact) -> bytes:
            evaluated = report.evaluate(artifact)
            if evaluated.decision is not None:  # no context (a debug run alone): no pins
                evaluated, _, _ = with_pins(report, evaluated, pins, flips=False)
            return json_line_bytes(why_json(artifact, evaluated.decision))

        if report.jobs < 2 or report.streamed:  # each evaluation printed as soon as it is read
            for artifact in report.artifacts():
                write_json_line(line(artifact), flush=False)
        else:  # every context decided first, on `--jobs` processes, printed in order
            for _, data in report.spread(line):
                write_json_line(data, flush=False)
        return report.exit_status
    from inspector.processes import helper_start_method
    from inspector.render import parallel
    from inspector.render.plain import TerminalSafeConsole
    from inspector.render.why_report import why_report

    console = TerminalSafeConsole(highlight=False)

    def panel(artifact: Artifact) -> RenderableType:
        evaluated, flips, _ = with_pins(report, report.evaluate(artifact), pins)
        decision = evaluated.decision
        return why_report(artifact, decision, flips.flips, dropped=flips.dropped)

    if report.jobs >= 2 and not report.streamed and helper_start_method() == "fork":
        # each context decided and its panel laid out on `--jobs` processes, in order
        settings = parallel.console_settings(console)
        for _, text in report.spread(
            lambda artifact: parallel.render_text(settings, panel(artifact))
        ):
            console.file.write(text)
            console.file.flush()
        return report.exit_status
    # else (a log streamed, beside a thread) a long report is laid out by render helpers
    helpers, warning = parallel.helpers_wanted(os.environ, report.jobs)
    if warning:
        print(warning, file=sys.stderr)
    with parallel.ParallelPrinter(console, helpers) as printer:
        for artifact in report.artifacts():
            printer.print(panel(artifact))
    return report.exit_status
