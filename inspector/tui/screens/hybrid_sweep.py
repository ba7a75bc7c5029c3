"""HybridSweepScreen: one tuning parameter swept through the HybridCompressor pipeline.

Per value: the water level as loaded and after, where the pipeline stops and why; rows where
the stopping level changes are marked ⇅. Up/down pick a value, Enter applies it to the
context view (the screen is dismissed with the new Tuning), Escape closes without change.
Each point is one `HybridContext.decide` on the already prepared context (milliseconds),
so the sweep runs on the UI thread.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Static

from inspector.core.hybrid import (
    HybridContext,
    HybridResult,
    default_hybrid_sweep_values,
    hybrid_flip_points,
)
from inspector.core.hybrid_config import HybridConfig, config_from_tuning
from inspector.core.tuning import Tuning
from inspector.render.hybrid_report import hybrid_sweep_table
from inspector.tui.screens.base import InspectorScreen

#: Tuning parameters the hybrid sweep offers, and the HybridConfig field each one sets.
HYBRID_TUNING_PARAMS: dict[str, str] = {
    "trigger_ratio": "compression_threshold",
    "keep_recent": "preserve_recent_turns",
    "context_max": "max_context_tokens",
}


def hybrid_config(tuning: Tuning) -> HybridConfig:
    """The pipeline's config for a tuning: budget, ratio, and keep-recent as turns (0: spec default 5)."""
    return config_from_tuning(tuning)


def hybrid_sweep_values(context_config: HybridConfig, param: str) -> list[Any]:
    """The swept values; keep_recent starts at 1 (0 maps to the spec default of 5 turns)."""
    values = default_hybrid_sweep_values(context_config, param)
    if param == "keep_recent":
        values = [v for v in values if v >= 1]
    if param == "trigger_ratio":
        values = [v for v in values if v < 1]  # a Tuning's trigger ratio is below 1
    return values


class HybridSweepScreen(InspectorScreen[Tuning | None]):
    """The hybrid sweep table of the current context and tuning."""

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("tab", "next_param", "Parameter"),
        Binding("up,k", "move(-1)", "▲", show=False),
        Binding("down,j", "move(1)", "▼", show=False),
        Binding("enter", "apply", "Apply value"),
    ]

    def __init__(
        self, context: HybridContext, tuning: Tuning, param: str = "trigger_ratio"
    ) -> None:
        super().__init__()
        self.context = context
        self.tuning = tuning
        self.param = param
        self.points: list[tuple[Any, HybridResult]] = []
        self.cursor = 0

    def compose(self) -> ComposeResult:
        """Parameter line, the table, the point under the cursor, footer."""
        yield Static(id="hybrid-sweep-params")
        with VerticalScroll(id="hybrid-sweep-body"):
            yield Static(id="hybrid-sweep-table")
        yield Static(id="hybrid-sweep-point")
        yield Footer()

    def on_mount(self) -> None:
        """Compute the first sweep."""
        self.compute()

    def compute(self) -> None:
        """Decide the pipeline at each value of the chosen parameter and redraw."""
        config = hybrid_config(self.tuning)
        field = HYBRID_TUNING_PARAMS[self.param]
        self.points = [
            (value, self.context.decide(config.with_(**{field: value})))
            for value in hybrid_sweep_values(config, self.param)
        ]
        current = getattr(config, field)
        self.cursor = min(
            range(len(self.points)),
            key=lambda i: abs(float(self.points[i][0]) - float(current)),
        )
        self.redraw()

    def redraw(self) -> None:
        """Draw the parameter line, the table and the point under the cursor."""
        params = Text()
        for name in HYBRID_TUNING_PARAMS:
            params.append(f" {name} ", "bold reverse" if name == self.param else "dim")
            params.append(" ")
        params.append(" Tab: parameter  ↑/↓ pick  Enter apply", "dim")
        self.query_one("#hybrid-sweep-params", Static).update(params)
        field = HYBRID_TUNING_PARAMS[self.param]
        current = getattr(hybrid_config(self.tuning), field)
        flips = set(hybrid_flip_points(self.points))
        table = hybrid_sweep_table("HybridCompressor", self.param, self.points, flips, current)
        table.rows[self.cursor].style = "reverse"
        self.query_one("#hybrid-sweep-table", Static).update(table)
        value, result = self.points[self.cursor]
        line = Text()
        line.append(f"▶ {self.param} = {value}: ", "bold")
        line.append(
            f"stops at level {result.stopped_at} ({result.reason})",
            "red" if result.reason == "still_above_threshold" else "green",
        )
        line.append(
            f"  estimate {result.estimate_before:,} → {result.estimate_after:,}, "
            f"threshold {result.threshold:,}, {result.llm_calls} LLM calls"
        )
        self.query_one("#hybrid-sweep-point", Static).update(line)

    def action_next_param(self) -> None:
        """Sweep the next parameter."""
        names = list(HYBRID_TUNING_PARAMS)
        self.param = names[(names.index(self.param) + 1) % len(names)]
        self.compute()

    def action_move(self, step: int) -> None:
        """Move the cursor along the sweep."""
        self.cursor = min(max(self.cursor + step, 0), len(self.points) - 1)
        self.redraw()

    def action_apply(self) -> None:
        """Use the value under the cursor in the context view."""
        value = self.points[self.cursor][0]
        self.dismiss(self.tuning.with_(**{self.param: value}))

    def action_close(self) -> None:
        """Back without changing anything."""
        self.dismiss(None)
