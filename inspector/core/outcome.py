"""One outcome classifier for an artifact: compressed, not compressed, or failed, and why.

Used by the browser rows (`tui/rows.py`, text and kind of the outcome column) and by
`stats` (`core/stats.py`, counts per outcome and per reason), so both read a dump or a
debug run the same way. Recorded facts win over our evaluation: a dump is compressed; a
debug run says its own outcome and reason; only a bare context is judged by the engine.
A model call of `llm_request.jsonl` (kind `llm_request`) is a bare context too: the
window sent to the model, judged by the engine and named by its call number.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from inspector.core.artifact import Artifact, DebugRecorded, DumpRecorded, recorded_value
from inspector.core.timeline import SILENT_CAUSES, EvaluationRun

#: The silent cause that says the run may have succeeded with its dump elsewhere.
DUMP_NOT_LOADED = SILENT_CAUSES["dump_not_loaded"]


class Judged(Protocol):
    """What the outcome needs of an evaluation: any strategy's `Decision`, or the forked
    engine's `Evaluation`."""

    @property
    def hit(self) -> bool: ...

    @property
    def reason(self) -> str: ...


OutcomeKind = Literal["compressed", "not compressed", "unknown", "failed"]
#: The outcome kinds, in the order the browser cycles its filter through them ("error" is a
#: load error; "unknown": a run the sources cannot tell, e.g. a debug log loaded without dumps).
OUTCOMES: tuple[str, ...] = ("compressed", "not compressed", "unknown", "failed", "error")


@dataclass(frozen=True, slots=True)
class Outcome:
    """How an artifact ended, in three forms.

    `kind` is the coarse class; `text` the browser's short sentence; `recorded` the
    outcome word the artifact itself wrote (`compressed`, `not_compressed`, `silent_end`,
    `failed`, ...; None when it wrote none); `reason` why it did not compress or why it
    failed (the threshold check's reason, or the last retry's reason).
    """

    kind: OutcomeKind
    text: str
    recorded: str | None = None
    reason: str | None = None


#: The outcome of every dump that recorded the usual word (one value: outcomes are frozen).
_COMPRESSED = Outcome("compressed", "compressed", "compressed")


def _last_retry_reason(recorded: Mapping[str, object]) -> str | None:
    retries = recorded_value(recorded, "retries")
    last = retries[-1] if isinstance(retries, list) and retries else None
    why = last.get("reason") if isinstance(last, Mapping) else None
    return str(why) if why else None


def _from_recorded_word(word: str, reason: object, recorded: Mapping[str, object]) -> Outcome:
    """The outcome of an artifact that wrote its own outcome word (its silent causes and
    retries read only for the words whose outcome they decide)."""
    lowered = word.lower()
    dump_not_loaded = False
    last_reason = None
    if lowered == "silent_end":
        causes = recorded_value(recorded, "silent_causes")
        dump_not_loaded = bool(
            isinstance(causes, list | tuple) and causes and causes[0] == DUMP_NOT_LOADED
        )
    elif "fail" in lowered or "error" in lowered:
        last_reason = _last_retry_reason(recorded)
    return _worded(word, reason, dump_not_loaded, last_reason)


def _worded(word: str, reason: object, dump_not_loaded: bool, last_reason: str | None) -> Outcome:
    """The outcome of an artifact with this outcome word and check reason, whose first
    silent cause is or is not that its dump was not loaded, and whose last retry gave
    `last_reason` (the only facts of its record the word's outcome depends on)."""
    lowered = word.lower()
    if lowered.startswith("compress") or lowered in ("dump", "applied"):
        return Outcome("compressed", "compressed", word)
    if lowered == "silent_end":
        if dump_not_loaded:
            # no dump among the sources at all: a success looks exactly like this
            text = "compressed? dump not loaded"
            return Outcome("unknown", text, word, "silent_end")
        return Outcome("failed", "failed: silent end, no dump", word, "silent_end")
    if "fail" in lowered or "error" in lowered:
        return Outcome("failed", f"failed: {last_reason or word}", word, last_reason)
    text_reason = reason if isinstance(reason, str) and reason else None
    return Outcome("not compressed", f"no: {reason or word}", word, text_reason)


#: `_worded` by its arguments, for the few such tuples a log's or a folder's debug runs
#: repeat (a reason other than a string or None is worked out every time: `1` and `True`
#: hash alike).
_WORDED: dict[tuple[str, str | None, bool, str | None], Outcome] = {}


def _typed_debug_outcome(recorded: DebugRecorded, word: str, reason: object) -> Outcome:
    """`_from_recorded_word` of a typed debug record, read from its fields (no copies of
    its retries and silent causes) and worked out once per distinct tuple (`_WORDED`)."""
    causes = recorded.silent_causes
    retries = recorded.retries
    last = retries[-1] if retries else None
    if type(retries) is not tuple or (last is not None and type(last) is not dict):
        return _from_recorded_word(word, reason, recorded)  # not as the sources write them
    dump_not_loaded = bool(
        isinstance(causes, list | tuple) and causes and causes[0] == DUMP_NOT_LOADED
    )
    why = last.get("reason") if last is not None else None
    last_reason = str(why) if why else None
    if reason is not None and type(reason) is not str:
        return _worded(word, reason, dump_not_loaded, last_reason)
    return _worded_once(word, reason, dump_not_loaded, last_reason)


