"""One file read and sorted into what it holds: dumps, debug records, snapshots, message lists.

What a document is, is decided by its content (`inspector.formats` checks each kind's
keys); a `llm_request.jsonl` record is a model call (`sources.llm_request`), not a
compressor's debug record. JSON that is none of the formats (a harness's `result.json`, `http_requests.json`,
`index.json`) is skipped quietly inside a folder but is an error when named explicitly.
JSON that is a near miss of a format is an error everywhere, never a skip: a document
carrying a key only our formats use (`messages`, `processor_type`, ...), a dump or a
snapshot wrapped in `[...]`, a message list with one `role` missing, a record with an
`event` that is not a string, a chat request whose `messages` key is gone. A single
message object (a one-message JSON Lines file) is a message list of one.
Every failure becomes one `LoadError` per file, located ("key a.b[2]", "line 12").
Must not import Textual or Rich.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.core.artifact import Artifact, LoadError
from inspector.core.errors import InspectorError
from inspector.core.snapshot import ContextSnapshot, looks_like_snapshot, snapshot_from_dict
from inspector.core.timeline import DebugRecord, plain_debug_record
from inspector.core.tuning import Tuning
from inspector.formats.base import validate
from inspector.formats.snapshot import SnapshotEnvelope
from inspector.sources.debuglog import (
    check_debug_record,
    looks_like_debug_record,
    near_debug_record,
    plainly_valid,
)
from inspector.sources.dump import DumpFile, looks_like_dump, parse_dump, strip_dump
from inspector.sources.files import DUMP_NAME_RE, read_regular
from inspector.sources.formats import (
    is_message_dict,
    looks_like_message_container,
    looks_like_message_list,
    read_message_list,
)
from inspector.sources.jsonio import (
    MAX_DEPTH,
    MAX_DOCUMENT_BYTES,
    MAX_FILE_BYTES,
    STREAM_MIN_BYTES,
    ReadProblem,
    loads_strict_bytes_openings,
    parsed_too_deep,
    read_json_file,
    summarize_problems,
)
from inspector.sources.llm_request import is_llm_request, read_llm_request
from inspector.sources.recording import NO_CONTEXTS, looks_like_watch_line, recorded_context

#: Start of the error text for a shape no check anticipated (tests assert it never occurs).
UNEXPECTED = "unexpected structure"

#: Keys that only the inspector's formats use: a document carrying one was meant to be read.
_FORMAT_KEYS = frozenset(
    {"messages", "system_messages", "processor_type", "compression_request", "context_after"}
)
#: Keys of a chat-completion request besides `messages`: with `model`, a chat request.
_CHAT_KEYS = frozenset(
    {"tools", "tool_choice", "temperature", "top_p", "max_tokens", "stream", "system"}
)
_NOT_A_FORMAT = "expected a dump, debug log, snapshot or message list"
#: Keys of openJiuwen's debug records: four of them without `event` is a broken record.
_DEBUG_KEYS = frozenset(
    {"processor", "session_id", "context_id", "phase", "total_tokens", "threshold", "hit"}
    | {"reason", "context_max", "timestamp", "attempt", "retry"}
)
_DEBUG_NUMBERS = frozenset({"phase", "total_tokens", "threshold", "hit", "attempt"})
#: Keys of our snapshot format besides `messages`.
_SNAPSHOT_KEYS = frozenset(
    {"processor", "processor_family", "openjiuwen_version", "token_mode", "config"}
    | {"context_max", "tools", "scenario", "system_messages"}
)


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file a folder scan passed over, and why (not an error)."""

    source: str
    reason: str


@dataclass(slots=True)
class FileLoad:
    """What one file held, before linking."""

    path: Path
    group: int
    explicit: bool
    mtime: float
    artifacts: list[Artifact] = field(default_factory=list)
    dumps: list[DumpFile] = field(default_factory=list)
    records: list[DebugRecord] = field(default_factory=list)
    #: `llm_request.jsonl` records as artifacts, before the loader links their evaluations.
    calls: list[Artifact] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)
    #: Header-level loads: messages in each dump's context_after (the lists are dropped).
    after_counts: dict[str, int | None] = field(default_factory=dict)
    #: Files passed over, when read in a worker process (the caller's list is not shared).
    skips: list[Skipped] = field(default_factory=list)
    #: Lines of an `inspector watch --json` recording read (contexts or not).
    watch_lines: int = 0


