"""Rich renderable of a strategy comparison: one column per strategy, then what each loses."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from inspector.core.compare import Comparison, StrategyOutcome
from inspector.core.redact import escape_controls, shown_name
from inspector.render.plain import PlainTable
from inspector.render.styles import DEFAULT_PALETTE, Palette

_SOURCE_TEXT = {"estimate": "estimate", "dump": "dump (real)", "replay": "replay"}


def _n(value: int) -> str:
    return f"{value:,}"


def _lost(outcome: StrategyOutcome, kind: str, before: int, styles: Palette) -> Text:
    count = outcome.losses.counts[kind]
    text = Text(f"{count} of {before}", style=styles("bad" if count else "good"))
    if count and outcome.losses_at_risk:
        text.append(" *", style=styles("caution"))
    return text


def comparison_table(comparison: Comparison, styles: Palette = DEFAULT_PALETTE) -> PlainTable:
    """Metrics down, strategies across."""
    table = PlainTable(header_style="bold", show_lines=False)
    table.add_column("")
    for outcome in comparison.outcomes:
        table.add_column(outcome.label, justify="right")
    facts = comparison.facts_before
    rows: list[tuple[str, list[Text | str]]] = [
        ("after from", [_SOURCE_TEXT[o.after_source] for o in comparison.outcomes]),
        ("decision", [o.reason for o in comparison.outcomes]),
        (
            "tokens after",
            [f"{_n(o.tokens_after)} (-{o.reduction:.0%})" for o in comparison.outcomes],
        ),
        ("messages after", [_n(o.messages_after) for o in comparison.outcomes]),
        ("kept verbatim", [_n(o.kept_verbatim) for o in comparison.outcomes]),
        ("cut (level 1)", [_n(o.truncated) for o in comparison.outcomes]),
        ("folded / summarised", [_n(o.removed) for o in comparison.outcomes]),
        ("new messages", [_n(o.added) for o in comparison.outcomes]),
        ("LLM calls", [_n(o.llm_calls) for o in comparison.outcomes]),
        (
            "tool pairs kept/folded/split",
            [
                Text(
                    f"{o.pairs.kept}/{o.pairs.folded}/{o.pairs.split}",
                    style=styles("bad") if o.pairs.split else "",
                )
                for o in comparison.outcomes
            ],
        ),
        (
            "lost file paths",
            [_lost(o, "file_paths", facts["file_paths"], styles) for o in comparison.outcomes],
        ),
        (
            "lost identifiers",
            [_lost(o, "identifiers", facts["identifiers"], styles) for o in comparison.outcomes],
        ),
        (
            "lost error messages",
            [
                _lost(o, "error_messages", facts["error_messages"], styles)
                for o in comparison.outcomes
            ],
        ),
    ]
    for label, cells in rows:
        table.add_row(label, *cells)
    return table


def losses_text(comparison: Comparison, sample: int = 4, styles: Palette = DEFAULT_PALETTE) -> Text:
    """Per strategy: a few of the lost items of each kind, and the notes."""
    text = Text()
    for outcome in comparison.outcomes:
        text.append(f"{outcome.label}", style="bold")
        if outcome.losses_at_risk:
            text.append(
                "  (losses at risk: an LLM summary, unknown here, may keep some)",
                style=styles("caution"),
            )
        text.append("\n")
        for kind, items in (
            ("paths", outcome.losses.file_paths),
            ("identifiers", outcome.losses.identifiers),
            ("errors", outcome.losses.error_messages),
        ):
            if not items:
                continue
            shown = escape_controls("; ".join(items[:sample]))
            more = f" (+{len(items) - sample} more)" if len(items) > sample else ""
            text.append(f"  lost {kind}: ", style="dim")
            text.append(f"{shown}{more}\n")
        for note in outcome.notes:
            text.append(f"  · {escape_controls(note)}\n", style="dim")
        if outcome.pairs.split:
            text.append(
                f"  split tool-call pairs: {', '.join(outcome.pairs.split_ids)}\n",
                style=styles("bad"),
            )
        for finding in outcome.findings:
            if finding.severity in ("warning", "problem"):
                text.append(f"  ! {finding.key}: ", style=styles("severity.warning"))
                text.append(f"{escape_controls(finding.sentence)}\n")
    return text


def compare_report(
    comparison: Comparison, source: str | None = None, styles: Palette = DEFAULT_PALETTE
) -> RenderableType:
    """Title, the side-by-side table, the losses, and how the numbers were made."""
    head = Text.assemble(
        ("Compare ", "bold"),
        (shown_name(comparison.snapshot_id), styles("name")),
        f"  {comparison.messages_before} messages, {_n(comparison.tokens_before)} tokens before",
    )
    if source:
        head.append(f"\n{shown_name(source)}", style="dim")
    exact = "exact" if comparison.counter_exact else "len//4 fallback, not exact"
    footer = Text(
        f"Tokens: context messages only (system prompt and tools are the same under every strategy), "
        f"counted with {comparison.counter_mode} ({exact}). * at risk: the strategy replaces them with "
        "an LLM summary that is unknown without running it.",
        style="dim",
    )
    return Group(
        head,
        comparison_table(comparison, styles),
        losses_text(comparison, styles=styles),
        footer,
    )
