"""What a compression dump does not say, recovered: the trigger and min-target ratios from
the linked check, keep_recent from the span first built, the token mode from which counter
reproduces the dump's totals, and the kept usage records' stale flags.
Must not import Textual or Rich.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from inspector.core.engine import PricedContext
from inspector.core.errors import ConfigError
from inspector.core.messages import Message, Tool
from inspector.core.tokens import TokenCounter, usage_tail_tokens
from inspector.core.tuning import Tuning
from inspector.sources.dump import DumpFile, Rebuild

CounterProvider = Callable[[], dict[str, TokenCounter]]
_MEMORY_PREFIXES = (
    "<memory_block_current>",
    "<memory_block_dialogue>",
    "<memory_block_round>",
    "<memory_block_session>",
)


def without_stale_flag(message: Message) -> Message:
    """The message with `metadata.context_usage_stale` removed."""
    metadata = {k: v for k, v in message.metadata.items() if k != "context_usage_stale"}
    return dataclasses.replace(message, metadata=metadata)


def usage_baseline_total(system: tuple[Message, ...], messages: tuple[Message, ...]) -> int | None:
    """openJiuwen's usage-baseline total (last valid fresh assistant usage + len//4 after it)."""
    everything = system + messages
    for j in range(len(everything) - 1, -1, -1):
        message = everything[j]
        if message.role != "assistant" or message.usage_metadata is None:
            continue
        total = message.usage_total
        if total is None or total <= 0 or message.usage_stale:
            continue
        return total + sum(usage_tail_tokens(m) for m in everything[j + 1 :])
    return None


def infer_ratio(context_max: int, value: int, floor_one: bool) -> float | None:
    """The shortest decimal r in (0, 1) with int(context_max * r) == value (max 1 if floor_one)."""
    if context_max <= 0:
        return None
    for digits in range(1, 7):
        for candidate in {
            round(value / context_max, digits),
            round((value + 0.5) / context_max, digits),
        }:
            if not 0 < candidate < 1:
                continue
            got = int(context_max * candidate)
            if floor_one:
                got = max(got, 1)
            if got == value:
                return candidate
    return None


def infer_token_mode(
    rebuild: Rebuild, dump: DumpFile, counters: CounterProvider
) -> tuple[str | None, str]:
    """Which counter reproduces the dump's own totals; (mode or None, how it was found).

    The context after compression is small, so its total is tried first.
    """
    if rebuild.after is not None and dump.tokens_after is not None:
        messages, target, what = (
            rebuild.after,
            dump.tokens_after,
            "context_after.total_tokens_after",
        )
    elif rebuild.messages is not None and dump.tokens_before is not None:
        messages, target, what = rebuild.messages, dump.tokens_before, "trigger.total_tokens_before"
    else:
        return None, "the dump has no totals to compare counters with"
    available = counters()
    quarter = available["len_div_4"]
    if quarter.count_messages(messages) == target:
        before_ok = (
            rebuild.messages is None
            or dump.tokens_before is None
            or quarter.count_messages(rebuild.messages) == dump.tokens_before
        )
        if before_ok:
            return "len_div_4", f"len//4 counting reproduces {what} = {target}"
    tiktoken = available["tiktoken_cl100k"]
    if not tiktoken.exact:
        return (
            None,
            f"len//4 does not reproduce {what}; exact cl100k counting is unavailable to check tiktoken",
        )
    got = tiktoken.count_messages(messages)
    if got == target:
        return "tiktoken_cl100k", f"cl100k counting reproduces {what} = {target}"
    return None, f"neither counter reproduces {what} = {target} (cl100k gives {got})"


class _NoCounts(TokenCounter):
    """A counter that counts nothing (every piece 0): for a `PricedContext` used only for
    its tool-boundary rule (`adjust_keep`), which does not depend on counts."""

    def __init__(self) -> None:
        super().__init__("len_div_4")

    def piece_tokens(self, message: Message) -> int:
        """0: no count is needed."""
        return 0

    def count_tools(self, tools: Sequence[Tool]) -> int:
        """0: no count is needed."""
        return 0


