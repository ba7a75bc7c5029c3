"""LivePanel: the browser's live indicator: followed files, connection state, usage, operations.

Attributes down: the browser screen owns the `LiveTracker` and the follow state and calls
`show(...)`; the panel renders them with the shared Rich helpers of
`inspector.render.live_report` (the same badges and gauge `inspector watch` prints). The
usage gauge marks the agent's own trigger points (from its config and from where its
frames showed it compress), with a line explaining the frames' 200,000-token,
conversation-only numbers. Every compression operation is one row of a scrollable list,
newest first; Enter on a row posts `OperationChosen`, on which the screen opens the
operation's detail screen. Hidden until something is live.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from inspector.core.live_events import SourceState
from inspector.core.live_tracker import LiveTracker, Operation
from inspector.render.live_report import compression_text, marks_text, state_badge, usage_gauge
from inspector.render.styles import DEFAULT_PALETTE, Palette
from inspector.tui.theme import THEME_COMPONENT_CLASSES, palette_of

#: Rows of the operations list shown at once (the rest scroll).
VISIBLE_OPERATIONS = 6


def live_summary(
    follow: SourceState | None,
    tracker: LiveTracker | None,
    threshold_percent: float | None,
    styles: Palette = DEFAULT_PALETTE,
) -> RenderableType | None:
    """The panel's head: one badge per live source, the usage gauge with its trigger marks.

    None when nothing is live (no follower, no connection). `threshold_percent` (the
    inspector's own tuning) is drawn only while the agent's trigger points are unknown.
    """
    lines: list[RenderableType] = []
    if follow is not None:
        lines.append(Text.assemble(("files ", "dim"), state_badge(follow, styles)))
    if tracker is not None:
        for state in tracker.states.values():
            lines.append(
                Text.assemble(
                    ("live ", "dim"), state_badge(state, styles), ("  " + state.source, "dim")
                )
            )
        if not tracker.states:
            lines.append(Text("live ○ starting…", style=styles("caution")))
        marks = [m for m in tracker.trigger_marks() if m.percent is not None]
        usage = tracker.main_usage
        if usage is not None:
            rate = f" {usage.rate:.1f}%" if usage.rate is not None else " ?"
            own = None if marks else threshold_percent
            limit = f" (inspector threshold {own:g}%)" if own is not None else ""
            window = f" of {usage.context_max:,}" if usage.context_max else ""
            lines.append(
                Text.assemble(
                    ("usage ", "dim"),
                    usage_gauge(usage.rate, own, styles=styles, marks=marks),
                    rate + window,
                    limit,
                )
            )
        if marks:
            lines.append(Text(marks_text(marks), style="dim"))
        note = tracker.scale_note()
        if note:
            lines.append(Text("ⓘ " + note, style="dim"))
        if tracker.manual_compactions:
            last = tracker.manual_compactions[-1]
            lines.append(
                Text(
                    f"✔ /compact {last.before_tokens}→{last.after_tokens} tok", style=styles("good")
                )
            )
    return Group(*lines) if lines else None


def operation_rows(tracker: LiveTracker | None) -> list[Operation]:
    """The operations to list, newest first."""
    if tracker is None:
        return []
    return [op for op in reversed(tracker.operations.values()) if op.latest is not None]


class LivePanel(Vertical):
    """Under the browser table: the live head and the scrollable list of operations."""

    COMPONENT_CLASSES = set(THEME_COMPONENT_CLASSES)

    DEFAULT_CSS = f"""
    LivePanel {{ height: auto; max-height: 20; padding: 0 1; border-top: solid $panel; display: none; }}
    LivePanel.-live {{ display: block; }}
    LivePanel #live-head {{ height: auto; }}
    LivePanel #live-operations {{ height: auto; max-height: {VISIBLE_OPERATIONS + 2}; display: none; }}
    LivePanel #live-operations.-some {{ display: block; }}
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._summary: RenderableType | None = None
        self._shown: tuple[SourceState | None, LiveTracker | None, float | None] | None = None
        self._operations: list[Operation] = []

    def compose(self) -> ComposeResult:
        """The head (states, gauge) and the operations list."""
        yield Static("", id="live-head", markup=False)
        yield OptionList(id="live-operations")

    def on_mount(self) -> None:
        """Draw again in the new palette whenever the app's theme changes."""
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._reshow())

    def _reshow(self) -> None:
        if self._shown is not None and self.is_mounted:
            self.show(*self._shown)

    def show(
        self,
        follow: SourceState | None,
        tracker: LiveTracker | None,
        threshold_percent: float | None = None,
    ) -> None:
        """Render the follow state and the tracker (both None hides the panel)."""
        self._shown = (follow, tracker, threshold_percent)
        styles = palette_of(self)
        content = live_summary(follow, tracker, threshold_percent, styles)
        self._summary = content
        self.set_class(content is not None, "-live")
        if not self.is_mounted:
            return
        self.query_one("#live-head", Static).update(content if content is not None else "")
        self._list_operations(operation_rows(tracker), styles)

    def focus_operations(self) -> bool:
        """Give the operations list the focus; False when it has nothing to show."""
        listing = self.query_one("#live-operations", OptionList)
        if not self._operations:
            return False
        listing.focus()
        if listing.highlighted is None:
            listing.highlighted = 0
        return True

    def _list_operations(self, operations: list[Operation], styles: Palette) -> None:
        """Refill the list, keeping the highlighted operation where it was."""
        listing = self.query_one("#live-operations", OptionList)
        highlighted = listing.highlighted
        chosen = (
            self._operations[highlighted].operation_id
            if highlighted is not None and highlighted < len(self._operations)
            else None
        )
        self._operations = operations
        listing.clear_options()
        listing.add_options(
            Option(self._row_text(op, styles), id=f"op-{index}")
            for index, op in enumerate(operations)
        )
        listing.set_class(bool(operations), "-some")
        if chosen is not None:
            keep = next((i for i, op in enumerate(operations) if op.operation_id == chosen), None)
            if keep is not None:
                listing.highlighted = keep

    @staticmethod
    def _row_text(operation: Operation, styles: Palette) -> Text:
        assert operation.latest is not None
        text = compression_text(operation.latest, styles)
        first = text.plain.split("\n", 1)[0]
        return text[: len(first)]

    class OperationChosen(Message):
        """Enter on an operation: the screen opens its detail (widgets never import screens)."""

        def __init__(self, operation: Operation, tracker: LiveTracker | None) -> None:
            super().__init__()
            self.operation = operation
            self.tracker = tracker

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter on an operation asks the screen to open its detail."""
        event.stop()
        index = event.option_index
        if 0 <= index < len(self._operations):
            tracker = self._shown[1] if self._shown is not None else None
            self.post_message(self.OperationChosen(self._operations[index], tracker))

    @property
    def operations(self) -> list[Operation]:
        """The operations listed, newest first."""
        return list(self._operations)

    @property
    def plain(self) -> str:
        """The panel's text without styles (tests and captures): head, then one line per operation."""
        from inspector.render.verdict import render_to_text

        if self._summary is None:
            return ""
        head = render_to_text(self._summary, width=200)
        rows = [self._row_text(op, DEFAULT_PALETTE).plain for op in self._operations]
        return "\n".join([head.rstrip("\n"), *rows])
