"""Progress for long work started from the context view: a modal with a bar, the step in
hand and Esc to cancel; the strategies view (`C`) computed in steps behind it; and the
first count of a context in a token mode (opening a big context, `p`, `m`), with the
messages counted so far (`CountProgress`).

The modal shows only when the work takes longer than `SHOW_AFTER` seconds. The strategies
comparison runs one processor per step (`compare_screen.comparison_for` on each, outcomes
joined), so the bar moves and a cancel takes effect between steps; the result opens the
lead's `CompareScreen` with the comparison already made.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.message import Message as TextualMessage
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import ProgressBar, Static
from textual.worker import Worker, get_current_worker

from inspector.core.artifact import Artifact
from inspector.core.compare import CompareEntry, Comparison
from inspector.core.hybrid_facts import FactsStopped, extract_facts
from inspector.core.messages import Message
from inspector.core.snapshot import ContextSnapshot
from inspector.core.strategy.base import Decision, Flip, Settings, Strategy
from inspector.core.tokens import TokenCounter
from inspector.tui.screens.compare_screen import CompareScreen, comparison_for

#: Seconds of work before the progress modal appears.
SHOW_AFTER = 0.5


class ProgressScreen(ModalScreen[bool]):
    """A title, a bar of `total` steps, the current step and elapsed time; Esc cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    ProgressScreen { align: center middle; }
    ProgressScreen #progress-box { width: 60; max-width: 95%; height: auto; border: round $accent; background: $surface; padding: 0 1; }
    ProgressScreen #progress-bar { width: 100%; }
    ProgressScreen #progress-title { text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, title: str, total: int) -> None:
        super().__init__()
        self.title_text = title
        self.total = total
        self.started = time.monotonic()
        self.cancelled = False
        self._latest: tuple[int, str] | None = None
        #: True while the step in hand cannot be measured (see `step`).
        self.open_ended = False

    def compose(self) -> ComposeResult:
        """Title, bar, step line."""
        with Vertical(id="progress-box"):
            yield Static(
                Text(self.title_text, "bold", no_wrap=True, overflow="ellipsis"),
                id="progress-title",
                markup=False,
            )
            yield ProgressBar(total=self.total, show_eta=False, id="progress-bar")
            yield Static(Text("starting …  (Esc: cancel)", "dim"), id="progress-step", markup=False)

    def step(self, done: int, what: str, *, open_ended: bool = False) -> None:
        """`done` steps finished; `what` is the one now running (drawn once composed: a step
        may arrive between the push and the first compose). `open_ended`: the rest cannot
        be measured (the bar pulses instead of standing at a percentage)."""
        self._latest = (done, what)
        self.open_ended = open_ended
        self._draw()

    def on_mount(self) -> None:
        """Draw the latest step that arrived before the screen was composed."""
        self._draw()

    def _draw(self) -> None:
        if self._latest is None:
            return
        try:
            bar = self.query_one(ProgressBar)
            line = self.query_one("#progress-step", Static)
        except NoMatches:
            return  # not composed yet: on_mount draws it
        done, what = self._latest
        bar.update(total=None if self.open_ended else self.total, progress=done)
        seconds = time.monotonic() - self.started
        line.update(Text(f"{done:,}/{self.total:,}: {what}  ({seconds:.1f} s, Esc: cancel)", "dim"))

    def action_cancel(self) -> None:
        """Stop waiting: the work is cancelled between its steps."""
        self.cancelled = True
        self.dismiss(False)


class PrecomputedCompareScreen(CompareScreen):
    """The strategies view opened on a comparison made behind a progress modal."""

    def __init__(
        self,
        comparison: Comparison,
        artifact: Artifact,
        entries: Sequence[CompareEntry],
        counters: dict[str, TokenCounter],
        mode: str,
        pins: frozenset[int] = frozenset(),
    ) -> None:
        super().__init__(artifact, entries, counters, mode, pins)
        self._given = comparison

    def compute(self) -> Any:  # type: ignore[override]
        """Nothing to compute: the comparison is here already."""
        self.post_message(self.Compared(self._given))


class StepDone(TextualMessage):
    """Step `done` of `total` finished; `what` runs next (empty when all are done)."""

    def __init__(self, done: int, what: str, result: Any = None) -> None:
        super().__init__()
        self.done = done
        self.what = what
        self.result = result


