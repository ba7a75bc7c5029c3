"""The context view's side panel: Detail, Why and Tune tabs, drawn only when visible and
after the main frame (a tuning key paints list, bar and verdict first; the visible tab
follows in a coalescing timer, so held keys never wait for tables).

A mixin of ContextScreen (which owns `decision`, `settings`, `flips` and the widgets); Rich
and Textual only, never a strategy by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.text import Text
from textual.timer import Timer
from textual.widgets import TabbedContent

from inspector.core.artifact import Artifact
from inspector.core.messages import Message
from inspector.core.strategy.base import Decision, Flip, Settings, Strategy
from inspector.render.context_bar import AFTER_LABELS
from inspector.render.message_detail import Placement, message_detail
from inspector.render.recorded_view import recorded_vs_ours, timeline_renderable
from inspector.render.styles import Palette
from inspector.render.verdict import after_role
from inspector.render.why_report import checks_table, findings_table, recorded_details
from inspector.tui.screens.context_view import regions_text, verdict_word
from inspector.tui.widgets.detail_pane import MessageDetailPane
from inspector.tui.widgets.message_list import MessageList
from inspector.tui.widgets.settings_panel import SettingsPanel
from inspector.tui.widgets.why_panel import WhyPanel, why_body

#: Seconds after the last tuning change before the visible tab is drawn again.
SIDE_DELAY = 0.12
#: Said in the Why tab while the complete decision of the settings is on its way.
PENDING_NOTE = "checks and findings: re-evaluating …"


class ContextSide:
    """Draws the visible tab of the side panel, coalesced after tuning changes."""

    artifact: Artifact
    decision: Decision | None
    recorded_decision: Decision | None
    settings: Settings
    recorded: Settings
    strategy: Strategy
    flips: list[Flip] | None
    flips_dropped: int
    showing_after: bool
    links: dict[int, tuple[int, ...]]
    results: dict[str, list[int]]
    _side_keys: dict[str, object]
    _side_timer: Timer | None

    if TYPE_CHECKING:  # provided by the screen; declared for type checkers

        @property
        def palette(self) -> Palette: ...

        @property
        def decision_complete(self) -> bool: ...

        def current_messages(self) -> Sequence[Message]: ...

        def query_one(self, selector: Any, expect_type: Any = None) -> Any: ...

        def set_timer(self, delay: float, callback: Any = None, *args: Any, **kw: Any) -> Timer: ...

    def active_tab(self) -> str | None:
        """'detail', 'why' or 'tune' when the side panel is on screen, else None."""
        side = self.query_one("#side", TabbedContent)
        if not side.display:
            return None
        return str(side.active or "tab-why").removeprefix("tab-")

    def schedule_side(self) -> None:
        """Draw the visible tab once the changes stop (one timer, restarted per change)."""
        if self._side_timer is not None:
            self._side_timer.stop()
        self._side_timer = self.set_timer(SIDE_DELAY, self._side_due)

    def _side_due(self) -> None:
        self._side_timer = None
        self.refresh_side()

    @property
    def side_pending(self) -> bool:
        """True while the visible tab waits for its coalesced redraw."""
        return self._side_timer is not None

    def refresh_side(self, force: bool = False) -> None:
        """Redraw the visible tab if what it shows changed (hidden tabs wait until shown)."""
        tab = self.active_tab()
        if tab is None or self.decision is None:
            return
        if tab == "detail":
            self._show_detail(self.query_one(MessageList).cursor, force)
        elif tab == "why":
            self._fill_why(force)
        elif tab == "tune":
            self._fill_tune(force)

    def _fill_tune(self, force: bool = False) -> None:
        decision = self.decision
        if decision is None:
            return
        key = (self.settings, self.recorded_decision is not None)
        if not force and self._side_keys.get("tune") == key:
            return
        self._side_keys["tune"] = key
        verdicts = None
        if self.recorded_decision is not None:
            verdicts = (
                verdict_word(self.recorded_decision, self.palette),
                verdict_word(decision, self.palette),
            )
        self.query_one(SettingsPanel).show(self.settings, self.recorded, verdicts)

    def _fill_why(self, force: bool = False) -> None:
        decision = self.decision
        if decision is None:
            return
        complete = self.decision_complete
        key = (self.settings, self.strategy.key, complete, self.flips is not None)
        if not force and self._side_keys.get("why") == key:
            return
        self._side_keys["why"] = key
        panel = self.query_one(WhyPanel)
        head: list[Any] = [regions_text(decision, self.palette)]
        if decision.summary:
            head.append(Text(decision.summary, "dim"))
        if not decision.exact_counting and decision.counting_note:
            head.append(Text(f"⚠ {decision.counting_note}", self.palette("caution")))
        if not complete:  # the checks and findings on what was recorded are on their way
            head.append(Text(PENDING_NOTE, self.palette("muted", "italic")))
            panel.show_report(Group(*head), None)
            panel.show_flips(None)
            return
        panel.show_recorded(
            recorded_vs_ours(self.artifact, decision, self.palette),
            timeline_renderable(self.artifact, self.palette),
        )
        details = recorded_details(self.artifact)
        body: list[Any] = []
        if details:
            body += [
                Text(
                    "From the source: causes, what it cannot give back, inferred values",
                    "bold underline",
                ),
                *details,
            ]
        body += [
            Text("Checks", "bold underline"),
            checks_table(decision.checks, self.palette),
            Text("Findings", "bold underline"),
            findings_table(decision.findings, self.palette),
        ]
        panel.show_report(Group(*head), why_body(body))
        panel.show_flips(self.flips, dropped=self.flips_dropped)

    def side_widget(self) -> Any:
        """The scrollable widget of the visible tab (None when the side panel is hidden)."""
        tab = self.active_tab()
        if tab is None:
            return None
        return self.query_one({"why": WhyPanel, "tune": SettingsPanel}.get(tab, MessageDetailPane))

    def action_scroll_side(self, lines: int) -> None:
        """Scroll the visible tab by `lines` while the list keeps the focus."""
        widget = self.side_widget()
        if widget is not None:
            widget.scroll_relative(y=lines, animate=False)

    def action_focus_side(self) -> None:
        """Give the visible tab the focus (its own keys scroll it; Esc comes back)."""
        widget = self.side_widget()
        if widget is None:
            return
        if widget.can_focus:
            widget.focus()
            return
        first = next((w for w in widget.query("Input, Select") if w.focusable), None)
        if first is not None:  # the Tune panel: its first control
            first.focus()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        """A tab came into view: draw it now."""
        self.refresh_side()

    def _show_detail(self, index: int, force: bool = False) -> None:
        messages = self.current_messages()
        decision = self.decision
        if not 0 <= index < len(messages) or decision is None:
            return
        key = (index, self.settings, self.showing_after, self.strategy.key)
        if not force and self._side_keys.get("detail") == key:
            return
        self._side_keys["detail"] = key
        message = messages[index]
        if self.showing_after:
            region = self.query_one(MessageList).region_of(index)
            place = Placement(region, after_role(message), AFTER_LABELS.get(region))
            detail = message_detail(
                message, index, None, place, self.links.get(index, ()), self.results, self.palette
            )
        else:
            tokens = decision.message_tokens[index] if decision.message_tokens else None
            place = Placement(
                decision.region_of(index),
                decision.message_notes.get(index, ""),
                decision.message_labels.get(index) or decision.region_label(index),
            )
            detail = message_detail(
                message, index, tokens, place, self.links.get(index, ()), self.results, self.palette
            )
        self.query_one(MessageDetailPane).show(detail)
