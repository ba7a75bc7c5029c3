"""StrategyScreen: one context under any strategy, through the strategy protocol only.

Messages in the strategy's regions with its per-message labels on the left; Why (the
shared why report), Tune (a panel generated from the strategy's settings model) and Detail
tabs on the right. `p` cycles every registered strategy, digits apply the smallest flips.
This screen never names a strategy: a new one appears here with no UI code. The first
decision of a strategy and token mode counts the context in a worker; later ones are cheap.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message as TextualMessage
from textual.widgets import Footer, Static, TabbedContent, TabPane

from inspector.core.artifact import Artifact
from inspector.core.errors import ConfigError, InspectorError
from inspector.core.regions import results_by_call, tool_links
from inspector.core.strategy import registry
from inspector.core.strategy.base import Decision, Flip, Prepared, Settings, Strategy
from inspector.core.strategy.selection import select
from inspector.core.tokens import TokenCounter
from inspector.encoding import load_cl100k
from inspector.render.message_detail import message_detail
from inspector.render.why_report import why_report
from inspector.tui.screens.base import InspectorScreen
from inspector.tui.widgets.message_list import MessageList
from inspector.tui.widgets.settings_panel import SettingsPanel


class StrategyScreen(InspectorScreen[None]):
    """A context decided by one registered strategy, tunable through its settings model."""

    BINDINGS = [
        Binding("escape", "back", "Back", tooltip="Back to the previous screen"),
        Binding("w", "show_tab('why')", "Why", tooltip="Checks, findings, flips"),
        Binding("t", "show_tab('tune')", "Tune", tooltip="Every setting of this processor"),
        Binding("d", "show_tab('detail')", "Detail", tooltip="The selected message in full"),
        Binding("p", "next_strategy", "Processor", tooltip="Next registered processor"),
        Binding("r", "reset", "Reset", tooltip="Settings back to the recorded values"),
        *[Binding(str(k), f"apply_flip({k})", f"Apply flip {k}", show=False) for k in range(1, 10)],
    ]

    class Decided(TextualMessage):
        """A decision (and its flips) for `settings` is ready."""

        def __init__(self, settings: Settings, decision: Decision, flips: list[Flip]) -> None:
            super().__init__()
            self.settings = settings
            self.decision = decision
            self.flips = flips

    def __init__(
        self,
        artifact: Artifact,
        counters: dict[str, TokenCounter],
        overrides: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        assert artifact.snapshot is not None
        self.artifact = artifact
        self.snapshot = artifact.snapshot
        self.counters = counters
        self.counting_note = load_cl100k().note
        selection = select(self.snapshot, overrides or {})
        self.strategy: Strategy = selection.strategy
        self.settings: Settings = selection.settings
        self.recorded: Settings = self.strategy.recorded_settings(self.snapshot)
        self.prepared: dict[str, Prepared] = {}
        self.decision: Decision | None = None
        self.flips: list[Flip] = []

    def compose(self) -> ComposeResult:
        """Title, verdict, list beside tabs, footer."""
        yield Static(id="strategy-title")
        yield Static(id="verdict")
        with Horizontal(id="context-body"):
            yield MessageList(id="messages")
            with TabbedContent(id="side", initial="tab-why"):
                with TabPane("Why", id="tab-why"), VerticalScroll():
                    yield Static(id="strategy-why")
                with TabPane("Tune", id="tab-tune"):
                    yield Static(id="tune-placeholder")
                with TabPane("Detail", id="tab-detail"), VerticalScroll():
                    yield Static(id="strategy-detail")
        yield Footer()

    async def on_mount(self) -> None:
        """Show the messages, then decide in a worker."""
        messages = self.snapshot.messages
        self.links = tool_links(messages)
        self.results = results_by_call(messages)
        message_list = self.query_one(MessageList)
        message_list.show(messages, None, self.links)
        message_list.focus()
        await self._mount_panel()
        self.decide(self.settings)

    async def _mount_panel(self) -> None:
        """The Tune tab's panel for the current strategy's settings model."""
        pane = self.query_one("#tab-tune", TabPane)
        await pane.remove_children()
        panel = SettingsPanel(self.strategy.settings_model, id="settings")
        await pane.mount(panel)
        panel.show(self.settings, self.recorded)

    # --- deciding --------------------------------------------------------------------------

    def _title(self) -> Text:
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append(f"{self.artifact.kind} ", "bold reverse")
        title.append(f" {self.artifact.id}  ", "bold")
        title.append(f"{self.strategy.processor} ({self.strategy.family})", "bold cyan")
        title.append(f"  {self.strategy.title}", "dim")
        return title

    @work(thread=True, exclusive=True, group="decide", exit_on_error=False)
    def decide(self, settings: Settings) -> None:
        """Prepare (once per strategy), decide and search the flips for `settings`."""
        strategy = self.strategy
        prepared = self.prepared.get(strategy.key)
        if prepared is None:
            prepared = strategy.prepare(self.snapshot, self.counters, self.counting_note)
            self.prepared[strategy.key] = prepared
        decision = strategy.decide(prepared, settings, self.artifact)
        flips = list(strategy.flips(prepared, settings))
        self.post_message(self.Decided(settings, decision, flips))

    def on_strategy_screen_decided(self, message: Decided) -> None:
        """Draw a decision that is still for the current settings."""
        if message.settings != self.settings:
            return
        decision = self.decision = message.decision
        self.flips = message.flips
        self.query_one("#strategy-title", Static).update(self._title())
        verdict = Text.assemble(
            (decision.verdict, "bold green" if decision.hit else "bold red"),
            "  reason ",
            (decision.reason, "bold"),
        )
        if decision.total_tokens is not None and decision.threshold is not None:
            verdict.append(f"  total {decision.total_tokens:,} / threshold {decision.threshold:,}")
        if not decision.exact_counting and decision.counting_note:
            verdict.append(f"\n⚠ {decision.counting_note}", "yellow")
        self.query_one("#verdict", Static).update(verdict)
        message_list = self.query_one(MessageList)
        message_list.set_tokens(decision.message_tokens)
        message_list.set_decision(decision)
        self.query_one("#strategy-why", Static).update(
            why_report(self.artifact, decision, self.flips)
        )
        self._show_detail(message_list.cursor)

    def apply(self, settings: Settings) -> None:
        """Make `settings` current and decide again."""
        self.settings = settings
        panel = self.query_one(SettingsPanel)
        panel.show_problem("")
        panel.show(settings, self.recorded)
        self.query_one("#verdict", Static).update(Text("deciding …", "dim"))
        self.decide(settings)

    # --- detail ------------------------------------------------------------------------------

    def _show_detail(self, index: int) -> None:
        decision = self.decision
        messages = self.snapshot.messages
        if decision is None or not 0 <= index < len(messages):
            return
        tokens = decision.message_tokens[index] if decision.message_tokens else None
        detail = message_detail(
            messages[index],
            index,
            tokens,
            decision.region_of(index),
            decision.message_notes.get(index, ""),
            self.links.get(index, ()),
            region_label=decision.message_labels.get(index) or decision.region_label(index),
            results_by_call=self.results,
        )
        self.query_one("#strategy-detail", Static).update(Group(detail))

    def on_message_list_highlighted(self, message: MessageList.Highlighted) -> None:
        """Cursor moved: that message's detail."""
        self._show_detail(message.index)

    def on_message_list_chosen(self, message: MessageList.Chosen) -> None:
        """Enter on a message: the Detail tab."""
        self._show_detail(message.index)
        self.action_show_tab("detail")

    # --- tuning ------------------------------------------------------------------------------

    def on_settings_panel_edited(self, message: SettingsPanel.Edited) -> None:
        """A control changed: validate with the settings model, apply or say what is wrong."""
        try:
            settings = self.settings.with_(**{message.field: message.value})
        except ConfigError as error:
            self.query_one(SettingsPanel).show_problem(f"{error.field}: must be {error.allowed}")
            return
        self.apply(settings)

    def action_reset(self) -> None:
        """Back to what the source recorded."""
        self.apply(self.recorded)

    async def action_apply_flip(self, number: int) -> None:
        """Apply flip `number` (1-based): a setting, or another processor."""
        if not 1 <= number <= len(self.flips):
            self.notify("no such flip", severity="warning")
            return
        flip = self.flips[number - 1]
        if flip.strategy is not None and flip.strategy != self.strategy.key:
            await self._switch(registry.get(flip.strategy), flip.settings)
        else:
            self.apply(flip.settings)
        self.notify(f"applied: {flip.sentence}", timeout=3)

    async def action_next_strategy(self) -> None:
        """The next registered strategy, reading the same source."""
        strategies = list(registry.all_strategies())
        index = next(i for i, s in enumerate(strategies) if s.key == self.strategy.key)
        following = strategies[(index + 1) % len(strategies)]
        try:
            settings = following.recorded_settings(self.snapshot)
        except InspectorError as error:
            self.notify(f"{following.processor}: {error}", severity="error")
            return
        await self._switch(following, settings)

    async def _switch(self, strategy: Strategy, settings: Settings) -> None:
        self.strategy = strategy
        self.recorded = strategy.recorded_settings(self.snapshot)
        self.settings = settings
        self.decision = None
        await self._mount_panel()
        self.query_one("#verdict", Static).update(
            Text(f"deciding with {strategy.processor} …", "dim")
        )
        self.decide(settings)

    # --- navigation --------------------------------------------------------------------------

    def action_show_tab(self, name: str) -> None:
        """Switch the side panel."""
        self.query_one("#side", TabbedContent).active = f"tab-{name}"

    def action_back(self) -> None:
        """Back to the previous screen."""
        self.app.pop_screen()
