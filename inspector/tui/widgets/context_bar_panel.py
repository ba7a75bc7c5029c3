"""ContextBarPanel: the context window drawn to scale, once (tuned) or twice (compare mode).

A `LinePanel`: `show` builds the panel's lines (title, bar, marks, legend) as Rich Text once
and repaints only the lines that changed (a tuning key moves the threshold mark or a region
boundary: two or three lines). Must not import a screen or `inspector.core`.
"""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.message import Message

from inspector.render.context_bar import BarParts, ContextBar
from inspector.render.styles import Palette
from inspector.tui.theme import THEME_COMPONENT_CLASSES, PaletteCache
from inspector.tui.widgets.line_panel import LinePanel


class ContextBarPanel(LinePanel):
    """Shows the tuned bar; with a recorded bar given, shows both (compare mode).

    Drawn with the theme's component styles (`region--prefix`, `mark--threshold`, ...).
    """

    COMPONENT_CLASSES = set(THEME_COMPONENT_CLASSES)
    FIT_HEIGHT = True

    DEFAULT_CSS = """
    ContextBarPanel { height: 3; padding: 0 1; }
    """

    class SegmentClicked(Message):
        """The user clicked the bar segment of region `region`."""

        def __init__(self, region: str) -> None:
            super().__init__()
            self.region = region

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._tuned: BarParts | None = None
        self._recorded: BarParts | None = None
        self._note = ""
        self._labels: dict[str, str] | None = None
        self._palette = PaletteCache(self)

    def show(
        self,
        tuned: BarParts | None,
        recorded: BarParts | None = None,
        note: str = "",
        labels: dict[str, str] | None = None,
    ) -> None:
        """Draw `tuned`, and `recorded` above it when comparing; `labels` rename the legend.
        Only the lines that differ from the ones on screen are repainted."""
        self._tuned = tuned
        self._recorded = recorded
        self._note = note
        self._labels = labels
        self.rebuild()

    def build_lines(self, width: int) -> list[Text]:
        """The panel's lines at `width`: per bar its title, the bar, the marks and the legend.

        The legend names the parts in the strategy's words (`labels`), shortened to their
        first words when they do not fit."""
        styles = self.palette
        if self._tuned is None:
            return [Text(self._note or "no context to draw", styles("muted"))]
        if self._recorded is None:
            titled = [(self._tuned, self._note or None)]
        else:
            titled = [(self._recorded, "recorded"), (self._tuned, "tuned")]
        lines: list[Text] = []
        for parts, title in titled:
            if title:
                lines.append(Text(title, "bold"))
            lines += ContextBar(parts, styles=styles).bar_text(width).split("\n")
            lines += self._legend(parts, width)
        return lines

    def _legend(self, parts: BarParts, width: int) -> list[Text]:
        """The legend in the strategy's words, or in their first words (without what is in
        brackets) when that does not fit (cut at the width when even that does not)."""
        labels = self._labels or {}
        legend = ContextBar(parts, labels=labels, styles=self.palette).legend_lines(width)
        short = {name: label.split(" (")[0] for name, label in labels.items()}
        if short != labels and any(line.cell_len > width for line in legend):
            legend = ContextBar(parts, labels=short, styles=self.palette).legend_lines(width)
        return legend

    def lines_needed(self) -> int:
        """Rows the bar(s) take at the panel's width: bar, marks and legend (one or two
        lines), plus a title line each when titled."""
        return len(self.build_lines(self.lines_width()))

    @property
    def palette(self) -> Palette:
        """The theme's semantic styles as this panel draws them (kept until the theme changes)."""
        return self._palette.get()

    def notify_style_update(self) -> None:
        """Theme or CSS changed: forget the palette and the drawn lines."""
        super().notify_style_update()
        self._palette.clear()

    def region_at(self, x: int, y: int) -> str | None:
        """The region drawn at content cell (x, y) of the tuned bar, if any."""
        if self._tuned is None or self._recorded is not None:
            return None
        bar_row = 1 if self._note else 0
        if y != bar_row:
            return None
        return ContextBar(self._tuned).region_at(x, self.content_region.width)

    def on_click(self, event: events.Click) -> None:
        """A click on a segment: say which region (the screen jumps to its first message)."""
        offset = event.get_content_offset(self)
        if offset is None:
            return
        region = self.region_at(offset.x, offset.y)
        if region is not None and region != "free":
            self.post_message(self.SegmentClicked(region))
