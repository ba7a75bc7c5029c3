"""Which loaded snapshot is a debug run's context (the two rules of `sources.loader`'s
module docstring): by evaluation (a snapshot naming a check's time) or by session (the only
snapshot of a key without a time). Must not import Textual or Rich.
"""

from __future__ import annotations

from collections.abc import Iterator

from inspector.core.artifact import Artifact
from inspector.core.timeline import EvaluationRun, RunKey
from inspector.sources.classify import FileLoad

#: How far (seconds) a snapshot's `timestamp` may lie from the threshold_check it names:
#: room for a time rounded to the millisecond, far less than between two checks of a context.
EVALUATION_TOLERANCE_SECONDS = 0.001


def _linkable_snapshots(loads: list[FileLoad]) -> Iterator[tuple[RunKey, Artifact]]:
    """Snapshot artifacts that name their processor, session and context, with that key."""
    for load in loads:
        for artifact in load.artifacts:
            if (
                artifact.kind == "snapshot"
                and artifact.session_id
                and artifact.context_id
                and artifact.processor
            ):
                yield (artifact.processor, artifact.session_id, artifact.context_id), artifact


def snapshots_by_key(loads: list[FileLoad]) -> dict[RunKey, Artifact]:
    """Snapshots without a `timestamp` naming their key, when one is the only one for it."""
    found: dict[RunKey, list[Artifact]] = {}
    for key, artifact in _linkable_snapshots(loads):
        if artifact.timestamp is None:
            found.setdefault(key, []).append(artifact)
    return {key: items[0] for key, items in found.items() if len(items) == 1}


def snapshots_by_evaluation(
    loads: list[FileLoad], runs: list[EvaluationRun]
) -> dict[tuple[RunKey, int], Artifact]:
    """Snapshots with a `timestamp`, by the (key, index) of the evaluation they name.

    A snapshot names the run of its key whose check time is nearest its `timestamp`,
    within EVALUATION_TOLERANCE_SECONDS (two equally near: none). A run claimed by two
    snapshots gets neither.
    """
    timed = [(k, a, a.timestamp) for k, a in _linkable_snapshots(loads) if a.timestamp is not None]
    if not timed:
        return {}  # nothing names an evaluation: the runs' times are not needed
    times: dict[RunKey, list[tuple[float, int]]] = {}
    for run in runs:
        when = run.timestamp
        if when is not None:
            times.setdefault(run.key, []).append((when, run.index))
    claims: dict[tuple[RunKey, int], list[Artifact]] = {}
    for key, artifact, named in timed:
        near = sorted(
            (abs(when - named), index)
            for when, index in times.get(key, [])
            if abs(when - named) <= EVALUATION_TOLERANCE_SECONDS
        )
        if not near or (len(near) > 1 and near[0][0] == near[1][0]):
            continue
        claims.setdefault((key, near[0][1]), []).append(artifact)
    return {claim: items[0] for claim, items in claims.items() if len(items) == 1}
