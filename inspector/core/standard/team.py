"""The team re-injection message the standard compressors insert after a memory block.

When the replaced messages hold assistant calls of send_message / view_task / claim_task /
member_complete_task, DialogueCompressor, CurrentRoundCompressor (first stage) and
RoundLevelCompressor add one UserMessage `[STATE_REINJECTION]` with `[TEAM_STATE]` and
`[TEAM_MESSAGES]` sections (spec `standard-processors.md` Appendix A, exercised by its
end-to-end cases). Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from inspector.core.messages import Message, ToolCall, is_mapping

MARKER = "[STATE_REINJECTION]"
_TEAM_TOOLS = ("send_message", "view_task", "claim_task", "member_complete_task")


def message_text(message: Message) -> str:
    """`message_to_text`: the string content, or the text parts of list content joined."""
    content = message.content
    if isinstance(content, str):
        return content
    parts = []
    for part in content or ():
        if isinstance(part, str):
            parts.append(part)
        elif is_mapping(part) and isinstance(part.get("text"), str):
            parts.append(part["text"])
    return "".join(parts)


def _arguments(text: str) -> Mapping[str, Any]:
    try:
        parsed = json.loads(text) if text else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _short(text: str) -> str:
    return text[:80] + "..." if len(text) > 80 else text


def _send_message(args: Mapping[str, Any]) -> str:
    to = args.get("to")
    if isinstance(to, list):
        names = "、".join(str(t) for t in to if t)
        base = f"向 {names} 发送消息" if names else "发送消息"
    elif to == "*":
        base = "向全队广播消息"
    elif to:
        base = f"向 {to} 发送消息"
    else:
        base = "发送消息"
    summary = str(args.get("summary") or "").strip() or _short(str(args.get("content") or ""))
    return f"{base}：{summary}" if summary else base


def _view_task(args: Mapping[str, Any]) -> str:
    action = args.get("action") or "list"
    if action == "get":
        task = args.get("task_id")
        return f"查看任务 #{task} 详情" if task else "查看任务详情"
    if action == "claimable":
        return "查询可领取的任务"
    status = args.get("status")
    return f"列出任务（状态={status}）" if status else "列出任务"


def _claim_task(args: Mapping[str, Any]) -> str:
    task = args.get("task_id") or "?"
    status = args.get("status")
    if status == "completed":
        return f"完成任务 #{task}"
    if status == "claimed":
        return f"认领任务 #{task}"
    return f"处理任务 #{task}（status={status or '?'}）"


def _complete(args: Mapping[str, Any]) -> str:
    task = args.get("task_id") or "?"
    note = _short(str(args.get("note") or "").strip())
    return f"完成自己负责的任务 #{task}，备注：{note}" if note else f"完成自己负责的任务 #{task}"


_DESCRIBE = {
    "send_message": _send_message,
    "view_task": _view_task,
    "claim_task": _claim_task,
    "member_complete_task": _complete,
}


def _result_text(messages: Sequence[Message], call_id: str | None) -> str:
    if not call_id:
        return ""
    for message in reversed(messages):
        if message.role == "tool" and message.tool_call_id == call_id:
            return message_text(message)
    return ""


def _line(call: ToolCall, messages: Sequence[Message]) -> str:
    line = f"- {_DESCRIBE[call.name](_arguments(call.arguments or ''))} [{call.name}]".rstrip()
    result = _result_text(messages, call.id).strip()
    if result:
        compact = " ".join(p.strip() for p in result.splitlines() if p.strip())
        line += "\n  -> " + (compact[:200] + "..." if len(compact) > 200 else compact)
    return line


def team_reinjection(messages: Sequence[Message]) -> list[Message]:
    """The `[STATE_REINJECTION]` message for the team calls among `messages` (or none)."""
    state = ["Task-board observations and updates recovered from compressed dialogue:"]
    sent = ["Member messages recovered from compressed dialogue:"]
    for message in messages:
        if message.role != "assistant":  # a [STATE_REINJECTION] message is a user message
            continue
        for call in message.tool_calls:
            if call.name in _TEAM_TOOLS:
                (sent if call.name == "send_message" else state).append(_line(call, messages))
    sections = []
    if len(state) > 1:
        sections.append("[TEAM_STATE]\n" + "\n".join(state))
    if len(sent) > 1:
        sections.append("[TEAM_MESSAGES]\n" + "\n".join(sent))
    if not sections:
        return []
    return [Message(role="user", content=f"{MARKER}\n" + "\n\n".join(sections))]
