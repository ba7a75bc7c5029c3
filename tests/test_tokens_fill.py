"""A big context's unknown messages are counted through the store's batch `fill` (stored
counts in batches, the rest on both cores when it pays), with the counts a message-by-
message count gives; a cancellable count (the TUI's, Esc) keeps going message by message."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from inspector.core.messages import Message
from inspector.core.tokens import FILL_MIN, TokenCounter
from inspector.encoding import make_counters
from inspector.sources.cache import TokenCache, cached_counters
from inspector.tui.count_cancel import CancelGate, CountCancelled, cancellable
from tests.conftest import msg


def _context(count: int, tag: str) -> tuple[Message, ...]:
    return tuple(
        msg(
            "tool" if i % 3 else "user",
            f"{tag} result {i}: " + "word " * (i % 17),
            tool_call_id="c",
        )
        for i in range(count)
    )


class _Recording:
    """A store that remembers what `fill` was asked for (and fills like the cache)."""

    def __init__(self) -> None:
        self.asked: list[int] = []

    def lookup(self, counter: TokenCounter, message: Message) -> int | None:
        return None

    def save(self, counter: TokenCounter, message: Message, tokens: int) -> None:
        pass

    def fill(self, counter: TokenCounter, messages: Sequence[Message]) -> None:
        self.asked.append(len(messages))
        for message in messages:
            counter.remember(message, counter.compute_piece(message))


def test_a_big_context_is_filled_once_and_counts_as_message_by_message() -> None:
    messages = _context(FILL_MIN + 40, "a")
    plain = make_counters()["tiktoken_cl100k"]
    want = [plain.compute_piece(m) for m in messages]
    counter = make_counters()["tiktoken_cl100k"]
    store = _Recording()
    counter.store = store
    counter.piece_tokens(messages[0])  # known already: not asked for
    assert counter.pieces(messages) == want
    assert store.asked == [len(messages) - 1]
    assert (
        counter.pieces(messages[: FILL_MIN - 1] + messages[:1]) == want[: FILL_MIN - 1] + want[:1]
    )
    assert store.asked == [len(messages) - 1], "a small context is counted as it was"


def test_the_cache_fills_stores_and_serves_the_next_process(tmp_path: Path) -> None:
    messages = _context(FILL_MIN * 2, "b")
    want = [make_counters()["tiktoken_cl100k"].compute_piece(m) for m in messages]
    with TokenCache(tmp_path) as cache:
        assert cached_counters(cache)["tiktoken_cl100k"].pieces(messages) == want
        assert cache.misses == len(messages) and cache.hits == 0
    with TokenCache(tmp_path) as cache:  # a fresh counter: every count from the store
        assert cached_counters(cache)["tiktoken_cl100k"].pieces(messages) == want
        assert cache.hits == len(messages) and cache.misses == 0


def test_a_cancellable_count_is_not_filled_and_stops_at_the_next_message() -> None:
    counters = make_counters()
    counter = counters["tiktoken_cl100k"]
    store = _Recording()
    counter.store = CancelGate(store)
    messages = _context(FILL_MIN + 10, "c")
    seen: list[int] = []

    def cancelled() -> bool:  # stops once 5 messages went through the gate's lookup
        seen.append(1)
        return len(seen) > 5

    with cancellable(counters, cancelled), pytest.raises(CountCancelled):
        counter.pieces(messages)
    assert store.asked == [] and len(seen) == 6
    counter.pieces(messages)  # outside: filled at once
    assert store.asked == [len(messages) - 5]