def file_mtime(path: Path) -> float:
    """The file's modification time (0 when it cannot be read)."""
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _walk_for_depth(document: Any) -> bool:
    """Header-level loads walk a document for nesting depth unless it is a dump or a debug
    record: only their fixed, shallow keys are read then, so the C parser's own limit
    (Python's recursion limit) is guard enough."""
    if type(document) is dict and type(document.get("event")) is str:
        return False  # a debug record (what looks_like_debug_record says), cheaply
    return not (looks_like_dump(document) or looks_like_debug_record(document))


def load_one(
    path: Path,
    group: int,
    explicit: bool,
    max_file_bytes: int = MAX_FILE_BYTES,
    skipped: list[Skipped] | None = None,
    header_only: bool = False,
) -> FileLoad:
    """Read one file into a FileLoad (a header-level load strips dumps of their messages)."""
    load = None
    if DUMP_NAME_RE.match(path.name):
        load = _dump_the_short_way(path, group, explicit, max_file_bytes, header_only)
    if load is None:
        load = _read_file(path, group, explicit, max_file_bytes, skipped, header_only)
    if header_only:
        for index, dump in enumerate(load.dumps):
            load.dumps[index], load.after_counts[dump.id] = strip_dump(dump)
    return load


def _dump_the_short_way(
    path: Path, group: int, explicit: bool, max_file_bytes: int, header_only: bool
) -> FileLoad | None:
    """A file named like a dump that holds one well-formed dump, read with one stat and one
    read and no classification chain: the FileLoad `_read_file` makes of it. None for
    anything else (not a regular file, too big to read whole, no UTF-8, no JSON, nested
    too deeply, not a dump, a dump with a bad key): the long way then reads it again and
    says what is wrong, where."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    limit = min(max_file_bytes + 1, STREAM_MIN_BYTES, MAX_DOCUMENT_BYTES + 1)
    if not stat.S_ISREG(info.st_mode) or not 0 < info.st_size < limit:
        return None
    try:
        data = read_regular(path)
        if data.find(b"\x00", 0, 8192) >= 0:
            return None
        # what `data.decode("utf-8-sig")` then `loads_strict` gives, parsed from the bytes
        body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
        document, openings = loads_strict_bytes_openings(body)
    except (OSError, ValueError, RecursionError):
        return None
    if type(document) is not dict or "event" in document or not looks_like_dump(document):
        return None
    # what read_json_file checks (a header-level load reads a dump's fixed keys only); a
    # value nests no deeper than its text opens containers, counted by the parse's guard
    if not header_only and openings > MAX_DEPTH and parsed_too_deep(document):
        return None
    try:
        dump = parse_dump(document, str(path))
    except (*_CAUGHT, RecursionError):
        return None
    load = FileLoad(path, group, explicit, info.st_mtime)
    load.dumps.append(dump)
    return load


def _read_file(
    path: Path,
    group: int,
    explicit: bool,
    max_file_bytes: int,
    skipped: list[Skipped] | None,
    header_only: bool,
) -> FileLoad:
    source = str(path)
    load = FileLoad(path, group, explicit, file_mtime(path))
    result = read_json_file(
        path, max_file_bytes=max_file_bytes, check_nesting=_walk_for_depth if header_only else True
    )
    if result.problem is not None:
        load.errors.append(LoadError(source, result.problem.error, result.problem.where))
    if not result.documents:
        return load
    try:
        bad = _classify(result.documents, result.json_lines, load)
    except RecursionError:
        load.errors.append(LoadError(source, "JSON nested too deeply"))
        bad = []
    if bad:
        # one error per file: the unreadable lines and the refused records together
        load.errors = [
            e for e in load.errors if e.error != (result.problem.error if result.problem else None)
        ]
        merged = summarize_problems(result.bad_records + bad)
        assert merged is not None
        load.errors.append(LoadError(source, merged.error, merged.where))
    if load.watch_lines and not (load.artifacts or load.errors):
        load.errors.append(LoadError(source, NO_CONTEXTS))
    if not (load.artifacts or load.dumps or load.records or load.calls or load.errors):
        document = result.documents[0][1]
        what = describe_unknown(document)
        near = near_miss(document)
        if near is not None:
            load.errors.append(
                LoadError(
                    source, f"{near}: {_NOT_A_FORMAT}", locate_key(path, _near_where(document))
                )
            )
        elif explicit or looks_intended(document):
            load.errors.append(
                LoadError(source, f"not an inspector artifact ({what}): {_NOT_A_FORMAT}")
            )
        elif skipped is not None:
            skipped.append(Skipped(source, f"not an inspector artifact ({what})"))
    return load


def looks_intended(document: Any) -> bool:
    """True for JSON that tries to be a dump, snapshot, debug log or message list but is
    malformed. Such a file is an error even inside a folder scan; unrelated JSON is skipped."""
    if isinstance(document, dict):
        return not _FORMAT_KEYS.isdisjoint(document) or near_miss(document) is not None
    if isinstance(document, list) and document:
        return near_miss(document) is not None
    return False


def near_miss(document: Any) -> str | None:
    """Why a document that no reader took is a broken artifact rather than unrelated JSON."""
    if isinstance(document, list):
        head = [item for item in document[:20] if isinstance(item, Mapping)]
        kind = _wrapped_kind(document)
        if kind is not None:
            items = f"{len(document)} item{'s' if len(document) != 1 else ''}"
            return f"a list of {items} holding {kind}, which are never wrapped in a list"
        if any("role" in item for item in head):
            return "a list of messages in which some item has no string 'role'"
        if head and len(head) == len(document[:20]) and all("content" in i for i in head):
            return "a list of messages without their 'role'"
        return None
    if not isinstance(document, Mapping):
        return None
    if "event" in document and not isinstance(document.get("event"), str):
        return "a debug record whose 'event' is not a string"
    if "messages" not in document and "model" in document and not _CHAT_KEYS.isdisjoint(document):
        return "a chat request without its 'messages' list"
    if "role" in document and not isinstance(document.get("role"), str):
        return "a message whose 'role' is not a string"
    if _eventless_record(document):
        return "a debug record without its 'event'"
    if "messages" not in document and len(_SNAPSHOT_KEYS.intersection(document)) >= 3:
        return "a snapshot without its 'messages' list"
    for key, value in list(document.items())[:20]:
        kind = _wrapped_kind([value])
        if kind is not None:
            return f"an object holding {kind} under {str(key)!r}, which are never wrapped"
    return None


_WRAPPED_KINDS = (
    (looks_like_dump, "compression dumps"),
    (looks_like_snapshot, "snapshots"),
    (looks_like_debug_record, "debug records"),
)


def _wrapped_kind(items: list[Any], depth: int = 0) -> str | None:
    """The kind of artifact found among the first items of a list (lists inside it searched
    a few levels down): what a wrapper such as `[...]` or `[[...]]` hides."""
    for item in items[:20]:
        if isinstance(item, Mapping):
            for test, kind in _WRAPPED_KINDS:
                if test(item):
                    return kind
        elif isinstance(item, list) and depth < 3:
            inner = _wrapped_kind(item, depth + 1)
            if inner is not None:
                return inner
    return None


def _eventless_record(document: Mapping[str, Any]) -> bool:
    """Four or more debug-record keys, one of them a check's number, and no `event`."""
    keys = _DEBUG_KEYS.intersection(document)
    return "event" not in document and len(keys) >= 4 and not _DEBUG_NUMBERS.isdisjoint(keys)


