"""MessageSummaryOffloader's model calls as a script (spec `standard-processors.md` 6.1).

One call per qualifying message of the incoming batch, in order: a user prompt with the
task line (the last stored user message), the function call that produced a tool result
(pydantic's string form of the ToolCall, or "N/A"), the content and the summary budget.
Shorter head/middle/tail cuts of the content are retried only after an overflow error;
any other failure ends the run `failed` with the batch appended unchanged. The reply is
JSON with a `summary` (else the text between the first "{" and the last "}"; else the raw
reply when it is shorter than the content; else the message is kept). The placeholder is
the summary, the `[offloaded_info]` lines and the in-memory offload marker, cut to a
head and tail when it still counts more than the trigger limit.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from inspector.core.messages import Message, ToolCall
from inspector.core.standard.offloaders import evaluate_mso
from inspector.core.standard.prepared import StandardPrepared
from inspector.core.standard.rerun_script import CallResult, ModelCall, RerunEnd, Script
from inspector.core.standard.settings import MessageSummaryOffloaderSettings

TRUNCATED = "...[TRUNCATED]..."
#: The substrings 0.1.16 reads as a context overflow (0.1.17+ asks the engine, same idea).
OVERFLOW_WORDS = (
    "context length",
    "token limit",
    "too long",
    "exceeds",
    "maximum context",
    "context window",
)
_NOTICE = "\n... placeholder truncated; original content is preserved in offload storage ...\n"


def _json_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    try:
        return json.dumps(content, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(content)


def task_line(stored: Sequence[Message]) -> str:
    """The default task line: the content of the last stored role-"user" message."""
    for message in reversed(stored):
        if message.role == "user":
            return _json_text(message.content)
    return ""


def function_call_text(stored: Sequence[Message], message: Message) -> str:
    """The ToolCall that produced `message` (scanning stored assistants backwards), in
    pydantic's `id='..' type='..' name='..' arguments='..' ...` form; "N/A" when none."""
    call: ToolCall | None = None
    for candidate in reversed(stored):
        if candidate.role != "assistant":
            continue
        call = next((c for c in candidate.tool_calls if c.id == message.tool_call_id), None)
        if call is not None:
            break
    if call is None or message.tool_call_id is None:
        return "N/A"
    index = call.extra.get("index") if call.extra else None
    return (
        f"id={call.id!r} type={call.type!r} name={call.name!r} arguments={call.arguments!r} "
        f"index={index!r} response_item_id={call.response_item_id!r}"
    )


