"""Rich renderables of a diagnosis: the three regions, the checks, the findings, the flips."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from inspector.core.artifact import Artifact
from inspector.core.diagnosis import Diagnosis, n
from inspector.core.engine import PricedContext
from inspector.core.whatif import Flip
from inspector.render.styles import REGION_LABELS, REGION_STYLES, STATUS_MARKS


def verdict_text(diagnosis: Diagnosis) -> Text:
    """One line: COMPRESSES or DOES NOT COMPRESS with openJiuwen's reason word."""
    ev = diagnosis.evaluation
    if ev.hit:
        return Text.assemble(("COMPRESSES", "bold green"), "  reason ", (ev.reason, "bold"))
    return Text.assemble(("DOES NOT COMPRESS", "bold red"), "  reason ", (ev.reason, "bold"))


def regions_table(diagnosis: Diagnosis, priced: PricedContext) -> Table:
    """Messages and tokens in each region."""
    table = Table(box=None, pad_edge=False, show_header=True, header_style="bold")
    table.add_column("region")
    table.add_column("messages", justify="right")
    table.add_column("indices")
    table.add_column("tokens", justify="right")
    span = diagnosis.evaluation.span
    for name, (start, end) in (
        ("prefix", span.prefix),
        ("compress", span.compress),
        ("tail", span.tail),
    ):
        count = end - start
        indices = f"#{start}..#{end - 1}" if count else "—"
        table.add_row(
            Text(REGION_LABELS[name], style=REGION_STYLES[name]),
            n(count),
            indices,
            n(priced.count_range(start, end)),
        )
    covered = sum(end - start for start, end in (span.prefix, span.compress, span.tail))
    if covered < priced.n:
        table.add_row(
            Text(REGION_LABELS["outside"], style=REGION_STYLES["outside"]),
            n(priced.n - covered),
            "",
            "",
        )
    return table


def checks_table(diagnosis: Diagnosis) -> Table:
    """The ordered checks with pass/fail marks and their sentences."""
    table = Table(box=None, show_header=False, pad_edge=False, expand=False)
    table.add_column(width=1)
    table.add_column()
    for check in diagnosis.checks:
        mark, style = STATUS_MARKS[check.status]
        body = Text.assemble(
            (check.title, "bold" if check.status != "skip" else "dim"),
            "\n",
            (check.sentence, "dim" if check.status == "skip" else ""),
        )
        table.add_row(Text(mark, style=style), body)
    return table


def findings_table(diagnosis: Diagnosis) -> Table | Text:
    """Findings with severity marks."""
    if not diagnosis.findings:
        return Text("none", style="dim")
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(width=1)
    table.add_column()
    for finding in diagnosis.findings:
        mark, style = STATUS_MARKS["warning" if finding.severity == "warning" else "info"]
        table.add_row(Text(mark, style=style), Text(finding.sentence))
    return table


def flips_table(flips: Sequence[Flip]) -> Table | Text:
    """The smallest single changes that flip the verdict."""
    if not flips:
        return Text("no single change flips the verdict", style="dim")
    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    table.add_column("change")
    table.add_column("from", justify="right")
    table.add_column("to", justify="right")
    table.add_column("then")
    for flip in flips:
        ev = flip.evaluation
        then = (
            Text("compresses", style="green") if ev.hit else Text(f"not: {ev.reason}", style="red")
        )
        table.add_row(flip.param, str(flip.current), str(flip.value), then)
    return table


def recorded_table(artifact: Artifact) -> Table | None:
    """What the artifact itself says happened (flat scalar fields)."""
    scalars = {
        k: v
        for k, v in artifact.recorded.items()
        if isinstance(v, str | int | float | bool) or v is None
    }
    if not scalars:
        return None
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    for key, value in scalars.items():
        table.add_row(
            key,
            f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value),
        )
    return table


def _retry_line(retry: Mapping[str, Any]) -> str:
    reason = str(retry.get("reason") or "")
    if retry.get("budget_ratio") is not None:
        reason += f" {retry['budget_ratio']}"
    if retry.get("delay_seconds") is not None:
        reason += f" after {retry['delay_seconds']} s"
    return f"attempt {retry.get('attempt')}: {retry.get('error_type')} -> {reason}"


def recorded_details(artifact: Artifact) -> list[RenderableType]:
    """Retries, silent causes, what a dump cannot give back, and inferred tuning, as lines."""
    recorded = artifact.recorded
    parts: list[RenderableType] = []
    retries = [r for r in recorded.get("retries") or () if isinstance(r, Mapping)]
    if retries:
        parts.append(Text("retries: " + "; ".join(_retry_line(r) for r in retries)))
    for key, label in (
        ("silent_causes", "known silent causes"),
        ("unrecoverable", "cannot be recovered"),
    ):
        items = [str(item) for item in recorded.get(key) or ()]
        if items:
            parts.append(Text(f"{label}:", style="bold"))
            parts.extend(Text(f"  • {item}") for item in items)
    inferred = recorded.get("inferred")
    if isinstance(inferred, Mapping) and inferred:
        lines = [
            f"{name} {value.get('value')} (from {value.get('from')})"
            for name, value in inferred.items()
            if isinstance(value, Mapping)
        ]
        parts.append(Text("inferred: " + "; ".join(lines), style="dim"))
    return parts


def why_report(
    artifact: Artifact,
    diagnosis: Diagnosis | None,
    priced: PricedContext | None,
    flips: Sequence[Flip] = (),
) -> RenderableType:
    """The whole human `why` report for one artifact."""
    title = Text.assemble((artifact.kind, "bold"), "  ", artifact.id)
    parts: list[RenderableType] = []
    if diagnosis is None or priced is None:
        parts.append(Text("no context available: showing what the source recorded", style="dim"))
    else:
        tuning = diagnosis.evaluation.tuning
        parts.append(verdict_text(diagnosis))
        parts.append(
            Text(
                f"{tuning.processor_class}  trigger {tuning.trigger_ratio}  min-target {tuning.min_target_ratio}"
                + (
                    f"  keep {tuning.keep_recent}"
                    if tuning.processor in ("current_round", "round_level")
                    else ""
                )
                + f"  context_max {n(tuning.context_max)}  tokens {tuning.token_mode}"
                + ("" if tuning.tool_boundary else "  tool-boundary OFF (what-if)"),
                style="dim",
            )
        )
        parts += [
            Text(""),
            regions_table(diagnosis, priced),
            Text(""),
            Text("Checks", style="bold underline"),
            checks_table(diagnosis),
        ]
        parts += [Text(""), Text("Findings", style="bold underline"), findings_table(diagnosis)]
        parts += [
            Text(""),
            Text("Smallest change that flips the verdict", style="bold underline"),
            flips_table(flips),
        ]
    recorded = recorded_table(artifact)
    details = recorded_details(artifact)
    if recorded is not None or details:
        parts += [Text(""), Text("Recorded by the source", style="bold underline")]
        parts += ([recorded] if recorded is not None else []) + details
    return Panel(
        Group(*parts),
        title=title,
        title_align="left",
        subtitle=artifact.source,
        subtitle_align="left",
    )