class StrategiesLauncher:
    """Mixin of ContextScreen: `C` compares the strategies in steps, with progress."""

    _progress: ProgressScreen | None = None
    _compare_worker: Worker[Any] | None = None
    _steps: int = 0
    _compare_args: tuple[Artifact, Sequence[CompareEntry], str, frozenset[int]] | None = None

    app: Any
    counters: dict[str, TokenCounter]

    if TYPE_CHECKING:  # provided by the screen; declared for type checkers

        def set_timer(self, delay: float, callback: Any = None, *args: Any, **kw: Any) -> Any: ...

        def post_message(self, message: TextualMessage) -> bool: ...

    def launch_strategies(
        self,
        artifact: Artifact,
        entries: Sequence[CompareEntry],
        mode: str,
        pins: frozenset[int] = frozenset(),
    ) -> None:
        """Compare in a worker; show progress after `SHOW_AFTER` s; open the view when done.

        `entries`: the columns; `mode`: the token counter the columns are counted with;
        `pins`: the messages kept verbatim (the context view's what-if)."""
        self._compare_args = (artifact, tuple(entries), mode, pins)
        self._progress = None
        self._steps = len(entries) + 1  # the context's facts, then one step per strategy
        self._compare_worker = self.compare_in_steps(artifact, tuple(entries), mode, pins)
        worker = self._compare_worker
        self.set_timer(SHOW_AFTER, lambda: self._show_progress(worker))

    def _show_progress(self, worker: Worker[Any]) -> None:
        if worker is not self._compare_worker or worker.is_finished:
            return
        self._progress = ProgressScreen("comparing strategies", self._steps)

        def closed(finished: bool | None) -> None:
            if not finished and self._compare_worker is worker:
                worker.cancel()
                self._compare_worker = None

        self.app.push_screen(self._progress, closed)

    @work(thread=True, exclusive=True, group="strategies", exit_on_error=False)
    def compare_in_steps(
        self,
        artifact: Artifact,
        entries: Sequence[CompareEntry],
        mode: str,
        pins: frozenset[int] = frozenset(),
    ) -> None:
        """The context's facts first (every message read once, stopped by a cancel), then
        one strategy per step; the joined comparison posted last."""
        worker = get_current_worker()
        assert artifact.snapshot is not None
        messages = artifact.snapshot.messages
        facts_step = f"finding paths, identifiers and errors in {len(messages):,} messages"
        self.post_message(StepDone(0, facts_step))

        def read(done: int) -> None:
            self.post_message(StepDone(0, f"{facts_step}: {done:,} read"))

        try:
            facts = extract_facts(messages, lambda: worker.is_cancelled, read)
        except FactsStopped:
            return
        parts: list[Comparison] = []
        for index, entry in enumerate(entries, start=1):
            self.post_message(StepDone(index, entry.strategy.key))
            parts.append(comparison_for(artifact, (entry,), self.counters, mode, pins, facts))
            if worker.is_cancelled:
                return
        joined = dataclasses.replace(
            parts[0], outcomes=tuple(o for part in parts for o in part.outcomes)
        )
        self.post_message(StepDone(len(entries) + 1, "", joined))

    def on_step_done(self, message: StepDone) -> None:
        """Move the bar; at the end close it and open the strategies view."""
        progress = self._progress
        if message.result is None:
            if progress is not None and progress.is_attached:
                progress.step(message.done, message.what)
            return
        if self._compare_worker is None or self._compare_args is None:
            return  # cancelled
        self._compare_worker = None
        if progress is not None and progress.is_attached and not progress.cancelled:
            progress.dismiss(True)
        artifact, entries, mode, pins = self._compare_args
        self.app.push_screen(
            PrecomputedCompareScreen(message.result, artifact, entries, self.counters, mode, pins)
        )


#: Messages sampled (evenly spaced) to estimate how far a count has come.
PROBE_SAMPLE = 500
#: Seconds between two looks at a running count.
PROBE_EVERY = 0.25