def _near_where(document: Any) -> str | None:
    """Where a near miss shows: the first wrapped item, or the key that is wrong."""
    if isinstance(document, list):
        return "key [0]"
    if isinstance(document, Mapping):
        for key in ("event", "role"):
            if key in document:
                return f"key {key}"
        if _eventless_record(document):
            return None
        for key, value in list(document.items())[:20]:
            if isinstance(key, str) and _wrapped_kind([value]) is not None:
                return f"key {key}"
    return None


def locate_key(path: Path, where: str | None) -> str | None:
    """Add the line and byte of a "key a.b[3].c" location, found by scanning the file's bytes."""
    if not where or not where.startswith("key "):
        return where
    try:
        if path.stat().st_size > MAX_DOCUMENT_BYTES:
            return where
        data = read_regular(path)
    except OSError:
        return where
    position = -1
    for part in re.split(r"[.\[]", where[4:]):
        name = part.rstrip("]")
        if not name or name.isdigit():
            continue
        found = data.find(b'"' + name.encode("utf-8", "replace") + b'"', position + 1)
        if found < 0:
            return where
        position = found
    if position < 0:
        return where
    line = data.count(b"\n", 0, position) + 1
    return f"{where} (line {line}, byte {position})"


def describe_unknown(document: Any) -> str:
    """A document no reader took, in a few words."""
    if isinstance(document, Mapping):
        if "context_changed" in document:
            return "a harness result.json"
        if "scenarios" in document:
            return "a scenario index"
        keys = ", ".join(str(k) for k in list(document.keys())[:4])
        return f"an object with keys {keys}" if keys else "an empty object"
    if isinstance(document, list):
        if document and all(isinstance(i, Mapping) and "response_status" in i for i in document):
            return "a list of recorded HTTP requests"
        return f"a list of {len(document)} items that are not messages"
    return f"a JSON {type(document).__name__}"


