"""The texts a standard processor's re-run builds: serialised context lines, memory blocks.

Everything here is a structure the spec (`standard-processors.md` 6.5, 6.6, Appendix A)
describes exactly: DialogueCompressor's `[i] role=R | ... | content=C` lines and its
target mapping, CurrentRoundCompressor's `role:R, content:<message object>` lines (the
pydantic string form of the whole message, release by release), the memory-block
wrappers, and the JSON reading of a reply. No prompt text of openJiuwen is here: the
prompts come from `inspector.llm.standard_prompts` (ours) or from the user.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from inspector.core.messages import Message, ToolCall
from inspector.core.standard.counting import _pythonish, content_repr

DIALOGUE_MARKER = "[DIALOGUE_MEMORY_BLOCK]"
CR_MARKER = "[CURRENT_ROUND_MEMORY_BLOCK]"

_DIALOGUE_HEADER = (
    f"{DIALOGUE_MARKER}\n"
    "processor: DialogueCompressor\n"
    "type: historical_memory_block\n"
    "scope: historical_dialogue_block\n"
    "authority: This block is reference memory, not a binding source of truth.\n"
    "instruction_status: Do not treat this block as a new user request or fresh assistant "
    "commitment.\n"
    "conflict_priority: Prefer newer explicit user intent, newer raw context, and fresh tool "
    "results over this block.\n\n"
    "Summary:\n"
)

_CR_HEADER = (
    f"{CR_MARKER}\n"
    "processor: CurrentRoundCompressor\n"
    "type: historical_memory_block\n"
    "scope: current_round_increment\n"
    "type_note: This is compressed memory from earlier conversation, kept to preserve "
    "long-range task continuity.\n"
    "authority: This block is reference memory, not a binding source of truth. If newer "
    "information conflicts with it, prefer the newer information.\n"
    "instruction_status: Do not treat this block as a new user request or a fresh instruction "
    "to execute. It only records prior context.\n"
    "strategy_status: Any plans, approaches, or next steps recorded here are historical working "
    "state. They may be revised, replaced, or discarded later.\n"
    "tool_action_state_status: Tool results, action history, and execution state in this block "
    "may help continuation, but they should only be reused if they are still valid in the "
    "current context.\n"
    "conflict_priority: Prefer newer signals in this order: latest explicit user request, recent "
    "uncompressed context, fresh tool or action results, then this memory block.\n\n"
    "Summary:\n"
)


def dialogue_block(summary: str) -> Message:
    """DialogueCompressor's memory block (a UserMessage) around a stripped summary."""
    return Message(role="user", content=_DIALOGUE_HEADER + summary.strip())


def unwrap_cr_summary(summary: str) -> str:
    """A reply that is itself a CurrentRound block: the text after `\\nSummary:\\n`."""
    text = (summary or "").strip()
    if not text.startswith(CR_MARKER) or "\nSummary:\n" not in text:
        return text
    return text.split("\nSummary:\n", 1)[1].strip()


def cr_block(summary: str) -> Message:
    """CurrentRoundCompressor's memory block around a (possibly empty) summary."""
    return Message(role="user", content=_CR_HEADER + unwrap_cr_summary(summary))


def is_cr_block(message: Message) -> bool:
    """A UserMessage whose string content starts with the CurrentRound marker."""
    return (
        message.role == "user"
        and isinstance(message.content, str)
        and message.content.startswith(CR_MARKER)
    )


# --- DialogueCompressor's payload ------------------------------------------------------------


def dialogue_line(index: int, message: Message) -> str:
    """`[i] role=R | tool_calls=a, b | tool_call_id=X | content=C` (C as an f-string shows it)."""
    parts = [f"[{index}] role={message.role}"]
    if message.role == "assistant" and message.tool_calls:
        parts.append("tool_calls=" + ", ".join(c.name for c in message.tool_calls))
    if message.role == "tool":
        parts.append(f"tool_call_id={message.tool_call_id}")
    parts.append(f"content={content_repr(message.content)}")
    return " | ".join(parts)


def dialogue_context_payload(messages: Sequence[Message], targets: Sequence[Sequence[Any]]) -> str:
    """The first user message: context before, the target blocks, context after."""
    first = min(int(t[2]) for t in targets)
    last = max(int(t[3]) for t in targets)
    before = "\n".join(dialogue_line(i, m) for i, m in enumerate(messages[:first])) or "(none)"
    blocks = ["[Compression Targets]"]
    for block_id, _user, start, end in targets:
        blocks.append(f"[Block: {block_id}]")
        lines = [dialogue_line(i, messages[i]) for i in range(int(start), int(end) + 1)]
        blocks.append("\n".join(lines) or "(empty)")
        blocks.append("")
    after = (
        "\n".join(dialogue_line(i, messages[i]) for i in range(last + 1, len(messages))) or "(none)"
    )
    return "\n".join(
        ["[Context Before Targets]", before, "", *blocks, "[Context After Targets]", after]
    )


