"""Rich report of `inspector.core.stats.compute_stats` output, for the CLI and the TUI."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from inspector.render.plain import PlainTable
from inspector.render.styles import DEFAULT_PALETTE

_OUTCOME_STYLES = {
    "compressed": "good",
    "not_compressed": "note",
    "silent_end": "caution",
    "failed": "bad",
    "unknown": "dim",
}
_OUTCOMES = ("compressed", "not_compressed", "silent_end", "failed", "unknown")


def _n(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.1%}" if value <= 1 else f"{value:,.1f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _table(*columns: str, left: tuple[int, ...] = (0,)) -> PlainTable:
    table = PlainTable(box=None, pad_edge=False, header_style="bold")
    for index, column in enumerate(columns):
        table.add_column(column, justify="left" if index in left else "right")
    return table


def outcomes_table(stats: Mapping[str, Any]) -> PlainTable:
    """Runs per processor and outcome."""
    by_processor: Mapping[str, Mapping[str, int]] = stats["by_processor"]
    used = [o for o in _OUTCOMES if any(o in c for c in by_processor.values())]
    table = _table("processor", *used, "total")
    for processor, counts in by_processor.items():
        cells = [
            Text(
                _n(counts.get(o, 0)),
                style=DEFAULT_PALETTE(_OUTCOME_STYLES[o] if counts.get(o) else "muted"),
            )
            for o in used
        ]
        table.add_row(processor, *cells, _n(sum(counts.values())))
    return table


def ratio_histogram(stats: Mapping[str, Any], width: int = 30) -> PlainTable:
    """The reduction-ratio buckets as bars."""
    ratio = stats["reduction_ratio"]
    buckets: Mapping[str, int] = ratio["buckets"]
    peak = max(buckets.values(), default=0) or 1
    table = _table("reduction", "dumps", "", left=(0, 2))
    for label, count in buckets.items():
        bar = "█" * max(round(width * count / peak), 1 if count else 0)
        table.add_row(label, _n(count), Text(bar, style=DEFAULT_PALETTE("good")))
    return table


def _compressions(rows: Sequence[Mapping[str, Any]]) -> PlainTable:
    table = _table("dump", "processor", "before", "after", "saved", "ratio")
    for row in rows:
        table.add_row(
            str(row["id"]),
            str(row["processor"]),
            _n(row["tokens_before"]),
            _n(row["tokens_after"]),
            _n(row["reduction"]),
            _n(row["reduction_ratio"]),
        )
    return table


def _counter_table(title: str, counts: Mapping[str, int]) -> PlainTable:
    table = _table(title, "count")
    for key, value in counts.items():
        table.add_row(key, _n(value))
    return table


def findings_counts_table(stats: Mapping[str, Any]) -> PlainTable:
    """Findings by kind, the most serious first, each with its severity."""
    severity_of: Mapping[str, str] = stats.get("finding_severity") or {}
    table = _table("finding", "severity", "count", left=(0, 1))
    for kind, count in (stats.get("findings") or {}).items():
        severity = severity_of.get(kind, "info")
        table.add_row(
            kind, Text(severity, style=DEFAULT_PALETTE(f"severity.{severity}")), _n(count)
        )
    return table


def stats_report(stats: Mapping[str, Any], sources: Sequence[str] = ()) -> RenderableType:
    """The whole statistics report as one panel."""
    ratio = stats["reduction_ratio"]
    kinds = ", ".join(f"{v} {k}" for k, v in sorted(stats["artifacts"].items())) or "nothing"
    summary = Text.assemble(
        ("Loaded ", "bold"),
        kinds,
        ("  unreadable ", "bold"),
        (str(stats["errors"]), DEFAULT_PALETTE("bad" if stats["errors"] else "good")),
        "\n",
        ("Compressions ", "bold"),
        _n(stats["compressions"]),
        ("  tokens saved ", "bold"),
        _n(stats["tokens_saved"]),
        f" ({_n(stats['tokens_before'])} -> {_n(stats['tokens_after'])} context tokens)",
        "\n",
        ("Reduction ratio ", "bold"),
        f"min {_n(ratio['min'])}  median {_n(ratio['median'])}  mean {_n(ratio['mean'])}  max {_n(ratio['max'])}",
    )
    parts: list[RenderableType] = [
        summary,
        Text(""),
        Text("Runs per processor and outcome", style="bold"),
        outcomes_table(stats),
    ]
    if ratio["count"]:
        parts += [
            Text(""),
            Text("Reduction ratio distribution", style="bold"),
            ratio_histogram(stats),
        ]
    if stats["not_compressed"]:
        parts += [Text(""), _counter_table("why not compressed", stats["not_compressed"])]
    retries = stats["retries_by_error_type"]
    if retries:
        table = _table("retries by error type", "reason", "count")
        for error_type, reasons in retries.items():
            for reason, count in reasons.items():
                table.add_row(error_type, reason, _n(count))
        parts += [Text(""), table]
    if stats.get("findings"):
        by_severity = stats.get("findings_by_severity") or {}
        parts += [
            Text(""),
            Text(
                "Findings by kind  "
                + ", ".join(f"{by_severity.get(s, 0)} {s}" for s in ("problem", "warning", "info"))
                + f"; {stats.get('artifacts_with_problems', 0)} artifact(s) with a problem",
                style="bold",
            ),
            findings_counts_table(stats),
        ]
    if stats["biggest"]:
        parts += [
            Text(""),
            Text("Biggest compressions", style="bold"),
            _compressions(stats["biggest"]),
        ]
    if stats["least_effective"]:
        parts += [
            Text(""),
            Text("Least effective compressions", style="bold"),
            _compressions(stats["least_effective"]),
        ]
    title = "stats  " + ", ".join(sources) if sources else "stats"
    return Panel(Group(*parts), title=Text(title), title_align="left")
