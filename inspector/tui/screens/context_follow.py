"""What follows a tuning key, off the UI thread: the complete decision, then the flips.

A tuning key decides on the UI thread without the artifact (`strategy.decide(prepared,
settings, None)`): the regions, the verdict, the bar and the list rows are the same, but the
findings that read what the source recorded (the summary-loss check of a dump scans every
path and error of the replaced region: seconds on a 107 MB dump) are not run. Those, the
checks against the record and the flips follow in one thread worker, started once the keys
stop for `FOLLOW_DELAY` s. The worker is single-flight: while it runs, newer settings only
replace its target, and it starts over for them, so held keys never pile up threads that
compete for the GIL; a result for settings left behind is dropped.

Pins are applied here too (`with_pins`): the pinned messages' reduced context is prepared
once per pinned set and kept, so a tuning key with pins decides twice, never re-counts.
A mixin of ContextScreen (which owns the state); never names a strategy.
Must not import the ContextScreen.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from textual import work
from textual.message import Message as TextualMessage
from textual.timer import Timer

from inspector.core.artifact import Artifact
from inspector.core.errors import InspectorError
from inspector.core.flip_check import holding_flips, source_outcome
from inspector.core.pins import KEPT_REGIONS, lifted_snapshot, pinned_decision, with_tool_groups
from inspector.core.snapshot import ContextSnapshot
from inspector.core.strategy.base import Decision, Flip, Prepared, Settings, Strategy
from inspector.core.tokens import TokenCounter

#: Seconds the settings must stay unchanged before the complete decision and the flips.
FOLLOW_DELAY = 0.05
#: Reduced contexts kept per screen (one per pinned set and strategy).
PINNED_PREPARED_KEPT = 8

#: What a follow-up is for: (strategy key, settings, pins).
Target = tuple[str, Settings, frozenset[int]]


@dataclass
class FollowState:
    """The follow-up's state on one screen (the lock guards `running` and `target`)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    #: A worker is running (it takes `target` when it is done with the one it has).
    running: bool = False
    #: What the running worker does next (None: nothing new).
    target: Target | None = None
    #: The debounce timer of the next follow-up.
    timer: Timer | None = None
    #: The target whose complete decision is on screen.
    complete: Target | None = None
    #: The snapshot the reduced contexts below were made from, and those contexts.
    pinned_for: ContextSnapshot | None = None
    pinned: dict[tuple[str, frozenset[int]], Prepared] = field(default_factory=dict)