def dialogue_mapping_payload(targets: Sequence[Sequence[Any]]) -> str:
    """The second user message: each block's anchor and range, then the output rules."""
    lines = ["[Target Mapping]", "You must only compress the following ReAct blocks.", ""]
    for block_id, user, start, end in targets:
        lines += [
            f"[Block: {block_id}]",
            f"- anchor_user_index: {user}",
            f"- replace_range: [{start}, {end}]",
            "",
        ]
    lines += [
        "[Output Requirements]",
        "- Read the full context to understand the entire task.",
        "- Compress only the listed blocks.",
        "- Produce one summary for each block_id.",
        "- Keep the most task-useful content first.",
        "- Preserve both action continuity and task-critical information.",
        "- Do not rewrite non-target messages.",
        "- Return valid JSON only.",
    ]
    return "\n".join(lines)


_FENCE = re.compile(r"```json\n(.*?)```", re.DOTALL)


def parse_json_reply(text: str | None) -> Any:
    """openJiuwen's JSON output parser: the inside of a ```json fence, else the stripped text;
    None when empty or not JSON."""
    if not text:
        return None
    match = _FENCE.search(text)
    raw = match.group(1).strip() if match else text.strip()
    try:
        return json.loads(raw)
    except ValueError:
        return None


def blocks_payload(parsed: Any) -> bool:
    """True for `{"blocks": [...]}`."""
    return isinstance(parsed, Mapping) and isinstance(parsed.get("blocks"), list)


def block_summaries(parsed: Any) -> dict[str, str]:
    """block_id -> stripped non-empty summary, from a blocks payload (later ids win)."""
    out: dict[str, str] = {}
    for item in parsed.get("blocks", ()) if blocks_payload(parsed) else ():
        if not isinstance(item, Mapping):
            continue
        block_id, summary = item.get("block_id"), item.get("summary")
        if isinstance(block_id, str) and block_id and isinstance(summary, str) and summary.strip():
            out[block_id] = summary.strip()
    return out


# --- CurrentRoundCompressor's message form -------------------------------------------------

_ASSISTANT_TAIL_0116 = (
    "usage_metadata",
    "finish_reason",
    "parser_content",
    "reasoning_content",
    "prompt_token_ids",
    "completion_token_ids",
    "logprobs",
)
_ASSISTANT_TAIL_0119 = ("response_id", "response_model", "provider_metadata", "provider_content")


def _py(value: Any) -> str:
    """Python's repr of a JSON value (what pydantic's field=value form shows)."""
    return repr(_pythonish(value))


def _call_repr(call: ToolCall) -> str:
    index = call.extra.get("index") if call.extra else None
    return (
        f"ToolCall(id={call.id!r}, type={call.type!r}, name={call.name!r}, "
        f"arguments={call.arguments!r}, index={index!r}, response_item_id={call.response_item_id!r})"
    )


def _usage_repr(usage: Mapping[str, Any] | None) -> str:
    if usage is None:
        return "None"
    return "UsageMetadata(" + ", ".join(f"{k}={v!r}" for k, v in usage.items()) + ")"


def message_object_text(message: Message, release: str) -> str:
    """`str(message)` of openJiuwen's pydantic message: `role='user' content='...' name=None
    metadata={...}`, the assistant's and tool's extra fields in their class order (0.1.19 adds
    four assistant fields). Usage records are shown by their keys (approximated)."""
    parts = [
        f"role={message.role!r}",
        f"content={_py(message.content)}",
        f"name={message.name!r}",
        f"metadata={_py(dict(message.metadata))}",
    ]
    if message.role == "assistant":
        calls = "[" + ", ".join(_call_repr(c) for c in message.tool_calls) + "]"
        parts.append(f"tool_calls={calls if message.tool_calls else None}")
        extra = message.extra
        parts.append(f"usage_metadata={_usage_repr(message.usage_metadata)}")
        parts.append(f"finish_reason={extra.get('finish_reason', 'null')!r}")
        for name in _ASSISTANT_TAIL_0116[2:]:
            parts.append(f"{name}={extra.get(name)!r}")
        if release == "0.1.19":
            for name in _ASSISTANT_TAIL_0119:
                default: Any = {} if name == "provider_metadata" else None
                parts.append(f"{name}={extra.get(name, default)!r}")
    elif message.role == "tool":
        parts.append(f"tool_call_id={message.tool_call_id!r}")
    return " ".join(parts)


def cr_line(message: Message, release: str) -> str:
    """`role:R, content:<the message object>`."""
    return f"role:{message.role}, content:{message_object_text(message, release)}"
