"""Release facts beside a context: what a load's other files say about the release.

A context with no release fact of its own (`sources.evidence`) takes those of the debug
records in its folder, else in its session, and learns whether an `llm_request.jsonl` lies
in its folder or logs its session. `NeighbourFacts` holds what one load read for that; the
records' facts per folder and session are sorted out when a context first asks (most loads
never do). Must not import Textual or Rich.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from inspector.core.artifact import Artifact
from inspector.core.timeline import DebugRecord, safe_name
from inspector.sources.classify import FileLoad
from inspector.sources.dump_artifact import EvidenceOf
from inspector.sources.evidence import evidence_for, release_evidence
from inspector.sources.llm_request import LLM_REQUEST_FILE

#: Debug records kept per folder and per session as release facts for contexts without any.
_NEIGHBOUR_FACTS = 16


class NeighbourFacts:
    """The release facts of one load's debug records, and where its model-call logs lie."""

    def __init__(self, loads: Mapping[Path, FileLoad], records: list[DebugRecord]) -> None:
        self.llm_dirs: set[str] = set()
        self.llm_sessions: set[str] = set()
        self._records = records
        self._facts: tuple[dict[str, list[Any]], dict[str, list[Any]]] | None = None
        for path, load in loads.items():
            if load.calls or path.name == LLM_REQUEST_FILE:
                self.llm_dirs.add(str(path.parent))
            for call in load.calls:
                if call.session_id:
                    self.llm_sessions.add(safe_name(call.session_id))

    def facts(self) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
        """The records' release facts per folder and per session (sorted out on first ask)."""
        if self._facts is None:
            self._facts = neighbour_facts(self._records)
        return self._facts

    def near_llm_log(self, source: str, session: str | None) -> bool:
        """True when an `llm_request.jsonl` lies in the artifact's folder or logs its session."""
        if os.path.dirname(source) in self.llm_dirs:
            return True
        return bool(session) and safe_name(session or "") in self.llm_sessions

    def neighbours(self, source: str, session: str | None) -> Callable[[], list[Any]]:
        """The release facts beside an artifact (its folder's, else its session's records)."""

        def found() -> list[Any]:
            dir_facts, session_facts = self.facts()
            return (
                dir_facts.get(os.path.dirname(source))
                or (session_facts.get(safe_name(session)) if session else None)
                or []
            )

        return found

    def evidence(self, artifact: Artifact, objects: list[Any]) -> Artifact:
        """The artifact with the release facts its reader saw, else those beside it."""
        return evidence_for(
            artifact,
            objects,
            self.neighbours(artifact.source, artifact.session_id),
            self.near_llm_log(artifact.source, artifact.session_id),
        )

    def evidence_of(self, source: str, session: str | None, objects: list[Any]) -> EvidenceOf:
        """`evidence` for a snapshot not made yet (`dump_artifact` sets it when made)."""
        found = self.neighbours(source, session)
        llm_log = self.near_llm_log(source, session)
        return lambda contexts: release_evidence(None, contexts, objects, found, llm_log)


def neighbour_facts(
    records: Iterable[DebugRecord],
) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    """The raw span_built / compression_retry records (at most `_NEIGHBOUR_FACTS` each) per
    folder and per session (its safe name): release facts for contexts without any."""
    dir_facts: dict[str, list[Any]] = {}
    session_facts: dict[str, list[Any]] = {}
    for record in records:
        if record.event not in ("span_built", "compression_retry"):
            continue
        for bucket, key in (
            (dir_facts, os.path.dirname(record.source)),
            (session_facts, safe_name(record.key[1] or "")),
        ):
            found = bucket.setdefault(key, [])
            if len(found) < _NEIGHBOUR_FACTS:
                found.append(record.raw)
    return dir_facts, session_facts
