"""ContextScreen: one context's messages in a strategy's regions, the why panel and live tuning.

The screen talks to strategies only through the protocol (`inspector.core.strategy`): it
never names one. It owns the state (artifact, strategy, recorded and current settings,
decision, flips); widgets get attributes and post past-fact messages back. The first
decision of a strategy in a token mode counts the context in a worker; after that every
tuning change decides synchronously, without what the source recorded (the same regions and
verdict, none of the findings that read the record), and draws list, bar and verdict in one
frame; the complete decision and the flips follow in one coalesced worker (`ContextFollow`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message as TextualMessage
from textual.timer import Timer
from textual.widgets import Input, Select, Static, TabbedContent, TabPane

from inspector.core.engine import PricedContext
from inspector.core.errors import InspectorError
from inspector.core.messages import Message
from inspector.core.pins import recorded_pins
from inspector.core.redact import shown_name
from inspector.core.regions import after_span, results_by_call, tool_links
from inspector.core.strategy import registry
from inspector.core.strategy.base import (
    Decision,
    Flip,
    Prepared,
    Settings,
    Strategy,
    region_changes,
)
from inspector.core.strategy.selection import select
from inspector.core.tokens import TokenCounter
from inspector.encoding import load_cl100k
from inspector.render.context_bar import AFTER_LABELS, BarParts, after_parts, decision_parts
from inspector.render.recorded_view import (
    lookup,
    recorded_answer,
    recorded_vs_ours,
    timeline_renderable,
)
from inspector.tui.count_cancel import CountCancelled, cancellable
from inspector.tui.rows import BrowserRow
from inspector.tui.screens.base import InspectorScreen
from inspector.tui.screens.context_bindings import CONTEXT_BINDINGS
from inspector.tui.screens.context_follow import ContextFollow, FollowState
from inspector.tui.screens.context_launch import ContextLaunch
from inspector.tui.screens.context_live import LIVE_BINDINGS, ContextLive
from inspector.tui.screens.context_navigation import ContextNavigation
from inspector.tui.screens.context_pins import PIN_PROMPT, PinActions
from inspector.tui.screens.context_side import ContextSide
from inspector.tui.screens.context_view import (
    decision_verdict,
    headline,
    legend_labels,
    source_headline,
    total_note,
)
from inspector.tui.screens.report_actions import NO_CONTEXT_ACTIONS, ReportActions
from inspector.tui.screens.tuning_actions import TuningActions
from inspector.tui.widgets.context_bar_panel import ContextBarPanel
from inspector.tui.widgets.detail_pane import MessageDetailPane
from inspector.tui.widgets.line_panel import TextPanel
from inspector.tui.widgets.message_list import MessageList
from inspector.tui.widgets.quiet_footer import QuietFooter
from inspector.tui.widgets.settings_panel import SettingsPanel
from inspector.tui.widgets.why_panel import WhyPanel


class ContextScreen(
    ContextFollow,
    ContextLive,
    ContextSide,
    ContextLaunch,
    ContextNavigation,
    TuningActions,
    PinActions,
    ReportActions,
    InspectorScreen[None],
):
    """Messages and regions on the left; detail, why and tuning tabs on the right."""

    BINDINGS = [*CONTEXT_BINDINGS, *LIVE_BINDINGS]

    class Counted(TextualMessage):
        """The first decision of `key` in token mode `mode` is ready (the context is counted)."""

        def __init__(self, ready: tuple[str, str], settings: Settings, decision: Decision) -> None:
            super().__init__()
            self.ready = ready
            self.settings = settings
            self.decision = decision

    def __init__(
        self,
        row: BrowserRow,
        counters: dict[str, TokenCounter],
        overrides: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        assert row.artifact is not None
        self.row = row
        self.artifact = row.artifact
        self.counters = counters
        self.snapshot = self.artifact.snapshot
        self.counting_note = load_cl100k().note
        self.overrides = dict(overrides or {})
        self.prepared: dict[str, Prepared] = {}
        #: The recorded settings of each settings model seen (what counts as a user change).
        self.prepared_recorded: dict[type[Settings], Settings] = {}
        #: (strategy key, token mode) pairs already counted: their decisions are cheap.
        self.ready: set[tuple[str, str]] = set()
        self.decision: Decision | None = None
        self.recorded_decision: Decision | None = None
        self.flips: list[Flip] | None = None
        #: Flips found but left out by the benefit check (said in the Why tab).
        self.flips_dropped = 0
        self.showing_after = False
        self.compare = False
        self.search_query = ""
        self.matches: list[int] = []
        self.links: dict[int, tuple[int, ...]] = {}
        self.results: dict[str, list[int]] = {}
        self._after_bar: BarParts | None = None
        self._after_priced: dict[str, PricedContext] = {}
        self._side_keys: dict[str, object] = {}
        self._follow = FollowState()
        self._side_timer: Timer | None = None
        self._source_line: Text | None = None
        self._footer_has_flips = False
        self._shown_tokens: object = None
        if self.snapshot is not None:
            selection = select(self.snapshot, self.overrides)
            self.strategy: Strategy = selection.strategy
            self.settings: Settings = selection.settings
            self.recorded: Settings = self.strategy.recorded_settings(self.snapshot)
            self._first_strategy = self.strategy.key

    @property
    def has_context(self) -> bool:
        """Whether there is a context to decide on (a debug record alone has none)."""
        return self.snapshot is not None

    # --- layout ------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        """Verdict line, context bar, list beside tabs, search box, footer."""
        self._restore_tuning()
        yield Static(id="context-title", markup=False)
        yield TextPanel(id="verdict")
        yield ContextBarPanel(id="bar")
        with Horizontal(id="context-body"):
            yield MessageList(id="messages")
            with TabbedContent(id="side", initial="tab-why"):
                with TabPane("Detail", id="tab-detail"):
                    yield MessageDetailPane(id="detail")
                with TabPane("Why", id="tab-why"):
                    yield WhyPanel(id="why")
                with TabPane("Tune", id="tab-tune"):
                    if self.snapshot is not None:
                        yield SettingsPanel(self.strategy.settings_model, id="tuning")
        with Vertical(id="search-bar"):
            yield Input(
                placeholder="search messages (Enter: find, Esc: close)", id="search", compact=True
            )
        with Vertical(id="pins-bar"):
            yield Input(placeholder=PIN_PROMPT, id="pins", compact=True, select_on_focus=False)
        yield QuietFooter()

    def on_mount(self) -> None:
        """Show the context, then count and decide (in a worker when not yet counted). The
        first frame is the list, the bar and the verdict line; the Why tab's tables are drawn
        after it, once the decision is in (`ContextSide`)."""
        self.query_one("#search-bar").display = False
        self.query_one("#pins-bar").display = False
        self._source_line = source_headline(self.artifact, self.palette)
        if self._source_line is not None:
            self.query_one("#verdict").styles.height = 3
        self._show_title()
        messages = self.current_messages()
        self.links = tool_links(messages)
        self.results = results_by_call(messages)
        self.query_one(MessageList).show(messages, None, self.links)
        self.query_one(MessageList).set_pins(self.pinned_rows())
        self.query_one(MessageList).focus()
        if self.snapshot is None:
            self.query_one(WhyPanel).show_recorded(
                recorded_vs_ours(self.artifact, None, self.palette),
                timeline_renderable(self.artifact, self.palette),
            )
            self.query_one("#verdict", TextPanel).update(
                headline(
                    self._source_line,
                    Text(
                        "no context available: this artifact only records what happened (see Why)",
                        self.palette("caution"),
                    ),
                    self.palette,
                )
            )
            self.query_one(ContextBarPanel).display = False
            self.query_one(MessageList).display = False
            self.set_class(True, "-side-only")
            answer = recorded_answer(self.artifact, self.palette)
            self.query_one(WhyPanel).show_report(
                answer or Text("no context to re-evaluate", "dim"), Text("")
            )
            self.query_one(WhyPanel).show_flips(None, available=False)
            return
        self.apply_settings(self.settings)

    def _tuning_key(self) -> tuple[str, str]:
        return (self.artifact.source, self.artifact.id)

    def _restore_tuning(self) -> None:
        """The tuning and pins left on this context the last time it was open (kept by the
        app), else the pins the snapshot carries (an exported snapshot keeps its marks)."""
        if self.snapshot is None:
            return
        kept = getattr(self.app, "tunings", {}).get(self._tuning_key())
        if kept is None:
            self.pins = recorded_pins(self.snapshot)
            return
        strategy_key, settings, self.pins = kept
        self.strategy = registry.get(strategy_key)
        self.recorded = self.strategy.recorded_settings(self.snapshot)
        self.settings = settings

    def on_unmount(self) -> None:
        """Keep the tuning and the pins for the next time this context is opened."""
        tunings = getattr(self.app, "tunings", None)
        if tunings is None or self.snapshot is None:
            return
        untouched = self.settings == self.recorded and self.strategy.key == self._first_strategy
        if untouched and self.pins == recorded_pins(self.snapshot):
            tunings.pop(self._tuning_key(), None)
        else:
            tunings[self._tuning_key()] = (self.strategy.key, self.settings, self.pins)

    def _show_title(self) -> None:
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append(f"{self.artifact.kind} ", "bold reverse")
        title.append(f" {shown_name(self.artifact.id)}", "bold")
        if self.snapshot is not None:
            title.append(f"  {self.strategy.processor}", self.palette("name"))
            release = self.decision.numbers.get("openjiuwen_version") if self.decision else None
            if release is not None:
                evidence = (
                    str(self.decision.numbers.get("version_evidence", "")) if self.decision else ""
                )
                assumed = "assum" in evidence
                title.append(f"  openJiuwen {release}" + (" (assumed)" if assumed else ""), "dim")
        if self.artifact.session_id:
            title.append(f"  session {shown_name(self.artifact.session_id)}", "dim")
        title.append(f"  {shown_name(self.artifact.source)}", "dim")
        self.query_one("#context-title", Static).update(title, layout=False)

    def restyle(self) -> None:
        """The theme changed: draw the title, the verdict and the visible tab again."""
        self._show_title()
        self._source_line = source_headline(self.artifact, self.palette)
        self._side_keys.clear()
        self._redraw()

    # --- state -------------------------------------------------------------------------

    def current_messages(self) -> Sequence[Message]:
        """The messages on screen: the context, or the dump's context after compression."""
        if self.showing_after and self.artifact.after is not None:
            return self.artifact.after
        if self.snapshot is None:
            return ()
        return self.snapshot.messages

    def _mode(self, settings: Settings) -> str:
        return self.strategy.counting_key(settings)

    def _prepared(self, strategy: Strategy) -> Prepared:
        assert self.snapshot is not None
        prepared = self.prepared.get(strategy.key)
        if prepared is None:
            prepared = strategy.prepare(self.snapshot, self.counters, self.counting_note)
            self.prepared[strategy.key] = prepared
        return prepared

    def apply_settings(self, settings: Settings) -> None:
        """Make `settings` current: decide and redraw at once when counted, else count first."""
        if self.snapshot is None:
            return
        self.settings = settings
        ready = (self.strategy.key, self._mode(settings))
        if ready not in self.ready:
            self.query_one("#verdict", TextPanel).update(
                Text(f"counting tokens ({ready[1] or self.strategy.processor}) …", "dim")
            )
            self.watch_count(self.count(self.strategy, settings), ready[1])
            return
        try:
            # without the artifact: the findings on what was recorded follow in a worker
            decision = self.strategy.decide(self._prepared(self.strategy), settings, None)
            decision = self.with_pins(decision)
        except InspectorError as error:
            self.notify(f"{self.strategy.processor}: {error}", severity="error")
            return
        self._decided(decision, complete=False)

    def _decided(self, decision: Decision, complete: bool) -> None:
        """Draw `decision` (its pins applied); `complete`: it has every finding."""
        release = self.decision.numbers.get("openjiuwen_version") if self.decision else None
        self.decision = decision
        if decision.numbers.get("openjiuwen_version") != release:
            self._show_title()
        self._update_recorded()
        self.flips = None
        self.decided_on_screen(complete)
        self._redraw()
        self.live_decided(decision)

    def _update_recorded(self) -> None:
        """The recorded settings' decision, once their token mode is counted."""
        if (
            self.recorded_decision is not None
            and self.recorded_decision.strategy == self.strategy.key
        ):
            return
        self.recorded_decision = None
        if (self.strategy.key, self._mode(self.recorded)) in self.ready:
            # its verdict and regions only (no findings shown): the artifact is not needed
            self.recorded_decision = self.strategy.decide(
                self._prepared(self.strategy), self.recorded, None
            )

    def switch_strategy(self, strategy: Strategy, settings: Settings | None = None) -> None:
        """Another strategy on the same context (its reading of the source, or `settings`)."""
        assert self.snapshot is not None
        if self.showing_after:
            self.action_toggle_after()
        self.prepared_recorded[type(self.recorded)] = self.recorded
        chosen = (
            settings
            or select(self.snapshot, {**self.overrides, "processor": strategy.key}).settings
        )
        # strategy and settings change together: a key pressed before the panel swap ends
        # (`p` then `s`) must not pair the new strategy with the old strategy's settings
        self.strategy, self.settings = strategy, chosen
        self.recorded = strategy.recorded_settings(self.snapshot)
        self.recorded_decision = None
        self._side_keys.clear()
        self._show_title()
        panel = self.query_one(SettingsPanel)
        self.run_worker(self._swap_panel(panel, chosen), exclusive=True, group="panel")

    def _carried_settings(self, strategy: Strategy) -> Settings:
        """The new strategy's reading of the source with the user's changes on top: every
        changed field whose name the new settings model has too."""
        assert self.snapshot is not None
        start = select(self.snapshot, {**self.overrides, "processor": strategy.key}).settings
        previous = self.decision.settings if self.decision is not None else None
        if previous is None:
            return start
        recorded = (
            self.recorded
            if type(self.recorded) is type(previous)
            else self.prepared_recorded.get(type(previous))
        )
        changed = {
            name: value
            for name, value in previous.model_dump().items()
            if name in type(start).model_fields
            and (recorded is None or getattr(recorded, name, value) != value)
        }
        try:
            return start.with_(**changed)
        except InspectorError:
            return start

    async def _swap_panel(self, panel: SettingsPanel, settings: Settings) -> None:
        await panel.use_model(self.strategy.settings_model)
        self.refresh_bindings()
        self.apply_settings(settings)

    # --- drawing -----------------------------------------------------------------------

    def _redraw(self) -> None:
        """Push the current decision down to every widget."""
        decision = self.decision
        if decision is None:
            return
        message_list = self.query_one(MessageList)
        if self.showing_after:
            self._redraw_after(decision)
        else:
            tokens = decision.message_tokens
            if self._shown_tokens is not tokens and self._shown_tokens != tokens:
                message_list.set_tokens(decision.message_tokens)
                self._shown_tokens = decision.message_tokens
            message_list.set_decision(decision)
            changes: list[range] = []
            if self.recorded_decision is not None:
                changes = region_changes(
                    self.recorded_decision.regions, decision.regions, message_list.row_count
                )
            message_list.set_changed(changes)
        verdict = decision_verdict(decision, self.recorded_decision, self.palette)
        moved = sum(len(r) for r in message_list.changed_ranges) if not self.showing_after else 0
        if moved:
            verdict.append(
                f"  • {moved} message{'s' if moved != 1 else ''} changed region",
                self.palette("changed"),
            )
        if not decision.exact_counting and decision.counting_note:
            verdict.append(f"\n⚠ {decision.counting_note}", self.palette("caution"))
        verdict.append_text(total_note(self.artifact, decision, self.palette))
        verdict = headline(self._source_line, verdict, self.palette)
        self.query_one("#verdict", TextPanel).update(verdict, layout=False)
        bar = self.query_one(ContextBarPanel)
        if self.showing_after and self._after_bar is not None:
            bar.show(
                self._after_bar,
                note="showing the context AFTER compression, as openJiuwen wrote it (a: back)",
                labels=AFTER_LABELS,
            )
        else:
            recorded = (
                decision_parts(self.recorded_decision)
                if self.compare and self.recorded_decision is not None
                else None
            )
            parts = decision_parts(decision)
            note = decision.gauge.note if decision.gauge is not None else ""
            bar.show(parts, recorded, note=note, labels=legend_labels(decision))
        self.schedule_side()

    def _redraw_after(self, decision: Decision) -> None:
        """The dump's context after compression, counted like the one before."""
        after = self.artifact.after or ()
        mode = str(getattr(self.settings, "token_mode", "len_div_4"))
        counter = self.counters.get(mode) or self.counters["len_div_4"]
        priced = self._after_priced.get(counter.mode)
        assert self.snapshot is not None
        if priced is None:
            priced = PricedContext(self.snapshot.system_messages, after, (), counter)
            self._after_priced[counter.mode] = priced
        message_list = self.query_one(MessageList)
        message_list.set_tokens(priced.per_message_tokens)
        self._shown_tokens = None
        prefix_count = lookup(
            self.artifact.recorded, "span.preserved_prefix", "span.preserved_prefix_count"
        )
        span_after = after_span(after, prefix_count if isinstance(prefix_count, int) else None)
        message_list.set_regions(span_after)
        gauge = decision.gauge
        fixed = gauge.fixed if gauge is not None else 0
        self._after_bar = after_parts(
            priced,
            span_after,
            fixed,
            gauge.scale if gauge is not None else max(decision.total_tokens or 0, 1),
            decision.threshold or 0,
            gauge.minimum if gauge is not None else 0,
        )

    # --- workers -----------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="count", exit_on_error=False)
    def count(self, strategy: Strategy, settings: Settings) -> None:
        """The first decision of a strategy in a token mode (counts every message; a
        cancel, Esc on its progress or a newer count, stops it at the next message)."""
        from textual.worker import get_current_worker

        worker = get_current_worker()
        try:
            with cancellable(self.counters, lambda: worker.is_cancelled):
                decision = strategy.decide(self._prepared(strategy), settings, self.artifact)
        except CountCancelled:
            return  # what was counted stays in the counters for the next time
        if worker.is_cancelled:
            return  # no one waits for it (Esc on its progress, or a newer count)
        ready = (strategy.key, strategy.counting_key(settings))
        self.post_message(self.Counted(ready, settings, decision))

    def on_context_screen_counted(self, message: Counted) -> None:
        """A mode was counted: show what was waiting for it."""
        self.ready.add(message.ready)
        if message.ready[0] == self.strategy.key and message.settings == self.settings:
            try:
                decision = self.with_pins(message.decision, self.artifact)
            except InspectorError as error:
                self.notify(f"pins: {error}", severity="error")
                decision = message.decision
            self._decided(decision, complete=True)
        elif message.ready[0] == self.strategy.key:
            self.apply_settings(self.settings)

    # --- messages from children ----------------------------------------------------------

    def on_message_list_highlighted(self, message: MessageList.Highlighted) -> None:
        """Cursor moved: show that message's detail if the Detail tab is visible."""
        if self.active_tab() == "detail":
            self._show_detail(message.index)

    def on_message_list_chosen(self, message: MessageList.Chosen) -> None:
        """Enter on a message: open the detail tab."""
        self._show_detail(message.index)
        self.action_show_tab("detail")

    def on_context_bar_panel_segment_clicked(self, message: ContextBarPanel.SegmentClicked) -> None:
        """A bar segment was clicked: go to the first message of that region."""
        decision = self.decision
        if decision is None or self.showing_after:
            return
        starts = [r.start for r in decision.regions if r.name == message.region and r.size]
        if starts:
            self.query_one(MessageList).move_to(min(starts))
            self.notify(
                f"#{min(starts)}: start of the {decision.region_label(min(starts))}", timeout=2
            )
        else:
            self.notify(
                f"{message.region}: the system messages and tools (not in the list)", timeout=2
            )

    def on_why_panel_flip_chosen(self, message: WhyPanel.FlipChosen) -> None:
        """A flip button was pressed."""
        self.action_apply_flip(message.number + 1)

    @on(Input.Submitted, "#search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.run_search(event.value)
        self.query_one("#search-bar").display = False
        self.query_one(MessageList).focus()

    # --- actions -------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Offer only what applies to this artifact (palette and footer follow)."""
        if self.snapshot is None and action not in NO_CONTEXT_ACTIONS:
            return False
        if action == "toggle_after":
            return self.artifact.after is not None
        if action == "rerun":
            return "rerun" in self.strategy.capabilities or None
        if action in ("next_match", "previous_match"):
            return bool(self.matches) or None
        if action == "apply_flip":
            return self._flip_allowed(parameters)
        if action == "pin_range":
            return not isinstance(self.focused, Input | Select)
        if action in ("scroll_side", "focus_side"):
            return self.active_tab() is not None or None
        if action == "sweep":
            return bool(self.strategy.sweep_params()) or None
        return True

    def action_back(self) -> None:
        """Leave an input (focus back on the list), close the search box, or go back."""
        if self.close_pins_prompt():
            return
        focused = self.focused
        message_list = self.query_one(MessageList)
        if focused is not None and focused is not message_list and focused.id != "search":
            if message_list.display:  # an input or a tab had the focus: back to the list
                message_list.focus()
                return
            if isinstance(focused, Input | Select):
                self.set_focus(None)
                return
        bar = self.query_one("#search-bar")
        if bar.display:
            bar.display = False
            self.query_one(MessageList).focus()
            return
        self.app.pop_screen()

    def _flip_allowed(self, parameters: tuple[object, ...]) -> bool | None:
        """`f` applies the first flip anywhere but in an input; digits only from the Why tab."""
        number = int(parameters[0]) if parameters else 1  # type: ignore[call-overload]
        if self.flips is None or number > len(self.flips):
            return None
        if isinstance(self.focused, Input | Select):
            return False
        return self.active_tab() == "why" or number == 1

    def action_show_tab(self, name: str) -> None:
        """Switch the side panel to Detail, Why or Tune (its key again: focus the tab)."""
        side = self.query_one("#side", TabbedContent)
        if side.active == f"tab-{name}" and side.display:
            self.action_focus_side()
            return
        side.active = f"tab-{name}"
        self.query_one("#side").display = True
        if not self.query_one(MessageList).display:
            self.set_class(True, "-side-only")

    def action_toggle_compare(self) -> None:
        """Show the recorded bar above the tuned one, and the Tune tab's side-by-side table."""
        self.compare = not self.compare
        if self.compare:
            self.action_show_tab("tune")
        self._redraw()

    def action_toggle_after(self) -> None:
        """For a dump: the context before compression (rebuilt) or after (as written)."""
        if self.artifact.after is None:
            self.notify("this artifact has no after-compression context", severity="warning")
            return
        self.showing_after = not self.showing_after
        messages = self.current_messages()
        self.links = tool_links(messages)
        self.results = results_by_call(messages)
        self._shown_tokens = None
        self.matches = []
        message_list = self.query_one(MessageList)
        message_list.show(messages, None, self.links)
        # pins are context indices: no mark on the context after compression
        message_list.set_pins(frozenset() if self.showing_after else self.pinned_rows())
        message_list.set_matches([])
        message_list.move_to(0)
        self._redraw()
