"""Rich views of one re-run for the TUI's re-run screen: the context before and after, tokens,
what the summary lost, and the findings.

Pure Rich renderables of a `RerunResult` (regions drawn with the one style mapping in
`render.styles`); the screen only places them. Never Textual, never sources or llm.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.style import Style
from rich.text import Text

from inspector.core.messages import Message
from inspector.core.redact import shown_name, shown_text
from inspector.core.rerun import RerunResult, explain_outcome
from inspector.render.plain import PlainTable
from inspector.render.rerun_report import SEVERITY_STYLES, losses_table, timeline_table
from inspector.render.styles import DEFAULT_PALETTE, REGION_LABELS, STATUS_MARKS, Palette

_SEVERITY_MARK = {"info": "info", "warning": "warning", "error": "fail"}
_PREVIEW_CHARS = 110


def _message_line(index: int, message: Message, style: Style | str) -> Text:
    preview = message.text_preview(_PREVIEW_CHARS).replace("\n", " ")
    if message.tool_calls and not message.text_preview(1):
        preview = ", ".join(call.name for call in message.tool_calls)
    preview = shown_name(preview)
    line = Text("  ", no_wrap=True, overflow="ellipsis")
    line.append(f"#{index:<4}", style="dim")
    line.append(f"{message.role:<10}", style=style)
    line.append(preview)
    return line


def _region_head(region: str, detail: str, styles: Palette) -> Text:
    return Text.assemble((REGION_LABELS[region], styles.region(region)), f"  {detail}")


def _tokens(value: int | None) -> str:
    return "" if value is None else f" · {value} tokens"


def before_renderable(result: RerunResult, styles: Palette = DEFAULT_PALETTE) -> RenderableType:
    """The old context by region; the messages to compress are the ones folded into the summary."""
    span = result.final_span
    c = result.compaction
    messages = result.snapshot.messages
    lines: list[Text] = []
    regions = (
        ("prefix", span.prefix, c.prefix_tokens if c else None, "kept as is"),
        (
            "compress",
            span.compress,
            c.target_tokens if c else None,
            "folded into the summary" if c else "sent to the model to summarise",
        ),
        ("tail", span.tail, c.tail_tokens if c else None, "kept as is"),
    )
    for region, (start, end), tokens, fate in regions:
        head = f"{end - start} messages{_tokens(tokens)} · {fate}"
        lines.append(_region_head(region, head, styles))
        for index in range(start, end):
            lines.append(_message_line(index, messages[index], styles.region(region)))
        lines.append(Text())
    outside = [i for i in range(len(messages)) if span.region_of(i) == "outside"]
    if outside:
        lines.append(_region_head("outside", f"{len(outside)} messages", styles))
        lines.extend(_message_line(i, messages[i], "dim") for i in outside)
    total = c.tokens_before if c else None
    lines.append(Text(f"whole context: {len(messages)} messages{_tokens(total)}", style="bold"))
    return Group(*lines)


def after_renderable(result: RerunResult, styles: Palette = DEFAULT_PALETTE) -> RenderableType:
    """The new context: kept prefix, memory block, re-injected files, kept tail."""
    c = result.compaction
    if c is None:
        return Text.assemble(("no new context\n\n", "bold"), explain_outcome(result))
    span = result.final_span
    messages = result.snapshot.messages
    lines: list[RenderableType] = []
    lines.append(
        _region_head(
            "prefix",
            f"{span.prefix[1] - span.prefix[0]} messages{_tokens(c.prefix_tokens)} · kept",
            styles,
        )
    )
    lines.extend(
        _message_line(i, messages[i], styles.region("prefix")) for i in range(*span.prefix)
    )
    lines.append(Text())
    lines.append(
        Text.assemble(
            (f"memory block <{result.wrapper.tag}>", styles("region.summary")),
            f"  1 message{_tokens(c.memory_tokens)} · replaces "
            f"{span.compress[1] - span.compress[0]} messages",
        )
    )
    memory = c.memory_message.content
    lines.append(
        Panel(
            Text(shown_text(memory if isinstance(memory, str) else str(memory))),
            border_style=styles("region.summary"),
            padding=(0, 1),
        )
    )
    if c.recovered_message is not None:
        files = c.reinjection.files
        lines.append(
            Text.assemble(
                ("re-injected <recovered_context>", styles("caution", "bold")),
                f"  {len(files)} file(s){_tokens(c.recovered_tokens)}",
                f" · sections: {', '.join(c.reinjection.sections)}"
                if c.reinjection.sections
                else "",
            )
        )
        lines.extend(Text(f"  {path}", style=styles("caution")) for path in files)
    else:
        lines.append(
            Text(
                "no files re-injected (nothing read in the compressed region qualified)",
                style="dim",
            )
        )
    lines.append(Text())
    lines.append(
        _region_head(
            "tail", f"{span.tail[1] - span.tail[0]} messages{_tokens(c.tail_tokens)} · kept", styles
        )
    )
    lines.extend(_message_line(i, messages[i], styles.region("tail")) for i in range(*span.tail))
    lines.append(Text())
    lines.append(
        Text(
            f"whole context: {len(c.new_messages)} messages · {c.tokens_after} tokens",
            style=styles("good" if c.beneficial else "bad", "bold"),
        )
    )
    return Group(*lines)


def tokens_line(result: RerunResult, styles: Palette = DEFAULT_PALETTE) -> Text:
    """Tokens and messages before -> after, and what is saved."""
    c = result.compaction
    if c is None:
        return Text("no new context: nothing saved", style="dim")
    line = Text.assemble(
        ("tokens ", "bold"),
        (f"{c.tokens_before} -> {c.tokens_after}", "bold"),
        "   ",
    )
    if c.beneficial:
        line.append(f"saves {c.reduction} ({c.reduction_ratio:.1%})", style=styles("good", "bold"))
    else:
        line.append(
            f"no saving ({c.tokens_after - c.tokens_before:+d})", style=styles("bad", "bold")
        )
    line.append(f"   messages {len(result.snapshot.messages)} -> {len(c.new_messages)}")
    if c.recovered_message is not None:
        line.append(f"   re-injected files {c.recovered_tokens} tokens", style=styles("caution"))
    return line


def lost_renderable(result: RerunResult, styles: Palette = DEFAULT_PALETTE) -> RenderableType:
    """What the summary lost, and the summary itself to check against."""
    parts: list[RenderableType] = []
    lost = [item for item in result.losses if not item.restored]
    if result.compaction is None:
        parts.append(Text("No summary came back, so there is nothing to compare.", style="dim"))
        return Group(*parts)
    if lost:
        parts.append(
            Text(
                f"{len(lost)} file path(s), identifier(s) or error(s) of the compressed region are not "
                "mentioned in the summary (heuristic: text search).",
            )
        )
        parts.append(losses_table(result.losses, limit=40))
    else:
        parts.append(
            Text(
                "The summary mentions every file path, identifier and error found in the compressed "
                "region (heuristic: text search).",
                style=styles("good"),
            )
        )
    parts.append(Text())
    parts.append(
        Panel(Text(shown_text(result.compaction.summary)), title="summary", title_align="left")
    )
    return Group(*parts)


def findings_renderable(result: RerunResult, styles: Palette = DEFAULT_PALETTE) -> RenderableType:
    """Findings, the attempt timeline and the region table."""
    parts: list[RenderableType] = []
    if result.findings:
        table = PlainTable(
            title="findings", title_justify="left", box=None, show_header=False, pad_edge=False
        )
        table.add_column("")
        table.add_column("")
        for finding in result.findings:
            mark = STATUS_MARKS[_SEVERITY_MARK[finding.severity]]
            style = styles(SEVERITY_STYLES[finding.severity])
            table.add_row(Text(mark, style=style), Text(shown_text(finding.message)))
        parts.append(table)
    else:
        parts.append(Text("no findings", style="dim"))
    parts.append(Text())
    parts.append(timeline_table(result.attempts, styles))
    parts.append(
        Text(
            f"\nprompt: {result.prompt_source} · tools {'offered' if result.include_tools else 'left out'}"
            f" · retry policy: {result.policy}",
            style="dim",
        )
    )
    return Group(*parts)
