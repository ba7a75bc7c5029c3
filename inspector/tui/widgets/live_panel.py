"""LivePanel: the browser's live indicator: followed files, connection state, usage, operations.

Attributes down: the browser screen owns the `LiveTracker` and the follow state and calls
`show(...)`; the panel only renders them with the shared Rich helpers of
`inspector.render.live_report` (the same badges and gauge `inspector watch` prints). Hidden
until something is live.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text
from textual.widgets import Static

from inspector.core.live_events import SourceState
from inspector.core.live_tracker import LiveTracker
from inspector.render.live_report import compression_text, state_badge, usage_gauge
from inspector.render.styles import DEFAULT_PALETTE, Palette
from inspector.tui.theme import THEME_COMPONENT_CLASSES, palette_of

#: How many of the latest compression operations the panel lists.
RECENT_OPERATIONS = 3


def live_summary(
    follow: SourceState | None,
    tracker: LiveTracker | None,
    threshold_percent: float | None,
    styles: Palette = DEFAULT_PALETTE,
) -> RenderableType | None:
    """The panel's content: one badge per live source, the usage gauge, the last operations.

    None when nothing is live (no follower, no connection).
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
        usage = tracker.main_usage
        if usage is not None:
            rate = f" {usage.rate:.1f}%" if usage.rate is not None else " ?"
            limit = f" (threshold {threshold_percent:g}%)" if threshold_percent is not None else ""
            lines.append(
                Text.assemble(
                    ("usage ", "dim"),
                    usage_gauge(usage.rate, threshold_percent, styles=styles),
                    rate,
                    limit,
                )
            )
        recent = [op.latest for op in list(tracker.operations.values())[-RECENT_OPERATIONS:]]
        for latest in reversed(recent):
            if latest is not None:
                lines.append(compression_text(latest, styles))
        if tracker.manual_compactions:
            last = tracker.manual_compactions[-1]
            lines.append(
                Text(
                    f"✔ /compact {last.before_tokens}→{last.after_tokens} tok", style=styles("good")
                )
            )
    return Group(*lines) if lines else None


class LivePanel(Static):
    """A few lines under the browser table; hidden while nothing is live."""

    COMPONENT_CLASSES = set(THEME_COMPONENT_CLASSES)

    DEFAULT_CSS = """
    LivePanel { height: auto; max-height: 9; padding: 0 1; border-top: solid $panel; display: none; }
    LivePanel.-live { display: block; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self._summary: RenderableType | None = None
        self._shown: tuple[SourceState | None, LiveTracker | None, float | None] | None = None

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
        content = live_summary(follow, tracker, threshold_percent, palette_of(self))
        self._summary = content
        self.set_class(content is not None, "-live")
        self.update(content if content is not None else "")

    @property
    def plain(self) -> str:
        """The panel's text without styles (tests and captures)."""
        from inspector.render.verdict import render_to_text

        if self._summary is None:
            return ""
        return render_to_text(self._summary, width=200)