class ContextFollow:
    """The complete decision and the flips of the current settings, in one coalesced worker."""

    artifact: Artifact
    snapshot: ContextSnapshot | None
    strategy: Strategy
    settings: Settings
    decision: Decision | None
    flips: list[Flip] | None
    flips_dropped: int
    counters: dict[str, TokenCounter]
    counting_note: str
    pins: frozenset[int]
    app: Any
    _side_keys: dict[str, object]
    _footer_has_flips: bool
    _follow: FollowState

    if TYPE_CHECKING:  # provided by the screen; declared for type checkers

        def _prepared(self, strategy: Strategy) -> Prepared: ...

        def set_timer(self, delay: float, callback: Any = None, *args: Any, **kw: Any) -> Timer: ...

        def post_message(self, message: TextualMessage) -> bool: ...

        def refresh_side(self, force: bool = False) -> None: ...

        def schedule_side(self) -> None: ...

        def refresh_bindings(self) -> None: ...

        def notify(self, message: str, **kwargs: Any) -> None: ...

        def _redraw(self) -> None: ...

    class Diagnosed(TextualMessage):
        """The complete decision of `target` (with the findings on what was recorded)."""

        def __init__(self, target: Target, decision: Decision) -> None:
            super().__init__()
            self.target = target
            self.decision = decision

    class FlipsFound(TextualMessage):
        """The smallest flips of `settings` are ready."""

        def __init__(
            self, key: str, settings: Settings, flips: list[Flip], dropped: int = 0
        ) -> None:
            super().__init__()
            self.key = key
            self.settings = settings
            self.flips = flips
            #: Flips to "compresses" left out: openJiuwen's benefit check would drop them.
            self.dropped = dropped

    def _target(self) -> Target:
        return (self.strategy.key, self.settings, self.pins)

    @property
    def decision_complete(self) -> bool:
        """Whether the decision on screen has its findings on what the source recorded."""
        return self.decision is not None and self._follow.complete == self._target()

    def decided_on_screen(self, complete: bool) -> None:
        """A decision was drawn: `complete` when it has every finding; the rest follows."""
        state = self._follow
        state.complete = self._target() if complete else None
        if state.timer is not None:
            state.timer.stop()
        # a held key re-decides every frame; the follow-up starts once it settles
        state.timer = self.set_timer(FOLLOW_DELAY, self._follow_due)

    def _follow_due(self) -> None:
        state = self._follow
        state.timer = None
        target = self._target()
        with state.lock:
            state.target = target
            if state.running:
                return  # the running worker starts over for the new target
            state.running = True
        self.find_flips(target[0], target[1])

    @property
    def follow_pending(self) -> bool:
        """True while the complete decision or the flips are still to come."""
        return self._follow.timer is not None or self._follow.running

    @work(thread=True, exclusive=True, group="flips", exit_on_error=False)
    def find_flips(self, key: str, settings: Settings) -> None:
        """The complete decision, then the smallest single changes that flip it, for the
        newest target (started for `key`/`settings`; newer ones replace them meanwhile)."""
        from textual.worker import get_current_worker

        worker = get_current_worker()
        state = self._follow
        try:
            while not worker.is_cancelled:
                with state.lock:
                    target = state.target
                    if target is None:
                        state.running = False
                        return
                    state.target = None
                self._follow_up(target, lambda: worker.is_cancelled)
        finally:
            with state.lock:
                state.running = False

    def _follow_up(self, target: Target, cancelled: Callable[[], bool]) -> None:
        """One follow-up of `target` (a newer target or a cancel stops it between steps)."""
        key, settings, pins = target
        if key != self.strategy.key or self.snapshot is None:
            return
        strategy = self.strategy

        def stale() -> bool:
            return cancelled() or self._target() != target

        if self._follow.complete != target:
            try:
                base = strategy.decide(self._prepared(strategy), settings, self.artifact)
                complete = self.with_pins(base, self.artifact, strategy, pins)
            except InspectorError as error:
                said = f"{strategy.processor}: {error}"
                self.app.call_from_thread(self.notify, said, severity="error")
                return
            if stale():
                return
            self.post_message(self.Diagnosed(target, complete))
        flips: list[Flip] = []
        # pinned messages are kept out of the span here too (the CLI's `why --pin`)
        prepared, prepare = self.flips_context(strategy, settings, pins)
        for flip in strategy.flips(prepared, settings):
            if stale():
                return
            flips.append(flip)
        found = len(flips)
        flips = holding_flips(
            flips, prepared.snapshot, key, self.counters, prepare, source_outcome(self.artifact)
        )
        if not stale():
            self.post_message(self.FlipsFound(key, settings, flips, found - len(flips)))

    def on_context_follow_diagnosed(self, message: ContextFollow.Diagnosed) -> None:
        """The complete decision of the settings on screen: the Why tab can show it."""
        if message.target != self._target() or self.decision is None:
            return
        shown = self.decision
        self.decision = message.decision
        self._follow.complete = message.target
        if (shown.regions, shown.verdict, shown.reason) != (
            message.decision.regions,
            message.decision.verdict,
            message.decision.reason,
        ):
            self._redraw()  # not expected (the artifact never moves a region): draw it all
            return
        # coalesced: when the flips follow at once, the Why tab's tables are drawn once
        self.schedule_side()

    def on_context_follow_flips_found(self, message: ContextFollow.FlipsFound) -> None:
        """Keep the flips if they are still for the current settings; draw them if visible."""
        if message.key != self.strategy.key or message.settings != self.settings:
            return
        self.flips = message.flips
        self.flips_dropped = message.dropped
        self._side_keys.pop("why", None)
        self.refresh_side()
        if bool(self.flips) != self._footer_has_flips:
            # The footer recomposes on refresh; do it only when the Flip key changes state.
            self._footer_has_flips = bool(self.flips)
            self.refresh_bindings()

    def complete_decision(self) -> Decision | None:
        """The decision on screen with every finding (decided here when not yet in)."""
        decision = self.decision
        if decision is None or self.decision_complete or self.snapshot is None:
            return decision
        strategy = self.strategy
        try:
            base = strategy.decide(self._prepared(strategy), decision.settings, self.artifact)
            return self.with_pins(base, self.artifact, strategy, self.pins)
        except InspectorError:
            return decision

    # --- pins ----------------------------------------------------------------------------

    def lifted_pins(self, base: Decision, pins: frozenset[int]) -> frozenset[int]:
        """The pins (widened over tool calls) that fall in a region `base` would change."""
        assert self.snapshot is not None
        messages = self.snapshot.messages
        pinned = with_tool_groups(messages, (i for i in pins if i < len(messages)))
        changing = {
            index
            for region in base.regions
            if region.name not in KEPT_REGIONS
            for index in range(region.start, region.end)
            if index in pinned
        }
        # a call and its results leave the span together, wherever each of them was
        return with_tool_groups(messages, changing) & pinned

    def pinned_prepared(self, strategy: Strategy, lifted: frozenset[int]) -> Prepared:
        """The context with the `lifted` messages held beside the system messages, prepared
        once per pinned set (kept for the next keys)."""
        snapshot = self.snapshot
        assert snapshot is not None
        state = self._follow
        if state.pinned_for is not snapshot:  # a newer state of the context: start afresh
            state.pinned_for, state.pinned = snapshot, {}
        kept = state.pinned
        prepared = kept.get((strategy.key, lifted))
        if prepared is None:
            reduced = lifted_snapshot(snapshot, lifted)
            prepared = strategy.prepare(reduced, self.counters, self.counting_note)
            if len(kept) >= PINNED_PREPARED_KEPT:
                kept.pop(next(iter(kept)))
            kept[(strategy.key, lifted)] = prepared
        return prepared

    def with_pins(
        self,
        base: Decision,
        artifact: Artifact | None = None,
        strategy: Strategy | None = None,
        pins: frozenset[int] | None = None,
    ) -> Decision:
        """`base` with the pins applied (itself when no pin falls in a changing region): the
        what-if of `core.pins.apply_pins`, on the kept reduced context."""
        pins = self.pins if pins is None else pins
        strategy = strategy or self.strategy
        if not pins or self.snapshot is None:
            return base
        lifted = self.lifted_pins(base, pins)
        if not lifted:
            return base
        reduced = self.pinned_prepared(strategy, lifted)
        decided = strategy.decide(reduced, base.settings, artifact)
        return pinned_decision(base, decided, lifted)

    def flips_context(
        self, strategy: Strategy, settings: Settings, pins: frozenset[int] | None = None
    ) -> tuple[Prepared, Callable[[Strategy], Prepared]]:
        """The context the flips are searched on and a `prepare` for the flip check on that
        same context: with pins that lift messages out of the span, the pinned context (as
        `inspector why --pin` searches them), else the screen's own prepared contexts."""
        plain = (self._prepared(strategy), self._prepared)
        pins = self.pins if pins is None else pins
        if not pins or self.snapshot is None:
            return plain
        try:
            base = strategy.decide(self._prepared(strategy), settings, None)
            lifted = self.lifted_pins(base, pins)
            if not lifted:
                return plain
            reduced = self.pinned_prepared(strategy, lifted)
        except InspectorError:
            return plain
        cache: dict[str, Prepared] = {strategy.key: reduced}

        def prepare(other: Strategy) -> Prepared:
            if other.key not in cache:
                cache[other.key] = other.prepare(
                    reduced.snapshot, self.counters, self.counting_note
                )
            return cache[other.key]

        return reduced, prepare
