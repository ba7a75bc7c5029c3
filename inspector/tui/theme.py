"""The TUI's side of the one style mapping: semantic styles as Textual component classes.

Every name of `inspector.render.styles.DEFAULT_STYLES` is a component class (`region--prefix`,
`verdict--hit`, `severity--warning`, `style--link`, ...) styled in `app.tcss` with theme
variables, so Textual's light and dark themes restyle them. A widget (or screen) that draws
declares `THEME_COMPONENT_CLASSES` and reads a `Palette` with `palette_of`; the Rich renderables
shared with the CLI take that palette. No colour is spelled here.
"""

from __future__ import annotations

from rich.style import Style
from textual.widget import Widget

from inspector.render.styles import COMPONENT_CLASSES, Palette

#: The component classes a drawing widget declares (union it with its own).
THEME_COMPONENT_CLASSES: frozenset[str] = frozenset(COMPONENT_CLASSES.values())


def component_style(widget: Widget, component: str) -> Style:
    """The Rich style of one component class of `widget`: its attributes and background as the
    rule sets them (none unless set, so a span keeps the background it is drawn on), and its
    colour resolved against the widget's background (`$text-muted` and `auto` need one)."""
    own = widget.get_component_rich_style(component, partial=True)
    resolved = widget.get_component_rich_style(component)
    if own.color is None:  # the rule sets no colour (`plain`)
        return own
    return own + Style(color=resolved.color)


def palette_of(widget: Widget) -> Palette:
    """The palette of `widget`'s component styles (see `component_style`)."""
    styles: dict[str, Style] = {
        name: component_style(widget, component) for name, component in COMPONENT_CLASSES.items()
    }
    return Palette(styles)


class PaletteCache:
    """One widget's palette, rebuilt after a theme or CSS change (call `clear` from
    `notify_style_update`)."""

    __slots__ = ("_palette", "_widget")

    def __init__(self, widget: Widget) -> None:
        self._widget = widget
        self._palette: Palette | None = None

    def get(self) -> Palette:
        """The current palette."""
        if self._palette is None:
            self._palette = palette_of(self._widget)
        return self._palette

    def clear(self) -> None:
        """Forget the palette (the theme or the CSS changed)."""
        self._palette = None
