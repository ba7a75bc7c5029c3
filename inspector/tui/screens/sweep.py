"""SweepScreen: one setting of the current strategy swept across its range, drawn as a chart
with the points where the decision changes.

Works for every strategy through the protocol (`sweep_params`, `sweep`, `flips`). Left/right
pick a point, Enter applies its value (the screen is dismissed with the new settings),
Escape closes without change.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Static

from inspector.core.strategy.base import (
    Decision,
    Prepared,
    Settings,
    Strategy,
    SweepPoint,
    flip_indices,
)
from inspector.render.sweep_chart import ChartPoint, SweepChart, format_value
from inspector.tui.screens.base import InspectorScreen


def _number(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def chart_points(points: list[SweepPoint]) -> list[ChartPoint]:
    """The four plotted numbers of each sweep point."""
    out = []
    for point in points:
        decision = point.decision
        out.append(
            ChartPoint(
                value=point.value,
                total=_number(decision.total_tokens),
                threshold=_number(decision.threshold),
                target=_number(decision.numbers.get("span_target_tokens", decision.target_tokens)),
                min_target=_number(
                    decision.numbers.get("min_target_value", decision.min_target_tokens)
                ),
                hit=decision.hit,
                reason=decision.reason,
            )
        )
    return out


def verdict_words(decision: Decision) -> str:
    """What the decision is, in a few words."""
    return decision.verdict.lower() + ("" if decision.hit else f" ({decision.reason})")


class SweepScreen(InspectorScreen[Settings | None]):
    """The sweep chart of the current context, strategy and settings."""

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("tab", "next_param", "Parameter"),
        Binding("shift+tab", "previous_param", "Prev parameter", show=False),
        Binding("left,h", "move(-1)", "◀", show=False),
        Binding("right,l", "move(1)", "▶", show=False),
        Binding("f", "next_flip", "Next flip"),
        Binding("enter", "apply", "Apply value"),
        *[
            Binding(str(i + 1), f"choose_param({i})", f"Parameter {i + 1}", show=False)
            for i in range(9)
        ],
    ]

    def __init__(
        self,
        strategy: Strategy,
        prepared: Prepared,
        settings: Settings,
        param: str | None = None,
    ) -> None:
        super().__init__()
        self.strategy = strategy
        self.prepared = prepared
        self.settings = settings
        self.params = list(strategy.sweep_params())
        self.param = param if param in self.params else self.params[0]
        self.points: list[SweepPoint] = []
        self.cursor = 0
        self.base: Decision | None = None

    def compose(self) -> ComposeResult:
        """Parameter tabs, chart, cursor line, footer."""
        yield Static(id="sweep-params", markup=False)
        yield Static(id="sweep-chart", markup=False)
        yield Static(id="sweep-point", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        """Compute the first sweep."""
        self.compute()

    def compute(self) -> None:
        """Sweep the chosen parameter and redraw; the exact flip points join the grid."""
        self.base = self.strategy.decide(self.prepared, self.settings)
        grid = [
            p.value for p in self.strategy.sweep(self.prepared, self.settings, self.param, None)
        ]
        exact = [
            f.value
            for f in self.strategy.flips(self.prepared, self.settings)
            if f.param == self.param and f.strategy is None
        ]
        values = sorted(set(grid) | set(exact) | {getattr(self.settings, self.param)})
        self.points = list(self.strategy.sweep(self.prepared, self.settings, self.param, values))
        current = getattr(self.settings, self.param)
        self.cursor = min(
            range(len(self.points)), key=lambda i: abs(float(self.points[i].value) - float(current))
        )
        self.redraw()

    def restyle(self) -> None:
        """The theme changed: draw the chart again in its palette."""
        if self.points:
            self.redraw()

    def redraw(self) -> None:
        """Draw the parameter line, the chart and the point under the cursor."""
        params = Text()
        for number, name in enumerate(self.params, start=1):
            style = "bold reverse" if name == self.param else "dim"
            params.append(f" {number} {name} ", style)
            params.append(" ")
        params.append(" ←/→ pick, Enter apply", "dim")
        self.query_one("#sweep-params", Static).update(params)
        height = max(self.size.height - 10, 5)
        chart = SweepChart(
            self.param,
            chart_points(self.points),
            getattr(self.settings, self.param),
            self.cursor,
            height=height,
            styles=self.palette,
        )
        self.query_one("#sweep-chart", Static).update(chart)
        point = self.points[self.cursor]
        decision = point.decision
        line = Text()
        line.append(f"{self.param} = {format_value(point.value)}: ", "bold")
        line.append(
            verdict_words(decision), self.palette("verdict.hit" if decision.hit else "verdict.miss")
        )
        if decision.total_tokens is not None and decision.threshold is not None:
            line.append(f"  total {decision.total_tokens:,}  threshold {decision.threshold:,}")
        if decision.summary:
            line.append(f"\n{decision.summary}", "dim")
        flips = flip_indices(self.points)
        if flips:
            line.append(
                "\nflips: "
                + ", ".join(
                    f"{format_value(self.points[i - 1].value)}→{format_value(self.points[i].value)}"
                    for i in flips
                ),
                self.palette("mark.min_target"),
            )
        self.query_one("#sweep-point", Static).update(line)

    def on_resize(self) -> None:
        """Redraw the chart at the new height."""
        if self.points:
            self.redraw()

    def action_choose_param(self, index: int) -> None:
        """Sweep parameter number `index`."""
        if 0 <= index < len(self.params):
            self.param = self.params[index]
            self.compute()

    def action_next_param(self) -> None:
        """Sweep the next parameter."""
        self.action_choose_param((self.params.index(self.param) + 1) % len(self.params))

    def action_previous_param(self) -> None:
        """Sweep the previous parameter."""
        self.action_choose_param((self.params.index(self.param) - 1) % len(self.params))

    def action_move(self, step: int) -> None:
        """Move the cursor along the sweep."""
        self.cursor = min(max(self.cursor + step, 0), len(self.points) - 1)
        self.redraw()

    def flip_targets(self) -> list[int]:
        """At each change, the point on the side whose decision differs from the current one."""
        assert self.base is not None
        current = (self.base.hit, self.base.reason, self.base.verdict)
        targets = []
        for index in flip_indices(self.points):
            before = self.points[index - 1].decision
            targets.append(
                index - 1 if (before.hit, before.reason, before.verdict) != current else index
            )
        return targets

    def action_next_flip(self) -> None:
        """Move to the next value that changes the current decision."""
        targets = self.flip_targets()
        if not targets:
            self.notify("the decision does not change in this range", severity="warning")
            return
        following = [i for i in targets if i > self.cursor]
        self.cursor = following[0] if following else targets[0]
        self.redraw()

    def action_apply(self) -> None:
        """Use the value under the cursor in the context view."""
        value = self.points[self.cursor].value
        self.dismiss(self.settings.with_(**{self.param: value}))

    def action_close(self) -> None:
        """Back without changing anything."""
        self.dismiss(None)
