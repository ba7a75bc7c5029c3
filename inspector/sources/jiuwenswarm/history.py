"""One session's transcript (`agent/sessions/<sid>/history.jsonl`) as context messages.

jiuwenswarm appends one record per event it keeps: the user turn (`role: user`), the
answer (`event_type: chat.final`), tool calls and results (`chat.tool_call`,
`chat.tool_result`), and bookkeeping records with no content (`chat.usage_metadata`,
`chat.usage_summary`, processing states) which are not messages. The transcript is what
the user saw, not what the model held: the agent wraps each user turn in a message
envelope, and compressions rewrite the stored context (`session.py` applies them).
A bad line is reported with its number and the rest is still read.
Must not import Textual or Rich.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Records that are bookkeeping, never a message of the context.
_NOT_MESSAGES = frozenset(
    {
        "chat.usage_metadata",
        "chat.usage_summary",
        "chat.processing_status",
        "chat.delta",
        "chat.reasoning",
        "chat.error",
        "task.global_running",
    }
)
#: Largest transcript read (bytes).
MAX_HISTORY_BYTES = 512 * 1024 * 1024


@dataclass(slots=True)
class Transcript:
    """The messages of a transcript, the usage records, and the lines that could not be read."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)
    #: `chat.usage_summary` records (input tokens, usage percent, the window it used).
    usage: list[dict[str, Any]] = field(default_factory=list)
    records: int = 0
    turns: int = 0


def _tool_call(record: Mapping[str, Any]) -> dict[str, Any]:
    call = record.get("tool_call")
    if isinstance(call, Mapping):
        name = call.get("name") or (call.get("function") or {}).get("name")
        arguments = call.get("arguments") or (call.get("function") or {}).get("arguments")
        call_id = call.get("id") or call.get("tool_call_id")
    else:
        name, arguments, call_id = (
            record.get("tool_name"),
            record.get("arguments"),
            record.get("tool_call_id"),
        )
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
    return {
        "id": str(call_id or record.get("id") or ""),
        "type": "function",
        "function": {"name": str(name or "tool"), "arguments": arguments},
    }


def _message(record: Mapping[str, Any]) -> dict[str, Any] | None:
    """The context message a record stands for, or None for bookkeeping."""
    event = record.get("event_type")
    content = record.get("content")
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    if record.get("role") == "user" and event in (None, "", "chat.send", "user"):
        return {"role": "user", "content": text}
    if event == "chat.final" or (event in (None, "") and record.get("role") == "assistant"):
        return {"role": "assistant", "content": text} if text else None
    if event == "chat.tool_call":
        return {"role": "assistant", "content": text or "", "tool_calls": [_tool_call(record)]}
    if event == "chat.tool_result":
        call_id = record.get("tool_call_id") or (record.get("tool_call") or {}).get("id")
        return {"role": "tool", "content": text, "tool_call_id": str(call_id or "")}
    return None


def add_record(transcript: Transcript, record: Mapping[str, Any]) -> None:
    """Fold one transcript record in (a message, a usage record, or bookkeeping)."""
    transcript.records += 1
    if record.get("event_type") == "chat.usage_summary":
        transcript.usage.append(dict(record))
    if record.get("event_type") in _NOT_MESSAGES:
        return
    message = _message(record)
    if message is not None:
        transcript.turns += message["role"] == "user"
        transcript.messages.append(message)


def transcript_from_records(records: Iterable[Any]) -> Transcript:
    """A transcript from records already read (e.g. the gateway's `history.get` pages), in
    order; a record that is not an object is reported by its position."""
    transcript = Transcript()
    for number, record in enumerate(records, 1):
        if not isinstance(record, Mapping):
            transcript.problems.append((number, "not a record object"))
            continue
        add_record(transcript, record)
    return transcript


def read_history(path: Path) -> Transcript:
    """The transcript of one session; OSError when the file cannot be opened."""
    transcript = Transcript()
    if path.stat().st_size > MAX_HISTORY_BYTES:
        raise OSError(f"{path.name} is over {MAX_HISTORY_BYTES // (1024 * 1024)} MB")
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except (ValueError, RecursionError) as error:
                transcript.problems.append((number, f"not JSON ({str(error)[:80]})"))
                continue
            if not isinstance(record, dict):
                transcript.problems.append((number, "not a record object"))
                continue
            add_record(transcript, record)
    return transcript
