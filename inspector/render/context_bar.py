"""The context bar: the window drawn to scale as prefix / compress / tail / free space.

A Rich renderable shared by the TUI and any report. The fixed part (system messages and
tools, never compressed) is drawn as `outside`; a threshold mark and a minimum-target mark
sit on the line below. Must not import Textual.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field

from rich.console import Console, ConsoleOptions, RenderResult
from rich.style import Style
from rich.text import Text

from inspector.core.engine import PricedContext, Span
from inspector.core.strategy.base import Decision, Gauge
from inspector.render.styles import DEFAULT_PALETTE, REGION_LABELS, Palette

BAR_ORDER: tuple[str, ...] = ("outside", "prefix", "compress", "tail")
#: Style names of the two marks.
THRESHOLD_STYLE = "mark.threshold"
MIN_TARGET_STYLE = "mark.min_target"
SHORT_LABELS = {
    "outside": "sys",
    "pinned": "pinned",
    "prefix": "prefix",
    "compress": "compress",
    "tail": "tail",
    "free": "free",
    "summary": "summary",
    "fold": "fold",
    "offload": "offload",
}


@dataclass(frozen=True, slots=True)
class BarParts:
    """Token counts of each drawn segment and the marks, all in tokens."""

    #: (region name, tokens) in drawing order; the first is the fixed part ("outside").
    segments: tuple[tuple[str, int], ...]
    total: int
    threshold: int
    min_target: int
    context_max: int
    hit: bool
    reason: str
    #: Tokens before the part the minimum-target mark is measured from.
    min_start: int = 0
    labels: Mapping[str, str] = field(default_factory=dict)


def gauge_parts(gauge: Gauge, hit: bool, reason: str) -> BarParts:
    """Bar parts of a strategy's gauge."""
    segments = (("outside", gauge.fixed), *gauge.parts)
    min_start = gauge.fixed
    for name, tokens in gauge.parts:
        if name == "compress":
            break
        min_start += tokens
    return BarParts(
        segments,
        gauge.total,
        gauge.threshold,
        gauge.minimum,
        gauge.scale,
        hit,
        reason,
        min_start,
        dict(gauge.labels),
    )


def decision_parts(decision: Decision) -> BarParts | None:
    """Bar parts of a decision (None when the strategy draws no gauge)."""
    if decision.gauge is None:
        return None
    parts = gauge_parts(decision.gauge, decision.hit, decision.reason)
    pinned = decision.numbers.get("pinned_tokens")
    outside = parts.segments[0][1]
    if isinstance(pinned, int) and 0 < pinned <= outside:
        # pins are held beside the system messages: their own legend entry, not "sys"
        segments = (("outside", outside - pinned), ("pinned", pinned), *parts.segments[1:])
        parts = dataclasses.replace(parts, segments=segments)
    return parts


#: Legend labels for a context after compression (the compress slot holds the new messages).
AFTER_LABELS = {"prefix": "kept prefix", "compress": "memory+recovered", "tail": "kept tail"}


def after_parts(
    priced_after: PricedContext,
    span: Span,
    outside: int,
    context_max: int,
    threshold: int,
    min_target: int,
) -> BarParts:
    """Bar parts of the context after compression, counted like the one before."""
    prefix = priced_after.count_range(*span.prefix)
    new = priced_after.count_range(*span.compress)
    tail = priced_after.count_range(*span.tail)
    return BarParts(
        (("outside", outside), ("prefix", prefix), ("compress", new), ("tail", tail)),
        outside + prefix + new + tail,
        threshold,
        min_target,
        context_max,
        False,
        "after",
        outside + prefix,
        AFTER_LABELS,
    )


def _columns(parts: BarParts, width: int) -> tuple[list[str], float]:
    """Region name for each of `width` columns, and tokens per column."""
    scale_tokens = max(parts.context_max, parts.total, 1)
    per_column = scale_tokens / width
    counted = sum(tokens for _, tokens in parts.segments)
    # The trigger total may come from a usage baseline; stretch the parts to end at it.
    factor = parts.total / counted if counted else 0.0
    columns: list[str] = []
    position = 0.0
    for name, tokens in parts.segments:
        if tokens <= 0:
            continue
        position += tokens * factor
        end = round(position / per_column)
        end = max(end, len(columns) + 1)
        columns.extend([name] * (min(end, width) - len(columns)))
    columns.extend(["free"] * (width - len(columns)))
    return columns[:width], per_column


def stretch_note(parts: BarParts, short: bool = False) -> str:
    """Why the segments do not add up to the total, when they do not (else '').

    The trigger total may come from a usage baseline (the model's count of the last call)
    while the segments are counted message by message: the bar is stretched to the total.
    """
    counted = sum(tokens for _, tokens in parts.segments)
    if not counted or counted == parts.total:
        return ""
    if short:
        return f"Σ {counted:,} ≠ total {parts.total:,}"
    return (
        f"segments sum to {counted:,}, the total {parts.total:,} comes from the recorded usage:"
        " the bar is drawn to the total"
    )


def _mark_column(tokens: float, per_column: float, width: int) -> int:
    return min(max(int(tokens / per_column), 0), width - 1)


