"""The HybridCompressor's level-2 rule summary and level-3 LLM request and reply cleaning.

Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.core.hybrid_facts import find_errors, find_paths, message_text
from inspector.core.hybrid_result import _FILE_ARG_KEYS, SUMMARY_PREFIX, SUMMARY_SECTIONS
from inspector.core.hybrid_truncate import is_read_file_tool
from inspector.core.messages import Message

# --- the rule summary (level 2) and the LLM request (level 3) ---------------------------


def _files_from_arguments(arguments: str) -> list[str]:
    try:
        parsed = json.loads(arguments)
    except (ValueError, RecursionError):
        return list(find_paths(arguments).values())
    if not isinstance(parsed, Mapping):
        return []
    out: list[str] = []
    for key in _FILE_ARG_KEYS:
        value = parsed.get(key)
        if isinstance(value, str) and value:
            out.append(value)
        elif isinstance(value, list):
            out.extend(v for v in value if isinstance(v, str))
    return out


def rule_summary(messages: Sequence[Message]) -> str:
    """Level 2's summary of folded messages: counts, tools called, files touched, errors seen."""
    names: dict[str, str] = {}
    parts: list[_SummaryPart] = []
    for message in messages:
        for call in message.tool_calls:
            if call.id:
                names[call.id] = call.name
        parts.append(_summary_part(message, names.get(message.tool_call_id or "")))
    return _render_rule_summary(Counter(m.role for m in messages), parts, len(messages))


def _render_rule_summary(roles: Counter[str], parts: Sequence[_SummaryPart], count: int) -> str:
    tools: Counter[str] = Counter()
    files: dict[str, None] = {}
    errors: dict[str, None] = {}
    for part in parts:
        for name in part.tools:
            tools[name] += 1
        for path in part.files:
            files[path] = None
        for line in part.errors:
            errors[line] = None
    role_text = ", ".join(f"{n} {role}" for role, n in sorted(roles.items()))
    lines = [
        f"{SUMMARY_PREFIX} · level 2 · rule-based] Folded {count} earlier messages ({role_text}).",
    ]
    if tools:
        called = ", ".join(f"{name} ×{n}" for name, n in tools.most_common())
        lines.append(f"Tools called ({sum(tools.values())}): {called}.")
    if files:
        lines.append(f"Files touched ({len(files)}): " + ", ".join(files) + ".")
    if errors:
        shown = list(errors)[:5]
        more = f" (+{len(errors) - 5} more)" if len(errors) > 5 else ""
        lines.append(f"Errors seen ({len(errors)}){more}:")
        lines.extend(f"- {e}" for e in shown)
    return "\n".join(lines)


def summary_prompt(max_words: int = 400) -> str:
    """The level-3 instruction: Task / Progress / State / Key Data, at most `max_words` words."""
    sections = "\n".join(f"## {name}" for name in SUMMARY_SECTIONS)
    return (
        "Summarise the earlier part of this agent conversation for the agent that will "
        f"continue it. Write at most {max_words} words, in exactly these sections:\n"
        f"{sections}\n"
        "Task: what the user asked. Progress: what was done and found. State: where the work "
        "stands and what comes next. Key Data: file paths, identifiers, commands, error "
        "messages and decisions, verbatim. Do not call tools; reply with the summary only."
    )


def summary_transcript(messages: Sequence[Message], max_chars_per_message: int = 4000) -> str:
    """The middle messages as one plain-text transcript for the level-3 request.

    One block per message (`[index] role`, tool calls as `-> name(arguments)`, a tool
    result as `[index] tool (call id)`), each cut to `max_chars_per_message` characters:
    sending text rather than wire-form messages keeps the request valid whatever the
    roles and pairs of the middle look like.
    """
    blocks: list[str] = []
    for index, message in enumerate(messages):
        head = f"[{index}] {message.role}"
        if message.role == "tool" and message.tool_call_id:
            head += f" ({message.tool_call_id})"
        if message.role == "tool":
            text = message_text(message)
        elif isinstance(message.content, str):
            text = message.content
        else:
            text = dataclasses.replace(message, tool_calls=()).text_preview(10**9)
        if len(text) > max_chars_per_message:
            text = (
                text[:max_chars_per_message] + f" …[{len(text) - max_chars_per_message} chars cut]"
            )
        lines = [head + (f": {text}" if text else "")]
        lines.extend(f"  -> {c.name}({c.arguments})" for c in message.tool_calls)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def clean_llm_summary(reply: Any, max_words: int) -> tuple[str, list[str]]:
    """Validate an LLM reply: non-empty text, cut to `max_words` words; notes on what was off."""
    if not isinstance(reply, str) or not reply.strip():
        raise ValueError("empty summary")
    text = reply.strip()
    notes: list[str] = []
    words = text.split()
    if len(words) > max_words:
        notes.append(f"summary had {len(words)} words, cut to {max_words}")
        # keep line structure up to the word limit
        kept = [
            m.group(0) for _, m in zip(range(max_words), re.finditer(r"\S+\s*", text), strict=False)
        ]
        text = "".join(kept).rstrip()
    missing = [s for s in SUMMARY_SECTIONS if not re.search(rf"(?im)^\W*{re.escape(s)}\b", text)]
    if missing:
        notes.append("summary lacks sections: " + ", ".join(missing))
    return text, notes


def _summary_message(text: str, source: str) -> Message:
    return Message(role="user", content=text, metadata={"hybrid_summary": source})


# --- the pipeline ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _SummaryPart:
    """What one folded message adds to the rule summary."""

    tools: tuple[str, ...]
    files: tuple[str, ...]
    errors: tuple[str, ...]


def _summary_part(message: Message, tool_name: str | None) -> _SummaryPart:
    files: list[str] = []
    for call in message.tool_calls:
        files.extend(_files_from_arguments(call.arguments))
    errors: list[str] = []
    # file contents are not errors seen, even when the code mentions ValueError
    if message.role == "tool" and not is_read_file_tool(tool_name):
        errors = find_errors(message_text(message))
    return _SummaryPart(
        tuple(call.name or "?" for call in message.tool_calls), tuple(files), tuple(errors)
    )
