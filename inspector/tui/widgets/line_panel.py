"""LinePanel: a few lines of Rich Text drawn with the Line API, repainted line by line.

A tuning key changes a number or a mark on one or two lines of the verdict and the context
bar; a Static would lay out and render all of its text again. A LinePanel keeps the lines on
screen as Rich Text (one per row, never wrapped again), compares the new ones with them and
repaints only the rows that differ, each turned into segments once. Subclasses say what the
lines are at a width (`build_lines`); `TextPanel` wraps one Text to the width.
Must not import a screen or `inspector.core`.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget


class LinePanel(Widget):
    """Rows of Rich Text; `rebuild` repaints the rows whose text or styles changed."""

    #: Whether the panel's height follows its number of lines (else the CSS sets it).
    FIT_HEIGHT = False

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        #: The lines on screen and the width they were built at (-1: build on next paint).
        self._lines: list[Text] = []
        self._lines_width = -1
        #: Row -> its segments, made on the first paint after a change.
        self._strips: dict[int, Strip] = {}

    def build_lines(self, width: int) -> list[Text]:
        """The lines to show at `width` (each at most `width` cells; longer ones are cut)."""
        raise NotImplementedError

    def lines_width(self) -> int:
        """The width lines are built at: the content width, or the app's before layout."""
        return self.content_region.width or max(self.app.size.width - 2, 10)

    def rebuild(self, force: bool = False) -> None:
        """Build the lines at the current width; repaint what changed (all when `force`)."""
        width = self.lines_width()
        old = self._lines
        new = self.build_lines(width)
        self._lines, self._lines_width = new, width
        if self.FIT_HEIGHT and (self.styles.height is None or self.styles.height.value != len(new)):
            self._strips.clear()
            self.styles.height = len(new)  # a layout: every line is painted again
            return
        if force or len(old) != len(new):
            self._strips.clear()
            self.refresh()
            return
        full = self.outer_size.width
        top = self.styles.padding.top
        for y, (before, after) in enumerate(zip(old, new, strict=True)):
            if before != after:  # Text equality: the same characters and the same spans
                self._strips.pop(y, None)
                self.refresh(Region(0, top + y, full, 1))

    def render(self) -> Text:
        """Every line as one Text (what auto sizing and plain-text views read; painting goes
        through `render_line`)."""
        return Text("\n").join(self.build_lines(self.lines_width()))

    def render_line(self, y: int) -> Strip:
        """One row, made once per change."""
        width = self.content_region.width
        if width != self._lines_width:
            self._lines = self.build_lines(width)
            self._lines_width = width
            self._strips.clear()
        strip = self._strips.get(y)
        if strip is None:
            base = self.rich_style
            if y < len(self._lines):
                line = self._lines[y].copy()
                line.truncate(width, overflow="ellipsis")
                segments = Segment.apply_style(line.render(self.app.console, end=""), base)
                strip = Strip(list(segments)).crop_extend(0, width, base)
            else:
                strip = Strip.blank(width, base)
            self._strips[y] = strip
        return strip

    def on_resize(self, event: events.Resize) -> None:
        """Lines are built again at the new width."""
        self.rebuild(force=True)

    def notify_style_update(self) -> None:
        """Theme or CSS changed: build and paint every line again."""
        super().notify_style_update()
        self._lines_width = -1
        self._strips.clear()


class TextPanel(LinePanel):
    """One Rich Text wrapped to the width (its own `no_wrap` and `overflow` respected), as a
    Static would show it; `update` repaints only the rows that changed."""

    def __init__(
        self, text: Text | str = "", *, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(id=id, classes=classes)
        self._text = text if isinstance(text, Text) else Text(text)

    @property
    def content(self) -> Text:
        """The text shown."""
        return self._text

    def update(self, text: Text | str = "", *, layout: bool = False) -> None:
        """Show `text` (`layout`: accepted as a Static takes it; the height is the CSS's)."""
        self._text = text if isinstance(text, Text) else Text(text)
        self.rebuild()

    def build_lines(self, width: int) -> list[Text]:
        """The text wrapped to `width` (hard line breaks kept)."""
        if width <= 0:
            return []
        return list(self._text.wrap(self.app.console, width))
