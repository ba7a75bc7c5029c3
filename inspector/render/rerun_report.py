"""Rich renderables of a compaction re-run: timeline, before/after, outcome, losses, findings.

Shared by `inspector rerun` and the TUI's before/after view. Reads `RerunResult` only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from inspector.core.redact import shown_text
from inspector.core.rerun import Attempt, RerunResult, explain_outcome
from inspector.core.summary_loss import LostItem
from inspector.render.plain import PlainTable
from inspector.render.styles import DEFAULT_PALETTE, REGION_LABELS, STATUS_MARKS, Palette

_OUTCOME_STYLE = {
    "applied": ("COMPRESSED", "verdict.hit"),
    "no_benefit": ("NO BENEFIT - openJiuwen would drop it", "caution"),
    "empty_summary": ("NO SUMMARY - openJiuwen would skip it", "caution"),
    "failed": ("MODEL CALL FAILED", "verdict.miss"),
}
_SEVERITY_MARK = {"info": "info", "warning": "warning", "error": "fail"}
#: A re-run finding's severity -> its style name.
SEVERITY_STYLES = {
    "info": "severity.info",
    "warning": "severity.warning",
    "error": "severity.problem",
}


def _span_text(attempt: Attempt) -> str:
    c = attempt.span.counts
    return f"{c['preserved_prefix']}/{c['messages_to_compress']}/{c['protected_tail']}"


def timeline_table(attempts: Sequence[Attempt], styles: Palette = DEFAULT_PALETTE) -> PlainTable:
    """One row per HTTP call: span sent, status, both classifications, what happened next."""
    table = PlainTable(
        title="attempts", title_justify="left", box=None, header_style="bold", pad_edge=False
    )
    for name, justify in (
        ("#", "right"),
        ("span p/c/t", "left"),
        ("sent", "right"),
        ("HTTP", "right"),
        ("openJiuwen reads", "left"),
        ("by status", "left"),
        ("then", "left"),
        ("time", "right"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for attempt in attempts:
        status = (
            str(attempt.status_code)
            if attempt.status_code is not None
            else (
                attempt.failure.transport if attempt.failure and attempt.failure.transport else "-"
            )
        )
        if attempt.action == "accepted":
            then = Text("reply accepted", style=styles("good"))
        elif attempt.action == "shrink":
            then = Text(f"shrink (budget {attempt.budget_ratio})", style=styles("caution"))
        elif attempt.action == "backoff":
            then = Text(f"wait {attempt.delay_s:.2f} s, retry", style=styles("caution"))
        else:
            then = Text("give up", style=styles("bad"))
        ojw = attempt.openjiuwen_kind or ""
        by_status = Text(
            attempt.status_kind or "", style=styles("error") if attempt.misclassified else ""
        )
        table.add_row(
            str(attempt.number),
            _span_text(attempt),
            str(attempt.request_messages),
            status,
            ojw,
            by_status,
            then,
            f"{attempt.duration_s * 1000:.0f} ms",
        )
    return table


def before_after_table(result: RerunResult, styles: Palette = DEFAULT_PALETTE) -> PlainTable:
    """The old context's regions beside what each becomes in the new context, with tokens."""
    c = result.compaction
    assert c is not None
    counts = result.final_span.counts
    table = PlainTable(
        title="before -> after", title_justify="left", box=None, header_style="bold", pad_edge=False
    )
    table.add_column("before")
    table.add_column("messages", justify="right")
    table.add_column("tokens", justify="right")
    table.add_column("")
    table.add_column("after")
    table.add_column("tokens", justify="right")

    def label(region: str) -> Text:
        return Text(REGION_LABELS[region], style=styles.region(region))

    table.add_row(
        label("prefix"),
        str(counts["preserved_prefix"]),
        str(c.prefix_tokens),
        "=",
        "kept as is",
        str(c.prefix_tokens),
    )
    table.add_row(
        label("compress"),
        str(counts["messages_to_compress"]),
        str(c.target_tokens),
        "->",
        Text(f"memory block <{result.wrapper.tag}>", style=styles("region.summary")),
        str(c.memory_tokens),
    )
    if c.recovered_message is not None:
        files = ", ".join(Path(p).name for p in c.reinjection.files) or ", ".join(
            c.reinjection.sections
        )
        table.add_row(
            "",
            "",
            "",
            "+",
            Text(f"<recovered_context> {files}", style=styles("caution")),
            str(c.recovered_tokens),
        )
    table.add_row(
        label("tail"),
        str(counts["protected_tail"]),
        str(c.tail_tokens),
        "=",
        "kept as is",
        str(c.tail_tokens),
    )
    table.add_row(
        Text("whole context", style="bold"),
        str(len(result.snapshot.messages)),
        Text(str(c.tokens_before), style="bold"),
        "->",
        Text(f"{len(c.new_messages)} messages", style="bold"),
        Text(str(c.tokens_after), style=styles("good" if c.beneficial else "bad", "bold")),
    )
    return table