def _worded_once(
    word: str, reason: str | None, dump_not_loaded: bool, last_reason: str | None
) -> Outcome:
    """`_worded`, remembered (`_WORDED`): a log's or a folder's runs repeat a few tuples."""
    key = (word, reason, dump_not_loaded, last_reason)
    found = _WORDED.get(key)
    if found is None:
        found = _worded(word, reason, dump_not_loaded, last_reason)
        if len(_WORDED) < 1024:
            _WORDED[key] = found
    return found


def _model_call(artifact: Artifact, evaluation: Judged | None) -> Outcome:
    """A model call's window: what the compressor would do with it, named by the call."""
    sequence = recorded_value(artifact.recorded, "sequence")
    call = f"call {sequence}" if isinstance(sequence, int) else "model call"
    if evaluation is None:
        return Outcome("not compressed", f"{call}: sent, not evaluated")
    if evaluation.hit:
        return Outcome("compressed", f"{call}: would compress")
    return Outcome("not compressed", f"{call}: no: {evaluation.reason}", None, evaluation.reason)


def classify_outcome(artifact: Artifact, evaluation: Judged | None = None) -> Outcome:
    """The artifact's outcome: its own record first, else our evaluation of its context."""
    recorded = artifact.recorded
    if type(recorded) is DumpRecorded and artifact.kind == "dump":
        # what the general reads below give a typed dump (its outcome field, else none)
        written: object = recorded.outcome
        if written == "compressed":
            return _COMPRESSED
        shown = written if isinstance(written, str) and written else "compressed"
        return Outcome("compressed", "compressed", shown)
    if type(recorded) is DebugRecorded and artifact.kind == "debug":
        # the same reads on the typed record's fields (no copies of its mappings)
        word = recorded.outcome
        reason: object = recorded.reason
        check = recorded.threshold_check
        if reason is None and isinstance(check, Mapping):
            reason = check.get("reason")
    else:
        word = recorded_value(recorded, "outcome", "final_outcome")
        reason = recorded_value(recorded, "reason", "last_reason", "threshold_check.reason")
    word = word if isinstance(word, str) and word else None
    if artifact.kind == "dump":
        return Outcome("compressed", "compressed", word or "compressed")
    if word is not None:
        if type(recorded) is DebugRecorded:
            return _typed_debug_outcome(recorded, word, reason)
        return _from_recorded_word(word, reason, recorded)
    if isinstance(reason, str) and reason and artifact.kind == "debug":
        if reason == "reached_threshold":
            return Outcome("failed", "failed: reached threshold, no dump", None, reason)
        return Outcome("not compressed", f"no: {reason}", None, reason)
    if artifact.kind == "llm_request":
        return _model_call(artifact, evaluation)
    if evaluation is None:
        return Outcome("not compressed", "no context")
    if evaluation.hit:
        return Outcome("compressed", "would compress")
    return Outcome("not compressed", f"no: {evaluation.reason}", None, evaluation.reason)


def run_outcome(run: EvaluationRun) -> Outcome:
    """`classify_outcome` of the debug artifact `sources.debuglog.debug_artifact` makes of a
    settled run, read from the run itself (`stats` over a streamed log builds no artifact;
    `tests/test_logs_stats_fast.py` holds the two equal)."""
    return settled_outcome(run.outcome, run.threshold_check, run.silent_causes, run.retries)


def settled_outcome(
    word: object,
    check: Mapping[str, object] | None,
    causes: Sequence[str],
    retries: Sequence[Mapping[str, object]],
) -> Outcome:
    """`run_outcome` of a settled run with this outcome word, check, silent causes and
    retries (what `stats` reads of a streamed run without making it)."""
    reason = check.get("reason") if check is not None else None
    final = retries[-1] if retries else None
    last = final.get("reason") if type(final) is dict or isinstance(final, Mapping) else None
    if (
        type(word) is str
        and word
        and (reason is None or type(reason) is str)
        and (last is None or type(last) is str)
    ):
        # the facts `_from_recorded_word` reads of the record `_run_outcome` would make
        dump_not_loaded = bool(
            isinstance(causes, list | tuple) and causes and causes[0] == DUMP_NOT_LOADED
        )
        return _worded_once(word, reason, dump_not_loaded, last or None)
    return _run_outcome(word, reason, causes, retries)


def _run_outcome(
    word: object, reason: object, causes: Sequence[str], retries: Sequence[Mapping[str, object]]
) -> Outcome:
    """`settled_outcome`, worked out (`reason`: the check's)."""
    if not (isinstance(word, str) and word):
        # what classify_outcome does for a debug artifact without an outcome word
        if isinstance(reason, str) and reason:
            if reason == "reached_threshold":
                return Outcome("failed", "failed: reached threshold, no dump", None, reason)
            return Outcome("not compressed", f"no: {reason}", None, reason)
        return Outcome("not compressed", "no context")
    recorded = {"silent_causes": causes, "retries": [dict(r) for r in retries]}
    return _from_recorded_word(word, reason, recorded)
