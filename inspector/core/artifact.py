"""What a source yields: an artifact (a context and/or a record of what happened) or a load error.

Every front end (CLI, TUI, watch) consumes these two types only.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from inspector.core.messages import Message
from inspector.core.snapshot import ContextSnapshot

ArtifactKind = Literal["snapshot", "messages", "dump", "debug"]


@dataclass(frozen=True, slots=True)
class Artifact:
    """One thing found in a source: a snapshot, a message list, a dump or a debug-log session.

    `snapshot` is the context to evaluate (for a dump: the rebuilt pre-compression context;
    None when no context is available, e.g. a debug log alone). `recorded` holds what the
    artifact itself says happened (CLI contract: for a dump its span counts, tokens
    before/after, reduction; for a debug log the last threshold_check, retries, outcome).
    """

    source: str
    id: str
    kind: ArtifactKind
    snapshot: ContextSnapshot | None
    recorded: Mapping[str, Any] = field(default_factory=dict)
    processor: str | None = None
    session_id: str | None = None
    context_id: str | None = None
    timestamp: float | None = None
    #: For a dump: the context after compression, as written by openJiuwen.
    after: tuple[Message, ...] | None = None
    #: Token mode the source recorded or implies, when known (for a mode-mismatch finding).
    recorded_token_mode: str | None = None
    #: Free-form extras a source wants to keep (raw records, timeline entries, ...).
    extra: Mapping[str, Any] = field(default_factory=dict)


def recorded_value(recorded: Mapping[str, Any], *names: str) -> Any:
    """The first non-null value among dotted `names` ("benefit.tokens_before") in a recorded mapping."""
    for name in names:
        value: Any = recorded
        for part in name.split("."):
            if not isinstance(value, Mapping) or part not in value:
                value = None
                break
            value = value[part]
        if value is not None:
            return value
    return None


@dataclass(frozen=True, slots=True)
class LoadError:
    """One unreadable file or record: where it is and why, in plain words."""

    source: str
    error: str
    where: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON line the CLI prints for it."""
        out: dict[str, Any] = {"source": self.source, "error": self.error}
        if self.where is not None:
            out["where"] = self.where
        return out


LoadResult = Artifact | LoadError
