"""What jiuwenswarm recorded about compression: stdout log lines and checkpoint states.

`parse_log_line` reads openJiuwen's `context compression state: status=… phase=…
processor=… session_id=… context_id=… op=… before=messages=… tokens=… percent=… time=…
after=… saved=…` lines (the INFO line `ContextProcessorStateRecorder.emit` writes, in
jiuwenswarm's stdout and its `agent/.logs/*.log`). `read_checkpoint` opens the checkpoint
SQLite file read-only (`mode=ro` URI), decodes each stored state with the safe unpickler
(nothing in it runs), and finds, by shape, the compression states openJiuwen keeps per
context (its recorder's history, `ContextCompressionState.model_dump`) and the context
messages it stored. Both give `RecordedOperation`s, joined by operation id.
Must not import Textual or Rich.
"""

from __future__ import annotations

import base64
import re
import sqlite3
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.sources.jiuwenswarm import safe_pickle

_LINE = re.compile(
    r"context compression state: status=(?P<status>\S*) phase=(?P<phase>\S*) "
    r"processor=(?P<processor>\S*) session_id=(?P<session>\S*) context_id=(?P<context>\S*) "
    r"op=(?P<op>\S*) before=(?P<before>.*?) after=(?P<after>.*?) saved=(?P<saved>.*)$"
)
_METRIC = re.compile(
    r"messages=(?P<messages>-?\d+) tokens=(?P<tokens>-?\d+) percent=(?P<percent>\S+) "
    r"time=(?P<time>\S+)"
)
_SAVED = re.compile(
    r"messages=(?P<messages>-?\d+) tokens=(?P<tokens>-?\d+) percent=(?P<percent>\S+)"
)
_STAMP = re.compile(r"(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)")
#: The keys every `ContextCompressionState` dump has.
_STATE_KEYS = frozenset({"operation_id", "status", "phase", "processor"})


@dataclass(frozen=True, slots=True)
class RecordedOperation:
    """One compression state as jiuwenswarm recorded it (a log line or a checkpoint dump)."""

    operation_id: str
    status: str
    phase: str
    processor: str
    session_id: str | None = None
    context_id: str | None = None
    before_messages: int | None = None
    before_tokens: int | None = None
    after_messages: int | None = None
    after_tokens: int | None = None
    time: str | None = None
    #: `log:<file>:<line>` or `checkpoint`.
    origin: str = ""
    compact_summary: str = ""
    summary: str = ""
    #: The whole state dump (checkpoint only).
    raw: Mapping[str, Any] = field(default_factory=dict)

    @property
    def compressed(self) -> bool:
        """True when this state reports messages or tokens taken out (a real compression)."""
        if self.status not in ("completed", "compressed"):
            return False
        if self.before_tokens is not None and self.after_tokens is not None:
            return self.after_tokens < self.before_tokens or bool(self.compact_summary)
        return True

    def line(self) -> str:
        """`12:03:04 add_messages 12→5 msgs, 5,400→1,200 tok`."""
        when = (
            (self.time or "?")[11:19] if self.time and len(self.time) >= 19 else (self.time or "?")
        )
        parts = [when, self.status, self.phase or "?"]
        if self.before_messages is not None:
            parts.append(
                f"{self.before_messages}→{'?' if self.after_messages is None else self.after_messages} msgs"
            )
        if self.before_tokens is not None:
            after = "?" if self.after_tokens is None else f"{self.after_tokens:,}"
            parts.append(f"{self.before_tokens:,}→{after} tok")
        return " ".join(parts)


def _metric(text: str) -> tuple[int | None, int | None, str | None]:
    match = _METRIC.search(text)
    if match is None:
        return None, None, None
    return int(match["messages"]), int(match["tokens"]), match["time"]


def parse_log_line(line: str, origin: str = "") -> RecordedOperation | None:
    """One `context compression state:` log line, or None for any other line."""
    if "context compression state:" not in line:
        return None
    match = _LINE.search(line.rstrip("\n"))
    if match is None:
        return None
    before_messages, before_tokens, before_time = _metric(match["before"])
    after_messages, after_tokens, after_time = _metric(match["after"])
    stamp = _STAMP.search(line[: match.start()])
    return RecordedOperation(
        operation_id=match["op"],
        status=match["status"],
        phase=match["phase"],
        processor=match["processor"],
        session_id=match["session"] or None,
        context_id=match["context"] or None,
        before_messages=before_messages,
        before_tokens=before_tokens,
        after_messages=after_messages,
        after_tokens=after_tokens,
        time=after_time or before_time or (stamp.group(1) if stamp else None),
        origin=origin,
    )


