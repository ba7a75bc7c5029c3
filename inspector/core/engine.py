"""The span and trigger engine of openJiuwen's forked compressors.

`PricedContext` counts every message once (per token mode) and keeps prefix sums and a
tool-boundary index, so `evaluate(tuning)` prices any split in O(1) and widens the kept
window in a few steps. Regions are half-open index ranges, never copies of messages.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate
from typing import Literal

from inspector.core.messages import Message, Tool
from inspector.core.snapshot import ContextSnapshot
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import Tuning

Reason = Literal["below_threshold", "no_compressible_span", "target_below_min", "reached_threshold"]
Region = Literal["prefix", "compress", "tail", "outside"]

_NO_CALL = 1 << 62


@dataclass(frozen=True, slots=True)
class Span:
    """Three half-open ranges over the context messages; anything else is left outside."""

    prefix: tuple[int, int]
    compress: tuple[int, int]
    tail: tuple[int, int]

    @property
    def counts(self) -> dict[str, int]:
        """Message counts as openJiuwen's debug record names them."""
        return {
            "preserved_prefix": self.prefix[1] - self.prefix[0],
            "messages_to_compress": self.compress[1] - self.compress[0],
            "protected_tail": self.tail[1] - self.tail[0],
        }

    def region_of(self, index: int) -> Region:
        """Which region a message index falls in."""
        for name, (start, end) in (
            ("prefix", self.prefix),
            ("compress", self.compress),
            ("tail", self.tail),
        ):
            if start <= index < end:
                return name  # type: ignore[return-value]
        return "outside"


@dataclass(frozen=True, slots=True)
class UsageBaseline:
    """The usage record a total was based on, or why none could be used."""

    index: int | None  # position in system + context messages, None when not used
    total_tokens: int | None  # the record's total_tokens
    tail_tokens: int  # len//4 of the messages after it
    skipped_stale: int  # newer usage records skipped because marked stale
    skipped_zero: int  # newer usage records skipped because total_tokens <= 0

    @property
    def value(self) -> int | None:
        """Baseline plus tail, or None when no valid baseline exists."""
        return None if self.total_tokens is None else self.total_tokens + self.tail_tokens


