"""Message lists in the formats people bring: openJiuwen, OpenAI chat, Anthropic messages.

Detection is by content. openJiuwen's serializer and OpenAI chat share one shape (role,
content, nested tool_calls, tool_call_id) and are read by `Message.from_dict` directly.
Anthropic messages are converted: `tool_use` blocks become tool calls of the assistant
message, `tool_result` blocks become `tool` messages (placed before the rest of their user
turn, in order), a top-level `system` string or text-block list becomes system messages,
and tools with `input_schema` become tools. Must not import Textual or Rich.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from inspector.core.errors import FormatError
from inspector.core.messages import Message, Tool, ToolCall, parse_messages, parse_tools

MessageFormat = Literal["openjiuwen", "openai", "anthropic"]

_ANTHROPIC_BLOCKS = {"tool_use", "tool_result", "thinking", "redacted_thinking", "document"}


@dataclass(frozen=True, slots=True)
class MessageList:
    """A message list read from some format, split into system messages, messages and tools."""

    format: MessageFormat
    system_messages: tuple[Message, ...]
    messages: tuple[Message, ...]
    tools: tuple[Tool, ...]
    #: Things dropped on conversion, in words (e.g. "2 thinking blocks").
    notes: tuple[str, ...] = ()


def is_message_dict(value: Any) -> bool:
    """True for an object with a string `role` (a message in any supported format)."""
    return isinstance(value, Mapping) and isinstance(value.get("role"), str)


def looks_like_message_list(value: Any) -> bool:
    """A non-empty list whose items are all messages."""
    return isinstance(value, list) and bool(value) and all(is_message_dict(item) for item in value)


def looks_like_message_container(value: Any) -> bool:
    """An object with a `messages` list of messages (a chat request, a saved conversation)."""
    return isinstance(value, Mapping) and looks_like_message_list(value.get("messages"))


def _block_types(messages: Sequence[Any]) -> set[str]:
    kinds: set[str] = set()
    for message in messages:
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, list):
            for block in content:
                if isinstance(block, Mapping) and isinstance(block.get("type"), str):
                    kinds.add(block["type"])
    return kinds


def detect_format(
    messages: Sequence[Any], container: Mapping[str, Any] | None = None
) -> MessageFormat:
    """Which format a message list is in, from its content."""
    if container is not None:
        if isinstance(container.get("system"), str | list):
            return "anthropic"
        tools = container.get("tools")
        if isinstance(tools, list) and any(
            isinstance(t, Mapping) and "input_schema" in t for t in tools
        ):
            return "anthropic"
    if _block_types(messages) & _ANTHROPIC_BLOCKS:
        return "anthropic"
    for message in messages:
        if isinstance(message, Mapping) and ("metadata" in message or "usage_metadata" in message):
            return "openjiuwen"
    return "openai"


def read_message_list(
    messages: Sequence[Any], container: Mapping[str, Any] | None = None
) -> MessageList:
    """Read a message list (and the tools/system of its container) in whatever format it is."""
    fmt = detect_format(messages, container)
    if fmt == "anthropic":
        return _read_anthropic(messages, container or {})
    parsed = parse_messages(list(_normalize_openai_roles(messages)))
    leading = next((i for i, m in enumerate(parsed) if m.role != "system"), len(parsed))
    tools_raw = (container or {}).get("tools")
    tools = parse_tools(tools_raw) if isinstance(tools_raw, list) else ()
    return MessageList(fmt, parsed[:leading], parsed[leading:], tools)


def _normalize_openai_roles(messages: Sequence[Any]) -> Sequence[Any]:
    """OpenAI's `developer` role is a system message; `function` results become tool messages."""
    out: list[Any] = []
    for message in messages:
        if isinstance(message, Mapping) and message.get("role") == "developer":
            message = {**message, "role": "system"}
        elif isinstance(message, Mapping) and message.get("role") == "function":
            message = {**message, "role": "tool", "tool_call_id": message.get("name") or ""}
        out.append(message)
    return out


