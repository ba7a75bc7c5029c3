"""Browser rows: one loaded artifact (or load error) with its evaluation and display columns.

Built in the loading worker thread, so nothing here touches Textual. Recorded fields are
read tolerantly because sources name them per artifact kind (DESIGN.md, CLI contract); the
outcome column comes from `core.outcome.classify_outcome`, which `stats` uses too. Names,
ids and error words are shown escaped (`core.redact.shown_name`): a file name cannot write
control characters to the terminal.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from inspector.core.artifact import Artifact, LoadError, LoadResult, made_whole, recorded_value
from inspector.core.errors import InspectorError
from inspector.core.outcome import OUTCOMES, classify_outcome
from inspector.core.redact import escape_controls, shown_name
from inspector.core.snapshot import ContextSnapshot
from inspector.core.strategy.base import Decision
from inspector.core.strategy.selection import Selection, select
from inspector.core.tokens import TokenCounter
from inspector.sources.entries import EntryRow, list_entries
from inspector.sources.follow import FileFollower

__all__ = [
    "OUTCOMES",
    "BrowserRow",
    "RowBatch",
    "artifact_row",
    "crash_error",
    "error_row",
    "pending_row",
    "whole_row",
]

#: Seconds a worker waits for a slot (`RowBatch`) before it looks whether it was cancelled.
SLOT_WAIT = 0.1


@dataclass
class BrowserRow:
    """One row of the browser table and everything needed to open it."""

    key: int
    artifact: Artifact | None
    error: LoadError | None
    #: Our decision on the context (bare contexts only: dumps and debug records say what
    #: happened themselves, so their counting waits until they are opened).
    decision: Decision | None = None
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
    #: The raw path a placeholder or error row stands for (`title` shows it escaped).
    origin: str = ""

    @property
    def source(self) -> str:
        """The file this row came from (as the loader named it, not escaped)."""
        if self.artifact is not None:
            return self.artifact.source
        return self.origin or (self.error.source if self.error is not None else self.title)

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
    """A row for a file that could not be read (its name and words shown escaped)."""
    where = f" ({error.where})" if error.where else ""
    shown = LoadError(shown_name(error.source), escape_controls(error.error), error.where)
    return BrowserRow(
        key=key,
        artifact=None,
        error=shown,
        outcome=shown_name(f"error: {error.error}{where}"),
        outcome_kind="error",
        title=shown.source,
        origin=error.source,
    )


def crash_error(source: str, error: BaseException) -> LoadError:
    """The LoadError for a file whose load raised (a bug: said so, never a traceback)."""
    return LoadError(source, f"could not be loaded ({type(error).__name__}: {error})")


def artifact_row(
    key: int, artifact: Artifact, overrides: Mapping[str, Any], counters: dict[str, TokenCounter]
) -> BrowserRow:
    """A row for an artifact, evaluating its context (if any) under the effective tuning."""
    recorded = artifact.recorded
    row = BrowserRow(key=key, artifact=artifact, error=None, title=shown_name(artifact.id))
    row.timestamp = (
        artifact.timestamp
        if artifact.timestamp is not None
        else recorded_value(recorded, "timestamp")
    )
    if not isinstance(row.timestamp, int | float) or isinstance(row.timestamp, bool):
        row.timestamp = None
    row.time = _format_time(row.timestamp)
    row.session = shown_name(artifact.session_id or "")
    row.processor = artifact.processor or ""
    if artifact.snapshot is not None:
        selection = _selection(artifact.snapshot, overrides)
        row.processor = selection.strategy.processor
        if artifact.kind in ("snapshot", "messages", "llm_request"):
            strategy = selection.strategy
            prepared = strategy.prepare(artifact.snapshot, counters)
            row.decision = strategy.decide(prepared, selection.settings)
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
    outcome = classify_outcome(artifact, row.decision)
    row.outcome, row.outcome_kind = outcome.text, outcome.kind
    if row.before is None and row.decision is not None:
        row.before = row.decision.total_tokens
    return row


def whole_row(row: BrowserRow) -> BrowserRow:
    """`row` with its artifact whole: itself when it is already, else a copy holding what
    the header-level artifact's `whole()` gives (its file read again), its cells kept (both
    have the same recorded fields); an error row of the same key when that is a LoadError."""
    artifact = row.artifact
    if artifact is None or artifact.whole is None:
        return row
    try:
        made = artifact.whole()
    except Exception as error:  # noqa: BLE001 - a bug in one rebuild: one error row
        made = crash_error(artifact.source, error)
    if isinstance(made, LoadError):
        return error_row(row.key, made)
    return replace(row, artifact=made)


def _selection(snapshot: ContextSnapshot, overrides: Mapping[str, Any]) -> Selection:
    """The strategy and settings the row is shown with: the user's overrides on the recorded
    ones, or the recorded ones alone when the overrides do not fit this context."""
    try:
        return select(snapshot, dict(overrides))
    except InspectorError:
        return select(snapshot, {})


def pending_row(key: int, entry: EntryRow) -> BrowserRow:
    """A placeholder row for a file listed by name that the load has not reached yet."""
    return BrowserRow(
        key=key,
        artifact=None,
        error=None,
        time=_format_time(entry.timestamp),
        timestamp=entry.timestamp,
        processor=entry.processor or "",
        session=shown_name(entry.session_id or entry.session or ""),
        outcome="reading…",
        outcome_kind="pending",
        title=shown_name(entry.location),
        origin=entry.location,
    )


class RowBatch:
    """Rows a loading worker collects, handed to `post(rows, seen)` every `interval` seconds
    or every `most` rows, whichever comes first (so the first rows show at once, a big
    folder is not one message per row, and no message holds the screen for long: the
    screen spends ~50 us on a row, and a worker faster than that posted 0.15 s of rows
    at a time, a 0.3 s frame while a 50,000-file folder loaded).

    With `in_flight`, at most that many batches are posted and not yet `taken` (the screen
    says so when it has shown one): `post` waits for the screen, until `cancelled`.
    Textual's message pump handles what its queue holds one message after the other
    without yielding to the event loop, so a worker faster than the screen queued every
    batch of a 50,000-file folder, and the screen then kept the app, keys and all, for
    10 s while it took them."""

    def __init__(
        self,
        post: Callable[[list[BrowserRow], int], object],
        interval: float = 0.1,
        most: int | None = None,
        in_flight: int | None = None,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> None:
        self._post = post
        self.interval = interval
        self.most = most
        self.rows: list[BrowserRow] = []
        self.seen = 0
        self.last_post = time.monotonic()
        self._slots = None if in_flight is None else threading.Semaphore(in_flight)
        self._cancelled = cancelled

    def taken(self) -> None:
        """The screen has shown one of the posted batches (a slot for the next one)."""
        if self._slots is not None:
            self._slots.release()

    def add(self, row: BrowserRow) -> None:
        """Collect one row; post the batch when it is due."""
        self.rows.append(row)
        self.seen += 1
        now = time.monotonic()
        if now - self.last_post >= self.interval or (
            self.most is not None and len(self.rows) >= self.most
        ):
            self.post()
            self.last_post = now

    def post(self) -> None:
        """Post what is collected (once a slot is free; nothing once `cancelled`)."""
        if not self.rows:
            return
        slots = self._slots
        while slots is not None and not slots.acquire(timeout=SLOT_WAIT):
            if self._cancelled():
                return
        self._post(self.rows, self.seen)
        self.rows = []


def load_rest(
    rest: tuple[Callable[[list[str]], Iterable[LoadResult]], Sequence[str], set[str]],
    batch: RowBatch,
    row_for: Callable[[int, LoadResult], BrowserRow],
    cancelled: Callable[[], bool],
    error: BaseException,
) -> None:
    """After a load of `sources` raised: an error row for it, then every file not in `done`
    loaded on its own through `loader` (a file that raises again is its own error row).
    `rest` is (loader, sources, done)."""
    loader, sources, done = rest
    batch.add(error_row(batch.seen, crash_error(", ".join(sources), error)))
    for entry in list_entries(sources):
        path = str(entry.path)
        if path in done or cancelled():
            continue
        try:
            for item in loader([path]):
                batch.add(row_for(batch.seen, item))
        except Exception as again:  # noqa: BLE001 - one bad file, one error row
            batch.add(error_row(batch.seen, crash_error(path, again)))


def primed_follower(
    sources: Sequence[str],
    loader: Callable[[list[str]], Iterable[LoadResult]],
    settle: float,
) -> FileFollower | None:
    """A follower of the file sources, primed now so it reports only later changes.

    Runs in the load worker before the load reads anything: a file written during the
    load is reported again and replaces its row by (source, id), never doubles it. Reads
    through the screen's loader, so follow rows use the same counters as loaded ones.
    """
    if not sources:
        return None

    def load_group(paths: list[Path], explicit: bool) -> list[LoadResult]:
        # whole: an open context view compares a new state's messages with its own
        return [made_whole(item) for item in loader([str(path) for path in paths])]

    follower = FileFollower(
        list(sources),
        settle=settle,
        include_existing=False,
        loader=load_group,
        notify=True,  # OS notifications where available: an idle browser costs nothing
    )
    try:
        follower.poll()
    except OSError:
        return None
    return follower
