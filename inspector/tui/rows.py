"""Browser rows: one loaded artifact (or load error) with its evaluation and display columns.

Built in the loading worker thread, so nothing here touches Textual. Recorded fields are
read tolerantly because sources name them per artifact kind (DESIGN.md, CLI contract); the
outcome column comes from `core.outcome.classify_outcome`, which `stats` uses too.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from inspector.core.artifact import Artifact, LoadError, recorded_value
from inspector.core.engine import ContextEngine, Evaluation
from inspector.core.errors import InspectorError
from inspector.core.outcome import OUTCOMES, classify_outcome
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import Tuning, apply_overrides
from inspector.sources.entries import EntryRow

__all__ = ["OUTCOMES", "BrowserRow", "artifact_row", "error_row", "pending_row"]


@dataclass
class BrowserRow:
    """One row of the browser table and everything needed to open it."""

    key: int
    artifact: Artifact | None
    error: LoadError | None
    engine: ContextEngine | None = None
    tuning: Tuning | None = None
    evaluation: Evaluation | None = None
    time: str = ""
    timestamp: float | None = None
    processor: str = ""
    session: str = ""
    outcome: str = ""
    outcome_kind: str = ""
    before: int | None = None
    after: int | None = None
    reduction: float | None = None
    retries: int | None = None
    title: str = ""

    @property
    def source(self) -> str:
        """The file this row came from."""
        if self.artifact is not None:
            return self.artifact.source
        if self.error is not None:
            return self.error.source
        return self.title

    @property
    def search_text(self) -> str:
        """Lower-case text the filter box matches against."""
        parts = [self.title, self.processor, self.session, self.outcome]
        if self.artifact is not None:
            parts += [self.artifact.source, self.artifact.kind, self.artifact.context_id or ""]
        if self.error is not None:
            parts += [self.error.source, self.error.error]
        return " ".join(parts).lower()


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def _format_time(timestamp: float | None) -> str:
    if timestamp is None:
        return ""
    try:
        return dt.datetime.fromtimestamp(timestamp, tz=dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return ""


def error_row(key: int, error: LoadError) -> BrowserRow:
    """A row for a file that could not be read."""
    where = f" ({error.where})" if error.where else ""
    return BrowserRow(
        key=key,
        artifact=None,
        error=error,
        outcome=f"error: {error.error}{where}",
        outcome_kind="error",
        title=error.source,
    )


def artifact_row(
    key: int, artifact: Artifact, overrides: Mapping[str, Any], counters: dict[str, TokenCounter]
) -> BrowserRow:
    """A row for an artifact, evaluating its context (if any) under the effective tuning."""
    recorded = artifact.recorded
    row = BrowserRow(key=key, artifact=artifact, error=None, title=artifact.id)
    row.timestamp = (
        artifact.timestamp
        if artifact.timestamp is not None
        else recorded_value(recorded, "timestamp")
    )
    if not isinstance(row.timestamp, int | float) or isinstance(row.timestamp, bool):
        row.timestamp = None
    row.time = _format_time(row.timestamp)
    row.session = artifact.session_id or ""
    if artifact.snapshot is not None:
        try:
            row.tuning = apply_overrides(artifact.snapshot.tuning, dict(overrides))
        except InspectorError:
            row.tuning = artifact.snapshot.tuning
        if artifact.kind in ("snapshot", "messages", "llm_request"):
            # Only our evaluation can say what happens to a bare context; dumps and debug
            # records say it themselves, so their counting waits until they are opened.
            row.engine = ContextEngine(artifact.snapshot, counters)
            row.evaluation = row.engine.evaluate(row.tuning)
    row.processor = (
        row.tuning.processor_class if row.tuning is not None else (artifact.processor or "")
    )
    if artifact.processor and row.tuning is None:
        row.processor = artifact.processor
    row.before = _int(
        recorded_value(
            recorded,
            "tokens_before",
            "total_tokens_before",
            "benefit.tokens_before",
            "trigger.total_tokens_before",
            "total_tokens",
        )
    )
    row.after = _int(
        recorded_value(recorded, "tokens_after", "total_tokens_after", "benefit.tokens_after")
    )
    ratio = recorded_value(recorded, "reduction_ratio", "benefit.reduction_ratio")
    row.reduction = (
        float(ratio) if isinstance(ratio, int | float) and not isinstance(ratio, bool) else None
    )
    if row.reduction is None and row.before and row.after is not None:
        row.reduction = max(row.before - row.after, 0) / row.before
    retries = recorded_value(recorded, "retries", "retry_count")
    if isinstance(retries, list):
        row.retries = len(retries)
    else:
        row.retries = _int(retries)
    outcome = classify_outcome(artifact, row.evaluation)
    row.outcome, row.outcome_kind = outcome.text, outcome.kind
    if row.before is None and row.evaluation is not None:
        row.before = row.evaluation.total_tokens
    return row


def pending_row(key: int, entry: EntryRow) -> BrowserRow:
    """A placeholder row for a file listed by name that the load has not reached yet."""
    return BrowserRow(
        key=key,
        artifact=None,
        error=None,
        time=_format_time(entry.timestamp),
        timestamp=entry.timestamp,
        processor=entry.processor or "",
        session=entry.session_id or entry.session or "",
        outcome="reading…",
        outcome_kind="pending",
        title=str(entry.path),
    )
