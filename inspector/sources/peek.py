"""Cheap looks at a file before it is read in full: what it probably is (a debug log, a
dump, anything else), and for a dump what linking needs (processor, session, context,
time) from its first keys and its file name or last bytes. Only decides reading order and
links; the full read (`inspector.sources.classify`) decides what a file is.
`dump_header` and `head_field` import no parser (a browser's header fill needs no pydantic).
Must not import Textual or Rich.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from inspector.core.timeline import DumpRef
from inspector.sources.files import DUMP_NAME_RE, open_regular, read_regular

_DUMP_KEYS_RE = re.compile(rb'"(?:processor_type|compression_request|context_after)"\s*:')
_HEAD_FIELD_RES = {
    name: re.compile(rb'"' + name.encode() + rb'"\s*:\s*("(?:[^"\\]|\\.)*")')
    for name in ("processor_type", "session_id", "context_id")
}
_TAIL_TIMESTAMP_RE = re.compile(rb'"timestamp"\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*}\s*$')
_MESSAGE_ID_RE = re.compile(rb'"context_message_id"\s*:\s*"([^"\\]{1,200})"')
PEEK_BYTES = 64 * 1024


def peek(path: Path) -> tuple[str, bytes]:
    """("log" | "dump" | "other", first bytes): a cheap guess that only decides reading order."""
    from inspector.sources.debuglog import looks_like_debug_record  # (pydantic: not for headers)

    try:
        with open_regular(path) as handle:
            head = handle.read(PEEK_BYTES)
    except OSError:
        return "other", b""
    first = head.lstrip().split(b"\n", 1)[0].strip()
    if first.startswith(b"{") and first.endswith(b"}"):
        try:
            record = json.loads(first)
        except (ValueError, RecursionError):
            record = None
        if looks_like_debug_record(record):
            return "log", head
    if _DUMP_KEYS_RE.search(head[:8192]):
        return "dump", head
    return "other", head


def head_field(head: bytes, name: str) -> str | None:
    """A string field among a dump's first bytes, found without parsing (None: absent)."""
    match = _HEAD_FIELD_RES[name].search(head[:8192])
    if not match:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def dump_header(path: Path, head: bytes, whole: bool = False) -> DumpRef:
    """What linking needs, from a dump's first keys and its file name or last bytes
    (`whole`: `head` is the whole file, as `peek` says when it read less than it asked)."""
    name_match = DUMP_NAME_RE.match(path.name)
    timestamp: float | None = None
    try:
        if whole:
            tail = head[-512:]  # no second open
        else:
            size = path.stat().st_size
            with open_regular(path) as handle:
                handle.seek(max(size - 512, 0))
                tail = handle.read()
        found = _TAIL_TIMESTAMP_RE.search(tail)
        if found:
            timestamp = float(found.group(1))
            if not math.isfinite(timestamp):
                timestamp = None  # the full read refuses it with a located error
    except (OSError, ValueError):
        timestamp = None
    if timestamp is None and name_match:
        timestamp = int(name_match.group(1)) / 1000
    processor = head_field(head, "processor_type") or (name_match.group(2) if name_match else None)
    session = head_field(head, "session_id") or (name_match.group(3) if name_match else None)
    stem = path.name[:-5] if path.name.endswith(".json") else path.name
    return DumpRef(stem, processor, session, head_field(head, "context_id"), timestamp)


def kept_ids_from_file(path: Path) -> frozenset[str]:
    """context_message_ids in a dump's context_after, found without parsing the file."""
    try:
        data = read_regular(path)
    except OSError:
        return frozenset()
    start = data.rfind(b'"context_after"')
    if start < 0:
        return frozenset()
    end = data.find(b'"benefit"', start)
    return frozenset(
        m.group(1).decode("utf-8", "replace")
        for m in _MESSAGE_ID_RE.finditer(data, start, end if end > 0 else len(data))
    )
