"""CompareScreen: the same context under several compression strategies, side by side.

`core.compare.compare_strategies` runs in a thread worker (the hybrid replay and the
openJiuwen estimates count every message) and the result is drawn with the CLI's
`render.compare_report`, so `inspector compare` and this screen say the same thing. For a
dump, the recorded processor's column is the dump's real after-context, as in the CLI.
Escape closes.
"""

from __future__ import annotations

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
from inspector.core.compare import (
    CompareEntry,
    CompareOptions,
    Comparison,
    artifact_afters,
    compare_strategies,
)
from inspector.core.hybrid_facts import Facts
from inspector.core.pins import format_pins
from inspector.core.tokens import TokenCounter
from inspector.render.compare_report import compare_report
from inspector.tui.screens.base import InspectorScreen


def comparison_for(
    artifact: Artifact,
    entries: Sequence[CompareEntry],
    counters: dict[str, TokenCounter],
    mode: str,
    pins: frozenset[int] = frozenset(),
    facts: Facts | None = None,
) -> Comparison:
    """Compare the strategies of `entries` on the artifact's context (columns counted with
    `counters[mode]`); a dump's recorded processor is its real after-context; `pins`: the
    messages kept verbatim (the what-if of `core.pins`, as `inspector compare --pin`);
    `facts`: the context's, when already extracted."""
    snapshot = artifact.snapshot
    assert snapshot is not None
    counter = counters[mode]
    options = CompareOptions(afters=artifact_afters(artifact, counter), pins=pins, facts=facts)
    return compare_strategies(snapshot, entries, counters, counter, options)


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
        entries: Sequence[CompareEntry],
        counters: dict[str, TokenCounter],
        mode: str,
        pins: frozenset[int] = frozenset(),
    ) -> None:
        """`entries`: the columns, the context view's strategy and settings first; `mode`:
        the token counter the columns are counted with; `pins`: messages kept verbatim."""
        super().__init__()
        self.artifact = artifact
        self.entries = tuple(entries)
        self.counters = counters
        self.mode = mode
        self.pins = pins
        self.comparison: Comparison | None = None

    def compose(self) -> ComposeResult:
        """Title, the report in a scroll view, footer."""
        yield Static(id="compare-title", markup=False)
        with VerticalScroll(id="compare-body"):
            yield Static(Text("comparing strategies …", "dim"), id="compare-report", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        """Say what is compared, then compute in the background."""
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append("strategies ", "bold reverse")
        title.append(f" {self.artifact.id}", "bold")
        names = ", ".join(entry.strategy.key for entry in self.entries)
        title.append(f"  {names}  ·  counted with {self.mode}", "dim")
        if self.pins:
            title.append(f"  ·  pinned {format_pins(self.pins)} (what-if)", "bold")
        self.query_one("#compare-title", Static).update(title)
        self.query_one("#compare-body").focus()
        self.compute()

    @work(thread=True, exclusive=True, group="compare", exit_on_error=False)
    def compute(self) -> None:
        """Run the comparison (one core call) and post it."""
        comparison = comparison_for(
            self.artifact, self.entries, self.counters, self.mode, self.pins
        )
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
