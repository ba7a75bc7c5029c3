"""Rich renderables of a diagnosis: the three regions, the checks, the findings, the flips."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from inspector.core.artifact import Artifact
from inspector.core.checks import Check, Finding, by_severity
from inspector.core.diagnosis import n
from inspector.core.flip_check import dropped_note
from inspector.core.strategy.base import Decision, Flip, RegionRange
from inspector.core.strategy.fields import fields_of
from inspector.render.plain import PlainTable
from inspector.render.styles import DEFAULT_PALETTE, REGION_LABELS, STATUS_MARKS, Palette


def verdict_text(decision: Decision, styles: Palette = DEFAULT_PALETTE) -> Text:
    """One line: the strategy's verdict word with its reason."""
    style = styles("verdict.hit" if decision.hit else "verdict.miss", "bold")
    return Text.assemble((decision.verdict, style), "  reason ", (decision.reason, "bold"))


def settings_line(decision: Decision) -> Text:
    """The processor and every setting the decision used (what-ifs marked)."""
    parts = [decision.processor]
    for info in fields_of(type(decision.settings)):
        value = getattr(decision.settings, info.name)
        if info.what_if and value == info.default:
            continue
        shown = n(value) if isinstance(value, int) and not isinstance(value, bool) else str(value)
        parts.append(f"{info.name} {shown}" + (" (what-if)" if info.what_if else ""))
    return Text("  ".join(parts), style="dim")


def regions_table(decision: Decision, styles: Palette = DEFAULT_PALETTE) -> PlainTable:
    """Messages and tokens in each region (runs of one region added up)."""
    table = PlainTable(box=None, pad_edge=False, show_header=True, header_style="bold")
    table.add_column("region")
    table.add_column("messages", justify="right")
    table.add_column("indices")
    table.add_column("tokens", justify="right")
    grouped: dict[str, list[RegionRange]] = {}
    for region in decision.regions:
        grouped.setdefault(region.name, []).append(region)
    for name, runs in grouped.items():
        count = sum(r.size for r in runs)
        indices = "—"
        if count:
            first = next(r.start for r in runs if r.size)
            last = max(r.end for r in runs if r.size) - 1
            indices = f"#{first}..#{last}" + (f" in {len(runs)} runs" if len(runs) > 1 else "")
        tokens = _region_tokens(decision, runs)
        table.add_row(
            Text(runs[0].label, style=styles.region(name)),
            n(count),
            indices,
            "" if tokens is None else n(tokens),
        )
    total = len(decision.message_tokens) if decision.message_tokens is not None else None
    covered = sum(r.size for r in decision.regions)
    if total is not None and covered < total:
        table.add_row(
            Text(REGION_LABELS["outside"], style=styles.region("outside")),
            n(total - covered),
            "",
            "",
        )
    return table


def _region_tokens(decision: Decision, runs: Sequence[RegionRange]) -> int | None:
    if all(r.tokens is not None for r in runs):
        return sum(r.tokens or 0 for r in runs)
    if decision.message_tokens is None:
        return None
    return sum(sum(decision.message_tokens[r.start : r.end]) for r in runs)


def messages_table(
    decision: Decision, limit: int = 60, styles: Palette = DEFAULT_PALETTE
) -> PlainTable | None:
    """Per-message labels of the strategy (runs of one label grouped), when it has them."""
    labels = decision.message_labels
    if not labels:
        return None
    table = PlainTable(box=None, pad_edge=False, header_style="bold")
    table.add_column("messages")
    table.add_column("outcome")
    runs: list[tuple[int, int, str]] = []
    for index in range(len(labels)):
        label = labels[index]
        if runs and runs[-1][2] == label and runs[-1][1] == index and not label.startswith("cut"):
            runs[-1] = (runs[-1][0], index + 1, label)
        else:
            runs.append((index, index + 1, label))
    for start, end, label in runs[:limit]:
        where = f"#{start}" if end - start == 1 else f"#{start}..#{end - 1} ({end - start})"
        table.add_row(where, Text(label, style=styles.region(decision.region_of(start))))
    if len(runs) > limit:
        table.add_row(f"… {len(runs) - limit} more rows", "")
    return table


def checks_table(checks: Sequence[Check], styles: Palette = DEFAULT_PALETTE) -> PlainTable:
    """The ordered checks with pass/fail marks and their sentences."""
    table = PlainTable(box=None, show_header=False, pad_edge=False, expand=False)
    table.add_column(width=1)
    table.add_column()
    for check in checks:
        mark, style = STATUS_MARKS[check.status], styles(f"status.{check.status}")
        body = Text.assemble(
            (check.title, "bold" if check.status != "skip" else "dim"),
            "\n",
            (check.sentence, "dim" if check.status == "skip" else ""),
        )
        table.add_row(Text(mark, style=style), body)
    return table


