"""The session timeline: openJiuwen's debug records and dumps joined into evaluation runs.

A *run* is one trigger evaluation: a `threshold_check` and what followed it for the same
processor, session and context (`span_built`, `compression_retry`, unknown events) until
the next check. Dumps are linked to the run that produced them by that key and by time.
A run's outcome is `compressed` (a dump is linked), `not_compressed` (the check said no),
`failed` (a retry record ended it: `no_smaller_span`, `retry_budget_exhausted`) or
`silent_end` (threshold reached, then nothing: openJiuwen writes no record for several
endings, listed in `silent_causes`). A *model call* is one `llm_request.jsonl` record
(0.1.18+): the window a ReActAgent sent to its model. The compressors evaluate that
context just before the call, so the evaluations of a call are the runs of its session
and context timed after the previous call of that key and no later than it
(`call_evaluations`); the timeline shows each call beside them. Pure: no I/O. Must not import outside `inspector.core`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from inspector.core.frozen import plain_init

Outcome = Literal["compressed", "not_compressed", "silent_end", "failed", "unknown"]
RunKey = tuple[str | None, str | None, str | None]

#: Seconds a dump may carry a timestamp before its run's check: a dump is written after its
#: check by the same process, so only the millisecond rounding of file-name times matters.
LINK_TOLERANCE_SECONDS = 0.002

#: What openJiuwen is known to do without writing any record after `reached_threshold`
#: (reference README, "Observations" 5 and 9), each keyed for narrowing.
SILENT_CAUSES: dict[str, str] = {
    "non_retryable": "a non-retryable model error (authentication 401/403, or a 400 bad request): never retried, no record",
    "transient_exhausted": "transient errors (rate limit, timeout, server) after both retries were used up: the third failure writes no record",
    "empty_reply": "an empty reply, or a reply holding only a tool call (the request offers the agent's tools with tool_choice auto): the summary is empty and the compressor stops",
    "no_benefit": "the result was dropped because the new context would not count fewer tokens (e.g. re-injected files ate the savings)",
    "dump_not_loaded": "it succeeded but its dump is not among the sources: no dump is written without a workspace or dump folder, and OPENJIUWEN_COMPRESSION_DUMP_DIR may point elsewhere",
}


_UNSAFE_RE = re.compile(r"[^A-Za-z0-9_.-]+")


@lru_cache(maxsize=65536)
def safe_name(value: str) -> str:
    """openJiuwen's `safe()` for file and folder names: runs outside [A-Za-z0-9_.-] become '-'.

    Remembered per value: a folder's load asks for the same few session ids many times."""
    cleaned = _UNSAFE_RE.sub("-", value).strip("-")[:80]
    return cleaned or "unknown"


@dataclass(frozen=True, slots=True)
class DebugRecord:
    """One line of a `<Processor>.jsonl` debug log, kept raw, with where it came from."""

    raw: Mapping[str, Any]
    source: str
    line: int | None = None

    @property
    def event(self) -> str | None:
        """The `event` name, or None."""
        value = self.raw.get("event")
        return value if isinstance(value, str) else None

    @property
    def timestamp(self) -> float | None:
        """Epoch seconds, or None when absent or not a number."""
        return _number(self.raw.get("timestamp"))

    @property
    def key(self) -> RunKey:
        """(processor, session_id, context_id) as written, None when absent."""
        return (
            _text(self.raw.get("processor")),
            _text(self.raw.get("session_id")),
            _text(self.raw.get("context_id")),
        )


@dataclass(frozen=True, slots=True)
class DumpRef:
    """What linking needs to know of a dump: its id, key and time."""

    id: str
    processor: str | None
    session_id: str | None
    context_id: str | None
    timestamp: float | None