class ContextBar:
    """Rich renderable: the bar, a line of marks and a legend with the numbers."""

    def __init__(
        self,
        parts: BarParts,
        title: str | None = None,
        legend: bool = True,
        labels: Mapping[str, str] | None = None,
        styles: Palette = DEFAULT_PALETTE,
    ) -> None:
        self.styles = styles
        self.parts = parts
        self.title = title
        self.legend = legend
        self.labels = {**parts.labels, **(labels or {})}

    def _region(self, name: str) -> Style:
        """A segment's style (pinned messages are kept like a preserved prefix)."""
        return self.styles.region(name, fallback="region.prefix" if name == "pinned" else "plain")

    def bar_text(self, width: int) -> Text:
        """The bar and the marks line as one Text of two lines."""
        parts = self.parts
        width = max(width, 10)
        columns, per_column = _columns(parts, width)
        threshold_style = self.styles(THRESHOLD_STYLE)
        min_target_style = self.styles(MIN_TARGET_STYLE)
        bar = Text()
        for name, run in itertools.groupby(columns):  # one span per run: a key redraws it
            bar.append(("░" if name == "free" else "█") * len(list(run)), self._region(name))
        marks = [" "] * width
        mark_styles: dict[int, Style] = {}
        min_at = -1
        threshold_at = _mark_column(parts.threshold, per_column, width)
        if parts.min_target > 0:
            start = parts.min_start
            counted = sum(tokens for _, tokens in parts.segments)
            factor = parts.total / counted if counted else 1.0
            min_at = _mark_column((start * factor) + parts.min_target, per_column, width)
            marks[min_at] = "△"
            mark_styles[min_at] = min_target_style
        marks[threshold_at] = "▲"
        mark_styles[threshold_at] = threshold_style
        line = Text("".join(marks))
        for index, style in mark_styles.items():
            line.stylize(style, index, index + 1)
        label = f" threshold {parts.threshold:,}"
        if threshold_at + 1 + len(label) <= width and all(
            c == " " for c in marks[threshold_at + 1 : threshold_at + 1 + len(label)]
        ):
            line = (
                line[: threshold_at + 1]
                + Text(label, threshold_style)
                + line[threshold_at + 1 + len(label) :]
            )
        elif threshold_at - len(label) >= 0:
            text = f"threshold {parts.threshold:,} "
            line = (
                line[: threshold_at - len(text)] + Text(text, threshold_style) + line[threshold_at:]
            )
        if parts.min_target > 0:
            min_label = f" min {parts.min_target:,}"
            plain = line.plain
            if (
                min_at + 1 + len(min_label) <= width
                and not plain[min_at + 1 : min_at + 1 + len(min_label)].strip()
            ):
                line = (
                    line[: min_at + 1]
                    + Text(min_label, min_target_style)
                    + line[min_at + 1 + len(min_label) :]
                )
        out = Text()
        out.append_text(bar)
        out.append("\n")
        out.append_text(line)
        return out

    def legend_lines(self, width: int) -> list[Text]:
        """The legend at `width`: the long one when it fits, else the short one; when even
        that does not fit, its explanation of the total goes to a second line (not cut)."""
        long = self.legend_text()
        if long.cell_len <= width:
            return [long]
        short = self.legend_text(short=True)
        note = stretch_note(self.parts, short=True)
        if short.cell_len <= width or not note:
            return [short]
        return [
            self.legend_text(short=True, note=False),
            Text(
                f"{note} (usage total)", self.styles("caution"), no_wrap=True, overflow="ellipsis"
            ),
        ]

    def legend_text(self, short: bool = False, note: bool = True) -> Text:
        """One line naming each segment with its tokens; `short` fits 80 columns; `note`:
        with the explanation of a total the segments do not add up to."""
        parts = self.parts
        names = {
            **(
                SHORT_LABELS
                if short
                else {
                    **REGION_LABELS,
                    "outside": "system+tools",
                    "pinned": "pinned (kept verbatim)",
                }
            ),
            **self.labels,
        }
        legend = Text(no_wrap=True, overflow="ellipsis")
        summed: dict[str, int] = {}  # runs of one region (a strategy's many) added up
        for name, tokens in parts.segments:
            summed[name] = summed.get(name, 0) + tokens
        for name, tokens in summed.items():
            legend.append("■ ", self._region(name))
            legend.append(f"{names.get(name, name)} {tokens:,}" + (" " if short else "  "))
        free = max(parts.context_max - parts.total, 0)
        legend.append("░ ", self.styles.region("free"))
        legend.append(f"free {free:,}  ")
        if short:
            if note and (said := stretch_note(parts, short=True)):
                legend.append(f"{said} (usage total)", self.styles("caution"))
            return legend
        legend.append("▲", self.styles(THRESHOLD_STYLE))
        legend.append(
            f" total {parts.total:,} / threshold {parts.threshold:,} / max {parts.context_max:,}  "
        )
        legend.append("△", self.styles(MIN_TARGET_STYLE))
        legend.append(f" min target {parts.min_target:,}")
        if note and (said := stretch_note(parts)):
            legend.append(f"  {said}", self.styles("caution"))
        return legend

    def region_at(self, column: int, width: int) -> str | None:
        """The segment drawn at `column` of a bar `width` columns wide (None outside it)."""
        if not 0 <= column < max(width, 10):
            return None
        columns, _ = _columns(self.parts, max(width, 10))
        return columns[column]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """Draw at the available width."""
        if self.title:
            yield Text(self.title, "bold")
        yield self.bar_text(options.max_width)
        if self.legend:
            yield from self.legend_lines(options.max_width)

    def lines_needed(self, width: int) -> int:
        """Rows drawn at `width`: the title, the bar, its marks and the legend's lines."""
        legend = len(self.legend_lines(width)) if self.legend else 0
        return (1 if self.title else 0) + 2 + legend