def read_log(path: Path) -> Iterator[RecordedOperation]:
    """Every compression state line of one log file (other lines skipped)."""
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, 1):
            operation = parse_log_line(line, f"log:{path.name}:{number}")
            if operation is not None:
                yield operation


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def from_state(state: Mapping[str, Any], context_id: str | None = None) -> RecordedOperation:
    """A `ContextCompressionState.model_dump(mode="json")` as a recorded operation."""
    before = state.get("before") if isinstance(state.get("before"), Mapping) else {}
    after = state.get("after") if isinstance(state.get("after"), Mapping) else {}
    assert isinstance(before, Mapping) and isinstance(after, Mapping)
    return RecordedOperation(
        operation_id=str(state.get("operation_id") or ""),
        status=str(state.get("status") or ""),
        phase=str(state.get("phase") or ""),
        processor=str(state.get("processor") or ""),
        session_id=state.get("session_id") if isinstance(state.get("session_id"), str) else None,
        context_id=context_id,
        before_messages=_int(before.get("messages")),
        before_tokens=_int(before.get("tokens")),
        after_messages=_int(after.get("messages")),
        after_tokens=_int(after.get("tokens")),
        time=str(after.get("time") or before.get("time") or "") or None,
        origin="checkpoint",
        compact_summary=str(state.get("compact_summary") or ""),
        summary=str(state.get("summary") or ""),
        raw=dict(state),
    )


@dataclass(slots=True)
class CheckpointFacts:
    """What the checkpoint holds, by session id: compression states and stored contexts."""

    states: dict[str, list[RecordedOperation]] = field(default_factory=dict)
    #: session id -> context id -> the stored context messages (plain dicts).
    contexts: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    keys: int = 0


def _decode_blob(value: Any) -> bytes | None:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        # the KV store writes bytes as "__BYTES__:" + base64
        try:
            return base64.b64decode(value.removeprefix("__BYTES__:"), validate=True)
        except ValueError:
            return None
    return None


def read_checkpoint(path: Path) -> CheckpointFacts:
    """The checkpoint's states, opened read-only; OSError/ValueError when unreadable."""
    facts = CheckpointFacts()
    uri = f"file:{path.resolve().as_posix()}?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=2.0)
    except sqlite3.Error as error:
        raise ValueError(f"cannot open the checkpoint read-only: {error}") from None
    try:
        rows = connection.execute("SELECT key, value FROM kv_store").fetchall()
    except sqlite3.Error as error:
        raise ValueError(f"not an openJiuwen checkpoint ({error})") from None
    finally:
        connection.close()
    facts.keys = len(rows)
    for key, value in rows:
        if not isinstance(key, str) or not key.endswith("blobs"):
            continue
        blob = _decode_blob(value)
        if blob is None:
            continue
        session_id = key.split(":", 1)[0]
        try:
            tree = safe_pickle.plain(safe_pickle.loads(blob))
        except ValueError as error:
            facts.problems.append(f"{key}: {error}")
            continue
        _collect(tree, session_id, facts, None, 0)
    return facts


def _is_message(item: Any) -> bool:
    return isinstance(item, Mapping) and isinstance(item.get("role"), str) and "content" in item


def _collect(
    tree: Any, session_id: str, facts: CheckpointFacts, context_id: str | None, depth: int
) -> None:
    """Walk the decoded state; keep compression-state lists and message lists by shape."""
    if depth > 60:
        return
    if isinstance(tree, Mapping):
        for key, value in tree.items():
            name = str(key)
            inner = context_id
            if (
                isinstance(value, Mapping | list)
                and "context" in name.lower()
                and name
                not in (
                    "messages",
                    "context_messages",
                )
            ):
                inner = name
            if (
                isinstance(value, list)
                and value
                and all(isinstance(v, Mapping) and set(v) >= _STATE_KEYS for v in value)
            ):
                operations = [from_state(v, inner) for v in value]
                facts.states.setdefault(session_id, []).extend(operations)
                continue
            if isinstance(value, list) and value and all(_is_message(v) for v in value):
                contexts = facts.contexts.setdefault(session_id, {})
                slot = f"{inner or 'context'}.{name}"
                contexts[slot] = [dict(v) for v in value]
                continue
            _collect(value, session_id, facts, inner, depth + 1)
    elif isinstance(tree, list):
        for item in tree:
            _collect(item, session_id, facts, context_id, depth + 1)
