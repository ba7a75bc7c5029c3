"""ContextScreen: one context's messages in their regions, the why panel and live tuning.

The screen owns the state (artifact, engine, recorded and current tuning, evaluation,
diagnosis, flips); widgets get attributes and post past-fact messages back. A tuning change
re-splits synchronously from cached prefix sums (one frame); the diagnosis, the flips and
pricing in a not-yet-counted token mode run in thread workers.

With the HybridCompressor processor the screen replays that pipeline instead of openJiuwen's
engine: one `HybridContext` per token mode is prepared in a worker (the first decision warms
its caches), then every tuning change is one cached `decide` (milliseconds). Rows then show
each message's outcome (kept / cut by level 1 / folded / summarised) instead of regions.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message as TextualMessage
from textual.timer import Timer
from textual.widgets import Footer, Input, Static, TabbedContent, TabPane
from textual.worker import get_current_worker

from inspector.core.diagnosis import Diagnosis, diagnose
from inspector.core.engine import ContextEngine, Evaluation, PricedContext
from inspector.core.errors import InspectorError
from inspector.core.hybrid import HybridContext, HybridResult
from inspector.core.messages import Message
from inspector.core.regions import after_span, region_reason, results_by_call, tool_links
from inspector.core.strategy.selection import select
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import Tuning
from inspector.core.whatif import Flip, smallest_flips
from inspector.encoding import load_cl100k
from inspector.render.context_bar import AFTER_LABELS, BarParts, after_parts, bar_parts
from inspector.render.hybrid_report import (
    findings_text,
    verdict_text,
    water_level_table,
)
from inspector.render.hybrid_view import (
    HYBRID_BAR_LABELS,
    hybrid_bar_parts,
    hybrid_checks_table,
    hybrid_summary_line,
    hybrid_verdict_word,
    outcome_label,
    outcome_sentence,
)
from inspector.render.message_detail import message_detail, message_plain_text
from inspector.render.recorded_view import (
    lookup,
    recorded_answer,
    recorded_vs_ours,
    timeline_renderable,
)
from inspector.render.styles import REGION_LABELS
from inspector.render.verdict import (
    after_role,
    regions_lines,
    render_to_text,
    search_text,
    span_changes,
    verdict_line,
    verdict_word,
)
from inspector.render.why_report import checks_table, findings_table, why_report
from inspector.tui.rows import BrowserRow
from inspector.tui.screens.base import InspectorScreen
from inspector.tui.screens.hybrid_sweep import hybrid_config
from inspector.tui.screens.tuning_actions import TuningActions
from inspector.tui.widgets.context_bar_panel import ContextBarPanel
from inspector.tui.widgets.detail_pane import MessageDetailPane
from inspector.tui.widgets.message_list import MessageList
from inspector.tui.widgets.tuning_panel import TuningPanel
from inspector.tui.widgets.why_panel import WhyPanel, why_body

#: Seconds a tuning must stay unchanged before the diagnosis and flips are recomputed.
DIAGNOSE_DELAY = 0.05
#: What the why panel's flips section says for the hybrid pipeline.
HYBRID_FLIPS_NOTE = (
    "not available for hybrid: the sweep (s) shows where the pipeline stops for each value"
)


class ContextScreen(TuningActions, InspectorScreen[None]):
    """Messages and regions on the left; detail, why and tuning tabs on the right."""

    BINDINGS = [
        Binding("escape", "back", "Back", tooltip="Back to the browser (or close the search box)"),
        Binding(
            "w",
            "show_tab('why')",
            "Why",
            tooltip="Checks, findings, recorded vs re-evaluated, flips",
        ),
        Binding("t", "show_tab('tune')", "Tune", tooltip="Every tuning control; recorded vs tuned"),
        Binding("d", "show_tab('detail')", "Detail", tooltip="The selected message in full"),
        Binding("s", "sweep", "Sweep", tooltip="Chart a parameter across its range; flips marked"),
        Binding(
            "f", "apply_flip(1)", "Flip", tooltip="Apply the first change that flips the verdict"
        ),
        Binding("slash", "search", "Search", tooltip="Find text in messages and tool calls"),
        Binding("n", "next_match", "Next match", show=False),
        Binding("N", "previous_match", "Prev match", show=False),
        Binding(
            "greater_than_sign",
            "next_boundary",
            "Next region",
            show=False,
            tooltip="Jump to the next region start",
        ),
        Binding(
            "less_than_sign",
            "previous_boundary",
            "Prev region",
            show=False,
            tooltip="Jump to the previous region start",
        ),
        Binding(
            "a",
            "toggle_after",
            "Before/after",
            tooltip="Dump: context before (rebuilt) or after compression",
        ),
        Binding(
            "c",
            "toggle_compare",
            "Compare",
            tooltip="Recorded and tuned bars and values side by side",
        ),
        Binding(
            "C",
            "compare_strategies",
            "Strategies",
            tooltip="This context under openJiuwen's compressors and hybrid, side by side",
        ),
        Binding("r", "reset_tuning", "Reset", tooltip="Tuning back to the recorded values"),
        Binding(
            "V",
            "strategy_view",
            "Strategy view",
            show=False,
            tooltip="This context in the strategy view: every registered processor, its own settings",
        ),
        Binding(
            "right_square_bracket",
            "nudge('trigger_ratio', 0.05)",
            "Trigger +",
            show=False,
            tooltip="trigger ratio +0.05",
        ),
        Binding(
            "left_square_bracket",
            "nudge('trigger_ratio', -0.05)",
            "Trigger −",
            show=False,
            tooltip="trigger ratio −0.05",
        ),
        Binding(
            "right_curly_bracket",
            "nudge('min_target_ratio', 0.01)",
            "Min-target +",
            show=False,
            tooltip="min-target ratio +0.01",
        ),
        Binding(
            "left_curly_bracket",
            "nudge('min_target_ratio', -0.01)",
            "Min-target −",
            show=False,
            tooltip="min-target ratio −0.01",
        ),
        Binding(
            "plus,equals_sign",
            "nudge('keep_recent', 1)",
            "Keep-recent +",
            show=False,
            tooltip="keep-recent +1 message",
        ),
        Binding(
            "minus",
            "nudge('keep_recent', -1)",
            "Keep-recent −",
            show=False,
            tooltip="keep-recent −1 message",
        ),
        Binding(
            "b",
            "toggle_boundary",
            "Tool boundary",
            show=False,
            tooltip="Tool-boundary protection on/off (off: what-if)",
        ),
        Binding(
            "p",
            "cycle_processor",
            "Processor",
            show=False,
            tooltip="Next processor (its default keep-recent)",
        ),
        Binding(
            "m", "cycle_token_mode", "Token counter", show=False, tooltip="tiktoken cl100k / len//4"
        ),
        Binding(
            "y",
            "copy_message",
            "Copy message",
            show=False,
            tooltip="Selected message to the clipboard",
        ),
        Binding(
            "Y",
            "copy_why",
            "Copy why report",
            show=False,
            tooltip="The why report as text to the clipboard",
        ),
        Binding(
            "R",
            "rerun",
            "Re-run",
            show=False,
            tooltip="Run the real LLM compaction with this tuning and compare",
        ),
        Binding(
            "z",
            "toggle_side",
            "Layout",
            show=False,
            tooltip="List and panel / list only / panel only",
        ),
        *[Binding(str(k), f"apply_flip({k})", f"Apply flip {k}", show=False) for k in range(1, 10)],
    ]

    class Priced(TextualMessage):
        """A token mode finished counting."""

        def __init__(self, mode: str) -> None:
            super().__init__()
            self.mode = mode

    class Diagnosed(TextualMessage):
        """The diagnosis and flips of `tuning` are ready."""

        def __init__(self, tuning: Tuning, diagnosis: Diagnosis, flips: list[Flip]) -> None:
            super().__init__()
            self.tuning = tuning
            self.diagnosis = diagnosis
            self.flips = flips

    class HybridPrepared(TextualMessage):
        """The hybrid pipeline's context for token `mode` is prepared (caches warm)."""

        def __init__(self, mode: str, context: HybridContext) -> None:
            super().__init__()
            self.mode = mode
            self.context = context

    def __init__(self, row: BrowserRow, counters: dict[str, TokenCounter]) -> None:
        super().__init__()
        assert row.artifact is not None
        self.row = row
        self.artifact = row.artifact
        self.counters = counters
        snapshot = self.artifact.snapshot
        self.engine: ContextEngine | None = row.engine or (
            ContextEngine(snapshot, counters) if snapshot is not None else None
        )
        self.recorded_tuning: Tuning | None = snapshot.tuning if snapshot is not None else None
        self.start_tuning: Tuning | None = row.tuning or self.recorded_tuning
        self.tuning: Tuning | None = self.start_tuning
        self.evaluation: Evaluation | None = None
        self.recorded_evaluation: Evaluation | None = None
        self.diagnosis: Diagnosis | None = None
        self.flips: list[Flip] | None = None
        self.priced_modes: set[str] = set()
        if row.evaluation is not None and row.tuning is not None:
            self.priced_modes.add(row.tuning.token_mode)
        self.showing_after = False
        self.compare = False
        self.search_query = ""
        self.matches: list[int] = []
        self.links: dict[int, tuple[int, ...]] = {}
        self.results: dict[str, list[int]] = {}
        self.counting_note = load_cl100k().note
        self._shown_mode: str | None = None
        self._after_bar: BarParts | None = None
        self._after_priced: dict[str, PricedContext] = {}
        self._side_keys: dict[str, object] = {}
        self._diagnose_timer: Timer | None = None
        self._footer_has_flips = False
        #: HybridCompressor state: one prepared context per token mode, the current decision.
        self.hybrid_contexts: dict[str, HybridContext] = {}
        self.hybrid: HybridResult | None = None

    # --- layout ------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        """Verdict line, context bar, list beside tabs, search box, footer."""
        yield Static(id="context-title")
        yield Static(id="verdict")
        yield ContextBarPanel(id="bar")
        with Horizontal(id="context-body"):
            yield MessageList(id="messages")
            with TabbedContent(id="side", initial="tab-why"):
                with TabPane("Detail", id="tab-detail"):
                    yield MessageDetailPane(id="detail")
                with TabPane("Why", id="tab-why"):
                    yield WhyPanel(id="why")
                with TabPane("Tune", id="tab-tune"):
                    yield TuningPanel(id="tuning")
        with Vertical(id="search-bar"):
            yield Input(
                placeholder="search messages (Enter: find, Esc: close)", id="search", compact=True
            )
        yield Footer()

    def on_mount(self) -> None:
        """Show the context, then count and evaluate (in a worker when not yet counted)."""
        self.query_one("#search-bar").display = False
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append(f"{self.artifact.kind} ", "bold reverse")
        title.append(f" {self.artifact.id}", "bold")
        if self.artifact.session_id:
            title.append(f"  session {self.artifact.session_id}", "dim")
        title.append(f"  {self.artifact.source}", "dim")
        self.query_one("#context-title", Static).update(title, layout=False)
        messages = self.current_messages()
        self.links = tool_links(messages)
        self.results = results_by_call(messages)
        self.query_one(MessageList).show(messages, None, self.links)
        self.query_one(MessageList).focus()
        self.query_one(WhyPanel).show_recorded(
            recorded_vs_ours(self.artifact, None), timeline_renderable(self.artifact)
        )
        if self.engine is None or self.tuning is None:
            self.query_one("#verdict", Static).update(
                Text(
                    "no context available: this artifact only records what happened (see Why)",
                    "yellow",
                )
            )
            self.query_one(ContextBarPanel).display = False
            self.query_one(MessageList).display = False
            self.set_class(True, "-side-only")
            answer = recorded_answer(self.artifact)
            self.query_one(WhyPanel).show_report(
                answer or Text("no context to re-evaluate", "dim"), Text("")
            )
            self.query_one(WhyPanel).show_flips(None, available=False)
            return
        self.apply_tuning(self.tuning)

    # --- state -------------------------------------------------------------------------

    def current_messages(self) -> Sequence[Message]:
        """The messages on screen: the context, or the dump's context after compression."""
        if self.showing_after and self.artifact.after is not None:
            return self.artifact.after
        if self.artifact.snapshot is None:
            return ()
        return self.artifact.snapshot.messages

    @property
    def priced(self) -> PricedContext | None:
        """The context counted in the current token mode (None while counting)."""
        if (
            self.engine is None
            or self.tuning is None
            or self.tuning.token_mode not in self.priced_modes
        ):
            return None
        return self.engine.priced(self.tuning.token_mode)

    def apply_tuning(self, tuning: Tuning) -> None:
        """Make `tuning` current: re-split and redraw at once, diagnose in the background."""
        if self.engine is None:
            return
        self.tuning = tuning
        if tuning.token_mode not in self.priced_modes:
            self.query_one("#verdict", Static).update(
                Text(f"counting tokens ({tuning.token_mode}) …", "dim")
            )
            self.price_mode(tuning.token_mode)
            return
        priced = self.engine.priced(tuning.token_mode)
        if self.recorded_evaluation is None and self.recorded_tuning is not None:
            if self.recorded_tuning.token_mode in self.priced_modes:
                self.recorded_evaluation = self.engine.evaluate(self.recorded_tuning)
            else:
                self.price_mode(self.recorded_tuning.token_mode)
        if tuning.processor == "hybrid":
            self._apply_hybrid(tuning)
            return
        if self.hybrid is not None:
            self.hybrid = None
            self.query_one(MessageList).set_outcomes(None)
            self.refresh_bindings()
        self.evaluation = priced.evaluate(tuning)
        self.diagnosis = None
        self.flips = None
        self._redraw()
        # Debounced: a held key re-splits every frame but diagnoses once it settles.
        if self._diagnose_timer is not None:
            self._diagnose_timer.stop()
        self._diagnose_timer = self.set_timer(DIAGNOSE_DELAY, lambda: self.diagnose_current(tuning))

    def _apply_hybrid(self, tuning: Tuning) -> None:
        """Decide with the hybrid pipeline (preparing its context first, in a worker, if needed)."""
        if self._diagnose_timer is not None:
            self._diagnose_timer.stop()
        if self.showing_after:
            # The after-compression view shows openJiuwen's own result; hybrid replays the input.
            self.action_toggle_after()
        context = self.hybrid_contexts.get(tuning.token_mode)
        if context is None:
            self.query_one("#verdict", Static).update(
                Text("preparing the HybridCompressor pipeline …", "dim")
            )
            self.prepare_hybrid(tuning)
            return
        try:
            result = context.decide(hybrid_config(tuning))
        except InspectorError as error:
            self.notify(f"hybrid: {error}", severity="error")
            return
        if self.hybrid is None:
            self.refresh_bindings()  # before/after and re-run do not apply to hybrid
        self.hybrid = result
        self.evaluation = None
        self.diagnosis = None
        self.flips = []
        self._redraw()
        if self._footer_has_flips:
            self._footer_has_flips = False
            self.refresh_bindings()

    def _redraw_hybrid(self, result: HybridResult, priced: PricedContext) -> None:
        """Push the hybrid decision down: row outcomes, verdict, bar, side panel."""
        message_list = self.query_one(MessageList)
        if self._shown_mode != priced.counter.mode:
            message_list.set_tokens(priced.per_message_tokens)
            self._shown_mode = priced.counter.mode
        message_list.set_outcomes(result.outcome)
        verdict = verdict_text(result)
        verdict.append("\n")
        verdict.append_text(hybrid_summary_line(result))
        self.query_one("#verdict", Static).update(verdict, layout=False)
        context = self.hybrid_contexts[priced.counter.mode]
        _, after_level_1, fixed = context.estimates(result.config)
        self.query_one(ContextBarPanel).show(
            hybrid_bar_parts(result, after_level_1, fixed),
            note="HybridCompressor: the context after the pipeline (chars/4 estimates)",
            labels=HYBRID_BAR_LABELS,
        )
        self.refresh_side()

    def _redraw(self) -> None:
        """Push the current evaluation down to every widget."""
        if self.hybrid is not None and self.priced is not None and not self.showing_after:
            self._redraw_hybrid(self.hybrid, self.priced)
            return
        evaluation, priced = self.evaluation, self.priced
        if evaluation is None or priced is None or self.tuning is None:
            return
        message_list = self.query_one(MessageList)
        moved = 0
        if self.showing_after:
            after = self.artifact.after or ()
            after_priced = self._after_priced.get(priced.counter.mode)
            if after_priced is None:
                after_priced = PricedContext(priced.system_messages, after, (), priced.counter)
                self._after_priced[priced.counter.mode] = after_priced
            if self._shown_mode != "after:" + priced.counter.mode:
                message_list.set_tokens(after_priced.per_message_tokens)
                self._shown_mode = "after:" + priced.counter.mode
            prefix_count = lookup(
                self.artifact.recorded, "span.preserved_prefix", "span.preserved_prefix_count"
            )
            span_after = after_span(after, prefix_count if isinstance(prefix_count, int) else None)
            message_list.set_regions(span_after)
            self._after_bar = after_parts(
                after_priced,
                span_after,
                sum(priced.per_system_message_tokens) + priced.tools_tokens,
                self.tuning.context_max,
                evaluation.threshold,
                evaluation.min_target_value,
            )
        else:
            if self._shown_mode != priced.counter.mode:
                message_list.set_tokens(priced.per_message_tokens)
                self._shown_mode = priced.counter.mode
            recorded_span = self.recorded_evaluation.span if self.recorded_evaluation else None
            changes = span_changes(recorded_span, evaluation.span, priced.n)
            message_list.set_regions(evaluation.span, changes)
            moved = sum(len(r) for r in changes)
        verdict = verdict_line(evaluation, self.recorded_evaluation)
        if not self.showing_after and moved:
            verdict.append(
                f"  • {moved} message{'s' if moved != 1 else ''} changed region", "yellow"
            )
        if self.tuning.token_mode == "tiktoken_cl100k" and not priced.counter.exact:
            verdict.append(f"\n⚠ {self.counting_note}", "yellow")
        self.query_one("#verdict", Static).update(verdict, layout=False)
        recorded_parts = None
        if (
            self.compare
            and self.recorded_evaluation is not None
            and self.recorded_tuning is not None
        ):
            recorded_priced = (
                self.engine.priced(self.recorded_tuning.token_mode) if self.engine else None
            )
            if recorded_priced is not None:
                recorded_parts = bar_parts(recorded_priced, self.recorded_evaluation)
        if self.showing_after and self._after_bar is not None:
            self.query_one(ContextBarPanel).show(
                self._after_bar,
                note="showing the context AFTER compression, as openJiuwen wrote it (a: back)",
                labels=AFTER_LABELS,
            )
        else:
            self.query_one(ContextBarPanel).show(bar_parts(priced, evaluation), recorded_parts)
        self.refresh_side()

    # --- the side panel: only the visible tab is drawn ----------------------------------

    def active_tab(self) -> str | None:
        """'detail', 'why' or 'tune' when the side panel is on screen, else None."""
        side = self.query_one("#side", TabbedContent)
        if not side.display:
            return None
        return (side.active or "tab-why").removeprefix("tab-")

    def refresh_side(self, force: bool = False) -> None:
        """Redraw the visible tab if what it shows changed (hidden tabs wait until shown)."""
        tab = self.active_tab()
        if tab is None or (self.evaluation is None and self.hybrid is None) or self.tuning is None:
            return
        if tab == "detail":
            self._show_detail(self.query_one(MessageList).cursor, force)
        elif tab == "why":
            self._fill_why(force)
        elif tab == "tune":
            self._fill_tune(force)

    def _fill_tune(self, force: bool = False) -> None:
        if self.recorded_tuning is None or self.tuning is None:
            return
        if self.evaluation is None and self.hybrid is None:
            return
        key = (self.tuning, self.recorded_evaluation is not None, id(self.hybrid))
        if not force and self._side_keys.get("tune") == key:
            return
        self._side_keys["tune"] = key
        verdicts = None
        if self.recorded_evaluation is not None:
            tuned = (
                hybrid_verdict_word(self.hybrid)
                if self.hybrid is not None
                else verdict_word(self.evaluation)  # type: ignore[arg-type]
            )
            verdicts = (verdict_word(self.recorded_evaluation), tuned)
        self.query_one(TuningPanel).show(self.tuning, self.recorded_tuning, verdicts)

    def _fill_why_hybrid(self, result: HybridResult, force: bool = False) -> None:
        """The why panel for the hybrid pipeline: verdict, water levels, checks, findings."""
        key = ("hybrid", self.tuning, id(result))
        if not force and self._side_keys.get("why") == key:
            return
        self._side_keys["why"] = key
        panel = self.query_one(WhyPanel)
        panel.show_recorded(
            recorded_vs_ours(self.artifact, None), timeline_renderable(self.artifact)
        )
        verdict = verdict_text(result)
        verdict.append("\n")
        verdict.append_text(hybrid_summary_line(result))
        findings = findings_text(result) if result.findings else Text("none", "dim")
        panel.show_report(
            verdict,
            why_body(
                [
                    Text("Water level after each level", "bold underline"),
                    water_level_table(result),
                    Text("Checks", "bold underline"),
                    hybrid_checks_table(result),
                    Text("Findings", "bold underline"),
                    findings,
                ]
            ),
        )
        panel.show_flips([], unavailable=HYBRID_FLIPS_NOTE)

    def _fill_why(self, force: bool = False) -> None:
        if self.hybrid is not None:
            self._fill_why_hybrid(self.hybrid, force)
            return
        evaluation, priced = self.evaluation, self.priced
        if evaluation is None or priced is None or self.tuning is None:
            return
        diagnosis = (
            self.diagnosis
            if self.diagnosis is not None and self.diagnosis.evaluation.tuning == self.tuning
            else None
        )
        key = (
            self.tuning,
            id(diagnosis) if diagnosis else None,
            self.recorded_evaluation is not None,
        )
        if not force and self._side_keys.get("why") == key:
            return
        self._side_keys["why"] = key
        panel = self.query_one(WhyPanel)
        panel.show_recorded(
            recorded_vs_ours(self.artifact, evaluation), timeline_renderable(self.artifact)
        )
        if diagnosis is None:
            # Keep the previous report on screen until the new diagnosis lands (no flicker).
            return
        head: list[RenderableType] = [regions_lines(evaluation, priced)]
        if not diagnosis.exact_counting and self.tuning.token_mode == "tiktoken_cl100k":
            head.append(Text(f"⚠ {diagnosis.counting_note}", "yellow"))
        panel.show_report(
            Group(*head),
            why_body(
                [
                    Text("Checks", "bold underline"),
                    checks_table(diagnosis.checks),
                    Text("Findings", "bold underline"),
                    findings_table(diagnosis.findings),
                ]
            ),
        )
        panel.show_flips(self.flips)

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        """A tab came into view: draw it now."""
        self.refresh_side()

    def _show_detail(self, index: int, force: bool = False) -> None:
        messages = self.current_messages()
        if not 0 <= index < len(messages):
            return
        key = (index, self.tuning, self.showing_after, id(self.hybrid))
        if not force and self._side_keys.get("detail") == key:
            return
        self._side_keys["detail"] = key
        message = messages[index]
        if self.hybrid is not None and not self.showing_after:
            priced = self.priced
            outcome = self.hybrid.outcome(index)
            detail = message_detail(
                message,
                index,
                priced.per_message_tokens[index] if priced is not None else None,
                "outside",
                "",
                self.links.get(index, ()),
                region_label=outcome_label(outcome),
                results_by_call=self.results,
            )
            self.query_one(MessageDetailPane).show(
                Group(outcome_sentence(outcome, self.hybrid), detail)
            )
            return
        if self.showing_after:
            region = self.query_one(MessageList).region_of(index)
            detail = message_detail(
                message,
                index,
                None,
                region,
                after_role(message),
                self.links.get(index, ()),
                region_label=AFTER_LABELS.get(region),
                results_by_call=self.results,
            )
        else:
            priced, evaluation = self.priced, self.evaluation
            if priced is None or evaluation is None:
                return
            region = evaluation.span.region_of(index)
            detail = message_detail(
                message,
                index,
                priced.per_message_tokens[index],
                region,
                region_reason(priced, evaluation, index),
                self.links.get(index, ()),
                results_by_call=self.results,
            )
        self.query_one(MessageDetailPane).show(detail)

    # --- workers -----------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="price", exit_on_error=False)
    def price_mode(self, mode: str) -> None:
        """Count every message in `mode` (can take a while on huge contexts)."""
        if self.engine is not None:
            self.engine.priced(mode)
            self.post_message(self.Priced(mode))

    def on_context_screen_priced(self, message: Priced) -> None:
        """A mode was counted: evaluate what was waiting for it."""
        self.priced_modes.add(message.mode)
        if self.recorded_tuning is not None and self.recorded_tuning.token_mode == message.mode:
            self.recorded_evaluation = None
        if self.tuning is not None:
            self.apply_tuning(self.tuning)

    @work(thread=True, exclusive=True, group="hybrid", exit_on_error=False)
    def prepare_hybrid(self, tuning: Tuning) -> None:
        """Prepare the hybrid pipeline's context for `tuning`'s token mode and warm its caches."""
        snapshot = self.artifact.snapshot
        if snapshot is None:
            return
        context = HybridContext.from_snapshot(snapshot, self.counters[tuning.token_mode])
        config = hybrid_config(tuning)
        context.decide(config)
        if get_current_worker().is_cancelled:
            return
        # Warm the rule-summary parts too, so the first tuning that needs level 2 stays fast.
        context.rule_summary(config, range(len(snapshot.messages)))
        self.post_message(self.HybridPrepared(tuning.token_mode, context))

    def on_context_screen_hybrid_prepared(self, message: HybridPrepared) -> None:
        """The pipeline is ready for a mode: decide the current tuning if it still wants hybrid."""
        self.hybrid_contexts[message.mode] = message.context
        if self.tuning is not None and self.tuning.processor == "hybrid":
            self.apply_tuning(self.tuning)

    @work(thread=True, exclusive=True, group="diagnose", exit_on_error=False)
    def diagnose_current(self, tuning: Tuning) -> None:
        """Checks, findings and the smallest flips for `tuning`."""
        if self.engine is None:
            return
        diagnosis = diagnose(self.engine, tuning, self.artifact, self.counting_note)
        flips = smallest_flips(self.engine, tuning)
        self.post_message(self.Diagnosed(tuning, diagnosis, flips))

    def on_context_screen_diagnosed(self, message: Diagnosed) -> None:
        """Keep the diagnosis if it is still for the current tuning; draw it if visible."""
        if message.tuning != self.tuning:
            return
        self.diagnosis = message.diagnosis
        self.flips = message.flips
        self.refresh_side()
        if bool(self.flips) != self._footer_has_flips:
            # The footer recomposes on refresh; do it only when the Flip key changes state.
            self._footer_has_flips = bool(self.flips)
            self.refresh_bindings()

    # --- messages from children ----------------------------------------------------------

    def on_message_list_highlighted(self, message: MessageList.Highlighted) -> None:
        """Cursor moved: show that message's detail if the Detail tab is visible."""
        if self.active_tab() == "detail":
            self._show_detail(message.index)

    def on_message_list_chosen(self, message: MessageList.Chosen) -> None:
        """Enter on a message: open the detail tab."""
        self._show_detail(message.index)
        self.action_show_tab("detail")

    def on_why_panel_flip_chosen(self, message: WhyPanel.FlipChosen) -> None:
        """A flip button was pressed."""
        self.action_apply_flip(message.number + 1)

    # --- search --------------------------------------------------------------------------

    @on(Input.Submitted, "#search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.run_search(event.value)
        self.query_one("#search-bar").display = False
        self.query_one(MessageList).focus()

    def run_search(self, query: str) -> None:
        """Find `query` (case-insensitive) in content and tool calls; jump to the first match."""
        self.search_query = query.strip().lower()
        messages = self.current_messages()
        if not self.search_query:
            self.matches = []
        else:
            self.matches = [
                i for i, m in enumerate(messages) if self.search_query in search_text(m)
            ]
        message_list = self.query_one(MessageList)
        message_list.set_matches(self.matches)
        if not self.matches:
            if self.search_query:
                self.notify(f"no message contains {query!r}", severity="warning")
            return
        after = [i for i in self.matches if i >= message_list.cursor]
        message_list.move_to(after[0] if after else self.matches[0])
        self.notify(f"{len(self.matches)} matches for {query!r} (n / N)")

    # --- actions -------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Offer only what applies to this artifact (palette and footer follow)."""
        if self.engine is None and action not in ("back", "show_tab", "copy_why", "help"):
            return False
        hybrid = self.tuning is not None and self.tuning.processor == "hybrid"
        if action == "toggle_after":
            # the after view is openJiuwen's own result; hybrid replays the context before
            return self.artifact.after is not None and (not hybrid or None)
        if action == "rerun" and hybrid:
            return None  # the re-run calls openJiuwen's compaction; `inspector compare` runs hybrid's level 3
        if action in ("next_match", "previous_match"):
            return bool(self.matches) or None
        if action == "apply_flip":
            number = int(parameters[0]) if parameters else 1  # type: ignore[call-overload]
            return self.flips is not None and number <= len(self.flips) or None
        if action in (
            "rerun",
            "nudge",
            "toggle_boundary",
            "cycle_processor",
            "cycle_token_mode",
            "reset_tuning",
            "sweep",
            "toggle_compare",
            "compare_strategies",
            "strategy_view",
        ):
            return self.tuning is not None
        return True

    def action_back(self) -> None:
        """Close the search box, or go back to the browser."""
        bar = self.query_one("#search-bar")
        if bar.display:
            bar.display = False
            self.query_one(MessageList).focus()
            return
        self.app.pop_screen()

    def action_show_tab(self, name: str) -> None:
        """Switch the side panel to Detail, Why or Tune."""
        self.query_one("#side", TabbedContent).active = f"tab-{name}"
        self.query_one("#side").display = True
        if not self.query_one(MessageList).display:
            self.set_class(True, "-side-only")

    def action_search(self) -> None:
        """Open the search box."""
        self.query_one("#search-bar").display = True
        self.query_one("#search", Input).focus()

    def action_next_match(self) -> None:
        """Next search match."""
        self._step_match(1)

    def action_previous_match(self) -> None:
        """Previous search match."""
        self._step_match(-1)

    def _step_match(self, direction: int) -> None:
        if not self.matches:
            return
        message_list = self.query_one(MessageList)
        cursor = message_list.cursor
        if direction > 0:
            following = [i for i in self.matches if i > cursor]
            target = following[0] if following else self.matches[0]
        else:
            before = [i for i in self.matches if i < cursor]
            target = before[-1] if before else self.matches[-1]
        message_list.move_to(target)

    def _boundaries(self) -> list[int]:
        if self.hybrid is not None and not self.showing_after:
            result = self.hybrid
            marks = {result.recent_start, *result.folded[:1]}
            marks |= {i for i, t in enumerate(result.rows.truncations) if t.cut}
            return sorted(i for i in marks if 0 <= i < result.message_count)
        if self.evaluation is None or self.showing_after:
            return []
        span = self.evaluation.span
        return sorted(
            {start for start, end in (span.prefix, span.compress, span.tail) if end > start}
        )

    def action_next_boundary(self) -> None:
        """Jump to the start of the next region."""
        message_list = self.query_one(MessageList)
        following = [b for b in self._boundaries() if b > message_list.cursor]
        if following:
            message_list.move_to(following[0])
            self._say_region(following[0])

    def action_previous_boundary(self) -> None:
        """Jump to the start of this region, or of the previous one."""
        message_list = self.query_one(MessageList)
        before = [b for b in self._boundaries() if b < message_list.cursor]
        if before:
            message_list.move_to(before[-1])
            self._say_region(before[-1])

    def _say_region(self, index: int) -> None:
        if self.hybrid is not None and not self.showing_after:
            where = " (start of the recent window)" if index == self.hybrid.recent_start else ""
            self.notify(
                f"#{index}: {outcome_label(self.hybrid.outcome(index))}{where}", timeout=1.5
            )
            return
        if self.evaluation is not None:
            region = self.evaluation.span.region_of(index)
            self.notify(f"#{index}: start of the {REGION_LABELS[region]}", timeout=1.5)

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
        self._shown_mode = None
        self.matches = []
        message_list = self.query_one(MessageList)
        message_list.show(messages, None, self.links)
        message_list.set_matches([])
        message_list.move_to(0)
        self._redraw()

    def action_sweep(self) -> None:
        """Open the sweep view for the current tuning (the hybrid sweep for the hybrid pipeline)."""
        if (
            self.engine is None
            or self.tuning is None
            or self.tuning.token_mode not in self.priced_modes
        ):
            return
        if self.tuning.processor == "hybrid":
            self._open_hybrid_sweep(self.tuning)
            return
        from inspector.tui.screens.sweep import SweepScreen

        def chosen(tuning: Tuning | None) -> None:
            if tuning is not None:
                self.apply_tuning(tuning)

        self.app.push_screen(SweepScreen(self.engine, self.tuning), chosen)

    def _open_hybrid_sweep(self, tuning: Tuning) -> None:
        """The hybrid sweep view, or a notice while the pipeline is still being prepared."""
        context = self.hybrid_contexts.get(tuning.token_mode)
        if context is None:
            self.notify("the hybrid pipeline is still being prepared", severity="warning")
            return
        from inspector.tui.screens.hybrid_sweep import HybridSweepScreen

        def chosen(new: Tuning | None) -> None:
            if new is not None:
                self.set_tuning(
                    **{k: getattr(new, k) for k in ("trigger_ratio", "keep_recent", "context_max")}
                )

        self.app.push_screen(HybridSweepScreen(context, tuning), chosen)

    def action_compare_strategies(self) -> None:
        """Open the strategies view: this context under each compressor, side by side."""
        if self.artifact.snapshot is None or self.tuning is None:
            return
        from inspector.tui.screens.compare_screen import CompareScreen

        self.app.push_screen(CompareScreen(self.artifact, self.tuning, self.counters))

    def action_strategy_view(self) -> None:
        """Open this context in the strategy view (every registered processor)."""
        if self.artifact.snapshot is None or self.tuning is None:
            return
        from inspector.tui.screens.strategy_screen import StrategyScreen

        self.app.push_screen(StrategyScreen(self.artifact, self.counters, self._tuning_changes()))

    def action_rerun(self) -> None:
        """Open the re-run form for this context and the current tuning."""
        if self.tuning is None:
            return
        from inspector.tui.screens.rerun_screen import open_rerun

        open_rerun(self.app, self.artifact, self.tuning, counters=self.counters)

    def action_copy_message(self) -> None:
        """Copy the selected message to the clipboard."""
        messages = self.current_messages()
        index = self.query_one(MessageList).cursor
        if 0 <= index < len(messages):
            self.app.copy_to_clipboard(message_plain_text(messages[index], index))
            self.notify(f"message #{index} copied", timeout=2)

    def action_copy_why(self) -> None:
        """Copy the why report (plain text) to the clipboard."""
        self.app.copy_to_clipboard(self.why_text())
        self.notify("why report copied", timeout=2)

    def why_text(self) -> str:
        """The why report of the current tuning as plain text."""
        if self.artifact.snapshot is None or self.tuning is None:
            return render_to_text(why_report(self.artifact, None))
        selection = select(self.artifact.snapshot, self._tuning_changes())
        strategy = selection.strategy
        prepared = strategy.prepare(self.artifact.snapshot, self.counters, self.counting_note)
        decision = strategy.decide(prepared, selection.settings, self.artifact)
        flips = strategy.flips(prepared, selection.settings)
        return render_to_text(why_report(self.artifact, decision, flips))

    def _tuning_changes(self) -> dict[str, object]:
        """The current tuning as overrides of the recorded one (for the strategy protocol)."""
        assert self.tuning is not None
        changes: dict[str, object] = {"processor": self.tuning.processor}
        for name in ("trigger_ratio", "min_target_ratio", "keep_recent", "context_max"):
            changes[name] = getattr(self.tuning, name)
        changes["token_mode"] = self.tuning.token_mode
        if not self.tuning.tool_boundary:
            changes["tool_boundary"] = False
        return changes

    def action_toggle_side(self) -> None:
        """Cycle the layout: list and panel, list only, panel only (for small terminals)."""
        side, messages = self.query_one("#side"), self.query_one(MessageList)
        if side.display and messages.display:
            side.display = False
        elif messages.display:
            side.display, messages.display = True, False
        else:
            messages.display = True
            messages.focus()
        self.set_class(not messages.display, "-side-only")
