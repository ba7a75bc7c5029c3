"""Structural helpers the standard processors share (spec section 5).

Completed API rounds, dialogue rounds, tool-name resolution, protected tools, Offload*
messages. Index ranges are as openJiuwen computes them (API rounds half-open, dialogue
rounds inclusive). Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Sequence
from typing import Any

from inspector.core.messages import Message, ToolCall


class ProtectedCheckError(ValueError):
    """A `name:pattern` protection met arguments that are JSON but not an object."""


def is_offload(message: Message) -> bool:
    """True for openJiuwen's Offload* message classes (they carry an offload handle)."""
    cls = message.extra.get("openjiuwen_class")
    if isinstance(cls, str) and cls.startswith("Offload"):
        return True
    return "offload_handle" in message.extra or "offload_type" in message.extra


def has_calls(message: Message) -> bool:
    """An AssistantMessage with tool calls."""
    return message.role == "assistant" and bool(message.tool_calls)


def is_final_reply(message: Message) -> bool:
    """An AssistantMessage without tool calls."""
    return message.role == "assistant" and not message.tool_calls


def text_of(message: Message) -> str | None:
    """The content when it is a string, else None."""
    return message.content if isinstance(message.content, str) else None


def completed_api_rounds(messages: Sequence[Message]) -> list[tuple[int, int]]:
    """`group_completed_api_rounds`: half-open `[start, end)` ranges of finished API rounds."""
    rounds: list[tuple[int, int]] = []
    start: int | None = None
    pending: set[str] | None = None
    for i, message in enumerate(messages):
        if start is None or message.role == "user" and pending is None:
            start = i
        if has_calls(message):
            pending = {c.id for c in message.tool_calls if c.id}
            if not pending:
                rounds.append((start, i + 1))
                start = None
        elif message.role == "assistant":
            rounds.append((start, i + 1))
            start, pending = None, None
        elif message.role == "tool" and pending is not None:
            pending.discard(message.tool_call_id or "")
            if not pending:
                rounds.append((start, i + 1))
                start, pending = None, None
    return rounds


def ends_on_api_round(messages: Sequence[Message]) -> bool:
    """`ContextProcessor._api_round`: the list ends exactly where its last completed round ends."""
    if not messages:
        return False
    rounds = completed_api_rounds(messages)
    return bool(rounds) and rounds[-1][1] == len(messages)


def _user_run_start(roles: Sequence[str], index: int) -> int:
    while index - 1 >= 0 and roles[index - 1] == "user":
        index -= 1
    return index


def dialogue_rounds(messages: Sequence[Message]) -> list[tuple[int, int | None]]:
    """`find_all_dialogue_round`: `(user_idx, final_assistant_idx or None)`, newest first."""
    roles = [m.role for m in messages]
    rounds: list[tuple[int, int | None]] = []
    i = len(messages) - 1
    first = True
    while i >= 0:
        end = i
        j = i
        while j >= 0 and roles[j] != "assistant":
            j -= 1
        final: int | None = None
        if j >= 0:
            if not messages[j].tool_calls:
                final = j
            i = j - 1
        else:
            i = end
        while i >= 0 and roles[i] != "user":
            i -= 1
        if i < 0:
            break
        user = _user_run_start(roles, i)
        if first:
            for k in range(len(messages) - 1, i, -1):
                if roles[k] == "user":
                    rounds.append((_user_run_start(roles, k), None))
                    break
            first = False
        rounds.append((user, final))
        i = user - 1
    return rounds


def resolve_call(messages: Sequence[Message], tool_call_id: str | None) -> ToolCall | None:
    """The tool call answered by a result: scan from the end for an assistant with that id."""
    if not tool_call_id:
        return None
    for message in reversed(messages):
        if message.role != "assistant":
            continue
        for call in message.tool_calls:
            if call.id == tool_call_id:
                return call
    return None


def _string_values(arguments: str) -> list[str]:
    try:
        parsed: Any = json.loads(arguments) if arguments else {}
    except ValueError:
        parsed = {}
    if not isinstance(parsed, dict):
        raise ProtectedCheckError(f"tool arguments are JSON but not an object: {arguments[:60]!r}")
    return [value for value in parsed.values() if isinstance(value, str)]


def is_protected(call: ToolCall | None, protected: Sequence[str]) -> bool:
    """Protected-tool test (spec 5.4); raises ProtectedCheckError like openJiuwen does."""
    if call is None:
        return False
    for entry in protected:
        name, sep, pattern = entry.partition(":")
        if not sep:
            if call.name == entry:
                return True
            continue
        if call.name != name:
            continue
        if any(fnmatch.fnmatchcase(value, pattern) for value in _string_values(call.arguments)):
            return True
    return False


def last_role_index(messages: Sequence[Message], role: str) -> int | None:
    """Index of the last message with this role, or None."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == role:
            return index
    return None