@dataclass(frozen=True, slots=True)
class EvaluationRun:
    """One trigger evaluation and everything recorded after it, with its outcome."""

    key: RunKey
    #: 1-based position among the runs of this key, in time order.
    index: int
    source: str
    line: int | None
    threshold_check: Mapping[str, Any] | None
    span_built: Mapping[str, Any] | None = None
    retries: tuple[Mapping[str, Any], ...] = ()
    other_events: tuple[Mapping[str, Any], ...] = ()
    dump_id: str | None = None
    outcome: Outcome = "unknown"
    silent_causes: tuple[str, ...] = field(default=())
    #: Records of this run that were logged twice (the same record at the same time, in this
    #: log or a copy of it): read once, counted here.
    duplicates: int = 0

    @property
    def processor(self) -> str | None:
        """Processor type of the run."""
        return self.key[0]

    @property
    def session_id(self) -> str | None:
        """Raw session id of the run."""
        return self.key[1]

    @property
    def context_id(self) -> str | None:
        """Context id of the run."""
        return self.key[2]

    @property
    def timestamp(self) -> float | None:
        """Time of the check (or of the first record when there is no check)."""
        check = self.threshold_check
        if check is not None:
            value = check.get("timestamp")
            if type(value) is float:  # the common case, without the walk
                return value
        for record in (self.threshold_check, self.span_built, *self.retries, *self.other_events):
            if record is not None:
                value = _number(record.get("timestamp"))
                if value is not None:
                    return value
        return None

    @property
    def reason(self) -> str | None:
        """The check's reason (below_threshold, no_compressible_span, target_below_min, reached_threshold)."""
        return _text((self.threshold_check or {}).get("reason"))

    @property
    def span_counts(self) -> dict[str, int] | None:
        """Message counts of the span first built (before any overflow shrink), from span_built."""
        if self.span_built is None:
            return None
        counts: dict[str, int] = {}
        for name in ("preserved_prefix", "messages_to_compress", "protected_tail"):
            value = self.span_built.get(name)
            counts[name] = len(value) if isinstance(value, list) else 0
        return counts

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready timeline entry with the check's numbers and what followed."""
        check = self.threshold_check or {}
        return {
            "kind": "evaluation",
            "index": self.index,
            "timestamp": self.timestamp,
            "processor": self.processor,
            "session_id": self.session_id,
            "context_id": self.context_id,
            "source": self.source,
            "line": self.line,
            "reason": self.reason,
            "hit": check.get("hit"),
            "total_tokens": check.get("total_tokens"),
            "threshold": check.get("threshold"),
            "context_max": check.get("context_max"),
            "target_tokens": check.get("target_tokens"),
            "min_target_tokens": check.get("min_target_tokens"),
            "span": self.span_counts,
            "retries": [{k: r.get(k) for k in _RETRY_KEYS if k in r} for r in self.retries],
            "other_events": [r.get("event") for r in self.other_events],
            "outcome": self.outcome,
            "dump": self.dump_id,
            "silent_causes": list(self.silent_causes),
        }


#: The keys of a retry record a timeline entry shows.
_RETRY_KEYS = ("attempt", "error_type", "reason", "retried", "budget_ratio", "delay_seconds")
#: An `EvaluationRun` from every field, in order (`core.frozen`: 100,000 made in a big folder).
_plain_run = plain_init(EvaluationRun)
#: `DebugRecord(raw, source, line)` and `DumpRef(...)` the same way: one per log line, per dump.
plain_debug_record = plain_init(DebugRecord)
plain_dump_ref = plain_init(DumpRef)


@dataclass(frozen=True, slots=True)
class ModelCall:
    """What the timeline needs of one `llm_request.jsonl` record: which call, where, when."""

    id: str
    session_id: str | None
    context_id: str | None
    timestamp: float | None
    sequence: int | None = None
    request_id: str | None = None
    model: str | None = None
    message_count: int | None = None
    source: str | None = None
    line: int | None = None

    def to_dict(self, evaluations: Sequence[EvaluationRun] = ()) -> dict[str, Any]:
        """A JSON-ready timeline entry naming the call and the evaluations that preceded it."""
        return {
            "kind": "llm_request",
            "timestamp": self.timestamp,
            "session_id": self.session_id,
            "context_id": self.context_id,
            "source": self.source,
            "line": self.line,
            "id": self.id,
            "sequence": self.sequence,
            "request_id": self.request_id,
            "model": self.model,
            "message_count": self.message_count,
            "evaluations": [run_ref(run) for run in evaluations],
        }


def run_ref(run: EvaluationRun) -> dict[str, Any]:
    """A run named in a model call's entry: processor, index, time, outcome, reason, dump."""
    return {
        "processor": run.processor,
        "index": run.index,
        "timestamp": run.timestamp,
        "outcome": run.outcome,
        "reason": run.reason,
        "dump": run.dump_id,
    }