def _text_of(content: Any) -> Any:
    """A tool_result's content: a string, or a list of blocks kept as blocks (images stay)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        if all(isinstance(b, Mapping) and b.get("type") == "text" for b in content):
            return "\n".join(str(b.get("text") or "") for b in content)
        return list(content)
    return json.dumps(content, ensure_ascii=False)


def _anthropic_system(system_raw: Any) -> list[Message]:
    """A top-level `system` string or text-block list as system messages."""
    system: list[Message] = []
    if isinstance(system_raw, str) and system_raw:
        system.append(Message(role="system", content=system_raw))
    elif isinstance(system_raw, list):
        for block in system_raw:
            if isinstance(block, Mapping) and block.get("type") == "text":
                system.append(Message(role="system", content=str(block.get("text") or "")))
            elif isinstance(block, str):
                system.append(Message(role="system", content=block))
    return system


def _anthropic_tools(tools_raw: Any) -> tuple[Tool, ...]:
    """Tools with `input_schema` (Anthropic) or in openJiuwen/OpenAI form."""
    tools: list[Tool] = []
    if tools_raw is not None and not isinstance(tools_raw, list):
        raise FormatError("'tools' must be a list")
    for index, raw_tool in enumerate(tools_raw or []):
        if not isinstance(raw_tool, Mapping):
            raise FormatError(f"tools[{index}]: a tool must be an object")
        if "input_schema" in raw_tool:
            tools.append(
                Tool(
                    name=str(raw_tool.get("name") or ""),
                    description=raw_tool.get("description"),
                    parameters=raw_tool.get("input_schema") or {},
                )
            )
        else:
            tools.append(Tool.from_dict(raw_tool))
    return tuple(tools)


def _read_anthropic(messages: Sequence[Any], container: Mapping[str, Any]) -> MessageList:
    system = _anthropic_system(container.get("system"))
    notes: list[str] = []
    out: list[Message] = []
    dropped: dict[str, int] = {}
    for index, raw in enumerate(messages):
        if not isinstance(raw, Mapping):
            raise FormatError(f"messages[{index}]: a message must be an object")
        role = raw.get("role")
        content = raw.get("content", "")
        if role == "system":
            system.append(Message(role="system", content=_text_of(content)))
            continue
        if not isinstance(content, list):
            if content is not None and not isinstance(content, str):
                raise FormatError(
                    f"messages[{index}]: content must be a string or a list of blocks"
                )
            out.append(Message(role=str(role), content=content or ""))
            continue
        calls: list[ToolCall] = []
        results: list[Message] = []
        rest: list[Any] = []
        for block in content:
            kind = block.get("type") if isinstance(block, Mapping) else None
            if kind == "tool_use" and isinstance(block, Mapping):
                arguments = block.get("input", {})
                calls.append(
                    ToolCall(
                        id=None if block.get("id") is None else str(block.get("id")),
                        name=str(block.get("name") or ""),
                        arguments=arguments
                        if isinstance(arguments, str)
                        else json.dumps(arguments, ensure_ascii=False),
                    )
                )
            elif kind == "tool_result" and isinstance(block, Mapping):
                metadata = {"is_error": True} if block.get("is_error") else {}
                results.append(
                    Message(
                        role="tool",
                        content=_text_of(block.get("content")),
                        tool_call_id=str(block.get("tool_use_id") or ""),
                        metadata=metadata,
                    )
                )
            elif kind in ("thinking", "redacted_thinking"):
                dropped[kind] = dropped.get(kind, 0) + 1
            else:
                rest.append(block)
        out.extend(results)
        if role == "assistant":
            if rest or calls:
                text_only = all(isinstance(b, Mapping) and b.get("type") == "text" for b in rest)
                body: Any = "\n".join(str(b.get("text") or "") for b in rest) if text_only else rest
                out.append(Message(role="assistant", content=body, tool_calls=tuple(calls)))
        elif rest:
            single_text = (
                len(rest) == 1 and isinstance(rest[0], Mapping) and rest[0].get("type") == "text"
            )
            out.append(
                Message(
                    role=str(role), content=str(rest[0].get("text") or "") if single_text else rest
                )
            )
    for kind, count in dropped.items():
        notes.append(
            f"{count} {kind} block{'s' if count != 1 else ''} dropped (not part of the context openJiuwen counts)"
        )
    tools = _anthropic_tools(container.get("tools"))
    return MessageList("anthropic", tuple(system), tuple(out), tools, tuple(notes))