def counted_share(messages: Sequence[Message], counters: Sequence[TokenCounter]) -> float:
    """The share of `messages` (0..1) one of `counters` already knows, from an even sample
    (a count goes through the messages in order, caching each)."""
    if not messages:
        return 1.0
    step = max(len(messages) // PROBE_SAMPLE, 1)
    sample = messages[::step]
    known = max(sum(1 for m in sample if counter.knows(m)) for counter in counters)
    return known / len(sample)


def probe_counters(counters: dict[str, TokenCounter], key: str) -> list[TokenCounter]:
    """The counters a count under `key` ("mode" or "mode@profile") may fill: the mode's,
    and the same with the releases' other character divisors."""
    counter = counters.get(key.partition("@")[0])
    if counter is None:
        return list(counters.values())
    return [counter, *(counter.with_divisors(d, d) for d in (3, 4))]


class CountProgress:
    """Mixin of ContextScreen: a count that takes longer than `SHOW_AFTER` s shows the
    progress modal (messages counted, a percentage); Esc stops the count itself at the next
    message (`tui.count_cancel`; what was counted is kept for the next time). Opening the
    context then goes back to the browser; a `p` or `m` goes back to the previous strategy
    and settings."""

    app: Any
    counters: dict[str, TokenCounter]
    snapshot: ContextSnapshot | None
    strategy: Strategy
    settings: Settings
    decision: Decision | None
    flips: list[Flip] | None
    recorded: Settings
    recorded_decision: Decision | None
    _side_keys: dict[str, object]
    _count_progress: ProgressScreen | None = None
    _count_timer: Timer | None = None

    if TYPE_CHECKING:  # provided by the screen; declared for type checkers

        def set_timer(self, delay: float, callback: Any = None, *args: Any, **kw: Any) -> Any: ...

        def set_interval(self, interval: float, callback: Any = None, **kw: Any) -> Any: ...

        def _redraw(self) -> None: ...

        def decided_on_screen(self, complete: bool) -> None: ...

        def _show_title(self) -> None: ...

        def refresh_bindings(self) -> None: ...

        def query_one(self, selector: Any, expect_type: Any = None) -> Any: ...

        def switch_strategy(self, strategy: Strategy, settings: Settings | None = None) -> None: ...

        @property
        def is_current(self) -> bool: ...

    def watch_count(self, worker: Worker[Any], key: str) -> None:
        """Watch the count `worker` (under counting key `key`); progress after `SHOW_AFTER` s."""
        if self._count_timer is not None:
            self._count_timer.stop()
        self._count_timer = None
        previous = self.decision
        back = (previous, self.flips) if previous is not None else None
        self.set_timer(SHOW_AFTER, lambda: self._show_count(worker, key, back))

    def _show_count(
        self, worker: Worker[Any], key: str, back: tuple[Decision, list[Flip] | None] | None
    ) -> None:
        if worker.is_finished or self.snapshot is None or self._count_progress is not None:
            return
        messages = self.snapshot.messages
        title = f"counting tokens ({key.partition('@')[0]})"
        if back is None:
            title = f"opening: {title} of {self.snapshot.id}"
        progress = ProgressScreen(title, len(messages))
        self._count_progress = progress
        probes = probe_counters(self.counters, key)

        def look() -> None:
            if progress.cancelled:
                return
            if worker.is_finished:
                if progress.is_attached:  # else not mounted yet: the next look closes it
                    self._close_count(progress)
                return
            done = round(counted_share(messages, probes) * len(messages))
            if done < len(messages):
                progress.step(done, "messages counted")
            else:  # counted: the decision and its findings cannot be measured
                progress.step(done, "counted; deciding, checking findings …", open_ended=True)

        def closed(finished: bool | None) -> None:
            self._stop_count_timer()
            self._count_progress = None
            if finished:
                return
            worker.cancel()
            if back is None:  # back to the browser, once the modal is off the stack
                self.app.call_later(self._leave)
                return
            self._restore(*back)

        self.app.push_screen(progress, closed)
        look()
        self._count_timer = self.set_interval(PROBE_EVERY, look)

    def _restore(self, decision: Decision, flips: list[Flip] | None) -> None:
        """Back to the decision shown before the count, as it was: nothing is decided again
        (on a big context that is the long part); another strategy's Tune panel comes back."""
        from inspector.core.strategy import registry

        strategy = registry.get(decision.strategy)
        if strategy.key == self.strategy.key:
            self._show_decision(decision, flips)
            return
        assert self.snapshot is not None
        self.strategy = strategy
        self.recorded = strategy.recorded_settings(self.snapshot)
        self.recorded_decision = None
        self._side_keys.clear()
        self._show_title()

        async def swap() -> None:
            from inspector.tui.widgets.settings_panel import SettingsPanel

            await self.query_one(SettingsPanel).use_model(strategy.settings_model)
            self.refresh_bindings()
            self._show_decision(decision, flips)

        screen: Any = self  # a Textual screen (the mixin declares no DOMNode methods)
        screen.run_worker(swap(), exclusive=True, group="panel")

    def _show_decision(self, decision: Decision, flips: list[Flip] | None) -> None:
        self.settings = decision.settings
        self.decision = decision
        self.flips = flips
        # whether it had every finding is not known here: the follow-up makes sure
        self.decided_on_screen(complete=False)
        self._redraw()

    def _leave(self) -> None:
        if self.is_current:
            self.app.pop_screen()

    def _stop_count_timer(self) -> None:
        if self._count_timer is not None:
            self._count_timer.stop()
            self._count_timer = None

    def _close_count(self, progress: ProgressScreen) -> None:
        """The count ended: close its modal."""
        self._stop_count_timer()
        if progress.is_attached and not progress.cancelled:
            progress.dismiss(True)
