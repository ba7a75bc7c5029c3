"""`inspector sweep SOURCE --param NAME [--json]`: the verdict across a range of one parameter."""

from __future__ import annotations

import argparse
from typing import Any

from rich import box
from rich.text import Text

from inspector.cli.common import UsageError, add_tuning_arguments, print_json_line
from inspector.cli.run_support import ReportRun
from inspector.core.errors import ConfigError
from inspector.core.strategy import registry
from inspector.core.strategy.base import Strategy, SweepPoint, flip_indices
from inspector.core.strategy.fields import FieldInfo, field_named
from inspector.core.strategy.report import sweep_point_json
from inspector.render.plain import PlainTable, TerminalSafeConsole


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Sources, --param, an optional range, tuning flags and --json."""
    parser.description = "Sweep one parameter and show where the verdict flips."
    parser.add_argument("sources", nargs="*", metavar="SOURCE")
    parser.add_argument(
        "--param",
        required=True,
        metavar="NAME",
        help="setting to sweep, by its name or flag (trigger_ratio, keep_recent, context_max, "
        "min_target_ratio, or any numeric setting of the processor)",
    )
    parser.add_argument("--values", help="comma-separated values (default: a sensible range)")
    parser.add_argument("--from", dest="start", type=float, help="first value of an even range")
    parser.add_argument("--to", dest="stop", type=float, help="last value of an even range")
    parser.add_argument(
        "--steps", type=int, default=20, help="points in the --from/--to range (default 20)"
    )
    add_tuning_arguments(parser)
    parser.add_argument("--json", action="store_true", help="JSON Lines, one object per point")


def _values(args: argparse.Namespace, integer: bool) -> list[Any] | None:
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


def _integer_param(name: str) -> bool:
    """Whether any strategy's field of this name is an integer (values are read before loading)."""
    for strategy in registry.all_strategies():
        try:
            if field_named(strategy.settings_model, name).kind == "int":
                return True
        except ConfigError:
            continue
    return False


def _param(strategy: Strategy, name: str) -> FieldInfo:
    """The swept field of this strategy, or a usage error listing what can be swept."""
    try:
        info = field_named(strategy.settings_model, name)
    except ConfigError:
        info = None
    if info is None or info.name not in strategy.sweep_params():
        raise UsageError(
            f"--param {name} does not apply to {strategy.key}; use one of "
            + ", ".join(strategy.sweep_params())
        )
    return info


def run(args: argparse.Namespace) -> int:
    """Print a table (Rich) or JSON Lines per context."""
    values = _values(args, _integer_param(args.param))
    report = ReportRun(args)
    report.warn_inexact()
    console = TerminalSafeConsole(highlight=False)
    for artifact in report.artifacts():
        selection = report.select(artifact)
        if selection is None or artifact.snapshot is None:
            continue
        strategy, settings = selection.strategy, selection.settings
        info = _param(strategy, args.param)
        if values is not None and info.kind == "int":
            values = [int(v) for v in values]
        prepared = strategy.prepare(artifact.snapshot, report.counters, report.counting_note)
        try:
            points = list(strategy.sweep(prepared, settings, info.name, values))
        except ConfigError as error:
            raise UsageError(f"--values: {error}") from None
        flips = set(flip_indices(points))
        if report.json:
            for index, point in enumerate(points):
                print_json_line(sweep_point_json(artifact, args.param, point, index in flips))
            continue
        current = getattr(settings, info.name)
        console.print(sweep_table(artifact.id, args.param, points, flips, current))
    return report.exit_status


def sweep_table(
    ident: str, param: str, points: list[SweepPoint], flips: set[int], current: Any
) -> PlainTable:
    """The sweep as a table with a bar of the total, flip rows marked ⇅, the current value ◀."""
    table = PlainTable(
        title=Text(f"sweep of {param}"),
        caption=Text(ident),
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
    peak = max([max(p.decision.total_tokens or 0, p.decision.threshold or 0) for p in points] + [1])
    for index, point in enumerate(points):
        ev = point.decision
        verdict = Text("compress", style="green") if ev.hit else Text(ev.reason, style="red")
        bar = Text("█" * round(10 * (ev.total_tokens or 0) / peak), style="cyan")
        label = (
            ("⇅ " if index in flips else "")
            + f"{point.value}"
            + (" ◀" if point.value == current else "")
        )
        table.add_row(
            label,
            _num(ev.total_tokens),
            _num(ev.threshold),
            _num(ev.numbers.get("span_target_tokens", ev.target_tokens)),
            _num(ev.numbers.get("min_target_value", ev.min_target_tokens)),
            verdict,
            bar,
        )
    return table


def _num(value: Any) -> str:
    return "—" if value is None else f"{value:,}"
