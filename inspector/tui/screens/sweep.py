"""SweepScreen: one parameter swept across its range, drawn as a chart with flip points.

Left/right pick a point, Enter applies its value to the context view's tuning (the screen
is dismissed with the new Tuning), Escape closes without change.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Static

from inspector.core.engine import ContextEngine
from inspector.core.tuning import Tuning
from inspector.core.whatif import (
    SWEEP_PARAMS,
    SweepPoint,
    default_sweep_values,
    flip_points,
    smallest_flips,
    sweep,
)
from inspector.render.sweep_chart import ChartPoint, SweepChart, format_value
from inspector.tui.screens.base import InspectorScreen


def chart_points(points: list[SweepPoint]) -> list[ChartPoint]:
    """The four plotted numbers of each sweep point."""
    return [
        ChartPoint(
            value=p.value,
            total=p.evaluation.total_tokens,
            threshold=p.evaluation.threshold,
            target=p.evaluation.span_target_tokens,
            min_target=p.evaluation.min_target_value,
            hit=p.evaluation.hit,
            reason=p.evaluation.reason,
        )
        for p in points
    ]


class SweepScreen(InspectorScreen[Tuning | None]):
    """The sweep chart of the current context and tuning."""

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("tab", "next_param", "Parameter"),
        Binding("shift+tab", "previous_param", "Prev parameter", show=False),
        Binding("left,h", "move(-1)", "◀", show=False),
        Binding("right,l", "move(1)", "▶", show=False),
        Binding("f", "next_flip", "Next flip"),
        Binding("enter", "apply", "Apply value"),
        *[
            Binding(str(i + 1), f"choose_param({i})", name, show=False)
            for i, name in enumerate(SWEEP_PARAMS)
        ],
    ]

    def __init__(self, engine: ContextEngine, tuning: Tuning, param: str = "trigger_ratio") -> None:
        super().__init__()
        self.engine = engine
        self.tuning = tuning
        self.param = param
        self.points: list[SweepPoint] = []
        self.cursor = 0

    def compose(self) -> ComposeResult:
        """Parameter tabs, chart, cursor line, footer."""
        yield Static(id="sweep-params")
        yield Static(id="sweep-chart")
        yield Static(id="sweep-point")
        yield Footer()

    def on_mount(self) -> None:
        """Compute the first sweep."""
        self.compute()

    def compute(self) -> None:
        """Sweep the chosen parameter (each point is an O(1) re-split) and redraw."""
        values = set(default_sweep_values(self.engine, self.tuning, self.param))
        # The exact flip point is rarely on the grid: add it so `f` lands on it.
        values |= {
            f.value for f in smallest_flips(self.engine, self.tuning) if f.param == self.param
        }
        self.points = sweep(self.engine, self.tuning, self.param, sorted(values))
        current = getattr(self.tuning, self.param)
        self.cursor = min(
            range(len(self.points)), key=lambda i: abs(float(self.points[i].value) - float(current))
        )
        self.redraw()

    def redraw(self) -> None:
        """Draw the parameter line, the chart and the point under the cursor."""
        params = Text()
        for number, name in enumerate(SWEEP_PARAMS, start=1):
            style = "bold reverse" if name == self.param else "dim"
            params.append(f" {number} {name} ", style)
            params.append(" ")
        params.append(" ←/→ pick, Enter apply", "dim")
        self.query_one("#sweep-params", Static).update(params)
        height = max(self.size.height - 10, 5)
        chart = SweepChart(
            self.param,
            chart_points(self.points),
            getattr(self.tuning, self.param),
            self.cursor,
            height=height,
        )
        self.query_one("#sweep-chart", Static).update(chart)
        point = self.points[self.cursor]
        ev = point.evaluation
        line = Text()
        line.append(f"{self.param} = {format_value(point.value)}: ", "bold")
        line.append(
            "compresses" if ev.hit else f"does not compress ({ev.reason})",
            "green" if ev.hit else "red",
        )
        line.append(
            f"  total {ev.total_tokens:,}  threshold {ev.threshold:,}  target {ev.span_target_tokens:,}  "
            f"min {ev.min_target_value:,}"
        )
        flips = flip_points(self.points)
        if flips:
            line.append(
                "\nflips: "
                + ", ".join(
                    f"{format_value(self.points[i - 1].value)}→{format_value(self.points[i].value)}"
                    for i in flips
                ),
                "bold red",
            )
        self.query_one("#sweep-point", Static).update(line)

    def on_resize(self) -> None:
        """Redraw the chart at the new height."""
        if self.points:
            self.redraw()

    def action_choose_param(self, index: int) -> None:
        """Sweep parameter number `index`."""
        self.param = SWEEP_PARAMS[index]
        self.compute()

    def action_next_param(self) -> None:
        """Sweep the next parameter."""
        self.action_choose_param((SWEEP_PARAMS.index(self.param) + 1) % len(SWEEP_PARAMS))

    def action_previous_param(self) -> None:
        """Sweep the previous parameter."""
        self.action_choose_param((SWEEP_PARAMS.index(self.param) - 1) % len(SWEEP_PARAMS))

    def action_move(self, step: int) -> None:
        """Move the cursor along the sweep."""
        self.cursor = min(max(self.cursor + step, 0), len(self.points) - 1)
        self.redraw()

    def flip_targets(self) -> list[int]:
        """At each flip, the point on the side whose verdict differs from the current tuning's."""
        current_hit = self.engine.evaluate(self.tuning).hit
        targets = []
        for index in flip_points(self.points):
            before = self.points[index - 1]
            targets.append(index - 1 if before.evaluation.hit != current_hit else index)
        return targets

    def action_next_flip(self) -> None:
        """Move to the next value that flips the current verdict."""
        targets = self.flip_targets()
        if not targets:
            self.notify("the verdict does not flip in this range", severity="warning")
            return
        following = [i for i in targets if i > self.cursor]
        self.cursor = following[0] if following else targets[0]
        self.redraw()

    def action_apply(self) -> None:
        """Use the value under the cursor in the context view."""
        value = self.points[self.cursor].value
        self.dismiss(self.tuning.with_(**{self.param: value}))

    def action_close(self) -> None:
        """Back without changing anything."""
        self.dismiss(None)
