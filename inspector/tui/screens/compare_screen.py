"""CompareScreen: the same context under several compression strategies, side by side.

`core.compare.compare_strategies` runs in a thread worker (the hybrid replay and the
openJiuwen estimates count every message) and the result is drawn with the CLI's
`render.compare_report`, so `inspector compare` and this screen say the same thing. For a
dump, the recorded processor's column is the dump's real after-context, as in the CLI.
Escape closes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message as TextualMessage
from textual.widgets import Footer, Static
from textual.worker import Worker, WorkerState, get_current_worker

from inspector.core.artifact import Artifact
from inspector.core.compare import CompareOptions, Comparison, compare_strategies, tuning_for
from inspector.core.hybrid_config import config_from_tuning
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import PROCESSOR_KINDS, Tuning
from inspector.render.compare_report import compare_report
from inspector.tui.screens.base import InspectorScreen

#: Strategies compared by default: openJiuwen's three compressors and the hybrid pipeline.
DEFAULT_STRATEGIES: tuple[str, ...] = PROCESSOR_KINDS


def comparison_for(
    artifact: Artifact,
    tuning: Tuning,
    counters: dict[str, TokenCounter],
    processors: Sequence[str] = DEFAULT_STRATEGIES,
) -> Comparison:
    """Compare `processors` on the artifact's context under the context view's tuning.

    Budget, trigger ratio and token mode come from `tuning`; each openJiuwen processor
    keeps its own keep-recent (the recorded one for the recorded processor), hybrid uses
    the tuning's pipeline config. A dump's recorded processor is its real after-context.
    """
    snapshot = artifact.snapshot
    assert snapshot is not None
    recorded = snapshot.tuning.processor
    base = tuning.with_(processor=recorded, keep_recent=snapshot.tuning.keep_recent)
    if tuning.processor == recorded:
        base = tuning
    snapshot = dataclasses.replace(snapshot, tuning=base)
    tunings = {kind: tuning_for(snapshot, kind) for kind in processors if kind != "hybrid"}
    if tuning.processor != "hybrid" and tuning.processor in tunings:
        tunings[tuning.processor] = tuning
    # Not tuning hybrid: its window is the spec default (keep-recent counts another unit), as in the CLI.
    config = (
        config_from_tuning(tuning)
        if tuning.processor == "hybrid"
        else config_from_tuning(base, keep_recent_is_turns=False)
    )
    dump_after = artifact.after if artifact.kind == "dump" else None
    calls = artifact.recorded.get("model_calls") if artifact.recorded else None
    return compare_strategies(
        snapshot,
        list(processors),
        counters[tuning.token_mode],
        CompareOptions(
            tunings=tunings,
            hybrid_config=config,
            dump_after=dump_after,
            dump_processor=artifact.processor if dump_after is not None else None,
            dump_llm_calls=calls if isinstance(calls, int) else 1,
        ),
    )


class CompareScreen(InspectorScreen[None]):
    """The comparison table and what each strategy loses, computed in a worker."""

    BINDINGS = [
        Binding("escape", "close", "Close"),
    ]

    class Compared(TextualMessage):
        """The comparison is ready."""

        def __init__(self, comparison: Comparison) -> None:
            super().__init__()
            self.comparison = comparison

    def __init__(
        self,
        artifact: Artifact,
        tuning: Tuning,
        counters: dict[str, TokenCounter],
        processors: Sequence[str] = DEFAULT_STRATEGIES,
    ) -> None:
        super().__init__()
        self.artifact = artifact
        self.tuning = tuning
        self.counters = counters
        self.processors = tuple(processors)
        self.comparison: Comparison | None = None

    def compose(self) -> ComposeResult:
        """Title, the report in a scroll view, footer."""
        yield Static(id="compare-title")
        with VerticalScroll(id="compare-body"):
            yield Static(Text("comparing strategies …", "dim"), id="compare-report")
        yield Footer()

    def on_mount(self) -> None:
        """Say what is compared, then compute in the background."""
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append("strategies ", "bold reverse")
        title.append(f" {self.artifact.id}", "bold")
        title.append(
            f"  {', '.join(self.processors)}  ·  context_max {self.tuning.context_max:,}, "
            f"trigger {self.tuning.trigger_ratio:g}, {self.tuning.token_mode}",
            "dim",
        )
        self.query_one("#compare-title", Static).update(title)
        self.query_one("#compare-body").focus()
        self.compute()

    @work(thread=True, exclusive=True, group="compare", exit_on_error=False)
    def compute(self) -> None:
        """Run the comparison (one core call) and post it."""
        comparison = comparison_for(self.artifact, self.tuning, self.counters, self.processors)
        if not get_current_worker().is_cancelled:
            self.post_message(self.Compared(comparison))

    def on_compare_screen_compared(self, message: Compared) -> None:
        """Draw the comparison."""
        self.comparison = message.comparison
        self.restyle()

    def restyle(self) -> None:
        """Draw the comparison (again, after a theme change) in the palette."""
        if self.comparison is not None:
            source = f"{self.artifact.source} ({self.artifact.kind})"
            report = compare_report(self.comparison, source, self.palette)
            self.query_one("#compare-report", Static).update(report)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A failed comparison: the notice (base screen) and a line in place of the report."""
        super().on_worker_state_changed(event)
        if event.state == WorkerState.ERROR:
            self.query_one("#compare-report", Static).update(
                Text(f"the comparison failed: {event.worker.error}", self.palette("bad"))
            )

    def action_close(self) -> None:
        """Back to the context view."""
        self.dismiss(None)
