"""openJiuwen debug logs (`<Processor>.jsonl`): records checked for type, runs made artifacts.

Known events are `threshold_check`, `span_built` and `compression_retry`; any other event
(openJiuwen adds new ones; SessionMemory writes its own) is kept in the run it falls in.
Records are checked by `inspector.formats.debug`: a record whose known keys have the wrong
type, or whose `event` is not a string, is refused (counted as a bad line).
One debug artifact is made per evaluation run that did not end in a dump: a run that
produced a dump is reported once, by the dump's artifact, which carries the run's
`threshold_check` and retries. A debug artifact has no context, unless a loaded snapshot
names that evaluation (processor, session, context and the check's `timestamp`), or names
the same processor, session and context while the log holds one check for them (a
scenario's `input.json`): then that snapshot is its context (rules in
`inspector.sources.loader`). Must not import Textual or Rich; the record models
(`inspector.formats.debug`, pydantic) are imported only for a record `plainly_valid` does
not vouch for, so reading a well-formed log never loads them.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator, Mapping
from math import isfinite
from typing import Any

from inspector.core.artifact import (
    Artifact,
    SpanCounts,
    plain_artifact,
    plain_debug_recorded,
)
from inspector.core.errors import FormatError
from inspector.core.timeline import EvaluationRun

#: Keys a debug record has besides `event`: an object with `event` and one of these is
#: meant to be a debug record, even when its `event` is not a string.
_COMMON_KEYS = frozenset({"timestamp", "processor", "session_id", "context_id", "phase"})


#: The file name openJiuwen 0.1.19 gives its log of model calls
#: (`_debug_log_file_name("llm_request")`; `inspector.sources.llm_request` reads it): JSON
#: Lines like a debug log's, but never one.
LLM_REQUEST_FILE = "llm_request.jsonl"


def is_llm_request(document: Any) -> bool:
    """A `llm_request.jsonl` record: processor `llm_request`, event `pre_call`."""
    return (
        isinstance(document, Mapping)
        and document.get("processor") == "llm_request"
        and document.get("event") == "pre_call"
    )


def looks_like_debug_record(document: Any) -> bool:
    """An object with a string `event` (a line of a context_debug JSONL)."""
    if type(document) is dict:  # a parsed line: no ABC check
        return type(document.get("event")) is str or isinstance(document.get("event"), str)
    return isinstance(document, Mapping) and isinstance(document.get("event"), str)


def near_debug_record(document: Any) -> bool:
    """An object with an `event` key that is not a string but other debug-record keys: a
    broken record, reported (never skipped)."""
    return (
        isinstance(document, Mapping)
        and "event" in document
        and not isinstance(document.get("event"), str)
        and not _COMMON_KEYS.isdisjoint(document)
    )


def check_debug_record(record: Mapping[str, Any]) -> None:
    """Raise FormatError naming the first known key that has the wrong type (`formats.debug`).

    A record whose known keys plainly have the types the model wants (`plainly_valid`: the
    common case) is not handed to pydantic."""
    if plainly_valid(record):
        return
    from inspector.formats.debug import parse_debug_record

    try:
        parse_debug_record(record)
    except FormatError as error:
        event = record.get("event")
        kind = f"a {event} record" if isinstance(event, str) else "a debug record"
        raise FormatError(f"{kind}: {error.message}", error.where) from None


#: The largest magnitude of an integer `formats.base.Int` / `Count` accept.
_INT_MAX = int(sys.float_info.max)
#: What a known key must hold (besides null) for its model to surely accept it.
TEXT, BOOL, COUNT, INT, NUMBER, SPANS = "text", "bool", "count", "int", "number", "spans"

#: The known keys of each model of `inspector.formats.debug` and what each must hold
#: (`tests/test_stream_fast_paths.py` holds these tables to the models' fields, and the
#: verdicts to pydantic's).
COMMON_KEYS: dict[str, str] = {
    "timestamp": NUMBER,
    "processor": TEXT,
    "session_id": TEXT,
    "context_id": TEXT,
    "phase": TEXT,
}
EVENT_KEYS: dict[str, dict[str, str]] = {
    "threshold_check": {
        "total_tokens": COUNT,
        "context_max": COUNT,
        "threshold": COUNT,
        "hit": BOOL,
        "reason": TEXT,
        "target_tokens": COUNT,
        "min_target_tokens": COUNT,
    },
    "span_built": {
        "preserved_prefix": SPANS,
        "messages_to_compress": SPANS,
        "protected_tail": SPANS,
    },
    "compression_retry": {
        "attempt": INT,
        "error_type": TEXT,
        "error_message": TEXT,
        "retried": BOOL,
        "reason": TEXT,
        "budget_ratio": NUMBER,
        "delay_seconds": NUMBER,
    },
}
SPAN_ENTRY_KEYS: dict[str, str] = {"idx": COUNT, "role": TEXT, "tokens": INT, "preview": TEXT}
_SPECS = {event: {**COMMON_KEYS, **keys} for event, keys in EVENT_KEYS.items()}
#: Events checked by a model of their own elsewhere (`pre_call`: `formats.llm_request`).
_OWN_MODEL = frozenset({"pre_call"})


def _holds(want: str, value: Any) -> bool:
    """True when a non-null `value` is what `want` names (exact JSON types, in range)."""
    kind = type(value)
    if want == TEXT:
        return kind is str
    if want == COUNT:
        return kind is int and 0 <= value <= _INT_MAX
    if want == INT:
        return kind is int and -_INT_MAX <= value <= _INT_MAX
    if want == BOOL:
        return kind is bool
    if want == NUMBER:
        if kind is float:
            return math.isfinite(value)
        return kind is int and -_INT_MAX <= value <= _INT_MAX
    return kind is list and all(type(e) is dict and _all_hold(e, SPAN_ENTRY_KEYS) for e in value)


def _all_hold(record: dict[str, Any], spec: dict[str, str]) -> bool:
    for key, value in record.items():  # noqa: SIM110 - a loop: faster than all() here
        if value is not None and key in spec and not _holds(spec[key], value):
            return False
    return True


def plainly_valid(record: Any, vouched: bool = False) -> bool:
    """True when `formats.debug.parse_debug_record` surely accepts `record`: a dict with a
    string `event` whose known keys hold exactly the JSON types its model wants, numbers in
    range. False says nothing (the model decides).

    What the types alone decide is remembered per shape (event, keys and value types, in
    order: a log repeats a few shapes), leaving only the values a type does not settle
    (numbers' ranges, span entries, themselves remembered per shape) to check; the
    verdict is `_all_hold`'s. `vouched`: the caller's word that `record` is a value the
    JSON fast path made (`jsonio.loads_strict_bytes_vouched` said so): all its floats are
    finite and all its integers under `jsonio.FAST_INT_BOUND` (< `_INT_MAX`), so only the
    counts' lower bound is left to check."""
    if type(record) is not dict:
        return False
    event = record.get("event")
    if type(event) is not str or event in _OWN_MODEL:
        return False
    # one flat tuple: the event, the keys, then their values' types (as many as keys)
    shape = (event, *record, *map(type, record.values()))
    left = _SHAPES.get(shape, _UNSEEN)
    if left is _UNSEEN:
        left = _left_to_check(_SPECS.get(event, COMMON_KEYS), record)
        if len(_SHAPES) < _MAX_SHAPES:
            _SHAPES[shape] = left
    if left is None:
        return False
    ints, floats, spans, counts = left
    if vouched:
        for key in counts:
            if record[key] < 0:
                return False
        return not spans or _entries_hold(record, spans, vouched)
    for key, low in ints:
        value = record[key]
        if value < low or value > _INT_MAX:
            return False
    for key in floats:
        if not isfinite(record[key]):
            return False
    return not spans or _entries_hold(record, spans, vouched)


#: The keys of a shape whose values are still to check, by what they must be: integers
#: (with their lower bound: 0 for a count), finite floats, span lists (`_holds`' rules,
#: split by the value's type); then the integers that are counts (all a vouched value
#: leaves to check, besides span lists).
_Left = tuple[tuple[tuple[str, int], ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]
#: What each shape leaves to check (None: its types already fail), at most `_MAX_SHAPES`;
#: the same for the entries of span lists.
_SHAPES: dict[tuple[Any, ...], _Left | None] = {}
_ENTRY_SHAPES: dict[tuple[Any, ...], _Left | None] = {}
_MAX_SHAPES = 4096
_UNSEEN: Any = object()
#: For each kind a known key wants: the value types that hold whatever the value.
_SURE: dict[str, tuple[type, ...]] = {TEXT: (str,), BOOL: (bool,)}
#: The kinds and value types whose values must still be checked: integers by their lower
#: bound, then floats and span lists.
_LOW: dict[tuple[str, type], int] = {
    (COUNT, int): 0,
    (INT, int): -_INT_MAX,
    (NUMBER, int): -_INT_MAX,
}
_FLOAT, _SPANS = (NUMBER, float), (SPANS, list)


def _entries_hold(record: dict[str, Any], spans: tuple[str, ...], vouched: bool) -> bool:
    """`_holds` of the span lists of a record: every entry a dict whose known keys hold
    what `SPAN_ENTRY_KEYS` wants (entries' shapes remembered as records' are; `vouched`:
    as for `plainly_valid`)."""
    for key in spans:
        for entry in record[key]:
            if type(entry) is not dict:
                return False
            shape = (*entry, *map(type, entry.values()))
            left = _ENTRY_SHAPES.get(shape, _UNSEEN)
            if left is _UNSEEN:
                left = _left_to_check(SPAN_ENTRY_KEYS, entry)
                if len(_ENTRY_SHAPES) < _MAX_SHAPES:
                    _ENTRY_SHAPES[shape] = left
            if left is None or left[2]:  # spans inside entries: the model decides
                return False
            if vouched:
                for name in left[3]:
                    if entry[name] < 0:
                        return False
                continue
            for name, low in left[0]:
                value = entry[name]
                if value < low or value > _INT_MAX:
                    return False
            for name in left[1]:
                if not isfinite(entry[name]):
                    return False
    return True


def _left_to_check(spec: dict[str, str], record: dict[str, Any]) -> _Left | None:
    """The keys of the record's shape whose values must still be checked, by what they
    must be; None when a known key's type alone fails (what `_all_hold` says of any
    record of that shape)."""
    ints: list[tuple[str, int]] = []
    floats: list[str] = []
    spans: list[str] = []
    for key, value in record.items():
        want = spec.get(key)
        kind = type(value)
        if want is None or kind is type(None) or kind in _SURE.get(want, ()):
            continue
        low = _LOW.get((want, kind))
        if low is not None:
            ints.append((key, low))
        elif (want, kind) == _FLOAT:
            floats.append(key)
        elif (want, kind) == _SPANS:
            spans.append(key)
        else:
            return None
    counts = tuple(key for key, low in ints if low == 0)
    return tuple(ints), tuple(floats), tuple(spans), counts


def run_id(run: EvaluationRun) -> str:
    """A readable unique id: session/context/processor#index."""
    processor, session, context = run.key
    return f"{session or 'unknown_session'}/{context or 'unknown_context'}/{processor or 'unknown'}#{run.index}"


class _LazyTimeline(Mapping[str, Any]):
    """An artifact's `extra` whose `timeline` is made when first read (a streamed log's
    `why --json` never reads it)."""

    __slots__ = ("_values", "_make")

    def __init__(self, values: dict[str, Any], make: Callable[[], list[dict[str, Any]]]):
        self._values = values
        self._make: Callable[[], list[dict[str, Any]]] | None = make

    def __getitem__(self, key: str) -> Any:
        if key == "timeline" and self._make is not None:
            self._values["timeline"], self._make = self._make(), None
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


def debug_artifact(
    run: EvaluationRun,
    timeline: list[dict[str, Any]] | Callable[[], list[dict[str, Any]]],
    context: Artifact | None = None,
    *,
    link: str | None = None,
) -> Artifact:
    """One evaluation run as an artifact: the check's reason and numbers, retries, outcome.

    `context` is a snapshot artifact known to hold the context the check saw (or None);
    `link` says how it was found: "evaluation" (it names this check's time) or "session"
    (the only snapshot for the only check of this key). Both go to `extra`. `timeline`
    may be a function that makes it: then it is made when `extra["timeline"]` is read.
    """
    extra: dict[str, Any] = {
        "timeline": None if callable(timeline) else timeline,
        "run_index": run.index,
        "context_from": None if context is None else context.source,
        "context_snapshot_id": None
        if context is None or context.snapshot is None
        else context.snapshot.id,
        "context_link": None if context is None else (link or "session"),
    }
    # a run's records are not changed once read, and a record's mappings are copied when
    # read (`Recorded`): plain dicts are kept as they are, not copied again here
    check = _held(run.threshold_check) if run.threshold_check is not None else None
    values = check or {}
    recorded = plain_debug_recorded(
        threshold_check=check,
        reason=values.get("reason"),
        hit=values.get("hit"),
        total_tokens=values.get("total_tokens"),
        threshold=values.get("threshold"),
        context_max=values.get("context_max"),
        target_tokens=values.get("target_tokens"),
        min_target_tokens=values.get("min_target_tokens"),
        retries=tuple([_held(r) for r in run.retries]) if run.retries else (),
        outcome=run.outcome,
        span=SpanCounts.of(run.span_counts),
        silent_causes=tuple(run.silent_causes),
        other_events=tuple([_held(r) for r in run.other_events]) if run.other_events else (),
        line=run.line,
        duplicate_records=run.duplicates or None,
    )
    return plain_artifact(
        source=run.source,
        id=run_id(run),
        kind="debug",
        snapshot=None if context is None else context.snapshot,
        recorded=recorded,
        processor=run.processor,
        session_id=run.session_id,
        context_id=run.context_id,
        timestamp=run.timestamp,
        after=None,
        summary=None,
        recorded_token_mode=None,
        extra=_LazyTimeline(extra, timeline) if callable(timeline) else extra,
        whole=None,
    )


def _held(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """A run's record as an artifact keeps it: a dict as it is, any other mapping as a dict."""
    return record if type(record) is dict else dict(record)
