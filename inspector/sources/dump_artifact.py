"""A compression dump made an artifact: the rebuilt context before (with the tuning recovered
from the dump and its linked debug run), the context after, and a typed `DumpRecorded`.

`dump_header_artifact` is the cheap variant for readers of `recorded` alone (`inspector
stats`): no context is rebuilt and nothing is counted. Must not import Textual or Rich.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from inspector.core.artifact import (
    Artifact,
    DumpRecorded,
    LoadResult,
    SpanCounts,
    plain_artifact,
    plain_dump_recorded,
    plain_span_counts,
)
from inspector.core.engine import PricedContext
from inspector.core.errors import ConfigError
from inspector.core.messages import Message
from inspector.core.snapshot import ContextSnapshot
from inspector.core.timeline import EvaluationRun
from inspector.core.tuning import DEFAULT_KEEP_RECENT, ProcessorKind, Tuning, parse_processor
from inspector.sources.dump import DumpFile, Rebuild, ToolLists, rebuild_context
from inspector.sources.dump_infer import (
    CounterProvider,
    infer_keep,
    infer_ratio,
    infer_token_mode,
    resolve_stale,
    safe_tuning,
    tuning_with,
)

#: The note a header-level dump artifact carries instead of the rebuild's notes.
HEADER_ONLY_NOTE = "header-level load: the context before compression was not rebuilt"


@dataclass(slots=True)
class _Recovered:
    """The tuning values a dump and its linked check give, how, and what is missing."""

    values: dict[str, Any] = field(default_factory=dict)
    present: set[str] = field(default_factory=set)
    inferred: dict[str, Any] = field(default_factory=dict)
    unrecoverable: list[str] = field(default_factory=list)
    processor_kind: str | None = None
    token_mode: str | None = None

    def take(self, name: str, value: Any, how: str | None = None) -> None:
        """Record a tuning value (and, when inferred, how it was found)."""
        self.values[name] = value
        self.present.add(name)
        if how is not None:
            self.inferred[name] = {"value": value, "from": how}


def _check_of(run: EvaluationRun | None) -> dict[str, Any] | None:
    return (
        dict(run.threshold_check) if run is not None and run.threshold_check is not None else None
    )


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@functools.lru_cache(maxsize=256)
def _processor_kind(name: str) -> ProcessorKind | None:
    """`parse_processor(name)`, None for a name it refuses (a folder's dumps name a few)."""
    try:
        return parse_processor(name)
    except ConfigError:
        return None


def _recover_window(dump: DumpFile, check: Mapping[str, Any] | None, out: _Recovered) -> None:
    """Processor, context_max and the two ratios (from the linked check's threshold and minimum)."""
    if dump.processor:
        kind = _processor_kind(dump.processor)
        if kind is not None:
            out.processor_kind = kind
            out.take("processor", kind)
            out.values["keep_recent"] = DEFAULT_KEEP_RECENT[kind]
        else:
            out.unrecoverable.append(
                f"processor {dump.processor!r} is not one the inspector models: evaluated as CurrentRound"
            )
    context_max = dump.context_max or _whole((check or {}).get("context_max"))
    if context_max is not None and context_max > 0:
        out.take("context_max", context_max)
    if check is not None and context_max is not None and context_max > 0:
        for name, key, floor_one in (
            ("trigger_ratio", "threshold", True),
            ("min_target_ratio", "min_target_tokens", False),
        ):
            value = _whole(check.get(key))
            ratio = None if value is None else infer_ratio(context_max, value, floor_one)
            if ratio is not None:
                out.take(name, ratio, f"threshold_check.{key} = {value}")


def _recover_mode(
    rebuild: Rebuild, dump: DumpFile, counters: CounterProvider, out: _Recovered
) -> None:
    mode, how = infer_token_mode(rebuild, dump, counters)
    out.token_mode = mode
    if mode is not None:
        out.take("token_mode", mode, how)
    else:
        out.values["token_mode"] = "tiktoken_cl100k"
        out.unrecoverable.append(f"the token mode is not in the dump ({how}): cl100k assumed")


def _rebuilt_context(
    dump: DumpFile,
    rebuild: Rebuild,
    out: _Recovered,
    span_first: dict[str, int] | None,
    check: Mapping[str, Any] | None,
    counters: CounterProvider,
    earlier_kept_ids: Callable[[], frozenset[str]] | None,
) -> tuple[tuple[Message, ...], Tuning, dict[str, Any] | None] | None:
    """The messages and tuning of the context before compression (None when it cannot
    be rebuilt), and the stale-flag choice."""
    if rebuild.messages is None:
        return None
    priced: PricedContext | None = None
    if out.processor_kind in ("current_round", "round_level"):
        if _missing_ratios(out):
            # the ratios will be priced on these messages in this mode (unless the stale
            # flags change them): one pricing serves both, the tool-boundary rule first
            mode = out.values.get("token_mode", Tuning().token_mode)
            priced = PricedContext(
                rebuild.system_messages, rebuild.messages, rebuild.tools, counters()[mode]
            )
        keep, how = infer_keep(rebuild, dump, span_first, counters, priced)
        if keep is not None:
            out.values["keep_recent"] = keep
            out.inferred["keep_recent"] = {"value": keep, "from": how}
    tuning = safe_tuning(out.values, out.unrecoverable)
    messages, stale_info = resolve_stale(rebuild, tuning, check, counters, earlier_kept_ids)
    tuning = _consistent_ratios(rebuild, messages, tuning, counters, out, priced)
    if stale_info is not None:
        out.unrecoverable.append(stale_info["note"])
    return messages, tuning, stale_info


def _snapshot(
    dump: DumpFile,
    rebuild: Rebuild,
    made: tuple[tuple[Message, ...], Tuning, Any],
    out: _Recovered,
    evidence: EvidenceOf | None,
) -> ContextSnapshot:
    """The rebuilt context (`made` by `_rebuilt_context`) as a snapshot, with its release
    evidence when `evidence` gives one."""
    messages, tuning, _ = made
    found = None
    if evidence is not None:
        changed, found = evidence((rebuild.system_messages, messages))
        if not changed:
            found = None
    return ContextSnapshot(
        id=dump.id,
        system_messages=rebuild.system_messages,
        messages=messages,
        tools=rebuild.tools,
        tuning=tuning,
        recorded_fields=frozenset(out.present),
        extra={"rebuilt_from": "dump"},
        release_evidence=found,
    )


#: Ratios are inferred on openJiuwen's grid of 0.001.
_RATIO_GRID = 1000


def _largest_ratio(limit_tokens: int, context_max: int, low: float) -> float | None:
    """The largest ratio r on the grid with int(context_max x r) <= limit_tokens, r > low."""
    k = min(int(limit_tokens * _RATIO_GRID // context_max), _RATIO_GRID - 1)
    while k > 0 and int(context_max * (k / _RATIO_GRID)) > limit_tokens:
        k -= 1
    ratio = round(k / _RATIO_GRID, 3)
    return ratio if ratio > low else None


def _missing_ratios(out: _Recovered) -> list[str]:
    """The ratios neither the dump nor its check recorded (`_consistent_ratios` bounds them)."""
    return [name for name in ("trigger_ratio", "min_target_ratio") if name not in out.present]


def _consistent_ratios(
    rebuild: Rebuild,
    messages: tuple[Message, ...],
    tuning: Tuning,
    counters: CounterProvider,
    out: _Recovered,
    priced: PricedContext | None = None,
) -> Tuning:
    """A dump exists only because the trigger fired and the region was big enough: ratios
    the dump does not record are taken in the range its numbers allow (trigger ratio at most
    total / context_max, min-target ratio at most target / context_max), so re-evaluating
    the recorded settings agrees with the artifact. The range goes to `inferred`."""
    missing = _missing_ratios(out)
    if not missing:
        return tuning
    counter = counters()[tuning.token_mode]
    if priced is None or priced.counter is not counter or priced.messages is not messages:
        priced = PricedContext(rebuild.system_messages, messages, rebuild.tools, counter)
    evaluation = priced.evaluate(tuning)
    cm = tuning.context_max
    if "trigger_ratio" in missing:
        total = evaluation.total_tokens
        bound = round(total / cm, 4)
        if evaluation.total_tokens >= evaluation.threshold:
            how = f"not recorded: the default {tuning.trigger_ratio} is consistent with the dump (the trigger fired at total {total:,}, so ratio <= {bound})"
        else:
            ratio = _largest_ratio(total, cm, 0.0)
            if ratio is not None:
                tuning = tuning_with(tuning, "trigger_ratio", ratio)
            how = f"not recorded: the dump exists, so the trigger fired at total {total:,} of context_max {cm:,}: ratio in (0, {bound}]; evaluated with {tuning.trigger_ratio}"
        out.inferred["trigger_ratio"] = {"value": tuning.trigger_ratio, "from": how, "max": bound}
    if "min_target_ratio" in missing:
        if evaluation.tuning is not tuning:  # the same tuning gives the same evaluation
            evaluation = priced.evaluate(tuning)
        target = evaluation.span_target_tokens
        bound = round(target / cm, 4)
        if evaluation.reason == "target_below_min":
            ratio = _largest_ratio(target, cm, -1.0)
            if ratio is not None:
                tuning = tuning_with(tuning, "min_target_ratio", ratio)
            how = f"not recorded: the dump exists, so the region to compress ({target:,} tokens) reached the minimum: ratio in [0, {bound}]; evaluated with {tuning.min_target_ratio}"
        else:
            how = f"not recorded: the default {tuning.min_target_ratio} is consistent with the dump (region to compress {target:,} tokens, so ratio <= {bound})"
        out.inferred["min_target_ratio"] = {
            "value": tuning.min_target_ratio,
            "from": how,
            "max": bound,
        }
    return tuning


def _span_note(
    dump: DumpFile, run: EvaluationRun | None, first: Mapping[str, int] | None
) -> str | None:
    """What the dump cannot say about the span first built (before an overflow shrink):
    `first` is the run's `span_counts`."""
    if first is not None and dump.compress_count is not None:
        if first["messages_to_compress"] == dump.compress_count:
            return None
        return (
            "the span was shrunk after a context overflow: first built "
            f"{first['preserved_prefix']}/{first['messages_to_compress']}/{first['protected_tail']}, "
            f"sent {dump.prefix_count}/{dump.compress_count}/{dump.tail_count}"
        )
    if run is None and dump.compress_count is not None:
        return "no debug record was linked: the span first built (before any overflow shrink) is unknown"
    return None


def _recorded(
    dump: DumpFile,
    run: EvaluationRun | None,
    *,
    messages_before: int | None = None,
    messages_after: int | None = None,
    inferred: Mapping[str, Any] | None = None,
    unrecoverable: tuple[str, ...] = (),
    stale_usage: Mapping[str, Any] | None = None,
) -> DumpRecorded:
    """The dump's `recorded`: its header numbers plus the linked run's check and retries;
    the keywords are the fields the caller found out (every field is given:
    `plain_dump_recorded`)."""
    first = run.span_counts if run is not None else None
    return plain_dump_recorded(
        outcome="compressed",
        span=plain_span_counts(dump.prefix_count, dump.compress_count, dump.tail_count),
        tokens_before=dump.tokens_before,
        tokens_after=dump.tokens_after,
        reduction=dump.reduction,
        reduction_ratio=dump.reduction_ratio,
        context_max=dump.context_max,
        target_tokens=dump.target_tokens,
        retries=tuple([dict(r) for r in run.retries]) if run is not None and run.retries else (),
        messages_before=messages_before,
        messages_after=messages_after,
        summary_chars=None if dump.summary is None else len(dump.summary),
        model_calls=dump.model_calls,
        span_first_built=SpanCounts.of(first) if run is not None else None,
        inferred={} if inferred is None else inferred,
        unrecoverable=unrecoverable,
        threshold_check=_check_of(run),
        stale_usage=stale_usage,
    )


#: (changed, release evidence) of a context from its (system, context) messages: what
#: `sources.evidence.release_evidence` gives, with the reader's facts bound in.
EvidenceOf = Callable[[tuple[tuple[Message, ...], tuple[Message, ...]]], tuple[bool, Any]]


def dump_artifact(
    dump: DumpFile,
    run: EvaluationRun | None,
    counters: CounterProvider,
    timeline: list[dict[str, Any]] | None = None,
    earlier_kept_ids: Callable[[], frozenset[str]] | None = None,
    tool_lists: ToolLists | None = None,
    evidence: EvidenceOf | None = None,
) -> Artifact:
    """The dump as an artifact: the rebuilt context before, the context after, and the record.

    `earlier_kept_ids` gives (on demand) the context_message_ids that earlier dumps of the
    same context kept, whose usage records were therefore stale before this compression;
    `tool_lists` parses each distinct tool list of a load once; `evidence` gives the
    rebuilt context's release evidence (set when the snapshot is made, not copied in after).
    """
    rebuild = rebuild_context(dump, tool_lists)
    check = _check_of(run)
    out = _Recovered(unrecoverable=list(rebuild.notes))
    _recover_window(dump, check, out)
    _recover_mode(rebuild, dump, counters, out)
    span_first = run.span_counts if run is not None else None
    made = _rebuilt_context(dump, rebuild, out, span_first, check, counters, earlier_kept_ids)
    snapshot = None if made is None else _snapshot(dump, rebuild, made, out, evidence)
    stale_info = None if made is None else made[2]
    note = _span_note(dump, run, span_first)
    if note is not None:
        out.unrecoverable.append(note)
    recorded = _recorded(
        dump,
        run,
        messages_before=None if rebuild.messages is None else len(rebuild.messages),
        messages_after=None if rebuild.after is None else len(rebuild.after),
        inferred=out.inferred,
        unrecoverable=tuple(out.unrecoverable),
        stale_usage=None
        if stale_info is None
        else {k: v for k, v in stale_info.items() if k != "note"},
    )
    return plain_artifact(
        source=dump.source,
        id=snapshot.id if snapshot is not None else dump.id,
        kind="dump",
        snapshot=snapshot,
        recorded=recorded,
        processor=dump.processor,
        session_id=dump.session_id or dump.name_session,
        context_id=dump.context_id,
        timestamp=dump.timestamp,
        after=rebuild.after,
        summary=dump.summary,
        recorded_token_mode=out.token_mode,
        extra={"timeline": timeline or [], "raw_keys": sorted(dump.raw.keys())},
        whole=None,
    )


_HEADER_ONLY_NOTES = (HEADER_ONLY_NOTE,)


def dump_header_artifact(
    dump: DumpFile,
    run: EvaluationRun | None,
    timeline: list[dict[str, Any]] | None = None,
    messages_after: int | None = None,
    whole: Callable[[], LoadResult] | None = None,
) -> Artifact:
    """The dump as an artifact from its recorded fields only: no context is rebuilt.

    For `inspector stats` and other readers of `Artifact.recorded` alone: the keys that
    `dump_artifact` fills from the dump's header (span, tokens, reduction, retries, the
    linked threshold_check) are the same; `snapshot` and `after` are None, the token mode
    is not inferred, and a dump whose messages could not be rebuilt is not refused (its
    message lists are never read). `messages_before` is None; `extra["header_only"]` is
    True. `whole`: how to make the whole one later (`Artifact.whole`), if it can be.
    """
    recorded = _recorded(dump, run, messages_after=messages_after, unrecoverable=_HEADER_ONLY_NOTES)
    return plain_artifact(
        source=dump.source,
        id=dump.id,
        kind="dump",
        snapshot=None,
        recorded=recorded,
        processor=dump.processor,
        session_id=dump.session_id or dump.name_session,
        context_id=dump.context_id,
        timestamp=dump.timestamp,
        after=None,
        summary=None,
        recorded_token_mode=None,
        extra={
            "timeline": timeline or [],
            "raw_keys": sorted(dump.raw.keys()),
            "header_only": True,
        },
        whole=whole,
    )