def _error_text(error: Exception) -> tuple[str, str | None]:
    """(words, where) of an error a reader raised on purpose or by surprise."""
    if isinstance(error, InspectorError):
        text, where = str(getattr(error, "message", None) or error), getattr(error, "where", None)
        located = _INDEXED_RE.match(text)
        if where is None and located:
            where = f"key {located.group(1)}"  # "messages[93]: ..." names its item
        return text, where
    return f"{UNEXPECTED} ({type(error).__name__}: {error})", None


_INDEXED_RE = re.compile(r"^([a-z_]+\[\d+\]):")
_CAUGHT = (InspectorError, TypeError, ValueError, AttributeError, KeyError, IndexError)


def _classify(
    documents: list[tuple[str | None, Any]], json_lines: bool, load: FileLoad
) -> list[ReadProblem]:
    """Sort the documents of one file into dumps, debug records and context artifacts.

    Returns the JSON Lines records refused for their content (a single document's problem
    goes straight to `load.errors`). Consecutive message records of a JSON Lines file are
    one message list.
    """
    bad_records: list[ReadProblem] = []
    pending: list[tuple[str | None, Any]] = []

    def flush() -> None:
        if pending:
            where = pending[0][0]
            try:
                _add_messages([m for _, m in pending], None, where, load, json_lines)
            except _CAUGHT as error:
                bad_records.append(ReadProblem(_error_text(error)[0], where))
            pending.clear()

    source = str(load.path)
    for where, document in documents:
        if json_lines and _plain_debug_line(document):
            # what the chain below makes of the usual line of a debug log, directly
            if pending:
                flush()
            line = int(where[5:]) if where else None  # a record is "line N"
            load.records.append(plain_debug_record(document, source, line))
            continue
        if json_lines and is_message_dict(document):
            pending.append((where, document))
            continue
        flush()
        try:
            taken = _classify_one(document, where, load, json_lines)
            if not taken and json_lines and looks_intended(document):
                what = near_miss(document) or describe_unknown(document)
                bad_records.append(ReadProblem(f"not a record of any known format ({what})", where))
        except _CAUGHT as error:
            detail, where_text = _error_text(error)
            location = " ".join(p for p in (where, where_text) if p) or None
            if json_lines:
                bad_records.append(ReadProblem(detail, location))
            else:
                load.errors.append(
                    LoadError(str(load.path), detail, locate_key(load.path, location))
                )
    flush()
    return bad_records


#: Events of openJiuwen's compressor debug records (none is a watch line's or a model call's).
_DEBUG_EVENTS = frozenset({"threshold_check", "span_built", "compression_retry"})


