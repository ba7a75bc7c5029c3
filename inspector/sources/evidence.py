"""The release facts a reader saw around a context, put on its snapshot for the strategies.

`core.releases.choose_counting(snapshot, evidence=snapshot.release_evidence)` reads them;
the strategies never import sources. What each source contributes: a dump its
`compression_response` (the usage details' key count); a debug run (the one linked to a
dump, or the run a snapshot is the context of) its `span_built` previews and
`compression_retry` error messages; an `llm_request.jsonl` record, or such a record of the
same session or in the same folder, the fact that the log exists (0.1.18+). The
snapshot's own messages' usage records are read by `choose_counting` itself. A context
with no fact of its own (a scenario's `input.json`, a run with a threshold check only)
takes those of the debug records in its folder or of its session (`neighbour_objects`):
one process writes them, so they tell its release.
Must not import Textual or Rich.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from inspector.core.artifact import Artifact
from inspector.core.messages import Message
from inspector.core.releases.detect import ArtifactEvidence, collect_evidence
from inspector.core.timeline import EvaluationRun


def run_objects(run: EvaluationRun | None) -> list[Any]:
    """The records of a run that carry release facts (span_built, compression_retry)."""
    if run is None:
        return []
    return [r for r in (run.span_built, *run.retries) if r is not None]


def dump_objects(raw: Any) -> list[Any]:
    """The part of a dump that carries release facts besides its messages' usage records."""
    response = raw.get("compression_response") if isinstance(raw, Mapping) else None
    return [{"compression_response": response}] if isinstance(response, Mapping) else []


def merged(
    first: ArtifactEvidence | None, objects: Iterable[Any] = (), llm_log: bool = False
) -> ArtifactEvidence:
    """A new evidence: `first`'s facts, those found in `objects`, and the llm_request log."""
    out = ArtifactEvidence()
    if first is not None:
        out.usage_records.extend(first.usage_records)
        out.usage_details.extend(first.usage_details)
        out.span_previews.extend(first.span_previews)
        out.error_messages.extend(first.error_messages)
        out.has_llm_request_log = first.has_llm_request_log
    collect_evidence(objects, into=out)
    out.has_llm_request_log = out.has_llm_request_log or llm_log
    return out


def has_own_facts(artifact: Artifact, objects: Iterable[Any] = ()) -> bool:
    """True when the artifact's context, or the objects its reader saw, carry a release fact."""
    snapshot = artifact.snapshot
    if snapshot is None:
        return True  # nothing to count: neighbours are not needed
    if _has_facts(
        merged(
            snapshot.release_evidence
            if isinstance(snapshot.release_evidence, ArtifactEvidence)
            else None,
            objects,
        )
    ):
        return True
    return any(
        m.usage_metadata is not None for m in (*snapshot.system_messages, *snapshot.messages)
    )


def _has_facts(evidence: ArtifactEvidence) -> bool:
    return bool(
        evidence.usage_records
        or evidence.usage_details
        or evidence.span_previews
        or evidence.error_messages
        or evidence.has_llm_request_log
    )


def with_evidence(
    artifact: Artifact, objects: Iterable[Any] = (), llm_log: bool = False
) -> Artifact:
    """The artifact with these facts added to its snapshot's evidence (unchanged when it has
    no snapshot or nothing is added)."""
    snapshot = artifact.snapshot
    if snapshot is None:
        return artifact
    changed, evidence = _added(_current(snapshot.release_evidence), list(objects), llm_log)
    return _replaced(artifact, snapshot, evidence) if changed else artifact


def _current(evidence: Any) -> ArtifactEvidence | None:
    return evidence if isinstance(evidence, ArtifactEvidence) else None


def _added(
    current: ArtifactEvidence | None, items: list[Any], llm_log: bool
) -> tuple[bool, ArtifactEvidence | None]:
    """(changed, evidence) of `with_evidence`: `current` with these facts added."""
    if not items and (not llm_log or (current is not None and current.has_llm_request_log)):
        return False, current
    evidence = merged(current, items, llm_log)
    if not _has_facts(evidence):
        return False, current
    return True, evidence


def _replaced(artifact: Artifact, snapshot: Any, evidence: ArtifactEvidence | None) -> Artifact:
    return replace(artifact, snapshot=replace(snapshot, release_evidence=evidence))


def release_evidence(
    current: Any,
    contexts: tuple[Sequence[Message], Sequence[Message]],
    objects: Iterable[Any],
    neighbours: Callable[[], list[Any]],
    llm_log: bool = False,
) -> tuple[bool, Any]:
    """(changed, evidence): what `evidence_for` puts on a snapshot whose evidence is
    `current` and whose (system, context) messages are `contexts`; a reader that makes
    the snapshot itself sets it there (`dump_artifact`) instead of copying it after."""
    items = list(objects)
    known = _current(current)
    own = merged(known, items)
    if not _has_facts(own) and not any(
        m.usage_metadata is not None for part in contexts for m in part
    ):
        return _added(known, list(neighbours()), llm_log)
    if not items and (not llm_log or (known is not None and known.has_llm_request_log)):
        return False, current
    own.has_llm_request_log = own.has_llm_request_log or llm_log
    if not _has_facts(own):
        return False, current
    return True, own


def evidence_for(
    artifact: Artifact,
    objects: Iterable[Any],
    neighbours: Callable[[], list[Any]],
    llm_log: bool = False,
) -> Artifact:
    """`with_evidence(artifact, objects if has_own_facts(artifact, objects) else
    neighbours(), llm_log)`, with the objects walked once."""
    snapshot = artifact.snapshot
    if snapshot is None:
        return artifact
    changed, evidence = release_evidence(
        snapshot.release_evidence,
        (snapshot.system_messages, snapshot.messages),
        objects,
        neighbours,
        llm_log,
    )
    return _replaced(artifact, snapshot, evidence) if changed else artifact
