"""The open context follows its source: a newer state of the same context replaces the one shown.

The browser hands every row its followers and connections produce to `offer_to_contexts`;
an open ContextScreen (through the `ContextLive` mixin) takes the newest row that is a newer
state of the context it shows (`context_identity`, `is_newer_state`) and moves to it: the
messages, regions, verdict, bar and Why tab of the new state, with the user's tuning, pins
and selected message carried over where they still exist. A marker line above the verdict
says what changed ("● updated 18:42:03 · dump #7: +3 messages, total 5,210 → 6,044, verdict
DOES NOT COMPRESS → COMPRESSES") and the new messages stay highlighted in the list until the
next key. `L` pins the view to the state on screen: newer states are counted, not applied,
until `L` again jumps to the newest.

The pure part (identity, ordering, message diff, the marker's words) takes core values only;
the mixin touches Textual widgets of the screen. Nothing here runs when a context opens.
Must not import the ContextScreen or the browser (they import this module).
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.widgets import Static

from inspector.core.artifact import Artifact
from inspector.core.errors import InspectorError
from inspector.core.messages import Message
from inspector.core.strategy.base import Decision, Settings, Strategy
from inspector.core.strategy.selection import select
from inspector.tui.rows import BrowserRow

if TYPE_CHECKING:
    from inspector.core.snapshot import ContextSnapshot
    from inspector.render.styles import Palette

#: The key that pins the view to its state (and follows again).
PIN_STATE_KEY = "L"

LIVE_BINDINGS: list[BindingType] = [
    Binding(
        PIN_STATE_KEY,
        "toggle_pin_state",
        "Pin state",
        tooltip="Pin the view to this state (newer dumps/windows are held); again: jump to the newest",
    ),
]

#: What a state of each artifact kind is called in the marker.
STATE_WORDS = {"dump": "dump", "debug": "evaluation", "llm_request": "model call"}

ContextKey = tuple[str, ...]


# --- pure: which artifacts are states of one context ---------------------------------------


def context_identity(artifact: Artifact) -> ContextKey | None:
    """The context `artifact` is a state of: artifacts with equal keys are states of one context.

    A live window: its connection, session and subject (a trajectory's window id changes with
    every new window; jiuwenswarm's rebuilt context keeps one id). An artifact of a session
    (dump, debug evaluation, model call): session id, context id and processor. Anything else
    (a bare snapshot or message list): its own (source, id), so a rewritten file is a newer
    state of itself. None when there is no context to show (a debug record alone).
    """
    if artifact.snapshot is None and artifact.whole is None:  # a header-level dump has one
        return None
    live = artifact.extra.get("live")
    if isinstance(live, Mapping):
        subject = live.get("subject_id")
        return ("live", artifact.source, artifact.session_id or "", str(subject or artifact.id))
    if artifact.session_id:
        return ("session", artifact.session_id, artifact.context_id or "", artifact.processor or "")
    return ("artifact", artifact.source, artifact.id)


def state_order(artifact: Artifact) -> tuple[float, int]:
    """How recent a state is: its time, then a live window's revision (unknown: oldest)."""
    live = artifact.extra.get("live")
    revision = live.get("revision") if isinstance(live, Mapping) else None
    stamp = artifact.timestamp if artifact.timestamp is not None else -math.inf
    return (stamp, revision if isinstance(revision, int) else -1)


def is_newer_state(current: Artifact, candidate: Artifact) -> bool:
    """Whether `candidate` is a newer state of the context `current` shows.

    The same artifact read again counts only when its messages or its record changed (a
    follower reports a whole session folder after any change in it); another artifact of
    the same context counts when it is not older.
    """
    key = context_identity(current)
    if key is None or context_identity(candidate) != key:
        return False
    if (candidate.source, candidate.id) == (current.source, current.id):
        if current.snapshot is None or candidate.snapshot is None:
            return False  # the same dump, not read again since
        return candidate.snapshot.messages != current.snapshot.messages or dict(
            candidate.recorded
        ) != dict(current.recorded)
    return state_order(candidate) >= state_order(current)


def newest_state(current: Artifact, candidates: Iterable[Artifact]) -> Artifact | None:
    """The newest of `candidates` that is a newer state of `current` (the last one on a tie)."""
    best: Artifact | None = None
    for candidate in candidates:
        if is_newer_state(current, candidate) and (
            best is None or state_order(candidate) >= state_order(best)
        ):
            best = candidate
    return best


def newer_states(current: Artifact, rows: Iterable[BrowserRow]) -> set[tuple[str, str]]:
    """(source, id) of every row in `rows` that is a newer state of `current`."""
    return {
        (row.artifact.source, row.artifact.id)
        for row in rows
        if row.artifact is not None and is_newer_state(current, row.artifact)
    }


def state_label(artifact: Artifact, rows: Iterable[BrowserRow]) -> str:
    """'dump #7': the kind of state and its place among the context's states in `rows`."""
    live = isinstance(artifact.extra.get("live"), Mapping)
    word = "window" if live else STATE_WORDS.get(artifact.kind, artifact.kind)
    key, order = context_identity(artifact), state_order(artifact)
    earlier = {
        (row.artifact.source, row.artifact.id)
        for row in rows
        if row.artifact is not None
        and context_identity(row.artifact) == key
        and state_order(row.artifact) < order
    }
    return f"{word} #{len(earlier) + 1}"


# --- pure: what changed between two states ---------------------------------------------------


def message_key(message: Message) -> tuple[Any, ...]:
    """What makes two messages the same one across dumps (usage records may change)."""
    return (message.role, message.tool_call_id, message.call_ids, repr(message.content))


def message_changes(old: Sequence[Message], new: Sequence[Message]) -> tuple[tuple[int, ...], int]:
    """(indexes in `new` of the messages `old` did not have, how many of `old` are gone)."""
    left = Counter(message_key(m) for m in old)
    added: list[int] = []
    for index, message in enumerate(new):
        key = message_key(message)
        if left[key] > 0:
            left[key] -= 1
        else:
            added.append(index)
    return tuple(added), sum(left.values())


def carried_index(old: Sequence[Message], new: Sequence[Message], index: int) -> int | None:
    """Where message `old[index]` is in `new` (the nearest copy), None when it is gone."""
    if not 0 <= index < len(old):
        return None
    key = message_key(old[index])
    places = [i for i, message in enumerate(new) if message_key(message) == key]
    return min(places, key=lambda i: abs(i - index)) if places else None


def carried_pins(
    old: Sequence[Message], new: Sequence[Message], pins: frozenset[int]
) -> frozenset[int]:
    """The pinned messages that are still there, at their new indexes."""
    kept = (carried_index(old, new, index) for index in pins)
    return frozenset(index for index in kept if index is not None)


@dataclass(frozen=True, slots=True)
class StateSummary:
    """What the marker compares between two states."""

    messages: int
    total: int | None
    verdict: str | None

    @classmethod
    def of(cls, messages: int, decision: Decision | None) -> StateSummary:
        """The summary of a state shown with `decision` (None: not decided yet)."""
        if decision is None:
            return cls(messages, None, None)
        return cls(messages, decision.total_tokens, decision.verdict)


def change_words(before: StateSummary, after: StateSummary, added: int, removed: int) -> str:
    """'+3 messages, total 5,210 → 6,044, verdict DOES NOT COMPRESS → COMPRESSES'."""
    if added or removed:
        parts = [
            " ".join(
                p for p in (f"+{added}" if added else "", f"−{removed}" if removed else "") if p
            )
        ]
        parts[0] += " messages" + (" (compressed away)" if removed and not added else "")
    else:
        parts = [f"same {after.messages} messages"]
    if before.total != after.total and before.total is not None and after.total is not None:
        parts.append(f"total {before.total:,} → {after.total:,}")
    elif after.total is not None:
        parts.append(f"total {after.total:,} (same)")
    if before.verdict and after.verdict and before.verdict != after.verdict:
        parts.append(f"verdict {before.verdict} → {after.verdict}")
    elif after.verdict:
        parts.append(f"verdict still {after.verdict}")
    return ", ".join(parts)


def clock_text(seconds: float) -> str:
    """'18:42:03' in local time."""
    return time.strftime("%H:%M:%S", time.localtime(seconds))


# --- the browser's side ---------------------------------------------------------------------


def offer_to_contexts(app: Any, rows: Sequence[BrowserRow], all_rows: Sequence[BrowserRow]) -> None:
    """Hand new and changed rows to every open context view (each takes what is its own)."""
    fresh = [row for row in rows if row.artifact is not None and row.artifact.snapshot is not None]
    if not fresh:
        return
    for screen in list(getattr(app, "screen_stack", ())):
        offer = getattr(screen, "live_offer", None)
        if offer is not None:
            offer(fresh, all_rows)


# --- the screen's side ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Arrival:
    """A newer state waiting to be shown, with its label and when it arrived."""

    row: BrowserRow
    label: str
    at: float


class ContextLive:
    """Follow newer states of the open context; mixed into ContextScreen."""

    row: BrowserRow
    artifact: Artifact
    snapshot: ContextSnapshot | None
    strategy: Strategy
    settings: Settings
    recorded: Settings
    decision: Decision | None
    pins: frozenset[int]
    overrides: dict[str, Any]
    app: Any

    #: Seconds since the epoch, for the marker (a parameter so tests can set it).
    live_clock: Callable[[], float] = staticmethod(time.time)
    #: True while the view is pinned to its state.
    live_pinned = False
    #: Newer states held while pinned (or while another screen is on top), oldest first.
    live_waiting: tuple[_Arrival, ...] = ()
    #: How many newer states of this context the browser holds (while pinned).
    live_held = 0
    #: The marker line as last drawn (plain text; "" before any update or pin).
    live_marker = ""
    #: The label of the state on screen ("dump #5"), once an update named it.
    live_label = ""
    #: Messages new in the state on screen, highlighted until the next key.
    live_new: tuple[int, ...] = ()
    _live_pending: tuple[StateSummary, int, int, str, float] | None = None

    if TYPE_CHECKING:  # provided by the screen; declared for type checkers

        @property
        def palette(self) -> Palette: ...

        @property
        def is_current(self) -> bool: ...

        def apply_settings(self, settings: Settings) -> None: ...

        def current_messages(self) -> Sequence[Message]: ...

        def query_one(self, selector: Any, expect_type: Any = None) -> Any: ...

        def mount(self, *widgets: Any, **kwargs: Any) -> Any: ...

        def notify(self, message: str, **kwargs: Any) -> None: ...

        def active_tab(self) -> str | None: ...

        def _show_title(self) -> None: ...

        def _show_detail(self, index: int, force: bool = False) -> None: ...

    # --- arrivals ----------------------------------------------------------------------

    def live_offer(self, rows: Sequence[BrowserRow], all_rows: Sequence[BrowserRow]) -> None:
        """Rows the browser just added or replaced: show the newest state of this context."""
        by_artifact = {id(row.artifact): row for row in rows if row.artifact is not None}
        newest = newest_state(self.artifact, (row.artifact for row in rows if row.artifact))
        if newest is None:
            return
        row = by_artifact[id(newest)]
        if not self.live_label:
            self.live_label = state_label(self.artifact, all_rows)
        label = state_label(newest, all_rows)
        if (newest.source, newest.id) == (self.artifact.source, self.artifact.id):
            label += " rewritten"
        arrival = _Arrival(row, label, self.live_clock())
        if self.live_pinned or not self.is_current:
            self.live_waiting = (*self.live_waiting, arrival)
            self.live_held = len(newer_states(self.artifact, all_rows))
            if self.live_pinned:
                self._show_marker(self._pinned_text())
            return
        self._adopt(arrival)

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        """Back on top: show the state that arrived meanwhile (unless pinned)."""
        if self.live_waiting and not self.live_pinned:
            self._follow_newest()

    def _follow_newest(self) -> None:
        waiting = self.live_waiting
        self.live_waiting = ()
        newest = newest_state(self.artifact, (a.row.artifact for a in waiting if a.row.artifact))
        chosen = next((a for a in reversed(waiting) if a.row.artifact is newest), None)
        if chosen is not None:
            self._adopt(chosen)
        else:
            self._show_marker(self._marker_head("●", "following updates again", None))

    def action_toggle_pin_state(self) -> None:
        """Pin the view to the state on screen; again: follow, jumping to the newest state."""
        if self.snapshot is None:
            return
        self.live_pinned = not self.live_pinned
        if self.live_pinned:
            self._show_marker(self._pinned_text())
        else:
            self._follow_newest()

    # --- moving to a newer state -------------------------------------------------------

    def _adopt(self, arrival: _Arrival) -> None:
        """Show `arrival`'s state with the tuning, pins and cursor carried over."""
        new = arrival.row.artifact
        assert new is not None and new.snapshot is not None and self.snapshot is not None
        screen: Any = self
        was_after = screen.showing_after
        old_messages = self.snapshot.messages
        new_messages = new.snapshot.messages
        try:
            settings = self._carried_live_settings(new.snapshot)
            recorded = self.strategy.recorded_settings(new.snapshot)
        except InspectorError as error:
            self.notify(f"newer state not shown: {error}", severity="warning")
            return
        screen.showing_after = False
        from inspector.render.recorded_view import recorded_vs_ours, timeline_renderable
        from inspector.tui.widgets.message_list import MessageList
        from inspector.tui.widgets.why_panel import WhyPanel

        before = StateSummary.of(len(old_messages), self.decision)
        message_list = self.query_one(MessageList)
        cursor = (
            None if was_after else carried_index(old_messages, new_messages, message_list.cursor)
        )
        added, removed = message_changes(old_messages, new_messages)
        self.pins = carried_pins(old_messages, new_messages, self.pins)
        self.row, self.recorded = arrival.row, recorded
        self._forget_state(new)
        self._show_title()
        screen.links, screen.results = _links_of(new_messages)
        message_list.show(new_messages, None, screen.links)
        message_list.set_pins(screen.pinned_rows())
        message_list.move_to(cursor if cursor is not None else max(len(new_messages) - 1, 0))
        self.live_new = added
        message_list.set_matches(added)
        self.query_one(WhyPanel).show_recorded(
            recorded_vs_ours(new, None, self.palette), timeline_renderable(new, self.palette)
        )
        self.live_label = arrival.label
        self._live_pending = (before, len(added), removed, arrival.label, arrival.at)
        self._show_marker(
            self._marker_head("●", f"updated {clock_text(arrival.at)}", arrival.label)
            + ": counting …"
        )
        self.apply_settings(settings)
        if self.active_tab() == "detail":
            self._show_detail(message_list.cursor, force=True)

    def _forget_state(self, new: Artifact) -> None:
        """Make `new` the artifact on screen and drop everything computed on the old one."""
        from inspector.tui.screens.context_view import source_headline

        screen: Any = self
        self.artifact, self.snapshot = new, new.snapshot
        for cache in (
            screen.prepared,
            screen.prepared_recorded,
            screen.ready,
            screen._after_priced,
            screen._side_keys,
        ):
            cache.clear()
        # no decision until the new state is counted: cancelling a long count then leaves the
        # view instead of showing the old verdict over the new messages
        self.decision = None
        screen.recorded_decision = screen.flips = screen._after_bar = screen._shown_tokens = None
        screen.matches = []
        screen._source_line = source_headline(new, self.palette)
        if screen._source_line is not None:
            self.query_one("#verdict").styles.height = 3

    def _carried_live_settings(self, snapshot: ContextSnapshot) -> Settings:
        """The new state's reading of the source with the user's changes on top (every field
        the user moved away from the recorded value keeps the user's value)."""
        start = select(snapshot, {**self.overrides, "processor": self.strategy.key}).settings
        if type(self.settings) is not type(self.recorded) or type(start) is not type(self.settings):
            return start
        changed = {
            name: value
            for name, value in self.settings.model_dump().items()
            if getattr(self.recorded, name, value) != value
        }
        if not changed:
            return start
        try:
            return start.with_(**changed)
        except InspectorError:
            return start

    def live_decided(self, decision: Decision) -> None:
        """A decision is on screen: finish the marker of the update that waited for it."""
        pending = self._live_pending
        if pending is None or self.snapshot is None:
            return
        self._live_pending = None
        before, added, removed, label, at = pending
        after = StateSummary.of(len(self.snapshot.messages), decision)
        words = change_words(before, after, added, removed)
        held = f"  ({PIN_STATE_KEY}: pin this state)"
        self._show_marker(
            self._marker_head("●", f"updated {clock_text(at)}", label) + f": {words}{held}"
        )

    # --- the marker --------------------------------------------------------------------

    def _marker_head(self, dot: str, what: str, label: str | None) -> str:
        return f"{dot} {what}" + (f" · {label}" if label else "")

    def _pinned_text(self) -> str:
        shown = self.live_label or "this state"
        count = self.live_held if self.live_waiting else 0
        if count:
            plural = "s" if count != 1 else ""
            return f"◆ pinned to {shown} · {count} newer state{plural} (press {PIN_STATE_KEY} to follow)"
        return f"◆ pinned to {shown}: newer states are held (press {PIN_STATE_KEY} to follow)"

    def _show_marker(self, plain: str) -> None:
        """Draw the marker line above the verdict (mounted on first use: opening costs nothing)."""
        self.live_marker = plain
        style = self.palette("note" if plain.startswith("◆") else "changed")
        text = Text(plain, style)
        text.stylize("bold", 0, 1)
        try:
            marker = self.query_one("#live-marker", Static)
        except Exception:  # noqa: BLE001 - NoMatches: first marker of this screen
            marker = Static(text, id="live-marker", markup=False)
            marker.styles.height = "auto"
            marker.styles.padding = (0, 1)
            self.mount(marker, after="#context-title")
            return
        marker.update(text)

    def on_key(self, event: events.Key) -> None:
        """The next key after an update ends the highlight of the new messages."""
        if self.live_new:
            from inspector.tui.widgets.message_list import MessageList

            self.live_new = ()
            screen: Any = self
            self.query_one(MessageList).set_matches(screen.matches)


def _links_of(
    messages: Sequence[Message],
) -> tuple[dict[int, tuple[int, ...]], dict[str, list[int]]]:
    """Tool links and results by call, as the screen keeps them."""
    from inspector.core.regions import results_by_call, tool_links

    return tool_links(messages), results_by_call(messages)
