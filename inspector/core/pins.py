"""Pins, a what-if openJiuwen does not have: messages marked "keep verbatim".

openJiuwen's compressors summarise one span of the context (the standard processors offload
or fold messages); nothing lets a user keep a message as it is. The what-if answers "what if
this message could never be compressed?" the way openJiuwen treats the messages it never
touches, its system messages: a pinned message that falls in a region the strategy would
change (compress, offload, fold, summary) is lifted out of the context and held beside the
system messages, so it still counts in every total and still fills the window, but is never
part of the span. The strategy then decides again on that context, through the one strategy
protocol, so it works for every strategy. Pins inside the preserved prefix or the protected
tail change nothing (those messages are kept anyway). A pin on a tool call or a tool result
pins the whole call with its results (openJiuwen never separates them).

Indices are positions in the context messages (as shown, `#3`); ranges like `7-9` are
inclusive. Snapshots carry the marks in their `pins` key. Must not import anything outside
the standard library and `inspector.core`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.core.artifact import Artifact
from inspector.core.checks import Finding
from inspector.core.errors import InspectorError
from inspector.core.messages import Message
from inspector.core.snapshot import ContextSnapshot
from inspector.core.strategy.base import Decision, Prepared, RegionRange, Settings, Strategy
from inspector.core.tokens import TokenCounter

#: Regions whose messages a strategy keeps as they are: a pin there changes nothing.
KEPT_REGIONS = frozenset({"prefix", "tail", "outside"})
#: The label of pinned messages in every view.
PINNED_LABEL = "pinned: kept verbatim (what-if)"
#: Said wherever a pinned decision is shown.
WHAT_IF_NOTE = (
    "what-if: pinned messages are held beside the system messages (counted, never compressed); "
    "openJiuwen has no pins"
)


class PinError(InspectorError):
    """A pin list that cannot be read, or an index outside the context."""


def parse_pins(text: str) -> frozenset[int]:
    """`"3,7-9"` -> {3, 7, 8, 9}; PinError names the bad part."""
    pins: set[int] = set()
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        low, dash, high = part.partition("-")
        try:
            start = int(low)
            end = int(high) if dash else start
        except ValueError:
            raise PinError(f"{part!r} is not an index or a range like 7-9") from None
        if start < 0 or end < start:
            raise PinError(f"{part!r} is not an index or a range like 7-9")
        if end - start > 1_000_000:
            raise PinError(f"{part!r} is too wide a range")
        pins.update(range(start, end + 1))
    return frozenset(pins)


def format_pins(pins: Iterable[int]) -> str:
    """{3, 7, 8, 9} -> `"3,7-9"` (the inverse of `parse_pins`)."""
    ordered = sorted(set(pins))
    parts: list[str] = []
    start = previous = None
    for index in [*ordered, None]:
        if index is not None and previous is not None and index == previous + 1:
            previous = index
            continue
        if start is not None:
            parts.append(str(start) if start == previous else f"{start}-{previous}")
        start = previous = index
    return ",".join(parts)


def recorded_pins(snapshot: ContextSnapshot) -> frozenset[int]:
    """The pins a loaded snapshot carries (its `pins` key), else none."""
    raw = snapshot.extra.get("pins")
    if not isinstance(raw, list):
        return frozenset()
    return frozenset(i for i in raw if isinstance(i, int) and not isinstance(i, bool) and i >= 0)


def with_tool_groups(messages: Sequence[Message], pins: Iterable[int]) -> frozenset[int]:
    """The pins widened so a tool call and its results are pinned together."""
    calls: dict[str, int] = {}
    results: dict[str, list[int]] = {}
    for index, message in enumerate(messages):
        for call_id in message.call_ids:
            calls.setdefault(call_id, index)
        if message.role == "tool" and message.tool_call_id:
            results.setdefault(message.tool_call_id, []).append(index)
    out = {i for i in pins if 0 <= i < len(messages)}
    for index in list(out):
        message = messages[index]
        ids = list(message.call_ids)
        if message.role == "tool" and message.tool_call_id in calls:
            caller = calls[message.tool_call_id]
            out.add(caller)
            ids += list(messages[caller].call_ids)
        for call_id in ids:
            out.update(results.get(call_id, ()))
    return frozenset(out)


def lifted_snapshot(snapshot: ContextSnapshot, lifted: frozenset[int]) -> ContextSnapshot:
    """The snapshot with the `lifted` messages moved beside the system messages."""
    kept = tuple(m for i, m in enumerate(snapshot.messages) if i not in lifted)
    held = tuple(snapshot.messages[i] for i in sorted(lifted))
    added_from = snapshot.added_from
    if added_from is not None:
        added_from -= sum(1 for i in lifted if i < added_from)
    return dataclasses.replace(
        snapshot,
        system_messages=snapshot.system_messages + held,
        messages=kept,
        added_from=added_from,
    )


@dataclass(frozen=True, slots=True)
class PinnedDecision:
    """A strategy's decision with pins, beside the one without."""

    decision: Decision
    base: Decision
    #: Pins asked for, widened over tool calls (indices inside the context).
    pinned: frozenset[int]
    #: Pins that were in a changing region: lifted out of the span.
    lifted: frozenset[int]
    #: The context the decision was made on (with the lifted messages held aside), for
    #: the strategy's flips and sweeps.
    prepared: Prepared
    #: Asked-for indices beyond the context's last message.
    out_of_range: frozenset[int] = frozenset()