def smart_truncate(content: str, max_chars: int) -> str:
    """Head, middle and tail thirds joined by the truncation marker, within max_chars."""
    if len(content) <= max_chars:
        return content
    if max_chars <= len(TRUNCATED) * 2 + 4 + 3:
        return content[:max_chars]
    available = max_chars - len(TRUNCATED) * 2 - 4
    head = max(available // 3, 1)
    tail = max(available // 3, 1)
    middle = max(available - head - tail, 1)
    middle_start = max(len(content) // 2 - middle // 2, head)
    middle_end = min(middle_start + middle, len(content) - tail)
    middle_start = max(head, middle_end - middle)
    return (
        f"{content[:head]}\n{TRUNCATED}\n{content[middle_start:middle_end]}\n{TRUNCATED}\n"
        f"{content[-tail:]}"
    )


def attempts_for(content: str, max_chars: int) -> list[str]:
    """The content, then its cuts to max_chars and max_chars // 2 (when longer than max)."""
    out = [content]
    if len(content) <= max_chars:
        return out
    out.append(smart_truncate(content, max_chars))
    reduced = max(max_chars // 2, 1)
    if reduced < max_chars:
        out.append(smart_truncate(content, reduced))
    return out


def parse_offload_reply(reply: str) -> Mapping[str, Any] | None:
    """The reply's JSON object with a `summary`, or None when it cannot be read so."""
    try:
        parsed = json.loads(reply.strip())
    except ValueError:
        start, end = reply.find("{"), reply.rfind("}")
        if start < 0 or end <= start:
            return None
        try:
            parsed = json.loads(reply[start : end + 1])
        except ValueError:
            return None
    return parsed if isinstance(parsed, dict) and "summary" in parsed else None


def placeholder_text(result: Mapping[str, Any], handle: str) -> str:
    """Summary, `[offloaded_info]` lines (when an explanation is given) and the marker."""
    text = str(result.get("summary", ""))
    explanation = result.get("offload_data_explanation") or {}
    if isinstance(explanation, Mapping) and explanation:
        lines = [
            "[offloaded_info]",
            f"category: {explanation.get('category', '')}",
            f"description: {explanation.get('description', '')}",
            f"inferability: {explanation.get('inferability', '')}",
        ]
        text = f"{text}\n\n" + "\n".join(lines)
    return f"{text}[[OFFLOAD: handle={handle}, type=in_memory]]"


def cut_placeholder(content: str) -> str:
    """At most 2,000 characters of head and tail around the notice, the marker kept."""
    at = content.rfind("[[OFFLOAD:")
    suffix = content[at:] if at >= 0 else ""
    body = content[:at] if at >= 0 else content
    head = min(2000, max(len(body) // 2, 1))
    tail = min(2000, max(len(body) - head, 0))
    return body[:head] + _NOTICE + (body[-tail:] if tail else "") + suffix


def offload_prompt(template: str, step: str, call: str, content: str, budget: int) -> str:
    """Our template's placeholders replaced (not `str.format`: the text may hold braces)."""
    return (
        template.replace("{step}", step or "N/A")
        .replace("{function_call}", call)
        .replace("{tool_content}", content)
        .replace("{summary_max_tokens}", str(budget))
    )


def mso_script(
    prep: StandardPrepared,
    settings: MessageSummaryOffloaderSettings,
    prompt: str,
    new_handle: Callable[[], str],
) -> Script:
    """One summary call per qualifying new message; the batch rewritten with placeholders."""
    outcome = evaluate_mso(prep, settings)
    eligible = [int(i) for i in outcome.numbers.get("eligible", ())]
    messages = list(prep.messages)
    approx: list[str] = ["the offload is in memory (no workspace): the marker has no path"]
    if settings.enable_precise_step:
        approx.append("enable_precise_step's extra task-line call is not re-run: default task line")
    if not eligible:
        return RerunEnd("nothing", tuple(messages), reason="no new message qualifies: no call")
    stored = prep.stored
    limit = int(outcome.details.get("placeholder_limit") or settings.large_message_threshold)
    for index in eligible:
        message = messages[index]
        content = _json_text(message.content)
        replacement = message
        tries = attempts_for(content, settings.content_max_chars_for_compression)
        for number, attempt in enumerate(tries, 1):
            text = offload_prompt(
                prompt,
                task_line(stored),
                function_call_text(stored, message),
                attempt,
                settings.summary_max_tokens,
            )
            result: CallResult = yield ModelCall(
                f"offload_{index}",
                (Message(role="user", content=text),),
                note=f"message {index}, attempt {number} of {len(tries)}",
            )
            if result.ok:
                parsed = _read_reply(result.content or "", content)
                if parsed is not None:
                    replacement = _offload_message(message, placeholder_text(parsed, new_handle()))
                    if prep.counter.guard_count([replacement]) > limit:
                        replacement = dataclasses.replace(
                            replacement, content=cut_placeholder(str(replacement.content))
                        )
                break
            overflow = any(w in (result.error or "").lower() for w in OVERFLOW_WORDS)
            if not overflow or number == len(tries):
                return RerunEnd(
                    "failed",
                    tuple(prep.messages),
                    reason=f"the call for message {index} failed ({result.error}): the batch is "
                    "appended unchanged",
                    approximations=tuple(approx),
                )
        messages[index] = replacement
    return RerunEnd(
        "completed",
        tuple(messages),
        tuple(eligible),
        "",
        reason=f"{len(eligible)} message(s) qualified (each reported, even when kept unchanged)",
        approximations=tuple(approx),
    )


def _read_reply(reply: str, content: str) -> Mapping[str, Any] | None:
    """The summary result of a reply, or None (keep the message) when the reply cannot be
    read and is not shorter than the content."""
    parsed = parse_offload_reply(reply)
    if parsed is None:
        if len(reply) >= len(content):
            return None
        parsed = {"summary": reply, "offload_data_explanation": {}}
    return parsed


def _offload_message(message: Message, content: str) -> Message:
    """The Offload* message of the same role carrying the original's other fields."""
    extra = dict(message.extra)
    cls = {"tool": "ToolMessage", "user": "UserMessage", "assistant": "AssistantMessage"}
    extra["openjiuwen_class"] = "Offload" + cls.get(message.role, "Message")
    return dataclasses.replace(message, content=content, extra=extra)