def call_evaluations(
    runs: Sequence[EvaluationRun], calls: Sequence[ModelCall]
) -> dict[str, list[EvaluationRun]]:
    """The compressor evaluations of each call, by call id (module docstring).

    A run belongs to the first call of its session and context (session ids compared in
    their safe() form) timed at or after it; runs or calls without a time link nothing.
    """
    if not calls:
        return {}  # no call to give evaluations to
    by_key: dict[tuple[str | None, str | None], list[ModelCall]] = {}
    for call in calls:
        if call.timestamp is not None:
            key = (None if call.session_id is None else safe_name(call.session_id), call.context_id)
            by_key.setdefault(key, []).append(call)
    for items in by_key.values():
        items.sort(key=lambda c: c.timestamp if c.timestamp is not None else 0.0)
    out: dict[str, list[EvaluationRun]] = {call.id: [] for call in calls}
    for run in runs:
        when = run.timestamp
        session = None if run.session_id is None else safe_name(run.session_id)
        if when is None:
            continue
        for call in by_key.get((session, run.context_id), ()):
            assert call.timestamp is not None
            if call.timestamp >= when:
                out[call.id].append(run)
                break
    return out


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def group_runs(records: Iterable[DebugRecord]) -> list[EvaluationRun]:
    """Split debug records into evaluation runs per (processor, session, context), in time order."""
    by_key: dict[RunKey, list[tuple[float, int, DebugRecord]]] = {}
    minus_infinity = float("-inf")
    for order, record in enumerate(records):
        raw = record.raw  # what `record.timestamp` and `record.key` read, read once
        when = raw.get("timestamp")
        if type(when) is not float:
            when = _number(when)
        key = (
            _text(raw.get("processor")),
            _text(raw.get("session_id")),
            _text(raw.get("context_id")),
        )
        held = by_key.get(key)
        if held is None:
            held = by_key[key] = []
        held.append((minus_infinity if when is None else when, order, record))
    runs: list[EvaluationRun] = []
    for key, items in by_key.items():
        # by (time, order): orders are unique, so the records themselves are never compared
        items.sort()
        current: dict[str, Any] | None = None
        index = 0
        seen: dict[tuple[float, str | None], list[Mapping[str, Any]]] = {}

        for when, _, record in items:
            raw = record.raw
            event = raw.get("event")
            if not isinstance(event, str):
                event = None
            if when != minus_infinity:  # a record without a time cannot be told from a twin
                twins = seen.get((when, event))
                if twins is None:
                    seen[(when, event)] = [raw]
                elif any(twin == raw for twin in twins):
                    if current is not None:
                        current["duplicates"] += 1
                    continue
                else:
                    twins.append(raw)
            if event == "threshold_check" or current is None:
                if current is not None:
                    runs.append(_make_run(key, current))
                index += 1
                current = _run_state(index, record)
            if event == "threshold_check":
                current["check"] = raw
            elif event == "span_built" and current["span"] is None:
                current["span"] = raw
            elif event == "compression_retry":
                current["retries"].append(raw)
            else:
                current["other"].append(raw)
        if current is not None:
            runs.append(_make_run(key, current))
    return runs


def _run_state(index: int, record: DebugRecord) -> dict[str, Any]:
    """A new run's state in `group_runs`, from its first record."""
    where = {"index": index, "source": record.source, "line": record.line}
    return {**where, "check": None, "span": None, "retries": [], "other": [], "duplicates": 0}


def _make_run(key: RunKey, state: dict[str, Any]) -> EvaluationRun:
    return _plain_run(
        key=key,
        index=state["index"],
        source=state["source"],
        line=state["line"],
        threshold_check=state["check"],
        span_built=state["span"],
        retries=tuple(state["retries"]),
        other_events=tuple(state["other"]),
        dump_id=None,
        outcome="unknown",
        silent_causes=(),
        duplicates=state["duplicates"],
    )


def _same(a: str | None, b: str | None, placeholder: str) -> bool:
    if a is None or b is None or a == placeholder or b == placeholder:
        return True
    return a == b or safe_name(a) == safe_name(b)


def _ended_by_retry(run: EvaluationRun) -> bool:
    return bool(run.retries) and run.retries[-1].get("retried") is False


