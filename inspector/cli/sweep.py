"""`inspector sweep SOURCE --param NAME [--json]`: the verdict across a range of one parameter."""

from __future__ import annotations

import argparse
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from inspector.cli.common import UsageError, add_tuning_arguments, print_json_line
from inspector.cli.hybrid_support import sweep_hybrid_cli
from inspector.cli.run_support import ReportRun
from inspector.core.errors import ConfigError
from inspector.core.whatif import SWEEP_PARAMS, SweepPoint, flip_points, sweep


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Sources, --param, an optional range, tuning flags and --json."""
    parser.description = "Sweep one parameter and show where the verdict flips."
    parser.add_argument("sources", nargs="*", metavar="SOURCE")
    parser.add_argument("--param", required=True, choices=SWEEP_PARAMS, help="parameter to sweep")
    parser.add_argument("--values", help="comma-separated values (default: a sensible range)")
    parser.add_argument("--from", dest="start", type=float, help="first value of an even range")
    parser.add_argument("--to", dest="stop", type=float, help="last value of an even range")
    parser.add_argument(
        "--steps", type=int, default=20, help="points in the --from/--to range (default 20)"
    )
    add_tuning_arguments(parser)
    parser.add_argument("--json", action="store_true", help="JSON Lines, one object per point")


def _values(args: argparse.Namespace) -> list[Any] | None:
    integer = args.param in ("keep_recent", "context_max")
    if args.values:
        try:
            return [int(v) if integer else float(v) for v in args.values.split(",") if v.strip()]
        except ValueError:
            raise UsageError(
                f"--values: {args.values!r} is not a comma-separated list of numbers"
            ) from None
    if args.start is None and args.stop is None:
        return None
    if args.start is None or args.stop is None:
        raise UsageError("--from and --to go together")
    if args.steps < 2:
        raise UsageError("--steps must be at least 2")
    raw = [args.start + (args.stop - args.start) * i / (args.steps - 1) for i in range(args.steps)]
    return sorted({round(v) for v in raw}) if integer else [round(v, 4) for v in raw]


def point_json(
    source: str, ident: str, param: str, point: SweepPoint, flip: bool
) -> dict[str, Any]:
    """One sweep point as a JSON object."""
    ev = point.evaluation
    return {
        "source": source,
        "id": ident,
        "param": param,
        "value": point.value,
        "hit": ev.hit,
        "reason": ev.reason,
        "total_tokens": ev.total_tokens,
        "threshold": ev.threshold,
        "target_tokens": ev.span_target_tokens,
        "min_target_tokens": ev.min_target_value,
        "span": ev.span.counts,
        "flip": flip,
    }


def run(args: argparse.Namespace) -> int:
    """Print a table (Rich) or JSON Lines per context."""
    values = _values(args)
    report = ReportRun(args)
    report.warn_inexact()
    console = Console(highlight=False)
    for artifact in report.artifacts():
        if sweep_hybrid_cli(args, report, artifact, values, console):  # --processor hybrid
            continue
        evaluated = report.evaluate(artifact)
        if evaluated.engine is None or evaluated.tuning is None:
            continue
        try:
            points = sweep(evaluated.engine, evaluated.tuning, args.param, values)
        except ConfigError as error:
            raise UsageError(f"--values: {error}") from None
        flips = set(flip_points(points))
        if report.json:
            for index, point in enumerate(points):
                print_json_line(
                    point_json(artifact.source, artifact.id, args.param, point, index in flips)
                )
            continue
        console.print(
            sweep_table(
                artifact.id, args.param, points, flips, getattr(evaluated.tuning, args.param)
            )
        )
    return report.exit_status


def sweep_table(
    ident: str, param: str, points: list[SweepPoint], flips: set[int], current: Any
) -> Table:
    """The sweep as a table with a bar of the total, flip rows marked ⇅, the current value ◀."""
    table = Table(
        title=f"sweep of {param}",
        caption=ident,
        title_justify="left",
        caption_justify="left",
        header_style="bold",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("value", justify="right", no_wrap=True, min_width=8)
    for name in ("total", "threshold", "target", "minimum"):
        table.add_column(name, justify="right", no_wrap=True, min_width=9)
    table.add_column("verdict", no_wrap=True, min_width=18)
    table.add_column("", no_wrap=True, max_width=10)
    peak = max([max(p.evaluation.total_tokens, p.evaluation.threshold) for p in points] + [1])
    for index, point in enumerate(points):
        ev = point.evaluation
        verdict = Text("compress", style="green") if ev.hit else Text(ev.reason, style="red")
        bar = Text("█" * round(10 * ev.total_tokens / peak), style="cyan")
        label = (
            ("⇅ " if index in flips else "")
            + f"{point.value}"
            + (" ◀" if point.value == current else "")
        )
        table.add_row(
            label,
            f"{ev.total_tokens:,}",
            f"{ev.threshold:,}",
            f"{ev.span_target_tokens:,}",
            f"{ev.min_target_value:,}",
            verdict,
            bar,
        )
    return table
