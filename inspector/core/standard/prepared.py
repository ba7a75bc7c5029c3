"""A snapshot made ready for the standard processors, and the outcome each one computes.

`StandardPrepared` splits the context as the hook sees it (stored + incoming batch for
`add_messages`, the window for `get_context_window`), picks the release rules and the
counter, and memoises counts. `Outcome` is what a processor module returns; the strategy
turns it into a `Decision`. Must not import anything outside the standard library and
`inspector.core`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from inspector.core.checks import Check, CheckStatus, Finding
from inspector.core.messages import Message, Tool
from inspector.core.snapshot import ContextSnapshot
from inspector.core.standard.counting import StandardCounter
from inspector.core.standard.release import CounterKind, EngineFacts, ReleaseChoice, choose_release
from inspector.core.strategy.base import RegionName, RegionRange
from inspector.core.tokens import TokenCounter

#: A snapshot's explicit `token_mode` and the counter it stands for.
_TOKEN_MODES: dict[str, CounterKind] = {
    "tiktoken_cl100k": "tiktoken",
    "len_div_4": "none",
    "string_length": "string_length",
}
ADD = "add_messages"
GET = "get_context_window"


@dataclass(slots=True)
class StandardPrepared:
    """One snapshot as a standard processor's hook sees it (counted lazily, once)."""

    snapshot: ContextSnapshot
    choice: ReleaseChoice
    facts: EngineFacts
    counter: StandardCounter
    hook: str
    hook_assumed: bool
    added_from: int
    system: tuple[Message, ...]
    tools: tuple[Tool, ...]
    #: The add call passed `system_messages` and `tools` (no caller in openJiuwen does).
    add_passes_window: bool = False
    #: How cl100k counting is available (from the front end), shown when it is inexact.
    counting_note: str = ""
    #: The counters the context was prepared with (a release switch prepares again with them).
    counters: Mapping[str, TokenCounter] = field(default_factory=dict)
    cache: dict[Any, Any] = field(default_factory=dict)

    def for_release(self, version: str | None) -> StandardPrepared:
        """This context under another release's rules (None or the same rules: itself)."""
        if version is None or version == self.snapshot.openjiuwen_version:
            return self
        key = ("release", version)
        if key not in self.cache:
            other = dataclasses.replace(self.snapshot, openjiuwen_version=version)
            self.cache[key] = prepare_standard(other, self.counters, self.hook, self.counting_note)
        found = self.cache[key]
        assert isinstance(found, StandardPrepared)
        return found

    @property
    def messages(self) -> tuple[Message, ...]:
        """All context messages the processor sees (stored + new, or the window's)."""
        return self.snapshot.messages

    @property
    def stored(self) -> tuple[Message, ...]:
        """Messages already in the context before the incoming batch."""
        return self.snapshot.messages[: self.added_from]

    @property
    def new(self) -> tuple[Message, ...]:
        """The incoming batch (empty on the get hook)."""
        return self.snapshot.messages[self.added_from :]

    @property
    def release(self) -> str:
        """The release whose rules apply."""
        return self.choice.release


def prepare_standard(
    snapshot: ContextSnapshot,
    counters: Mapping[str, TokenCounter],
    default_hook: str = ADD,
    counting_note: str = "",
) -> StandardPrepared:
    """Pick release, counter and hook for a snapshot (nothing is counted yet)."""
    choice = choose_release(snapshot.openjiuwen_version)
    add_kwargs = snapshot.extra.get("add_kwargs")
    passes = isinstance(add_kwargs, Mapping) and bool(
        add_kwargs.get("pass_system_and_tools")
        or add_kwargs.get("system_messages")
        or add_kwargs.get("tools")
    )
    facts = EngineFacts.read(
        choice.release,
        snapshot.engine_config,
        add_kwargs if isinstance(add_kwargs, Mapping) else {},
    )
    kind: CounterKind = facts.counter_kind(snapshot.engine_config)
    if "token_mode" in snapshot.recorded_fields:
        kind = _TOKEN_MODES.get(str(snapshot.tuning.token_mode), kind)
    counter = StandardCounter(choice.release, kind, counters.get("tiktoken_cl100k"))
    hook = snapshot.hook or default_hook
    n = len(snapshot.messages)
    if hook == GET:
        added_from = n
    elif snapshot.added_from is not None:
        added_from = min(snapshot.added_from, n)
    else:
        added_from = max(n - 1, 0)
    return StandardPrepared(
        snapshot=snapshot,
        choice=choice,
        facts=facts,
        counter=counter,
        hook=hook,
        hook_assumed=snapshot.hook is None,
        added_from=added_from,
        system=snapshot.system_messages,
        tools=snapshot.tools,
        add_passes_window=passes,
        counting_note=counting_note,
        counters=counters,
    )


@dataclass(frozen=True, slots=True)
class Outcome:
    """A processor's decision with the numbers behind it (`details` as the reference names them)."""

    hit: bool
    reason: str
    verdict: str
    details: Mapping[str, Any]
    total_tokens: int | None
    threshold: int | None
    regions: tuple[RegionRange, ...]
    checks: tuple[Check, ...]
    findings: tuple[Finding, ...] = ()
    numbers: Mapping[str, Any] = field(default_factory=dict)
    target_tokens: int | None = None
    min_target_tokens: int | None = None
    effective_keep: int | None = None
    message_notes: Mapping[int, str] = field(default_factory=dict)


def ranges_of(indices: list[int] | set[int], name: RegionName, label: str) -> list[RegionRange]:
    """Contiguous runs of the given indices as regions."""
    out: list[RegionRange] = []
    run_start: int | None = None
    previous = -2
    for index in sorted(set(indices)):
        if run_start is None:
            run_start = index
        elif index != previous + 1:
            out.append(RegionRange(name, run_start, previous + 1, label))
            run_start = index
        previous = index
    if run_start is not None:
        out.append(RegionRange(name, run_start, previous + 1, label))
    return out


def fill_regions(
    n: int, marked: list[RegionRange], rest: RegionName = "outside", label: str = "untouched"
) -> tuple[RegionRange, ...]:
    """`marked` regions in order, gaps filled with `rest` (covers 0..n)."""
    out: list[RegionRange] = []
    position = 0
    for region in sorted((r for r in marked if r.size > 0), key=lambda r: r.start):
        start = max(region.start, position)
        if start >= region.end:
            continue
        if start > position:
            out.append(RegionRange(rest, position, start, label))
        out.append(RegionRange(region.name, start, region.end, region.label))
        position = region.end
    if position < n:
        out.append(RegionRange(rest, position, n, label))
    return tuple(out)


def check(key: str, title: str, passed: bool | None, sentence: str, **numbers: Any) -> Check:
    """A check: passed True -> pass, False -> fail, None -> info."""
    status: CheckStatus = "info" if passed is None else ("pass" if passed else "fail")
    return Check(key, title, status, sentence, numbers)
