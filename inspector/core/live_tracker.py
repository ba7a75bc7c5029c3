"""Fold a stream of live events into what a screen shows: operations, usage, source states.

`LiveTracker.apply(event)` joins the `started` and terminal frames of one compression
operation (by `operation_id`), keeps the latest context usage per member, the state of each
source, and the latest artifact per (source, id). Pure and synchronous, so the TUI and
`inspector watch` share it and tests drive it with plain lists. No I/O.

It also learns where the agent really compresses, for the usage gauge (`trigger_marks`):
from the agent's config (`config_triggers`: conversation tokens per processor, e.g. a
DialogueCompressor `tokens_threshold`) and from what the frames show (the usage rate just
before each operation that compressed). jiuwenswarm's compression frames count only the
conversation (no system prompt, no tools) and give percentages of the context engine's
200,000 default, while `context.usage` is of the model's real window; a config threshold
is placed on the usage gauge by adding the overhead seen between the two
(`usage tokens - frame tokens`), and `scale_note` says this in words.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field

from inspector.core.artifact import Artifact
from inspector.core.live_events import (
    CompressionState,
    ContextCompressed,
    ContextUsage,
    GatewayEvent,
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


#: The inspector-made event carrying the agent's own thresholds (from its home folder).
AGENT_CONFIG_EVENT = "inspector.agent_config"
#: The context engine's default window, which jiuwenswarm's compression frames are against.
ENGINE_DEFAULT_WINDOW = 200_000


@dataclass(frozen=True, slots=True)
class TriggerMark:
    """Where one processor compresses, placed on the usage gauge (percent of the real window)."""

    processor: str
    #: Percent of the model's window on the usage gauge (None: the window is not known yet).
    percent: float | None
    #: Conversation tokens: the configured threshold, or the frames' `before.tokens`.
    tokens: int | None
    #: `config` (the agent's own threshold) or `frames` (where it was seen to compress).
    origin: str
    #: How many compressions were seen at this mark (frames only).
    count: int = 0

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return {
            "processor": self.processor,
            "percent": None if self.percent is None else round(self.percent, 1),
            "tokens": self.tokens,
            "origin": self.origin,
            "count": self.count,
        }


@dataclass(slots=True)
class _Fired:
    """Compressions of one processor seen in the frames."""

    rates: list[float] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)


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
    #: The agent's own thresholds in conversation tokens, by processor (from its config).
    config_triggers: Mapping[str, int] = field(default_factory=dict)
    #: Latest `usage tokens - conversation tokens` seen (system prompt and tools), if any.
    overhead: int | None = None
    #: The window of the latest compression frame (200,000 on jiuwenswarm 0.2.3).
    frame_window: int | None = None
    _fired: dict[str, _Fired] = field(default_factory=dict)
    _usage_since_frame: ContextUsage | None = None

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
            self._learn(event, operation)
        elif isinstance(event, ContextUsage):
            self.usage[event.member_name or event.role or ""] = event
            if not event.member_name:
                self._usage_since_frame = event
        elif isinstance(event, ContextCompressed):
            self.manual_compactions.append(event)
            del self.manual_compactions[: -self.keep]
        elif isinstance(event, SourceState):
            if event.state == "closed" and event.source not in self.states:
                # the connection as a whole ended (disconnect): every part of it is closed
                for source in list(self.states):
                    self.states[source] = SourceState(source, "closed", event.detail)
            else:
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
        elif isinstance(event, GatewayEvent) and event.name == AGENT_CONFIG_EVENT:
            triggers = event.payload.get("triggers") if isinstance(event.payload, Mapping) else None
            if isinstance(triggers, Mapping):
                self.config_triggers = {
                    str(k): int(v) for k, v in triggers.items() if isinstance(v, int)
                }
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

    def _learn(self, event: CompressionState, operation: Operation) -> None:
        """Overhead, frame window and fired marks from one compression frame."""
        if event.context_max:
            self.frame_window = event.context_max
        usage = self._usage_since_frame
        if usage is not None and usage.tokens_used is not None and event.before is not None:
            if event.before.tokens is not None and event.status == "started":
                self.overhead = max(0, usage.tokens_used - event.before.tokens)
        if event.is_compaction_boundary and event.status != "started":
            fired = self._fired.setdefault(event.processor or "?", _Fired())
            at = self.main_usage
            if at is not None and at.rate is not None:
                fired.rates.append(at.rate)
            start = operation.started.before if operation.started else event.before
            if start is not None and start.tokens is not None:
                fired.tokens.append(start.tokens)

    @property
    def window(self) -> int | None:
        """The model's real window, from `context.usage` (None until one arrived)."""
        usage = self.main_usage
        return usage.context_max if usage is not None and usage.context_max else None

    def trigger_marks(self) -> list[TriggerMark]:
        """The agent's trigger points on the usage gauge: its config's, then the frames'."""
        marks: list[TriggerMark] = []
        window = self.window
        for processor, tokens in self.config_triggers.items():
            percent = None
            if window:
                percent = (tokens + (self.overhead or 0)) / window * 100
            marks.append(TriggerMark(processor, percent, tokens, "config"))
        for processor, fired in self._fired.items():
            percent = min(fired.rates) if fired.rates else None
            least = min(fired.tokens) if fired.tokens else None
            count = max(len(fired.rates), len(fired.tokens))
            marks.append(TriggerMark(processor, percent, least, "frames", count))
        return marks

    def scale_note(self) -> str | None:
        """Why the frames' numbers differ from the usage gauge (None: nothing to explain)."""
        if self.frame_window is None:
            return None
        window = self.window
        default = " (the context engine's default: the agent passes it no model window)"
        note = (
            f"compression frames count the conversation only (no system prompt, no tools), "
            f"in % of {self.frame_window:,}"
            + (default if self.frame_window == ENGINE_DEFAULT_WINDOW else "")
        )
        if window and window != self.frame_window:
            note += f"; the usage gauge is of the model's real window, {window:,} tokens"
        if self.overhead is not None:
            note += f"; system prompt and tools ≈ {self.overhead:,} tokens"
        return note