_STRUCTURE_ONLY = _NoCounts()


#: Tunings made from equal values (a folder's dumps recover a few): Tuning is frozen.
_TUNINGS: dict[tuple[tuple[str, type, Any], ...], Tuning] = {}
_TUNINGS_KEPT = 1024


def safe_tuning(values: dict[str, Any], notes: list[str]) -> Tuning:
    """The tuning of `values`; an out-of-range value is dropped (default used) with a note."""
    # the value's type is in the key (1, 1.0 and True are equal but make different
    # tunings), a float by its repr (0.0 and -0.0 too)
    key = tuple(
        (name, type(value), repr(value) if type(value) is float else value)
        for name, value in values.items()
    )
    try:
        known = _TUNINGS.get(key)
    except TypeError:  # an unhashable value: made, not remembered
        key, known = (), None
    if known is not None:
        return known
    try:
        made = Tuning(**values)  # = Tuning().with_(**values), without the copy
    except ConfigError as error:
        notes.append(f"recorded {error.field} {error.value!r} is out of range: default used")
        values.pop(error.field, None)
        return safe_tuning(values, notes)
    if key:
        if len(_TUNINGS) >= _TUNINGS_KEPT:
            _TUNINGS.clear()
        _TUNINGS[key] = made
    return made


#: (id of a tuning, field, repr of a value) -> (that tuning, held so the id stays its own;
#: the tuning with that field set): `_consistent_ratios` sets the same few ratios on the
#: same few tunings (`safe_tuning` shares them) for most of a folder's dumps.
_CHANGED: dict[tuple[int, str, str], tuple[Tuning, Tuning]] = {}


def tuning_with(tuning: Tuning, name: str, value: float) -> Tuning:
    """`tuning.with_(**{name: value})`, the same object for a change made before."""
    key = (id(tuning), name, repr(value))
    known = _CHANGED.get(key)
    if known is not None and known[0] is tuning:
        return known[1]
    made = tuning.with_(**{name: value})
    if len(_CHANGED) >= _TUNINGS_KEPT:
        _CHANGED.clear()
    _CHANGED[key] = (tuning, made)
    return made


def infer_keep(
    rebuild: Rebuild,
    dump: DumpFile,
    span_first: dict[str, int] | None,
    counters: CounterProvider,
    priced: PricedContext | None = None,
) -> tuple[int | None, str]:
    """keep_recent that reproduces the tail first built (tool-boundary widening included);
    `priced`: the rebuilt messages already priced (its counts are not read here)."""
    assert rebuild.messages is not None
    if span_first is not None:
        tail, how = span_first["protected_tail"], "span_built.protected_tail"
    elif dump.tail_count is not None:
        tail, how = dump.tail_count, "the dump's protected_tail_count (no span_built linked)"
    else:
        return None, ""
    # only the tool-boundary rule is needed here: counting 20,000 messages would be wasted
    if priced is None or priced.messages is not rebuild.messages:
        priced = PricedContext((), rebuild.messages, (), _STRUCTURE_ONLY)
    if priced.adjust_keep(tail) == tail:
        return tail, f"{how} = {tail}"
    for keep in range(0, tail):
        if priced.adjust_keep(keep) == tail:
            return keep, f"{how} = {tail} (smallest keep that widens to it)"
    return None, ""


