"""Rich renderables of a HybridCompressor replay: water levels, per-message outcomes, findings, sweeps."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from inspector.core.hybrid import HybridResult, MessageOutcome
from inspector.render.plain import PlainTable
from inspector.render.styles import DEFAULT_PALETTE, STATUS_MARKS, Palette

#: Outcome -> style name; outcomes reuse the region styles (folded, summarized) or plain roles.
OUTCOME_STYLES: dict[str, str] = {
    "kept": "good",
    "truncated": "caution",
    "folded": "region.fold",
    "summarized": "region.summary",
}
_REASON_TEXT: dict[str, str] = {
    "below_threshold": "below the threshold: only level 1 (always on) applies",
    "compressed_at_level_1": "level 1 brought it under the threshold",
    "compressed_at_level_2": "level 2 brought it under the threshold",
    "compressed_at_level_3": "level 3 brought it under the threshold",
    "still_above_threshold": "still above the threshold after the last level",
}


def verdict_text(result: HybridResult, styles: Palette = DEFAULT_PALETTE) -> Text:
    """One line: where the pipeline stopped and why."""
    missed = result.reason == "still_above_threshold"
    style = styles("verdict.miss" if missed else "verdict.hit", "bold")
    return Text.assemble(
        ("HybridCompressor", "bold"),
        "  stopped at level ",
        (str(result.stopped_at), style),
        "  reason ",
        (result.reason, "bold"),
        f"  ({_REASON_TEXT[result.reason]})",
    )


def water_level_table(result: HybridResult, styles: Palette = DEFAULT_PALETTE) -> PlainTable:
    """The estimate after each stage, against the threshold."""
    table = PlainTable(box=None, pad_edge=False, header_style="bold")
    table.add_column("", width=1)
    table.add_column("stage")
    table.add_column("estimated", justify="right")
    table.add_column("vs threshold")
    for check in result.checks():
        if check.key in ("hybrid_estimator", "hybrid_alignment"):
            continue
        mark, style = STATUS_MARKS[check.status], styles(f"status.{check.status}")
        estimated = check.numbers.get("estimated_tokens")
        relation = (
            ""
            if check.status == "skip"
            else ("above " if check.status == "fail" else "under ") + f"{result.threshold:,}"
        )
        table.add_row(
            Text(mark, style=style),
            Text(check.title, style="dim" if check.status == "skip" else ""),
            f"{estimated:,}" if isinstance(estimated, int) else "—",
            relation,
        )
    return table


def _group_rows(outcomes: tuple[MessageOutcome, ...]) -> list[tuple[int, int, MessageOutcome]]:
    """Runs of consecutive messages with the same outcome and protection; cut outputs stand alone."""
    rows: list[tuple[int, int, MessageOutcome]] = []
    for outcome in outcomes:
        if rows:
            start, end, first = rows[-1]
            if (
                not outcome.truncation.cut
                and not first.truncation.cut
                and first.outcome == outcome.outcome
                and first.protected_by == outcome.protected_by
                and end == outcome.index
            ):
                rows[-1] = (start, end + 1, first)
                continue
        rows.append((outcome.index, outcome.index + 1, outcome))
    return rows


def outcome_table(
    result: HybridResult, limit: int = 60, styles: Palette = DEFAULT_PALETTE
) -> PlainTable:
    """Per message (runs grouped): what level 1 cut (branch, characters), what level 2/3 folded, what stayed."""
    table = PlainTable(box=None, pad_edge=False, header_style="bold")
    table.add_column("messages")
    table.add_column("outcome")
    table.add_column("level 1")
    table.add_column("protected by")
    rows = _group_rows(result.outcomes)
    for start, end, first in rows[:limit]:
        where = f"#{start}" if end - start == 1 else f"#{start}..#{end - 1} ({end - start})"
        if end - start == 1:
            where += f" {first.role}"
        cut = (
            f"{first.truncation.branch}: -{first.truncation.chars_removed:,} chars"
            if first.truncation.cut
            else ""
        )
        table.add_row(
            where,
            Text(first.outcome, style=styles(OUTCOME_STYLES[first.outcome])),
            cut,
            (first.protected_by or "").replace("_", " "),
        )
    if len(rows) > limit:
        table.add_row(f"… {len(rows) - limit} more rows", "", "", "")
    return table


def findings_text(result: HybridResult, styles: Palette = DEFAULT_PALETTE) -> Text:
    """The findings, one paragraph each."""
    text = Text()
    for finding in result.findings:
        status = "warning" if finding.severity == "warning" else "info"
        text.append(f"{STATUS_MARKS[status]} ", style=styles(f"severity.{status}"))
        text.append(finding.key, style="bold")
        text.append(f": {finding.sentence}\n")
    return text


def hybrid_report(
    result: HybridResult, title: str | None = None, styles: Palette = DEFAULT_PALETTE
) -> RenderableType:
    """The whole replay: verdict, water levels, outcomes, findings."""
    parts: list[RenderableType] = []
    if title:
        parts.append(Text(title, style="bold underline"))
    parts.append(verdict_text(result, styles))
    parts.append(water_level_table(result, styles))
    parts.append(Text(""))
    parts.append(outcome_table(result, styles=styles))
    if result.findings:
        parts.append(Text(""))
        parts.append(findings_text(result, styles))
    return Group(*parts)
