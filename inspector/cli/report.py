"""`inspector report SOURCE --format md|html [--out FILE] [TUNING]`: a report to attach to a bug.

Every context found, under any strategy (through the strategy protocol): the why report, the
regions message by message with token counts, checks, findings, flips, what the source
recorded and, for a dump, the context before and after compression; secrets masked. Writes
to stdout, or to `--out` (never inside a folder it reads). Never imports Textual.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspector.cli.common import UsageError, add_tuning_arguments
from inspector.core.errors import ConfigError
from inspector.core.redact import shown_name

if TYPE_CHECKING:
    from inspector.cli.run_support import Evaluated, ReportRun
    from inspector.core.artifact import Artifact
    from inspector.core.flip_check import Offered, SourceOutcome
    from inspector.core.pins import PinRow
    from inspector.core.strategy.base import Prepared, Strategy


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Sources, --format, --out, --id, --pin and the tuning flags."""
    parser.description = (
        "Write a report of each context found (why, regions, messages, findings, "
        "before/after), secrets masked, as Markdown or a self-contained HTML page."
    )
    parser.add_argument("sources", nargs="*", metavar="SOURCE", help="dumps, logs, folders")
    parser.add_argument("--format", choices=("md", "html"), default="md", help="default md")
    parser.add_argument("--out", metavar="FILE", help="write here instead of stdout")
    parser.add_argument(
        "--id", metavar="TEXT", help="only the contexts whose id contains TEXT (default: all)"
    )
    add_pin_argument(parser)
    add_tuning_arguments(parser)


def _check_out(out: Path, sources: list[str]) -> None:
    from inspector.llm.dump_writer import OutputDirError, check_out_dir

    if out.is_dir():
        raise UsageError(f"--out: {out} is a folder; give a file name")
    try:
        check_out_dir(out.parent, sources)
    except OutputDirError as error:
        raise UsageError(f"--out: {error}") from None


def add_pin_argument(parser: argparse.ArgumentParser) -> None:
    """The `--pin LIST` what-if flag (shared with `why`)."""
    parser.add_argument(
        "--pin",
        metavar="LIST",
        help="what-if: keep these messages verbatim, e.g. 3,7-9 (openJiuwen has no pins; "
        "default: the pins a snapshot carries)",
    )


def pins_of(args: argparse.Namespace) -> frozenset[int] | None:
    """The --pin list (None: use what each snapshot carries); a bad list is a usage error."""
    text = getattr(args, "pin", None)
    if text is None:
        return None
    from inspector.core.pins import PinError, parse_pins

    try:
        return parse_pins(text)
    except PinError as error:
        raise UsageError(f"--pin: {error}") from None


def with_pins(
    report: ReportRun, evaluated: Evaluated, pins: frozenset[int] | None, flips: bool = True
) -> tuple[Evaluated, Offered, frozenset[int]]:
    """The evaluation with the pins applied (given, else the snapshot's own), its flips (when
    `flips`: only those that hold, benefit check included, as the TUI offers them) and the
    pins in effect."""
    from inspector.core.flip_check import Offered

    artifact, selection = evaluated.artifact, evaluated.selection
    if selection is None or evaluated.prepared is None or artifact.snapshot is None:
        return evaluated, Offered([], 0), frozenset()  # no context (a debug run alone)
    from inspector.core.pins import apply_pins, format_pins, recorded_pins

    chosen = recorded_pins(artifact.snapshot) if pins is None else pins
    strategy, settings = selection.strategy, selection.settings
    if not chosen:
        found = _holding(report, strategy, evaluated.prepared, settings, flips, artifact)
        return evaluated, found, chosen
    try:
        pinned = apply_pins(
            strategy,
            artifact.snapshot,
            settings,
            report.counters,
            chosen,
            artifact,
            report.counting_note,
        )
    except ConfigError as error:
        raise UsageError(f"{artifact.source}: {error}") from None
    if pinned.out_of_range:
        print(
            f"note: {shown_name(artifact.id)}: pins beyond its {len(artifact.snapshot.messages)} messages "
            f"ignored: {format_pins(pinned.out_of_range)}",
            file=sys.stderr,
        )
    evaluated = dataclasses.replace(evaluated, prepared=pinned.prepared, decision=pinned.decision)
    found = _holding(report, strategy, pinned.prepared, settings, flips, artifact)
    return evaluated, found, pinned.pinned


def _holding(
    report: ReportRun,
    strategy: Strategy,
    prepared: Prepared,
    settings: Any,
    wanted: bool,
    artifact: Artifact,
) -> Offered:
    """The strategy's flips on `prepared` that hold (`core.flip_check`; none unless
    `wanted`; checked against what `artifact` recorded, `core.flip_check.source_outcome`);
    another strategy's flip is checked on the same context, prepared once."""
    from inspector.core.flip_check import Offered, holding_flips, source_outcome

    if not wanted:
        return Offered([], 0)

    source: SourceOutcome = source_outcome(artifact)
    cache: dict[str, Prepared] = {strategy.key: prepared}

    def prepare(other: Strategy) -> Prepared:
        if other.key not in cache:
            cache[other.key] = other.prepare(
                prepared.snapshot, report.counters, report.counting_note
            )
        return cache[other.key]

    found = list(strategy.flips(prepared, settings))
    held = holding_flips(found, prepared.snapshot, strategy.key, report.counters, prepare, source)
    return Offered(held, len(found) - len(held))


def _report_of(
    report: ReportRun, evaluated: Evaluated, pins: frozenset[int] | None
) -> dict[str, Any]:
    evaluated, flips, chosen = with_pins(report, evaluated, pins)
    decision, artifact = evaluated.decision, evaluated.artifact
    mode = getattr(decision.settings, "token_mode", None) if decision else None
    counter = report.counters.get(mode) if isinstance(mode, str) else None
    rows: list[PinRow] = []
    if chosen and artifact.snapshot is not None:
        from inspector.core.pins import pins_across_strategies

        choice = {k: v for k, v in report.overrides.items() if k not in ("processor", "family")}
        rows = pins_across_strategies(
            artifact.snapshot, report.counters, chosen, choice, artifact, report.counting_note
        )
    from inspector.render.report_data import build_report

    return build_report(artifact, decision, flips.flips, counter, chosen, rows, flips.dropped)


def run(args: argparse.Namespace) -> int:
    """Build the reports and print or write them; exit 1 if any input was unreadable."""
    from inspector.cli.run_support import ReportRun
    from inspector.prefs import write_text_file
    from inspector.render.report_html import report_html
    from inspector.render.report_md import report_markdown

    out = Path(args.out).expanduser() if args.out else None
    report = ReportRun(args)
    if out is not None:
        _check_out(out, report.sources)
    pins = pins_of(args)
    report.warn_inexact()
    reports = []
    for artifact in report.artifacts():
        if args.id and args.id not in artifact.id:
            continue
        reports.append(_report_of(report, report.evaluate(artifact), pins))
    if not reports:
        print("error: no context found to report on", file=sys.stderr)
        return 1
    text = report_html(reports) if args.format == "html" else report_markdown(reports)
    if out is None:
        sys.stdout.write(text)
        return report.exit_status
    write_text_file(out, text)
    print(
        f"wrote {out} ({len(reports)} context{'s' if len(reports) != 1 else ''})", file=sys.stderr
    )
    return report.exit_status