def losses_table(losses: Sequence[LostItem], limit: int = 8) -> PlainTable:
    """What the summary lost, a few per kind."""
    table = PlainTable(
        title="what the summary lost",
        title_justify="left",
        box=None,
        header_style="bold",
        pad_edge=False,
    )
    table.add_column("kind")
    table.add_column("msg", justify="right")
    table.add_column("text")
    for kind in ("path", "identifier", "error"):
        items = [i for i in losses if i.kind == kind and not i.restored]
        restored = sum(1 for i in losses if i.kind == kind and i.restored)
        for item in items[:limit]:
            table.add_row(kind, f"#{item.message_index}", shown_text(item.text))
        if len(items) > limit:
            table.add_row(kind, "", Text(f"... and {len(items) - limit} more", style="dim"))
        if restored:
            table.add_row(
                kind, "", Text(f"+ {restored} put back by <recovered_context>", style="dim")
            )
    return table


def _summary_excerpt(summary: str, lines: int = 14) -> Text:
    body = summary.splitlines()
    shown = "\n".join(body[:lines])
    if len(body) > lines:
        shown += f"\n... ({len(body) - lines} more lines)"
    return Text(shown_text(shown))


def rerun_report(
    result: RerunResult,
    *,
    source: str | None = None,
    endpoint: str | None = None,
    written: Mapping[str, Any] | None = None,
    recorded: Mapping[str, Any] | None = None,
    styles: Palette = DEFAULT_PALETTE,
) -> RenderableType:
    """The whole report of one re-run."""
    parts: list[RenderableType] = []
    tuning = result.tuning
    head = Text.assemble(
        ("Re-run ", "bold"),
        (result.identity.processor_type, styles("name")),
        f" on {source or result.snapshot.id}",
        f" with model {result.model}" + (f" at {endpoint}" if endpoint else ""),
    )
    parts.append(head)
    parts.append(
        Text(
            f"context_max {tuning.context_max}, tokens {tuning.token_mode}, keep_recent {tuning.keep_recent}, "
            f"prompt: {result.prompt_source}, tools {'offered' if result.include_tools else 'left out'}, "
            f"retry policy: {result.policy}",
            style="dim",
        )
    )
    parts.append(timeline_table(result.attempts, styles))
    word, style = _OUTCOME_STYLE[result.outcome]
    parts.append(Text.assemble((word, styles(style, "bold")), "  ", explain_outcome(result)))
    if recorded:
        before, after = recorded.get("tokens_before"), recorded.get("tokens_after")
        if before is not None:
            parts.append(Text(f"recorded by openJiuwen: {before} -> {after} tokens", style="dim"))
    if result.compaction is not None:
        parts.append(before_after_table(result, styles))
        parts.append(
            Panel(_summary_excerpt(result.compaction.summary), title="summary", title_align="left")
        )
    if result.losses:
        parts.append(losses_table(result.losses))
    if result.findings:
        table = PlainTable(
            title="findings", title_justify="left", box=None, show_header=False, pad_edge=False
        )
        table.add_column("")
        table.add_column("")
        for finding in result.findings:
            mark = STATUS_MARKS[_SEVERITY_MARK[finding.severity]]
            table.add_row(
                Text(mark, style=styles(SEVERITY_STYLES[finding.severity])), Text(finding.message)
            )
        parts.append(table)
    if written:
        if written.get("dump"):
            parts.append(Text(f"dump written: {written['dump']}", style=styles("good")))
        else:
            parts.append(
                Text(
                    "no dump written (openJiuwen writes one only for an applied compression)",
                    style="dim",
                )
            )
        if written.get("debug_log"):
            parts.append(Text(f"debug records appended to: {written['debug_log']}", style="dim"))
    return Group(*parts)
