"""A live jiuwenswarm session as a context you can open, when the agent has no trajectory API.

jiuwenswarm 0.2.3 sends only counts and summaries over the gateway; the window itself is
not on the wire. When its home folder is on this machine (`--home`, `$JIUWENSWARM_DATA_DIR`
or `~/.jiuwenswarm` for a loopback gateway), the session's context is rebuilt from its own
files (`inspector.sources.jiuwenswarm`: the checkpoint's stored context, else the
transcript with the logged compressions folded in) after each turn and each compression,
and offered as an artifact whose `live` block says what it was rebuilt from and what is
approximated. `agent_config_event` carries the agent's own thresholds to the tracker.
Imports `inspector.core` and `inspector.sources`; never Textual or Rich.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from inspector.core.artifact import Artifact
from inspector.core.live_events import GatewayEvent, NewArtifact
from inspector.core.live_tracker import AGENT_CONFIG_EVENT
from inspector.core.tokens import TokenCounter

#: The processor whose snapshot stands for the live context when no compression says otherwise.
DEFAULT_PROCESSOR = "DialogueCompressor"


def agent_config_event(home: Path, source: str) -> GatewayEvent | None:
    """The agent's thresholds (conversation tokens per processor), as an event; None if unreadable."""
    from inspector.sources.jiuwenswarm import read_config

    try:
        config = read_config(home)
    except (OSError, ValueError):
        return None
    payload = {
        "triggers": config.trigger_tokens(),
        "config": config.path,
        "model": config.model_name,
    }
    return GatewayEvent(source, "event", AGENT_CONFIG_EVENT, payload, {"payload": payload})


def rebuild_context(
    home: Path,
    session_id: str,
    processor: str | None,
    revision: int,
    counters: dict[str, TokenCounter] | None = None,
) -> Artifact | None:
    """The session's context from its files, for `processor` (None: the default one)."""
    from inspector.sources.jiuwenswarm.home import SwarmTarget
    from inspector.sources.jiuwenswarm.session import load_home

    target = SwarmTarget(home, session_id)
    if not (target.sessions_dir / session_id).is_dir():
        return None
    artifacts = [r for r in load_home(target, counters) if isinstance(r, Artifact)]
    wanted = processor or DEFAULT_PROCESSOR
    chosen = next((a for a in artifacts if a.processor == wanted), None)
    chosen = chosen or next(iter(artifacts), None)
    if chosen is None:
        return None
    recorded: dict[str, Any] = dict(chosen.recorded)
    notes = list(recorded.get("unrecoverable") or [])
    notes.append(
        "rebuilt from the agent's files, not from the wire: jiuwenswarm 0.2.3 has no "
        "trajectory API; the system prompt and tools are not in them"
    )
    live = {
        "window_id": f"{session_id}/files",
        "revision": revision,
        "partial": True,
        "rebuilt_from": str(recorded.get("context", "")),
        "approximated": notes,
    }
    return dataclasses.replace(
        chosen,
        id=f"{session_id}/live",
        kind="messages",
        recorded={**recorded, "unrecoverable": notes},
        extra={**dict(chosen.extra), "live": live},
    )


def context_event(artifact: Artifact, revision: int) -> NewArtifact:
    """The rebuilt context as an event (`added` the first time, then `updated`)."""
    return NewArtifact(artifact, "added" if revision == 1 else "updated")