def _kept_before(
    rebuild: Rebuild, earlier_kept_ids: Callable[[], frozenset[str]] | None
) -> Callable[[int], bool]:
    """Whether a kept message was kept by an earlier compression too (so stale already).

    A record an earlier compression kept was marked stale by it already: it sits before
    that compression's memory block (its prefix), or an earlier loaded dump of the same
    context kept it (same context_message_id). Only the others are in doubt.
    """
    messages = rebuild.messages or ()
    last_memory = max(
        (
            i
            for i, m in enumerate(messages)
            if m.role == "user"
            and isinstance(m.content, str)
            and m.content.lstrip().startswith(_MEMORY_PREFIXES)
        ),
        default=-1,
    )
    known: list[frozenset[str]] = []

    def was_kept_before(index: int) -> bool:
        if index < last_memory:
            return True
        if earlier_kept_ids is None:
            return False
        if not known:
            known.append(earlier_kept_ids())
        message_id = messages[index].metadata.get("context_message_id")
        return isinstance(message_id, str) and message_id in known[0]

    return was_kept_before


def resolve_stale(
    rebuild: Rebuild,
    tuning: Tuning,
    check: Mapping[str, Any] | None,
    counters: CounterProvider,
    earlier_kept_ids: Callable[[], frozenset[str]] | None = None,
) -> tuple[tuple[Message, ...], dict[str, Any] | None]:
    """Choose the kept usage records' stale flags: fresh (default) or as dumped, checked if possible."""
    assert rebuild.messages is not None
    if not rebuild.stale_candidates:
        return rebuild.messages, None  # no flag in doubt: nothing to look up
    was_kept_before = _kept_before(rebuild, earlier_kept_ids)
    already = tuple(i for i in rebuild.stale_candidates if was_kept_before(i))
    candidates = tuple(i for i in rebuild.stale_candidates if not was_kept_before(i))
    if not candidates:
        if already:
            return rebuild.messages, {
                "messages": [],
                "already_stale": list(already),
                "assumed": "stale",
                "confirmed": True,
                "note": f"{len(already)} kept usage records older than an earlier compression were stale already",
            }
        return rebuild.messages, None
    fresh = tuple(
        without_stale_flag(m) if i in candidates else m for i, m in enumerate(rebuild.messages)
    )
    recorded_total = (check or {}).get("total_tokens")
    listed = ", ".join(f"#{i}" for i in candidates)
    info: dict[str, Any] = {"messages": list(candidates), "recorded_total": recorded_total}
    if already:
        info["already_stale"] = list(already)
    base = (
        f"{len(candidates)} kept assistant usage record{'s' if len(candidates) != 1 else ''} ({listed}) "
        "were marked context_usage_stale by this compression; whether they were stale before it is not in the dump"
    )
    if not isinstance(recorded_total, int) or isinstance(recorded_total, bool):
        info.update(assumed="fresh", confirmed=False)
        info["note"] = base + ": assumed fresh (no threshold_check linked to confirm)"
        return fresh, info
    fresh_total = usage_baseline_total(rebuild.system_messages, fresh)
    if fresh_total is None:
        fresh_total = PricedContext(
            rebuild.system_messages, fresh, rebuild.tools, counters()[tuning.token_mode]
        ).counted_total
    info["total_if_fresh"] = fresh_total
    if fresh_total == recorded_total:
        info.update(assumed="fresh", confirmed=True)
        info["note"] = base + (
            f": assumed fresh, confirmed (the recorded total {recorded_total} is reproduced; only the newest "
            "usage record decides it, so older flags cannot be checked)"
        )
        return fresh, info
    dumped_total = usage_baseline_total(rebuild.system_messages, rebuild.messages)
    if dumped_total is None:
        dumped_total = PricedContext(
            rebuild.system_messages, rebuild.messages, rebuild.tools, counters()[tuning.token_mode]
        ).counted_total
    info["total_if_stale"] = dumped_total
    if dumped_total == recorded_total:
        info.update(assumed="stale", confirmed=True)
        info["note"] = (
            base
            + f": kept stale as dumped, confirmed (the recorded total {recorded_total} is reproduced)"
        )
        return rebuild.messages, info
    info.update(assumed="fresh", confirmed=False)
    info["note"] = (
        base
        + f": assumed fresh, but neither choice reproduces the recorded total {recorded_total} "
        f"(fresh {fresh_total}, stale {dumped_total})"
    )
    return fresh, info