def _norm_key(processor: str | None, session: str | None, context: str | None) -> RunKey:
    """The key runs and dumps are matched on (session ids compared in their safe() form)."""
    return (processor, None if session is None else safe_name(session), context)


def _is_wild(dump: DumpRef) -> bool:
    return (
        dump.processor is None
        or dump.session_id in (None, "unknown_session")
        or dump.context_id in (None, "unknown_context")
    )


def link_runs(
    runs: Sequence[EvaluationRun],
    dumps: Sequence[DumpRef],
    dumps_loaded: bool = True,
) -> tuple[list[EvaluationRun], dict[str, EvaluationRun]]:
    """Link each dump to the latest earlier unlinked run of its key; set every run's outcome.

    Returns the runs (same order, outcomes filled) and the run linked to each dump id.
    A dump missing its processor, session or context matches any run on that part.
    `dumps_loaded`: whether the sources could have shown the runs' dumps (False: a debug log
    given alone, so "its dump is elsewhere" is the first silent cause).

    The latest run of a key is found by bisection in the key's runs sorted by time, so a
    folder links in O((runs + dumps) log runs); the rule is that of `_best_candidate`.
    """
    by_key: dict[RunKey, list[int]] = {}
    for position, run in enumerate(runs):
        if may_link(run):
            by_key.setdefault(_norm_key(*run.key), []).append(position)
    linked: dict[int, str] = {}
    times = [run.timestamp for run in runs]  # a property that walks the run's records
    keys = {key: _KeyRuns(positions, times) for key, positions in by_key.items()}
    for dump in sorted(
        dumps, key=lambda d: d.timestamp if d.timestamp is not None else float("inf")
    ):
        if _is_wild(dump):
            candidates: list[int] = [
                p
                for p, run in enumerate(runs)
                if may_link(run)
                and _same(run.key[0], dump.processor, "")
                and _same(run.key[1], dump.session_id, "unknown_session")
                and _same(run.key[2], dump.context_id, "unknown_context")
            ]
            best = _best_candidate(candidates, times, linked, dump.timestamp)
        else:
            key_runs = keys.get(_norm_key(dump.processor, dump.session_id, dump.context_id))
            best = None if key_runs is None else key_runs.take(dump.timestamp, linked)
        if best is not None:
            linked[best] = dump.id
    out: list[EvaluationRun] = []
    by_dump: dict[str, EvaluationRun] = {}
    for position, run in enumerate(runs):
        dump_id = linked.get(position)
        done = _settled(run, dump_id, dumps_loaded)
        out.append(done)
        if dump_id is not None:
            by_dump[dump_id] = done
    return out, by_dump


def may_link(run: EvaluationRun) -> bool:
    """A run that may have written a dump: not ended by a retry, and its check said go."""
    return not _ended_by_retry(run) and run.reason in (None, "reached_threshold")


def _best_candidate(
    candidates: Sequence[int],
    times: Sequence[float | None],
    linked: Mapping[int, str],
    when: float | None,
) -> int | None:
    """The run a dump at `when` links to among `candidates` (positions, ascending): the
    unlinked one with the latest time no later than `when` (+ tolerance), the later
    position on a tie; with no such time known, the first unlinked one without a time
    (or, for a dump without a time, the first unlinked one)."""
    best: int | None = None
    best_time = float("-inf")
    for position in candidates:
        if position in linked:
            continue
        run_time = times[position]
        if when is not None and run_time is not None:
            if run_time > when + LINK_TOLERANCE_SECONDS:
                continue
            if run_time >= best_time:
                best, best_time = position, run_time
        elif best is None:
            best = position
    return best


class _KeyRuns:
    """The linkable runs of one key, for `_best_candidate`'s rule by bisection: runs with a
    time sorted by (time, position), the others by position; linked ones are dropped as
    they are met."""

    __slots__ = ("positions", "times", "timed", "timed_keys", "untimed")

    def __init__(self, positions: list[int], times: Sequence[float | None]) -> None:
        self.positions = positions
        self.times = times
        pairs = sorted((t, p) for p in positions if (t := times[p]) is not None)
        self.timed = [p for _, p in pairs]
        self.timed_keys = [t for t, _ in pairs]
        self.untimed = [p for p in positions if times[p] is None]

    def take(self, when: float | None, linked: Mapping[int, str]) -> int | None:
        """The run a dump at `when` links to (removed from the lists), or None."""
        if when is None:
            best = _best_candidate(self.positions, self.times, linked, None)
            if best is not None:
                self._drop(best)
            return best
        index = bisect_right(self.timed_keys, when + LINK_TOLERANCE_SECONDS)
        while index > 0:
            index -= 1
            position = self.timed[index]
            del self.timed[index], self.timed_keys[index]
            if position not in linked:
                return position
        while self.untimed:
            position = self.untimed.pop(0)
            if position not in linked:
                return position
        return None

    def _drop(self, position: int) -> None:
        if position in self.untimed:
            self.untimed.remove(position)
        elif position in self.timed:
            index = self.timed.index(position)
            del self.timed[index], self.timed_keys[index]


