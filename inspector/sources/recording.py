"""Recordings of `inspector watch --json --snapshots`: the contexts a watch saw, read back.

A recording is JSON Lines, one watch event per line, each with `event` (`state`,
`artifact`, `context.compression_state`, ...) and the time `at` the watch printed it. An
`artifact` line that carries a `snapshot` becomes one context to decide again, with what
the watched source recorded (`recorded`) and, for a window rebuilt from a live agent, its
`live` block (origin, window, revision, what is approximated), so `why`, the TUI and
`inspector index` treat a live window like any other context. The other events (connection
states, usage gauges, compression operations) describe the session but are not contexts:
they are read and counted, never an error. A recording made without `--snapshots` has no
context to decide, and says so. Must not import Textual, Rich, render, tui or cli.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from inspector.core.artifact import Artifact

#: The `event` values `inspector watch --json` prints (`inspector.core.live_events`).
WATCH_EVENTS = frozenset(
    {
        "state",
        "artifact",
        "context.compression_state",
        "context.usage",
        "context.compressed",
        "trace.updated",
        "gateway",
        "error",
        "removed",
    }
)
#: The message of a recording with events but no context in it.
NO_CONTEXTS = (
    "a watch recording without contexts: record it with `inspector watch --json --snapshots`"
)


def looks_like_watch_line(document: Any) -> bool:
    """A line `inspector watch --json` printed: a known `event` and the time `at` it printed it
    (openJiuwen's debug records have neither `at` nor these event names)."""
    if not isinstance(document, Mapping):
        return False
    event = document.get("event")
    return isinstance(event, str) and event in WATCH_EVENTS and isinstance(document.get("at"), str)


def is_live(artifact: Artifact) -> bool:
    """True for a context window rebuilt from a live agent (trajectory API or its files)."""
    return isinstance(artifact.extra.get("live"), Mapping)


def _time(text: str) -> float | None:
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def recorded_context(line: Mapping[str, Any], read: Artifact, where: str | None) -> Artifact:
    """The artifact of one `artifact` line: `read` is its `snapshot` read as a snapshot
    document; the line adds the watched source's identity, time, record and live block."""
    live = line.get("live")
    recorded = line.get("recorded")
    extra: dict[str, Any] = {
        **dict(read.extra),
        "recording": {
            "line": where,
            "change": _text(line.get("change")),
            "watched_source": _text(line.get("source")),
            "watched_kind": _text(line.get("kind")),
            "at": line.get("at"),
        },
    }
    if isinstance(live, Mapping):
        extra["live"] = dict(live)
    return dataclasses.replace(
        read,
        id=_text(line.get("id")) or read.id,
        recorded=dict(recorded) if isinstance(recorded, Mapping) else dict(read.recorded),
        processor=_text(line.get("processor")) or read.processor,
        session_id=_text(line.get("session_id")) or read.session_id,
        timestamp=read.timestamp if read.timestamp is not None else _time(str(line["at"])),
        extra=extra,
    )
