"""Verdict lines and region summaries shared by the context view and text exports. Pure Rich.

Also the small pure helpers the context view needs: which rows changed region between two
spans, what a search matches, and what a message after compression is.
"""

from __future__ import annotations

import io

from rich.console import Console, RenderableType

from inspector.core.messages import Message


def render_to_text(renderable: RenderableType, width: int = 100) -> str:
    """Plain text of a Rich renderable (for the clipboard)."""
    console = Console(file=io.StringIO(), width=width, color_system=None, record=True)
    console.print(renderable)
    return console.export_text()


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