#: The mark and word of each finding severity.
SEVERITY_MARKS: dict[str, tuple[str, str]] = {
    "problem": ("✘", "problem"),
    "warning": ("!", "warning"),
    "info": ("•", "info"),
}


def finding_text(finding: Finding, styles: Palette = DEFAULT_PALETTE) -> Text:
    """One finding: severity word and kind, its sentence and, when known, the fix."""
    severity = finding.severity if finding.severity in SEVERITY_MARKS else "info"
    text = Text.assemble(
        (SEVERITY_MARKS[severity][1], styles(f"severity.{severity}")),
        " ",
        (finding.key, "dim"),
        "  ",
        finding.sentence,
    )
    if finding.fix:
        text.append("\n  fix: ", style="bold")
        text.append(finding.fix)
    return text


def findings_table(
    findings: Sequence[Finding], styles: Palette = DEFAULT_PALETTE
) -> PlainTable | Text:
    """Findings with severity marks, problems first, each with its kind and fix."""
    if not findings:
        return Text("none", style="dim")
    table = PlainTable(box=None, show_header=False, pad_edge=False)
    table.add_column(width=1)
    table.add_column()
    for finding in by_severity(findings):
        severity = finding.severity if finding.severity in SEVERITY_MARKS else "info"
        table.add_row(
            Text(SEVERITY_MARKS[severity][0], style=styles(f"severity.{severity}")),
            finding_text(finding, styles),
        )
    return table


def flips_table(
    flips: Sequence[Flip], styles: Palette = DEFAULT_PALETTE, dropped: int = 0
) -> RenderableType:
    """The smallest single changes that flip the verdict (and how many were left out)."""
    note = dropped_note(dropped)
    if not flips:
        text = "no single change flips the verdict" + (f"; {note}" if note else "")
        return Text(text, style="dim")
    if note:
        return Group(flips_table(flips, styles), Text(note, style="dim"))
    table = PlainTable(box=None, show_header=True, header_style="bold", pad_edge=False)
    table.add_column("change")
    table.add_column("from", justify="right")
    table.add_column("to", justify="right")
    table.add_column("then")
    for flip in flips:
        decision = flip.decision
        then = (
            Text(decision.verdict.lower(), style=styles("verdict.hit"))
            if decision.hit
            else Text(f"not: {decision.reason}", style=styles("verdict.miss"))
        )
        table.add_row(flip.param, str(flip.current), str(flip.value), then)
    return table


def recorded_table(artifact: Artifact) -> PlainTable | None:
    """What the artifact itself says happened (flat scalar fields)."""
    scalars = {
        k: v
        for k, v in artifact.recorded.items()
        if isinstance(v, str | int | float | bool) or v is None
    }
    if not scalars:
        return None
    table = PlainTable(box=None, show_header=False, pad_edge=False)
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
    decision: Decision | None,
    flips: Sequence[Flip] = (),
    styles: Palette = DEFAULT_PALETTE,
    dropped: int = 0,
) -> RenderableType:
    """The whole human `why` report for one artifact (`dropped`: flips left out because
    they would not hold)."""
    title = Text.assemble((artifact.kind, "bold"), "  ", artifact.id)
    parts: list[RenderableType] = []
    if decision is None:
        parts.append(Text("no context available: showing what the source recorded", style="dim"))
    else:
        parts += [verdict_text(decision, styles), settings_line(decision)]
        if not decision.exact_counting and decision.counting_note:
            parts.append(Text(f"⚠ {decision.counting_note}", style=styles("caution")))
        parts += [Text(""), regions_table(decision, styles)]
        outcomes = messages_table(decision, styles=styles)
        if outcomes is not None:
            parts += [Text(""), Text("Messages", style="bold underline"), outcomes]
        parts += [
            Text(""),
            Text("Checks", style="bold underline"),
            checks_table(decision.checks, styles),
        ]
        parts += [
            Text(""),
            Text("Findings", style="bold underline"),
            findings_table(decision.findings, styles),
        ]
        parts += [
            Text(""),
            Text("Smallest change that flips the verdict", style="bold underline"),
            flips_table(flips, styles, dropped),
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
        subtitle=Text(artifact.source),
        subtitle_align="left",
    )