def _settled(run: EvaluationRun, dump_id: str | None, dumps_loaded: bool) -> EvaluationRun:
    """The run with its dump, outcome and silent causes set."""
    outcome = _outcome(run, dump_id)
    return _plain_run(
        run.key,
        run.index,
        run.source,
        run.line,
        run.threshold_check,
        run.span_built,
        run.retries,
        run.other_events,
        dump_id,
        outcome,
        () if outcome != "silent_end" else _causes(run.retries, dumps_loaded),
        run.duplicates,
    )


def settle_alone(run: EvaluationRun) -> EvaluationRun:
    """The run `link_runs([run], [], dumps_loaded=False)` gives (a debug log given alone: no
    dump to link), with its outcome and silent causes, without the linking."""
    return _settled(run, None, False)


#: A run's records: its threshold_check, first span_built, retries and other events.
RunRecords = tuple[
    Mapping[str, Any] | None,
    Mapping[str, Any] | None,
    tuple[Mapping[str, Any], ...],
    tuple[Mapping[str, Any], ...],
]
_Raw = Mapping[str, Any]


def alone_run(
    key: RunKey, index: int, source: str, line: int | None, records: RunRecords
) -> EvaluationRun:
    """`settle_alone` of the run of these records, made as one object."""
    outcome, causes = alone_outcome(records[0], records[2])
    return EvaluationRun(key, index, source, line, *records, None, outcome, causes)


def alone_outcome(check: _Raw | None, retries: Sequence[_Raw]) -> tuple[Outcome, tuple[str, ...]]:
    """`alone_run`'s outcome and silent causes for this check and these retries (`stats`)."""
    outcome = _outcome_of(check, retries, None)
    return outcome, (_causes(retries, False) if outcome == "silent_end" else ())


def _outcome(run: EvaluationRun, dump_id: str | None) -> Outcome:
    return _outcome_of(run.threshold_check, run.retries, dump_id)


def _outcome_of(
    check: Mapping[str, Any] | None, retries: Sequence[Mapping[str, Any]], dump_id: str | None
) -> Outcome:
    """A run's outcome from its check, its retries and the dump linked to it."""
    if dump_id is not None:
        return "compressed"
    reason = _text((check or {}).get("reason"))  # `EvaluationRun.reason`
    if reason is None:
        return "unknown"
    if reason != "reached_threshold":
        return "not_compressed"
    if retries and retries[-1].get("retried") is False:  # `_ended_by_retry`
        return "failed"
    return "silent_end"


def _causes(retries: Sequence[Mapping[str, Any]], dumps_loaded: bool) -> tuple[str, ...]:
    """What may have ended a silent run (outcome `silent_end`), likeliest first (narrowed by the retries seen).

    With no dump among the sources at all (a debug log loaded alone), a success whose dump
    is elsewhere is as likely as any failure, and comes first."""
    transient = [r for r in retries if str(r.get("error_type") or "").startswith("transient")]
    return _cause_order(len(transient) >= 2, dumps_loaded)


@lru_cache(maxsize=4)
def _cause_order(transient_twice: bool, dumps_loaded: bool) -> tuple[str, ...]:
    """The silent causes in order, for the two facts that reorder them (made once each)."""
    order = ["non_retryable", "transient_exhausted", "empty_reply", "no_benefit", "dump_not_loaded"]
    if transient_twice:
        order.remove("transient_exhausted")
        order.insert(0, "transient_exhausted")
    if not dumps_loaded:
        order.remove("dump_not_loaded")
        order.insert(0, "dump_not_loaded")
    return tuple(SILENT_CAUSES[name] for name in order)
