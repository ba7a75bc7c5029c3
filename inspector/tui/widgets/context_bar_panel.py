"""ContextBarPanel: the context window drawn to scale, once (tuned) or twice (compare mode)."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text
from textual import events
from textual.message import Message
from textual.widget import Widget

from inspector.render.context_bar import BarParts, ContextBar
from inspector.render.styles import Palette
from inspector.tui.theme import THEME_COMPONENT_CLASSES, PaletteCache


class ContextBarPanel(Widget):
    """Shows the tuned bar; with a recorded bar given, shows both (compare mode).

    Drawn with the theme's component styles (`region--prefix`, `mark--threshold`, ...).
    """

    COMPONENT_CLASSES = set(THEME_COMPONENT_CLASSES)

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
        """Draw `tuned`, and `recorded` above it when comparing; `labels` rename the legend."""
        self._tuned = tuned
        self._recorded = recorded
        self._note = note
        self._labels = labels
        height = self.lines_needed()
        if self.styles.height is None or self.styles.height.value != height:
            self.styles.height = height
        else:
            self.refresh()

    def lines_needed(self) -> int:
        """Rows the bar(s) take at the panel's width: bar, marks and legend (one or two
        lines), plus a title line each when titled."""
        if self._tuned is None:
            return 1
        width = self.content_region.width or max(self.app.size.width - 2, 10)
        renderable = self.render()
        bars = renderable.renderables if isinstance(renderable, Group) else [renderable]
        return sum(bar.lines_needed(width) for bar in bars if isinstance(bar, ContextBar))

    def on_resize(self, event: events.Resize) -> None:
        """The legend may take one line more or less at the new width."""
        self._fit_height()

    def _fit_height(self) -> None:
        height = self.lines_needed()
        if self.styles.height is None or self.styles.height.value != height:
            self.styles.height = height

    @property
    def palette(self) -> Palette:
        """The theme's semantic styles as this panel draws them (kept until the theme changes)."""
        return self._palette.get()

    def notify_style_update(self) -> None:
        """Theme or CSS changed: forget the palette."""
        super().notify_style_update()
        self._palette.clear()

    def render(self) -> RenderableType:
        """The bar(s) at the widget's width."""
        styles = self.palette
        if self._tuned is None:
            return Text(self._note or "no context to draw", styles("muted"))
        if self._recorded is None:
            return ContextBar(
                self._tuned, title=self._note or None, labels=self._labels, styles=styles
            )
        return Group(
            ContextBar(self._recorded, title="recorded", legend=True, styles=styles),
            ContextBar(self._tuned, title="tuned", legend=True, styles=styles),
        )

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
