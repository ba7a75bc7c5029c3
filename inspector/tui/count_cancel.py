"""Stopping a token count for real: a cooperative cancel checked between messages.

A count runs inside a strategy's `decide` (core code that knows nothing of workers). Each
message a counter does not know yet goes through its `store` (`PieceStore.lookup`) before
it is counted, so a `CancelGate` put in front of every counter's store sees the count
message by message: while a thread that registered a cancel check (`cancellable`) counts,
the gate raises `CountCancelled` as soon as that check says so. The pieces counted until
then stay in the counter's memory (the next count starts from there); other threads never
see the gate at all. Without a registered check the gate only forwards to the store.

Standard library and `inspector.core.tokens` only: no Textual, no strategy named.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from inspector.core.messages import Message
from inspector.core.tokens import PieceStore, TokenCounter


class CountCancelled(BaseException):
    """The count of a cancelled worker stopped between two messages.

    A BaseException, like KeyboardInterrupt: no `except Exception` on the way (the engine
    guards findings that way) may swallow it."""


class CancelGate:
    """A counter's store with a cancel check in front (see the module docstring)."""

    def __init__(self, inner: PieceStore | None) -> None:
        self.inner = inner
        #: Thread id -> "is this thread's count cancelled?" for the threads counting now.
        self.checks: dict[int, Callable[[], bool]] = {}

    def _check(self) -> None:
        check = self.checks.get(threading.get_ident())
        if check is not None and check():
            raise CountCancelled

    def lookup(self, counter: TokenCounter, message: Message) -> int | None:
        """The store's count (None without a store), after the cancel check."""
        self._check()
        return self.inner.lookup(counter, message) if self.inner is not None else None

    def save(self, counter: TokenCounter, message: Message, tokens: int) -> None:
        """Record a computed count in the store (nothing without one)."""
        if self.inner is not None:
            self.inner.save(counter, message, tokens)

    def fill(self, counter: TokenCounter, messages: Sequence[Message]) -> None:
        """The store's batch `fill`, except in a cancellable count: that one goes message by
        message through `lookup`, so Esc stops it at the next message."""
        if threading.get_ident() in self.checks:
            return
        fill = getattr(self.inner, "fill", None)
        if fill is not None:
            fill(counter, messages)

    def __getattr__(self, name: str) -> Any:
        """Everything else is the store's own (`flush`, `close`, `lookup_text`, ...)."""
        inner = self.__dict__.get("inner")
        if inner is None or name.startswith("__"):
            raise AttributeError(name)
        return getattr(inner, name)


def install_gates(counters: Mapping[str, TokenCounter]) -> None:
    """Put a `CancelGate` in front of each counter's store (once; counters derived later
    with `with_divisors` inherit it)."""
    for counter in counters.values():
        if not isinstance(counter.store, CancelGate):
            counter.store = CancelGate(counter.store)


def _gates(counters: Mapping[str, TokenCounter]) -> list[CancelGate]:
    found: dict[int, CancelGate] = {}
    for counter in counters.values():
        if isinstance(counter.store, CancelGate):
            found[id(counter.store)] = counter.store
    return list(found.values())


@contextmanager
def cancellable(
    counters: Mapping[str, TokenCounter], is_cancelled: Callable[[], bool]
) -> Iterator[None]:
    """While inside, a count on this thread with any of `counters` raises `CountCancelled`
    at the next message not counted yet once `is_cancelled()` is true."""
    ident = threading.get_ident()
    gates = _gates(counters)
    for gate in gates:
        gate.checks[ident] = is_cancelled
    try:
        yield
    finally:
        for gate in gates:
            gate.checks.pop(ident, None)
