"""FullCompactProcessor's model call as a script (spec `standard-processors.md` 6.8).

After the last boundary (`[FULL_COMPACT_BOUNDARY]` / `[SESSION_MEMORY_BOUNDARY]` system
message) the active messages, without boundary and state messages, are cut to whole
completed API rounds that fit `compression_call_max_tokens` with the prompt (rounds dropped
from the front; a leading assistant gets the synthetic user marker; one round left is cut
message by message), serialised `role=R | tool_calls=[...] | tool_call_id=X | content=C`,
and sent after the system prompt. The reply (`<analysis>` removed, the inside of
`<summary>` prefixed by `Summary:`) or, on an empty reply or an error, the fallback summary
of the last 20 messages, becomes the new context: prefix, boundary, summary message, the
kept newest messages (widened to the calls of kept tool results), then the re-injected
state messages (SKILL.md reads, task status, plan mode). The session's memory notes and
state are not in a snapshot: the session-memory path is not taken, the session state is
taken as empty (plan mode `auto`), and both are said. Must not import anything outside
the standard library and `inspector.core`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from inspector.core.messages import Message
from inspector.core.standard.prepared import StandardPrepared
from inspector.core.standard.rerun_script import CallResult, ModelCall, RerunEnd, Script
from inspector.core.standard.settings import FullCompactSettings
from inspector.core.standard.structure import completed_api_rounds
from inspector.core.standard.team import message_text

STATE_MARKER = "[FULL_COMPACT_STATE]"
SYNTHETIC_USER = "[earlier conversation truncated for compaction retry]"
SUMMARY_INTRO = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The summary below covers the earlier portion of the conversation."
)
RECENT_NOTICE = "Recent messages are preserved verbatim."
_FILE_PATH = re.compile(r'"file_path"\s*:\s*"([^"]*)"')


def _text(message: Message) -> str:
    if isinstance(message.content, str):
        return message.content
    return json.dumps(message.content, ensure_ascii=False)


def serialise(messages: Sequence[Message]) -> str:
    """The user message of the call: one `role=R | ...` line per message."""
    lines = []
    for message in messages:
        parts = [f"role={message.role}"]
        if message.role == "assistant" and message.tool_calls:
            calls = [
                {"id": c.id or "", "name": c.name, "arguments": c.arguments, "type": c.type}
                for c in message.tool_calls
            ]
            parts.append(f"tool_calls={json.dumps(calls, ensure_ascii=False)}")
        if message.role == "tool":
            parts.append(f"tool_call_id={message.tool_call_id}")
        parts.append(f"content={_text(message)}")
        lines.append(" | ".join(parts))
    return "\n".join(lines)


def _starts(message: Message, marker: str, role: str) -> bool:
    return (
        message.role == role
        and isinstance(message.content, str)
        and message.content.startswith(marker)
    )


def _is_boundary(message: Message, settings: FullCompactSettings) -> bool:
    return _starts(message, settings.marker, "system") or _starts(
        message, settings.session_memory_marker, "system"
    )


def _prepared_source(messages: Sequence[Message], settings: FullCompactSettings) -> list[Message]:
    """Without boundary, state and session-memory boundary messages."""
    return [
        m
        for m in messages
        if not _is_boundary(m, settings) and not _starts(m, STATE_MARKER, "user")
    ]


def _synthetic() -> Message:
    return Message(role="user", content=SYNTHETIC_USER)


def _fits(prep: StandardPrepared, prompt: str, messages: Sequence[Message], budget: int) -> bool:
    call = [
        Message(role="system", content=prompt),
        Message(role="user", content=serialise(messages)),
    ]
    return prep.counter.full_compact_count(call) <= budget


def _minimal(messages: Sequence[Message]) -> list[Message]:
    if not messages:
        return []
    last = messages[-1]
    return [_synthetic(), last] if last.role == "assistant" else [last]


def _from_head(
    prep: StandardPrepared, prompt: str, messages: list[Message], budget: int
) -> list[Message]:
    candidate = list(messages)
    while candidate:
        if _fits(prep, prompt, candidate, budget):
            return candidate
        if candidate[0].role == "user" and candidate[0].content == SYNTHETIC_USER:
            if len(candidate) == 1:
                return _minimal(messages)
            candidate = candidate[2:]
        else:
            candidate = candidate[1:]
        if candidate and candidate[0].role == "assistant":
            candidate = [_synthetic(), *candidate]
    return _minimal(messages)


def prompt_input(
    prep: StandardPrepared, prompt: str, source: list[Message], budget: int
) -> list[Message]:
    """The completed API rounds of the source that fit the call budget with the prompt."""
    groups = [list(source[a:b]) for a, b in completed_api_rounds(source)]
    while groups:
        candidate = [m for group in groups for m in group]
        if _fits(prep, prompt, candidate, budget):
            return candidate
        if len(groups) == 1:
            return _from_head(prep, prompt, candidate, budget)
        groups = groups[1:]
        if groups and groups[0][0].role == "assistant":
            groups[0] = [_synthetic(), *groups[0]]
    return _minimal(source)


def format_summary(reply: str) -> str:
    """`<analysis>` removed; the inside of `<summary>` as `Summary:\\n...`, else the text."""
    stripped = re.sub(r"<analysis>[\s\S]*?</analysis>", "", reply).strip()
    match = re.search(r"<summary>([\s\S]*?)</summary>", stripped)
    return "Summary:\n" + match.group(1).strip() if match else stripped


def fallback_summary(messages: Sequence[Message]) -> str:
    """The built-in summary: the last 20 messages as `[n] role: text` lines."""
    start = max(len(messages) - 19, 1)
    lines = [f"[{n}] {m.role}: {_text(m)}" for n, m in enumerate(messages[-20:], start=start)]
    return "Summary:\n" + "\n".join(lines)


def kept_messages(active: Sequence[Message], settings: FullCompactSettings) -> list[Message]:
    """The newest messages_to_keep, widened back to the calls of kept tool results."""
    keep = settings.messages_to_keep
    if keep <= 0 or not active:
        return []
    start = max(len(active) - keep, 0)
    if settings.keep_tool_message_pairs and 0 < start < len(active):
        needed = {m.tool_call_id for m in active[start:] if m.role == "tool" and m.tool_call_id}
        present = {
            c.id for m in active[start:] if m.role == "assistant" for c in m.tool_calls if c.id
        }
        missing = needed - present
        for index in range(start - 1, -1, -1):
            if not missing:
                break
            ids = (
                {c.id for c in active[index].tool_calls}
                if active[index].role == "assistant"
                else set()
            )
            if ids & missing:
                missing -= ids
                start = index
    return list(active[start:])


def _state_text(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = max(int(limit * 0.2), 0)
    tail = max(limit - head, 0)
    return f"{text[:head]}\n...[TRUNCATED]...\n{text[-tail:] if tail else ''}"


def _signature(message: Message) -> str:
    ids = "|".join(c.id or "" for c in message.tool_calls)
    return f"{message.role}|{message_text(message)}|{ids}"


def _reads_skill(group: Sequence[Message]) -> bool:
    for message in group:
        for call in message.tool_calls if message.role == "assistant" else ():
            if call.name != "read_file":
                continue
            try:
                args = json.loads(call.arguments or "")
                path = args.get("file_path") if isinstance(args, dict) else None
            except ValueError:
                path = None
            if not isinstance(path, str):
                found = _FILE_PATH.search(call.arguments or "")
                path = found.group(1) if found else ""
            if path.replace("\\", "/").lower().endswith("skill.md"):
                return True
    return False


def state_messages(
    source: list[Message], kept: Sequence[Message], settings: FullCompactSettings
) -> list[Message]:
    """SKILL.md rounds, then plan mode (the session state taken as empty: mode auto)."""
    keep_signatures = {_signature(m) for m in kept}
    chosen: list[list[Message]] = []
    seen: set[tuple[str, ...]] = set()
    for a, b in reversed(completed_api_rounds(source)):
        group = source[a:b]
        signatures = tuple(_signature(m) for m in group)
        if signatures in seen or any(s in keep_signatures for s in signatures):
            continue
        if not _reads_skill(group):
            continue
        chosen.append(group)
        seen.add(signatures)
        if len(chosen) >= settings.reinject_recent_skills:
            break
    out = []
    for group in reversed(chosen):
        lines = "\n".join(f"role={m.role}, content={message_text(m)}" for m in group)
        text = _state_text(lines, settings.state_snapshot_max_chars)
        out.append(Message(role="user", content=f"{STATE_MARKER}\n[SKILLS]\n{text}"))
    plan = "Current plan-mode status for this session:\n- Active mode: auto."
    plan = _state_text(plan, settings.state_snapshot_max_chars)
    out.append(Message(role="user", content=f"{STATE_MARKER}\n[PLAN_MODE]\n{plan}"))
    return out


def full_compact_script(
    prep: StandardPrepared, settings: FullCompactSettings, prompt: str
) -> Script:
    """One summary call (or the fallback summary), then the compacted context."""
    messages = list(prep.messages)
    approx = (
        "the session's memory notes and state are not in a snapshot: the session-memory "
        "replacement is not tried and the state is taken as empty (plan mode auto)",
        "the call budget is counted with the prompt sent: openJiuwen counts its own prompt",
    )
    boundary = next(
        (i for i in range(len(messages) - 1, -1, -1) if _is_boundary(messages[i], settings)), -1
    )
    prefix = messages[:boundary] if boundary > 0 else []
    active = messages[boundary + 1 :] if boundary >= 0 else list(messages)
    source = _prepared_source(active, settings)
    if not active or not source:
        return RerunEnd("nothing", tuple(messages), reason="no active messages after the boundary")
    compact_input = prompt_input(prep, prompt, source, settings.compression_call_max_tokens)
    result: CallResult = yield ModelCall(
        "compact",
        (
            Message(role="system", content=prompt),
            Message(role="user", content=serialise(compact_input)),
        ),
        note=f"{len(compact_input)} of {len(source)} active messages",
    )
    reply = (result.content or "").strip() if result.ok else ""
    summary = format_summary(reply) if reply else fallback_summary(compact_input)
    why = "" if reply else (f"the call failed ({result.error})" if not result.ok else "empty reply")
    kept = kept_messages(active, settings)
    body = [SUMMARY_INTRO, "", summary] + (["", RECENT_NOTICE] if kept else [])
    new = [
        *prefix,
        Message(role="system", content=f"{settings.marker}\nConversation compacted"),
        Message(role="user", content="\n".join(body)),
        *kept,
        *state_messages(source, kept, settings),
    ]
    return RerunEnd(
        "completed",
        tuple(new),
        tuple(range(len(messages))),
        summary,
        reason="compacted with the model's summary"
        if reply
        else f"{why}: compacted with the built-in fallback summary",
        approximations=approx,
    )
