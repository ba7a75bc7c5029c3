"""One message in full, and why it sits in its region: Rich renderables and plain sentences.

Shared by the TUI detail pane and text exports. Must not import Textual.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Group, RenderableType
from rich.json import JSON
from rich.style import Style
from rich.text import Text

from inspector.core.messages import Message
from inspector.core.redact import escape_controls, mask_secrets, mask_text, shown_text
from inspector.render.plain import PlainTable
from inspector.render.styles import DEFAULT_PALETTE, REGION_LABELS, Palette

#: Content longer than this is cut in the detail pane (the copy command gives it all).
MAX_SHOWN_CHARS = 20_000


_shown = shown_text  # the pane's text: secrets masked, control characters escaped


def _content_renderable(message: Message) -> RenderableType:
    content = message.content
    if isinstance(content, str):
        if not content.strip():
            return Text("(no text)", "dim")
        text = (
            content if len(content) <= MAX_SHOWN_CHARS else content[:MAX_SHOWN_CHARS] + "\n… (cut)"
        )
        return Text(_shown(text))
    parts: list[RenderableType] = []
    for number, block in enumerate(content):
        if isinstance(block, str):
            parts.append(Text(_shown(block[:MAX_SHOWN_CHARS])))
        elif isinstance(block, Mapping):
            kind = block.get("type")
            if kind == "text" or ("text" in block and kind is None):
                parts.append(Text(_shown(str(block.get("text", ""))[:MAX_SHOWN_CHARS])))
            elif kind in ("image_url", "image"):
                parts.append(Text(f"[image block {number}: {_image_summary(block)}]", "italic"))
            else:
                parts.append(Text(_shown(f"[{kind or 'block'}] {_short_json(block)}"), "italic"))
        else:
            parts.append(Text(_shown(repr(block)[:MAX_SHOWN_CHARS])))
    return Group(*parts) if parts else Text("(empty)", "dim")


def _image_summary(block: Mapping[str, Any]) -> str:
    if block.get("type") == "image_url":
        url = block.get("image_url")
        url = url.get("url") if isinstance(url, Mapping) else url
        if isinstance(url, str) and url.startswith("data:"):
            return f"data URL, {len(url):,} characters"
        return str(url)[:120]
    source = block.get("source")
    if isinstance(source, Mapping):
        return f"{source.get('type')} {source.get('media_type', '')}, {len(str(source.get('data', ''))):,} characters"
    return "image"


def _short_json(value: Any, limit: int = 400) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json_renderable(value: Any) -> RenderableType:
    value = mask_text(value) if isinstance(value, str) else mask_secrets(value)
    try:
        if isinstance(value, str):
            return JSON(value, indent=2)
        return JSON.from_data(value, indent=2, default=str)
    except (ValueError, TypeError):
        return Text(escape_controls(str(value)))


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a message sits: its region, that region's word, and why it is there."""

    region: str
    reason: str = ""
    label: str | None = None


def message_detail(
    message: Message,
    index: int,
    tokens: int | None,
    place: Placement,
    links: Sequence[int] = (),
    results_by_call: Mapping[str, Sequence[int]] | None = None,
    styles: Palette = DEFAULT_PALETTE,
) -> Group:
    """Everything about one message: header, why-region, content, tool calls, usage, metadata."""
    region, reason, region_label = place.region, place.reason, place.label
    header = Text()
    header.append(f"#{index} ", "bold")
    header.append(message.role, "bold")
    if message.name:
        header.append(f" ({message.name})")
    if tokens is not None:
        header.append(f"  {tokens:,} tokens")
    header.append("  ")
    label = region_label or REGION_LABELS.get(region, region)
    header.append(f" {label} ", styles.region(region, "muted") + Style(reverse=True))
    parts: list[RenderableType] = [header, Text(reason, "italic")]
    if message.tool_call_id:
        answers = f"result of call {message.tool_call_id!r}"
        if links:
            answers += f" made at #{links[0]}"
        parts.append(Text(answers, styles("link")))
    parts.append(Text("content", "bold underline"))
    parts.append(_content_renderable(message))
    for call in message.tool_calls:
        title = Text(f"tool call {call.name} id={call.id!r}", "bold underline")
        result_at = (
            list((results_by_call or {}).get(call.id or "", ()))
            if results_by_call is not None
            else list(links)
        )
        if result_at:
            title.append("  result at " + ", ".join(f"#{i}" for i in result_at), styles("link"))
        parts.append(title)
        parts.append(_json_renderable(call.arguments))
    if message.usage_metadata is not None:
        parts.append(Text("usage", "bold underline"))
        table = PlainTable.grid(padding=(0, 2))
        for key, value in message.usage_metadata.items():
            if value not in (None, "", 0, 0.0) or key == "total_tokens":
                table.add_row(Text(str(key), "dim"), Text(str(value)))
        parts.append(table)
    if message.metadata:
        parts.append(Text("metadata", "bold underline"))
        parts.append(_json_renderable(dict(message.metadata)))
    return Group(*parts)


def message_plain_text(message: Message, index: int) -> str:
    """The message as plain text for the clipboard: role line, content, tool calls."""
    lines = [f"#{index} {message.role}"]
    if isinstance(message.content, str):
        lines.append(message.content)
    else:
        # text blocks as text, images as a mark (never their data URL), anything else as JSON
        for block in message.content:
            if isinstance(block, Mapping) and isinstance(block.get("text"), str):
                lines.append(block["text"])
            elif isinstance(block, Mapping) and block.get("type") in ("image_url", "image"):
                lines.append("[image]")
            else:
                lines.append(json.dumps(block, ensure_ascii=False, default=str))
    for call in message.tool_calls:
        lines.append(f"tool call {call.name} ({call.id}): {call.arguments}")
    if message.tool_call_id:
        lines.append(f"tool_call_id: {message.tool_call_id}")
    return "\n".join(lines)
