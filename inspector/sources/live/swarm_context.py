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


def _live_artifact(
    chosen: Artifact, session_id: str, revision: int, approximated: list[str]
) -> Artifact:
    """A rebuilt context as the live artifact of its context (`<sid>/live`, or
    `<sid>/<context id>/live` for a context other than the agent's default one)."""
    from inspector.sources.jiuwenswarm.session import DEFAULT_CONTEXT

    recorded: dict[str, Any] = dict(chosen.recorded)
    notes = [*list(recorded.get("unrecoverable") or []), *approximated]
    context = chosen.context_id
    base = session_id if context in (None, DEFAULT_CONTEXT) else f"{session_id}/{context}"
    live = {
        "window_id": f"{base}/files",
        "revision": revision,
        "partial": True,
        "rebuilt_from": str(recorded.get("context", "")),
        "approximated": notes,
    }
    return dataclasses.replace(
        chosen,
        id=f"{base}/live",
        kind="messages",
        recorded={**recorded, "unrecoverable": notes},
        extra={**dict(chosen.extra), "live": live},
    )


def _per_context(artifacts: list[Artifact], processor: str | None) -> list[Artifact]:
    """For each context id, the artifact of `processor` (else the default one, else the first)."""
    wanted = processor or DEFAULT_PROCESSOR
    by_context: dict[str | None, list[Artifact]] = {}
    for artifact in artifacts:
        by_context.setdefault(artifact.context_id, []).append(artifact)
    return [
        next((a for a in group if a.processor == wanted), None)
        or next((a for a in group if a.processor == DEFAULT_PROCESSOR), group[0])
        for group in by_context.values()
    ]


def rebuild_contexts(
    home: Path,
    session_id: str,
    processor: str | None,
    revision: int,
    counters: dict[str, TokenCounter] | None = None,
) -> list[Artifact]:
    """Every context of the session (one per context id), from its files, for `processor`."""
    from inspector.sources.jiuwenswarm.home import SwarmTarget
    from inspector.sources.jiuwenswarm.session import load_home

    target = SwarmTarget(home, session_id)
    if not (target.sessions_dir / session_id).is_dir():
        return []
    artifacts = [r for r in load_home(target, counters) if isinstance(r, Artifact)]
    note = (
        "rebuilt from the agent's files, not from the wire: jiuwenswarm 0.2.3 has no "
        "trajectory API; the system prompt and tools are not in them"
    )
    return [
        _live_artifact(a, session_id, revision, [note]) for a in _per_context(artifacts, processor)
    ]


def rebuild_context(
    home: Path,
    session_id: str,
    processor: str | None,
    revision: int,
    counters: dict[str, TokenCounter] | None = None,
) -> Artifact | None:
    """The session's default context from its files (None: no such session)."""
    found = rebuild_contexts(home, session_id, processor, revision, counters)
    return found[0] if found else None


def rebuild_from_history(
    records: list[dict[str, Any]],
    where: tuple[str, str],
    processor: str | None,
    revision: int,
    states: list[dict[str, Any]],
    counters: dict[str, TokenCounter] | None = None,
) -> Artifact | None:
    """The session's context from its transcript read over the wire (`history.get`) with
    the compressions its frames reported folded in: no home folder needed. `where` is the
    (gateway URL, session id); `states` the `context.compression_state` payloads seen."""
    from inspector.core.standard.pipeline import jiuwenswarm_chain
    from inspector.sources.jiuwenswarm.config import SwarmConfig
    from inspector.sources.jiuwenswarm.history import transcript_from_records
    from inspector.sources.jiuwenswarm.records import from_state
    from inspector.sources.jiuwenswarm.session import (
        SessionContext,
        context_artifacts,
        held_from_transcript,
    )

    url, session_id = where
    if counters is None:
        from inspector.encoding import make_counters

        counters = make_counters()
    transcript = transcript_from_records(records)
    operations = [from_state(state) for state in states]
    messages, notes = held_from_transcript(transcript.messages, operations)
    swarm = SwarmConfig("", tuple(jiuwenswarm_chain({})), None, None)
    origin = (
        "the transcript read over the gateway (history.get) with the compressions its frames "
        "reported folded in (approximated)"
    )
    context = SessionContext(session_id, None, url, origin, {"gateway": url})
    artifacts = [
        r
        for r in context_artifacts(context, messages, notes, operations, swarm, counters)
        if isinstance(r, Artifact)
    ]
    chosen = _per_context(artifacts, processor)
    if not chosen:
        return None
    approximated = [
        "read over the gateway: jiuwenswarm 0.2.3 has no trajectory API; the processors' "
        "settings are jiuwenswarm's defaults (its config.yaml is not on the wire), the system "
        "prompt and tools are not in the transcript, long records are cut by the gateway"
    ]
    return _live_artifact(chosen[0], session_id, revision, approximated)


def context_event(artifact: Artifact, revision: int) -> NewArtifact:
    """The rebuilt context as an event (`added` the first time, then `updated`)."""
    return NewArtifact(artifact, "added" if revision == 1 else "updated")
