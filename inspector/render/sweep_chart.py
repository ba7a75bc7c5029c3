"""A terminal line chart of a sweep: total, threshold, target and minimum across one parameter.

Flip points (where the verdict changes between neighbouring values) are marked with a
vertical line; a strip under the axis shows the verdict at each value. Pure Rich.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderResult
from rich.style import Style
from rich.text import Text

from inspector.render.styles import DEFAULT_PALETTE, Palette

#: (label, drawing character, style name), drawn in this order (later ones on top).
SERIES: tuple[tuple[str, str, str], ...] = (
    ("min target", "·", "mark.min_target"),
    ("target", "•", "region.compress"),
    ("threshold", "─", "mark.threshold"),
    ("total", "━", "chart.total"),
)
HIT_STYLE = "verdict.hit"
MISS_STYLE = "verdict.miss"
FLIP_STYLE = "mark.min_target"


@dataclass(frozen=True, slots=True)
class ChartPoint:
    """One parameter value and the four numbers plotted for it."""

    value: float | int
    total: int
    threshold: int
    target: int
    min_target: int
    hit: bool
    reason: str


def format_value(value: float | int) -> str:
    """Short display of a parameter value."""
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if value else "0"
    return f"{value:,}"


def flip_indices(points: Sequence[ChartPoint]) -> list[int]:
    """Indices i where the verdict differs between point i-1 and point i."""
    return [i for i in range(1, len(points)) if points[i].hit != points[i - 1].hit]


class SweepChart:
    """Rich renderable: the chart at the available width, `height` rows of plot."""

    def __init__(
        self,
        param: str,
        points: Sequence[ChartPoint],
        current: float | int | None = None,
        cursor: int | None = None,
        height: int = 10,
        styles: Palette = DEFAULT_PALETTE,
    ) -> None:
        self.styles = styles
        self.param = param
        self.points = list(points)
        self.current = current
        self.cursor = cursor
        self.height = max(height, 4)

    def _column_of(self, index: int, width: int) -> int:
        count = len(self.points)
        if count <= 1:
            return 0
        return round(index * (width - 1) / (count - 1))

    def _point_at_column(self, column: int, width: int) -> int:
        count = len(self.points)
        if count <= 1 or width <= 1:
            return 0
        return min(round(column * (count - 1) / (width - 1)), count - 1)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """Draw the plot, the verdict strip, the axis labels and the legend."""
        if not self.points:
            yield Text("no sweep points", "dim")
            return
        axis_width = 9
        width = max(options.max_width - axis_width - 1, 10)
        top = max(max(p.total, p.threshold, p.target, p.min_target) for p in self.points)
        top = max(int(top * 1.05), 1)
        height = self.height
        pick = self.styles
        grid: list[list[tuple[str, Style | str]]] = [[(" ", "")] * width for _ in range(height)]
        flips = flip_indices(self.points)
        flip_columns = {self._column_of(i, width) for i in flips}
        for column in flip_columns:
            for row in range(height):
                grid[row][column] = ("┊", pick(FLIP_STYLE))
        for column in range(width):
            point = self.points[self._point_at_column(column, width)]
            values = (point.min_target, point.target, point.threshold, point.total)
            for (_, char, style), value in zip(SERIES, values, strict=True):
                row = height - 1 - min(int(value / top * (height - 1) + 0.5), height - 1)
                grid[row][column] = (char, pick(style))
        for row in range(height):
            level = top * (height - 1 - row) / (height - 1)
            label = (
                f"{int(level):>{axis_width - 1},} "
                if row % 3 == 0 or row == height - 1
                else " " * axis_width
            )
            line = Text(label[-axis_width:], "dim")
            line.append("│", "dim")
            for char, cell_style in grid[row]:
                line.append(char, cell_style)
            yield line
        strip = Text(" " * (axis_width - 8) + "verdict ", "dim")
        strip.append("│", "dim")
        for column in range(width):
            point = self.points[self._point_at_column(column, width)]
            strip.append("█" if point.hit else "░", pick(HIT_STYLE if point.hit else MISS_STYLE))
        yield strip
        yield self._axis_labels(width, axis_width)
        yield self._legend(flips)

    def _axis_labels(self, width: int, axis_width: int) -> Text:
        labels = [" "] * width
        styles: dict[int, Style | str] = {}

        def put(column: int, text: str, style: Style | str) -> None:
            start = max(min(column, width - len(text)), 0)
            for offset, char in enumerate(text[: width - start]):
                labels[start + offset] = char
                styles[start + offset] = style

        put(0, format_value(self.points[0].value), "dim")
        last = format_value(self.points[-1].value)
        put(width - len(last), last, "dim")
        index = -1
        if self.current is not None:
            index = min(
                range(len(self.points)),
                key=lambda i: abs(float(self.points[i].value) - float(self.current or 0)),
            )
            put(self._column_of(index, width), "▲now", self.styles("mark.now"))
        if self.cursor is not None and 0 <= self.cursor < len(self.points) and self.cursor != index:
            column = self._column_of(self.cursor, width)
            put(column, "▲" + format_value(self.points[self.cursor].value), "bold reverse")
        line = Text(" " * axis_width + " ")
        for column, char in enumerate(labels):
            line.append(char, styles.get(column, ""))
        return line

    def _legend(self, flips: Sequence[int]) -> Text:
        legend = Text(f"{self.param}: ")
        for label, char, style in reversed(SERIES):
            legend.append(char, self.styles(style))
            legend.append(f" {label}  ")
        legend.append("┊", self.styles(FLIP_STYLE))
        if flips:
            where = ", ".join(
                f"{format_value(self.points[i - 1].value)}→{format_value(self.points[i].value)}"
                for i in flips
            )
            legend.append(f" verdict flips between {where}")
        else:
            legend.append(" no flip in this range")
        return legend