def _runs(indices: Sequence[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for index in indices:
        if runs and runs[-1][1] == index:
            runs[-1] = (runs[-1][0], index + 1)
        else:
            runs.append((index, index + 1))
    return runs


def _mapped_regions(
    decision: Decision, kept: Sequence[int], lifted: frozenset[int], tokens: Sequence[int] | None
) -> tuple[RegionRange, ...]:
    regions: list[RegionRange] = []
    for region in decision.regions:
        originals = kept[region.start : min(region.end, len(kept))]
        runs = _runs(originals)
        for start, end in runs:
            own = region.tokens if len(runs) == 1 else None
            regions.append(RegionRange(region.name, start, end, region.label, own))
    for start, end in _runs(sorted(lifted)):
        own = sum(tokens[start:end]) if tokens is not None else None
        regions.append(RegionRange("prefix", start, end, PINNED_LABEL, own))
    return tuple(sorted(regions, key=lambda r: r.start))


def _remapped(mapping: Mapping[int, str], kept: Sequence[int]) -> dict[int, str]:
    return {kept[i]: text for i, text in mapping.items() if 0 <= i < len(kept)}


def pinned_decision(base: Decision, lifted_decision: Decision, lifted: frozenset[int]) -> Decision:
    """`lifted_decision` (on the context without the lifted messages) in the original indices."""
    count = len(base.message_tokens) if base.message_tokens is not None else None
    if count is None:
        count = max((r.end for r in base.regions), default=0)
    kept = [i for i in range(count) if i not in lifted]
    tokens: list[int] | None = None
    if base.message_tokens is not None and lifted_decision.message_tokens is not None:
        tokens = list(base.message_tokens)
        for reduced, original in enumerate(kept):
            if reduced < len(lifted_decision.message_tokens):
                tokens[original] = lifted_decision.message_tokens[reduced]
    labels = _remapped(lifted_decision.message_labels, kept)
    notes = _remapped(lifted_decision.message_notes, kept)
    for index in lifted:
        if labels:  # dense when the strategy labels every message
            labels[index] = PINNED_LABEL
        notes[index] = "Pinned (what-if): held beside the system messages, kept verbatim."
    pinned_tokens = sum(base.message_tokens[i] for i in lifted) if base.message_tokens else None
    numbers: dict[str, Any] = {
        **lifted_decision.numbers,
        "pins": sorted(lifted),
        "pinned_tokens": pinned_tokens,
        "total_without_pins": base.total_tokens,
    }
    shift = (
        lifted_decision.total_tokens - base.total_tokens
        if lifted_decision.total_tokens is not None and base.total_tokens is not None
        else 0
    )
    sentence = (
        f"{WHAT_IF_NOTE}: {len(lifted)} message{'s' if len(lifted) != 1 else ''} "
        f"({pinned_tokens if pinned_tokens is not None else '?'} tokens) taken out of the span; "
        f"without pins: {base.verdict.lower()} ({base.reason})"
    )
    if shift:
        sentence += (
            f"; this strategy's total moved by {shift:+,} tokens with the pinned messages held "
            "beside the system messages (it counts those differently, e.g. a usage baseline's "
            "tail or a total of the context messages only)"
        )
    finding = Finding("pins_what_if", "info", sentence, {"pins": sorted(lifted), "shift": shift})
    return dataclasses.replace(
        lifted_decision,
        regions=_mapped_regions(lifted_decision, kept, lifted, tokens),
        message_tokens=tuple(tokens) if tokens is not None else None,
        message_labels=labels,
        message_notes=notes,
        numbers=numbers,
        findings=(*lifted_decision.findings, finding),
        native=None,
    )


def apply_pins(
    strategy: Strategy,
    snapshot: ContextSnapshot,
    settings: Settings,
    counters: Mapping[str, TokenCounter],
    pins: Iterable[int],
    artifact: Artifact | None = None,
    counting_note: str = "",
) -> PinnedDecision:
    """The strategy's decision with `pins` kept verbatim (see the module docstring)."""
    asked = frozenset(pins)
    count = len(snapshot.messages)
    out_of_range = frozenset(i for i in asked if i >= count)
    pinned = with_tool_groups(snapshot.messages, asked - out_of_range)
    prepared = strategy.prepare(snapshot, counters, counting_note)
    base = strategy.decide(prepared, settings, artifact)
    changing = {i for i in pinned if base.region_of(i) not in KEPT_REGIONS}
    # a call and its results leave the span together, wherever each of them was
    lifted = with_tool_groups(snapshot.messages, changing) & pinned
    if not lifted:
        return PinnedDecision(base, base, pinned, lifted, prepared, out_of_range)
    reduced = strategy.prepare(lifted_snapshot(snapshot, lifted), counters, counting_note)
    decided = strategy.decide(reduced, settings, artifact)
    return PinnedDecision(
        pinned_decision(base, decided, lifted), base, pinned, lifted, reduced, out_of_range
    )


@dataclass(frozen=True, slots=True)
class PinRow:
    """One strategy's decision without and with the pins (for the side-by-side table)."""

    strategy: str
    processor: str
    before: Decision
    after: Decision
    lifted: frozenset[int]

    @property
    def changed(self) -> bool:
        """Whether the pins change the verdict, the reason or the regions."""
        return (self.before.verdict, self.before.reason, self.before.regions) != (
            self.after.verdict,
            self.after.reason,
            self.after.regions,
        )


def pins_across_strategies(
    snapshot: ContextSnapshot,
    counters: Mapping[str, TokenCounter],
    pins: Iterable[int],
    overrides: Mapping[str, Any] | None = None,
    artifact: Artifact | None = None,
    counting_note: str = "",
) -> list[PinRow]:
    """Every registered strategy's decision on the context without and with `pins`, each
    under its own reading of the source plus `overrides` (a strategy that cannot read it
    is left out)."""
    from inspector.core.strategy import registry
    from inspector.core.strategy.selection import select

    rows = []
    for strategy in registry.all_strategies():
        try:
            selection = select(snapshot, {**(overrides or {}), "processor": strategy.key})
            result = apply_pins(
                strategy, snapshot, selection.settings, counters, pins, artifact, counting_note
            )
        except InspectorError:
            continue
        rows.append(
            PinRow(strategy.key, strategy.processor, result.base, result.decision, result.lifted)
        )
    return rows
