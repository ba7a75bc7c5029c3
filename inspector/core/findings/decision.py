"""Findings for any strategy's `Decision`, and the folder-level ones.

The forked strategies get their findings from `core.diagnosis` (which builds the input from
its priced context); every other strategy calls `with_findings` on its decision, so each
family gets the findings that apply to it from one place.
Must not import anything outside the standard library, pydantic and `inspector.core`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from inspector.core.artifact import Artifact
from inspector.core.checks import Finding, by_severity
from inspector.core.findings.base import FindingInput
from inspector.core.findings.dump_names import dump_name_collisions
from inspector.core.findings.registry import run_findings
from inspector.core.snapshot import ContextSnapshot
from inspector.core.strategy.base import Decision
from inspector.core.tokens import TokenCounter


def _usage(snapshot: ContextSnapshot) -> tuple[int | None, int | None]:
    """(index in system + context messages, total_tokens) of the last valid, fresh usage record."""
    everything = (*snapshot.system_messages, *snapshot.messages)
    for index in range(len(everything) - 1, -1, -1):
        message = everything[index]
        if message.role != "assistant" or message.usage_metadata is None:
            continue
        total = message.usage_total
        if total is None or total <= 0 or message.usage_stale:
            continue
        return index, total
    return None, None


def input_of_decision(
    decision: Decision,
    snapshot: ContextSnapshot,
    artifact: Artifact | None = None,
    counter: TokenCounter | None = None,
) -> FindingInput:
    """The finding input of a decision: its region to compress, totals and window."""
    compress = next(
        ((r.start, r.end) for r in decision.regions if r.name == "compress" and r.size), None
    )
    settings = decision.settings
    context_max = getattr(settings, "context_max", None) or getattr(
        settings, "context_window", None
    )
    if not isinstance(context_max, int):
        context_max = snapshot.tuning.context_max
    usage_index, usage_total = (None, None)
    counted = None
    if counter is not None:
        usage_index, usage_total = _usage(snapshot)
        if usage_index is not None:
            counted = counter.count_messages(
                [*snapshot.system_messages, *snapshot.messages]
            ) + counter.count_tools(snapshot.tools)
    return FindingInput(
        snapshot=snapshot,
        artifact=artifact,
        family=decision.family,
        processor=decision.strategy,
        hit=decision.hit,
        reason=decision.reason,
        compress=compress,
        total_tokens=decision.total_tokens,
        threshold=decision.threshold,
        context_max=context_max,
        counter=counter,
        counted_total=counted,
        usage_index=usage_index,
        usage_total=usage_total,
    )


def merge(existing: Iterable[Finding], new: Iterable[Finding]) -> tuple[Finding, ...]:
    """Both lists without repeats (same kind and sentence), problems first."""
    seen: set[tuple[str, str]] = set()
    out: list[Finding] = []
    for finding in (*existing, *new):
        key = (finding.key, finding.sentence)
        if key not in seen:
            seen.add(key)
            out.append(finding)
    return tuple(by_severity(out))


def with_findings(
    decision: Decision,
    snapshot: ContextSnapshot,
    artifact: Artifact | None = None,
    counter: TokenCounter | None = None,
) -> Decision:
    """The decision with the registered findings that apply to its family added."""
    found = run_findings(input_of_decision(decision, snapshot, artifact, counter))
    if not found:
        return decision
    return dataclasses.replace(decision, findings=merge(decision.findings, found))


def folder_findings(artifacts: Iterable[Artifact]) -> list[tuple[Artifact, Finding]]:
    """Findings that need every artifact of a folder: dump names that collide."""
    return dump_name_collisions(artifacts)
