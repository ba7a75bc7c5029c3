"""Verdict lines and region summaries shared by the context view and text exports. Pure Rich.

Also the small pure helpers the context view needs: which rows changed region between two
spans, what a search matches, and what a message after compression is.
"""

from __future__ import annotations

import io

from rich.console import Console, RenderableType
from rich.text import Text

from inspector.core.engine import Evaluation, PricedContext, Span
from inspector.core.messages import Message
from inspector.render.styles import REGION_LABELS, REGION_STYLES


def span_changes(old: Span | None, new: Span, count: int) -> list[range]:
    """Index ranges whose region differs between two spans (O(1) in the message count)."""
    if old is None:
        return []
    cuts = {0, count}
    for span in (old, new):
        for start, end in (span.prefix, span.compress, span.tail):
            cuts.update((min(start, count), min(end, count)))
    edges = sorted(cuts)
    return [
        range(a, b)
        for a, b in zip(edges, edges[1:], strict=False)
        if b > a and old.region_of(a) != new.region_of(a)
    ]


def verdict_line(evaluation: Evaluation, recorded: Evaluation | None = None) -> Text:
    """COMPRESSES / DOES NOT COMPRESS with the reason and the numbers that decided it."""
    text = Text()
    if evaluation.hit:
        text.append(" COMPRESSES ", "bold white on green")
    else:
        text.append(" DOES NOT COMPRESS ", "bold white on red")
    text.append(f" {evaluation.reason}  ", "bold")
    relation = "≥" if evaluation.total_tokens >= evaluation.threshold else "<"
    text.append(f"total {evaluation.total_tokens:,} {relation} threshold {evaluation.threshold:,}")
    if evaluation.reason in ("target_below_min", "reached_threshold"):
        target = evaluation.span_target_tokens
        relation = "≥" if target >= evaluation.min_target_value else "<"
        text.append(f"  target {target:,} {relation} min {evaluation.min_target_value:,}")
    if evaluation.reason == "no_compressible_span":
        text.append("  (nothing left between kept prefix and kept tail)", "italic")
    if recorded is not None and (recorded.hit, recorded.reason) != (
        evaluation.hit,
        evaluation.reason,
    ):
        text.append("  (recorded tuning: ", "dim")
        text.append(recorded.reason, "green" if recorded.hit else "red")
        text.append(")", "dim")
    return text


def render_to_text(renderable: RenderableType, width: int = 100) -> str:
    """Plain text of a Rich renderable (for the clipboard)."""
    console = Console(file=io.StringIO(), width=width, color_system=None, record=True)
    console.print(renderable)
    return console.export_text()


def verdict_word(evaluation: Evaluation) -> Text:
    """Green "compresses", or the reason in red."""
    return Text("compresses", "green") if evaluation.hit else Text(evaluation.reason, "red")


def search_text(message: Message) -> str:
    """Lower-case text a search matches: content, tool calls and the call id."""
    parts = [message.content if isinstance(message.content, str) else str(message.content)]
    parts += [f"{c.name} {c.arguments}" for c in message.tool_calls]
    if message.tool_call_id:
        parts.append(message.tool_call_id)
    return " ".join(parts).lower()


def after_role(message: Message) -> str:
    """What a message of a context after compression is: memory block, recovered files or kept."""
    text = message.content.lstrip() if isinstance(message.content, str) else ""
    if text.startswith("<memory_block"):
        return "After compression: the memory block holding the summary."
    if text.startswith("<recovered_context>"):
        return "After compression: files re-injected from the compressed span (recovered context)."
    return "After compression: kept as it was."


def regions_lines(evaluation: Evaluation, priced: PricedContext) -> Text:
    """The three regions, one per line: messages, index range, tokens (narrow-friendly)."""
    text = Text()
    for name, (start, end) in (
        ("prefix", evaluation.span.prefix),
        ("compress", evaluation.span.compress),
        ("tail", evaluation.span.tail),
    ):
        if text:
            text.append("\n")
        text.append("■ ", REGION_STYLES[name])
        text.append(f"{REGION_LABELS[name]}: ", "bold")
        where = f" #{start}–#{end - 1}" if end > start else ""
        text.append(f"{end - start} msgs{where}, {priced.count_range(start, end):,} tokens")
    return text
