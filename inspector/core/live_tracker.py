"""Fold a stream of live events into what a screen shows: operations, usage, source states.

`LiveTracker.apply(event)` joins the `started` and terminal frames of one compression
operation (by `operation_id`), keeps the latest context usage per member, the state of each
source, and the latest artifact per (source, id). Pure and synchronous, so the TUI and
`inspector watch` share it and tests drive it with plain lists. No I/O.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from inspector.core.artifact import Artifact
from inspector.core.live_events import (
    CompressionState,
    ContextCompressed,
    ContextUsage,
    LiveEvent,
    NewArtifact,
    SourceProblem,
    SourceRemoved,
    SourceState,
)


@dataclass(slots=True)
class Operation:
    """One compression run: its first frame and its latest (terminal when done)."""

    operation_id: str
    started: CompressionState | None = None
    latest: CompressionState | None = None

    @property
    def status(self) -> str:
        """`started`, or the terminal status."""
        return self.latest.status if self.latest else "unknown"

    @property
    def done(self) -> bool:
        """True once a terminal frame arrived."""
        return bool(self.latest and self.latest.is_terminal)


@dataclass(slots=True)
class LiveTracker:
    """Everything seen so far on the live sources, bounded to the last `keep` operations."""

    keep: int = 200
    operations: OrderedDict[str, Operation] = field(default_factory=OrderedDict)
    usage: dict[str, ContextUsage] = field(default_factory=dict)
    states: dict[str, SourceState] = field(default_factory=dict)
    artifacts: dict[tuple[str, str], Artifact] = field(default_factory=dict)
    problems: list[SourceProblem] = field(default_factory=list)
    manual_compactions: list[ContextCompressed] = field(default_factory=list)
    unknown: int = 0

    def apply(self, event: LiveEvent) -> None:
        """Take one event into account."""
        if isinstance(event, CompressionState):
            key = event.operation_id or f"anonymous-{len(self.operations)}"
            operation = self.operations.get(key)
            if operation is None:
                operation = self.operations[key] = Operation(key)
                while len(self.operations) > self.keep:
                    self.operations.popitem(last=False)
            if event.status == "started" and operation.started is None:
                operation.started = event
            operation.latest = event
        elif isinstance(event, ContextUsage):
            self.usage[event.member_name or event.role or ""] = event
        elif isinstance(event, ContextCompressed):
            self.manual_compactions.append(event)
            del self.manual_compactions[: -self.keep]
        elif isinstance(event, SourceState):
            self.states[event.source] = event
        elif isinstance(event, NewArtifact):
            self.artifacts[(event.artifact.source, event.artifact.id)] = event.artifact
        elif isinstance(event, SourceRemoved):
            for artifact_key in [
                k for k in self.artifacts if k[0] == event.source and event.id in (None, k[1])
            ]:
                del self.artifacts[artifact_key]
        elif isinstance(event, SourceProblem):
            self.problems.append(event)
            del self.problems[: -self.keep]
        else:
            self.unknown += 1

    @property
    def running(self) -> list[Operation]:
        """Operations started and not finished yet."""
        return [op for op in self.operations.values() if not op.done]

    @property
    def main_usage(self) -> ContextUsage | None:
        """The usage of the main agent (not a team member), when known."""
        return self.usage.get("") or next(iter(self.usage.values()), None)