def _plain_debug_line(document: Any) -> bool:
    """A JSON Lines record `_classify_one` takes as a debug record without a word: a known
    event's, no message (no `role`), its keys plainly of the right types (`plainly_valid`)."""
    if type(document) is not dict or "role" in document:
        return False
    event = document.get("event")
    return type(event) is str and event in _DEBUG_EVENTS and plainly_valid(document)


def _classify_one(document: Any, where: str | None, load: FileLoad, json_lines: bool) -> bool:
    """Read one document into `load` if it is one of the formats (raising when it is broken);
    False when it is none of them."""
    line = int(where.split()[1]) if where and where.startswith("line ") else None
    if type(document) is dict:
        event = document.get("event")
        if type(event) is str and event in _DEBUG_EVENTS:
            # the usual line of a debug log: what the chain below decides for it, directly
            check_debug_record(document)
            load.records.append(DebugRecord(document, str(load.path), line))
            return True
    if looks_like_watch_line(document):
        load.watch_lines += 1
        context = document.get("snapshot") if document.get("event") == "artifact" else None
        if context is not None:
            label = f"{load.path.name}:{where}" if where else load.path.name
            read = read_snapshot(context, label, str(load.path))
            load.artifacts.append(recorded_context(document, read, where))
    elif looks_like_debug_record(document) or near_debug_record(document):
        check_debug_record(document)
        if is_llm_request(document):
            load.calls.append(read_llm_request(document, str(load.path), line))
        else:
            load.records.append(DebugRecord(document, str(load.path), line))
    elif looks_like_dump(document):
        load.dumps.append(parse_dump(document, str(load.path)))
    elif looks_like_snapshot(document):
        label = f"{load.path.name}:{where}" if where else _snapshot_label(document, load.path)
        load.artifacts.append(read_snapshot(document, label, str(load.path)))
    elif looks_like_message_list(document) or (
        isinstance(document, list) and near_miss(document) is not None and _has_message(document)
    ):
        _add_messages(document, None, where, load, json_lines)
    elif looks_like_message_container(document) or (
        isinstance(document, Mapping)
        and isinstance(document.get("messages"), list)
        and _has_message(document["messages"])
    ):
        _add_messages(document["messages"], document, where, load, json_lines)
    elif is_message_dict(document) and "content" in document:
        _add_messages([document], None, where, load, json_lines)
    else:
        return False
    return True


def _has_message(items: list[Any]) -> bool:
    return any(is_message_dict(item) for item in items[:20])


def read_snapshot(document: Mapping[str, Any], label: str, source: str) -> Artifact:
    """A snapshot document as an artifact; its envelope is checked by `formats.SnapshotEnvelope`."""
    envelope: SnapshotEnvelope = validate(SnapshotEnvelope, document)
    snapshot = snapshot_from_dict(document, default_id=label)
    recorded = snapshot.recorded_fields
    return Artifact(
        source=source,
        id=snapshot.id,
        kind="snapshot",
        snapshot=snapshot,
        session_id=envelope.session_id,
        context_id=envelope.context_id,
        timestamp=envelope.timestamp,
        processor=snapshot.tuning.processor_class if "processor" in recorded else None,
        recorded_token_mode=snapshot.tuning.token_mode if "token_mode" in recorded else None,
    )


def _snapshot_label(document: Mapping[str, Any], path: Path) -> str:
    scenario = document.get("scenario")
    return scenario if isinstance(scenario, str) and scenario else str(path)


def _add_messages(
    messages: list[Any],
    container: Mapping[str, Any] | None,
    where: str | None,
    load: FileLoad,
    json_lines: bool,
) -> None:
    parsed = read_message_list(messages, container)
    label = (
        f"{load.path.name}:{where}"
        if where and not (json_lines and container is None)
        else load.path.name
    )
    snapshot = ContextSnapshot(
        id=label,
        system_messages=parsed.system_messages,
        messages=parsed.messages,
        tools=parsed.tools,
        tuning=Tuning(),
        extra={"format": parsed.format, "notes": list(parsed.notes)},
    )
    load.artifacts.append(
        Artifact(
            source=str(load.path),
            id=label,
            kind="messages",
            snapshot=snapshot,
            extra={"format": parsed.format, "notes": list(parsed.notes)},
        )
    )