class PricedContext:
    """A context counted once in one token mode, ready for instant re-splits."""

    def __init__(
        self,
        system_messages: Sequence[Message],
        messages: Sequence[Message],
        tools: Sequence[Tool],
        counter: TokenCounter,
    ) -> None:
        self.system_messages = tuple(system_messages)
        self.messages = tuple(messages)
        self.tools = tuple(tools)
        self.counter = counter
        self.n = len(self.messages)
        self.pieces = counter.pieces(self.messages)
        self.system_pieces = [counter.piece_tokens(m) for m in self.system_messages]
        self.prefix_sums = [0, *accumulate(self.pieces)]
        self.tools_tokens = counter.count_tools(self.tools)
        self.last_real_user_index = next(
            (i for i in range(self.n - 1, -1, -1) if self.messages[i].is_real_user), -1
        )
        self.usage = self._usage_baseline()
        self._earliest_call, self._pull_suffix_min = self._tool_boundary_index()
        #: (result index, call id, index of the earliest call with that id), in index order.
        self._reused: dict[str, list[int]] | None = None

    @classmethod
    def from_snapshot(cls, snapshot: ContextSnapshot, counter: TokenCounter) -> PricedContext:
        """Price a snapshot's messages and tools with `counter`."""
        return cls(snapshot.system_messages, snapshot.messages, snapshot.tools, counter)

    # --- counts ---------------------------------------------------------------------

    def count_range(self, start: int, end: int) -> int:
        """openJiuwen's list count of messages[start:end], in O(1)."""
        if end <= start:
            return 0
        return self.prefix_sums[end] - self.prefix_sums[start] + self.counter.overhead

    @cached_property
    def per_message_tokens(self) -> tuple[int, ...]:
        """Each context message counted as a one-message list (made once: every re-split reads it)."""
        return tuple(p + self.counter.overhead for p in self.pieces)

    @property
    def per_system_message_tokens(self) -> list[int]:
        """Each system message counted as a one-message list."""
        return [p + self.counter.overhead for p in self.system_pieces]

    @property
    def messages_tokens(self) -> int:
        """Count of system + context messages as one list."""
        if not self.system_pieces and not self.pieces:
            return 0
        return sum(self.system_pieces) + self.prefix_sums[-1] + self.counter.overhead

    @property
    def counted_total(self) -> int:
        """The total without a usage baseline: messages + tools."""
        return self.messages_tokens + self.tools_tokens

    @property
    def window_total(self) -> int:
        """The total the trigger compares with the threshold."""
        value = self.usage.value
        return value if value is not None else self.counted_total

    def _usage_baseline(self) -> UsageBaseline:
        everything = self.system_messages + self.messages
        stale = zero = 0
        for j in range(len(everything) - 1, -1, -1):
            message = everything[j]
            if message.role != "assistant" or message.usage_metadata is None:
                continue
            total = message.usage_total
            if total is None or total <= 0:
                zero += 1
                continue
            if message.usage_stale:
                stale += 1
                continue
            tail = sum(self.counter.usage_tail_tokens(m) for m in everything[j + 1 :])
            return UsageBaseline(j, total, tail, stale, zero)
        return UsageBaseline(None, None, 0, stale, zero)

    # --- tool boundary ------------------------------------------------------------------

    def _tool_boundary_index(self) -> tuple[dict[str, int], list[int]]:
        """The earliest assistant index of each call id, and for each index the earliest
        call that a tool result at or after it pulls in (`_NO_CALL`: none)."""
        earliest: dict[str, int] = {}
        for index, message in enumerate(self.messages):
            if message.role == "assistant" and message.tool_calls:
                for call in message.tool_calls:
                    if call.id:  # `Message.call_ids`, without a tuple per message
                        earliest.setdefault(call.id, index)
        pull = [_NO_CALL] * (self.n + 1)
        if not earliest:
            return earliest, pull  # no call: no result pulls one in
        lowest = _NO_CALL
        messages = self.messages
        for index in range(self.n - 1, -1, -1):
            message = messages[index]
            if message.role == "tool" and message.tool_call_id:
                here = earliest.get(message.tool_call_id, _NO_CALL)
                if here < lowest:
                    lowest = here
            pull[index] = lowest
        return earliest, pull

    def adjust_keep(self, keep: int, tool_boundary: bool = True) -> int:
        """Keep window after openJiuwen's tool-boundary rule (results pull in their calls)."""
        if keep <= 0 or self.n == 0:
            return max(keep, 0)
        start = max(self.n - keep, 0)
        if tool_boundary:
            while True:
                earliest = self._pull_suffix_min[start]
                if earliest >= start:
                    break
                start = earliest
        return self.n - start

    @cached_property
    def _results_with_calls(self) -> list[tuple[int, str, int]]:
        """(result index, call id, index of the earliest call with that id), in index order
        (made when `boundary_cause` is first asked: a load never asks)."""
        earliest = self._earliest_call
        if not earliest:
            return []
        return [
            (index, message.tool_call_id, earliest[message.tool_call_id])
            for index, message in enumerate(self.messages)
            if message.role == "tool" and message.tool_call_id and message.tool_call_id in earliest
        ]

    @cached_property
    def _result_positions(self) -> list[int]:
        """The result indices of `_results_with_calls`, for bisecting."""
        return [index for index, _, _ in self._results_with_calls]

    def boundary_cause(self, keep: int) -> list[tuple[str, int, int]]:
        """(call id, result index, call index) pairs that pulled the split back for `keep`."""
        if keep <= 0 or self.n == 0:
            return []
        start = max(self.n - keep, 0)
        causes: list[tuple[str, int, int]] = []
        results = self._results_with_calls
        while True:
            moved = start
            for index, call_id, call_index in results[bisect_left(self._result_positions, start) :]:
                if call_index < start:
                    causes.append((call_id, index, call_index))
                    moved = min(moved, call_index)
            if moved == start:
                return causes
            start = moved

    def reused_call_ids(self) -> dict[str, list[int]]:
        """Tool-call ids used by more than one assistant message, with those messages."""
        if self._reused is None:  # tuning-independent: computed once per context
            seen: dict[str, list[int]] = {}
            for index, message in enumerate(self.messages):
                if message.role == "assistant" and message.tool_calls:
                    for call_id in set(message.call_ids):
                        seen.setdefault(call_id, []).append(index)
            self._reused = {k: v for k, v in seen.items() if len(v) > 1}
        return {k: list(v) for k, v in self._reused.items()}

    # --- spans and the decision ---------------------------------------------------------

    def effective_keep(self, tuning: Tuning) -> int | None:
        """The keep window the processor's span uses (None: Dialogue without a real user)."""
        if tuning.processor == "dialogue":
            if self.last_real_user_index < 0:
                return None
            return self.adjust_keep(self.n - self.last_real_user_index, tuning.tool_boundary)
        return self.adjust_keep(tuning.keep_recent, tuning.tool_boundary)

    def span(self, tuning: Tuning) -> Span:
        """preserved prefix / to compress / protected tail for this tuning."""
        return self._span(tuning, self.effective_keep(tuning))

    def _span(self, tuning: Tuning, keep: int | None) -> Span:
        """`span(tuning)` with `effective_keep(tuning)` given."""
        n, last_user = self.n, self.last_real_user_index
        if tuning.processor == "dialogue":
            if keep is None:
                return Span((0, 0), (0, 0), (0, n))
            split = max(n - keep, 0)
            return Span((0, 0), (0, split), (split, n))
        assert keep is not None
        split = max(n - keep, 0)
        if tuning.processor == "current_round":
            if last_user < 0:
                return Span((0, 0), (split, split), (split, n))
            start = last_user + 1
            if split <= start:
                return Span((0, start), (start, start), (start, n))
            return Span((0, start), (start, split), (split, n))
        return Span((0, 0), (0, split), (split, n))

    def evaluate(self, tuning: Tuning) -> Evaluation:
        """openJiuwen's trigger decision for this tuning, with every number it used."""
        total = self.window_total
        threshold = tuning.threshold
        keep = self.effective_keep(tuning)
        span = self._span(tuning, keep)
        span_target = self.count_range(*span.compress)
        min_target = tuning.min_target_tokens
        if total < threshold:
            reason: Reason = "below_threshold"
        elif span.compress[1] <= span.compress[0]:
            reason = "no_compressible_span"
        elif span_target < min_target:
            reason = "target_below_min"
        else:
            reason = "reached_threshold"
        return Evaluation(
            tuning=tuning,
            hit=reason == "reached_threshold",
            reason=reason,
            total_tokens=total,
            threshold=threshold,
            target_tokens=span_target
            if reason in ("target_below_min", "reached_threshold")
            else None,
            min_target_tokens=min_target if reason == "target_below_min" else None,
            min_target_value=min_target,
            span_target_tokens=span_target,
            effective_keep=keep,
            span=span,
            used_usage_baseline=self.usage.value is not None,
        )


@dataclass(frozen=True, slots=True)
class Evaluation:
    """One trigger decision. Field names follow the parity corpus and the CLI contract."""

    tuning: Tuning
    hit: bool
    reason: Reason
    total_tokens: int
    threshold: int
    target_tokens: int | None
    min_target_tokens: int | None
    min_target_value: int
    span_target_tokens: int
    effective_keep: int | None
    span: Span
    used_usage_baseline: bool


class ContextEngine:
    """A snapshot with one PricedContext per token mode, built on first use."""

    def __init__(self, snapshot: ContextSnapshot, counters: dict[str, TokenCounter]) -> None:
        self.snapshot = snapshot
        self._counters = counters
        self._priced: dict[str, PricedContext] = {}

    def priced(self, mode: str) -> PricedContext:
        """The context counted in `mode` (cached)."""
        if mode not in self._priced:
            self._priced[mode] = PricedContext.from_snapshot(self.snapshot, self._counters[mode])
        return self._priced[mode]

    def evaluate(self, tuning: Tuning) -> Evaluation:
        """Decide for this tuning, counting in the tuning's token mode."""
        return self.priced(tuning.token_mode).evaluate(tuning)
