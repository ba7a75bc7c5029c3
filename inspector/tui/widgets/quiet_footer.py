"""QuietFooter: the keys of the screen's bindings on one line, drawn by one widget.

Textual's Footer is a container of one widget per key, removed and mounted again each time
the screen's bindings are said to have changed: opening a context composed and styled 13
key widgets, then styled some 25 again when the verdict changed which keys apply (about a
sixth of the open). This footer draws the same line (key, description, disabled keys dim,
the command palette key on the right) as one Text, redrawn only when what it shows
changes; a click on a key presses it (a disabled key rings the bell) and hovering a key
shows its tooltip, as with Textual's Footer. Textual only; no inspector import.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from rich.style import Style
from rich.text import Text
from textual import events
from textual.dom import NoScreen
from textual.screen import Screen
from textual.widget import Widget


@dataclass(frozen=True)
class ShownKey:
    """One key on the footer line and the columns it takes."""

    key: str
    display: str
    description: str
    enabled: bool
    tooltip: str
    start: int = 0
    end: int = 0


class QuietFooter(Widget, can_focus=False):
    """The screen's shown bindings on one line; redrawn only when they change."""

    COMPONENT_CLASSES = {"footer--key", "footer--description", "footer--palette"}
    DEFAULT_CSS = """
    QuietFooter {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        .footer--key { color: $footer-key-foreground; background: $footer-key-background; text-style: bold; }
        .footer--description { color: $footer-description-foreground; background: $footer-description-background; }
        .footer--palette { color: $footer-key-foreground; }
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._shown: tuple[Any, ...] | None = None
        #: The keys drawn last, with their columns (what a click or a hover hits).
        self.keys: list[ShownKey] = []
        self._queued = False

    def on_mount(self) -> None:
        """Follow the screen's binding changes."""
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)
        self._update_keys()

    def on_unmount(self) -> None:
        """Stop following them."""
        with contextlib.suppress(NoScreen):
            self.screen.bindings_updated_signal.unsubscribe(self)

    def shown_keys(self) -> tuple[Any, ...]:
        """What the line shows: each shown binding (one per action) with its state, and
        the palette key."""
        app = self.app
        seen: set[str] = set()
        keys: list[tuple[Any, ...]] = []
        for _, binding, enabled, tooltip in self.screen.active_bindings.values():
            if not binding.show or binding.action in seen:
                continue
            seen.add(binding.action)
            keys.append(
                (
                    binding.key,
                    app.get_key_display(binding),
                    binding.description,
                    enabled,
                    tooltip or binding.tooltip or binding.description,
                )
            )
        palette: tuple[Any, ...] | None = None
        if app.ENABLE_COMMAND_PALETTE:
            found = self.screen.active_bindings.get(app.COMMAND_PALETTE_BINDING)
            if found is not None:
                _, binding, enabled, tooltip = found
                palette = (
                    binding.key,
                    app.get_key_display(binding),
                    binding.description,
                    enabled,
                    tooltip or binding.tooltip or binding.description,
                )
        return (tuple(keys), palette)

    def bindings_changed(self, screen: Screen[Any]) -> None:
        """The screen's bindings may have changed: look once, after the next refresh."""
        if self.is_attached and screen is self.screen and not self._queued:
            self._queued = True
            self.call_after_refresh(self._update_keys)

    def _update_keys(self) -> None:
        self._queued = False
        if not self.is_attached:
            return
        try:
            shown = self.shown_keys()
        except NoScreen:
            return
        if shown != self._shown:
            self._shown = shown
            self.refresh()

    def render(self) -> Text:
        """The keys, then the palette key at the right end."""
        shown = self._shown or ((), None)
        key_style = self.get_component_rich_style("footer--key")
        text_style = self.get_component_rich_style("footer--description")
        line = Text(no_wrap=True, overflow="crop")
        self.keys = []
        for key, display, description, enabled, tooltip in shown[0]:
            start = line.cell_len
            dim = Style() if enabled else Style(dim=True)
            line.append(f" {display} ", key_style + dim)
            if description:
                line.append(f"{description} ", text_style + dim)
            self.keys.append(
                ShownKey(key, display, description, enabled, tooltip, start, line.cell_len)
            )
        palette = shown[1]
        if palette is not None:
            key, display, description, enabled, tooltip = palette
            label = f"▏{display} {description} "
            width = self.size.width or 80
            start = max(width - len(label), 0)
            line.truncate(start, pad=True)  # the keys give way to the palette key
            line.append(label, self.get_component_rich_style("footer--palette"))
            self.keys.insert(
                0, ShownKey(key, display, description, enabled, tooltip, start, line.cell_len)
            )
        return line

    def key_at(self, x: int) -> ShownKey | None:
        """The key drawn at column `x`, if any."""
        return next((k for k in self.keys if k.start <= x < k.end), None)

    def on_mouse_down(self, event: events.MouseDown) -> None:
        """A click on a key presses it (a disabled key rings the bell)."""
        shown = self.key_at(event.x)
        if shown is None:
            return
        if shown.enabled:
            self.app.simulate_key(shown.key)
        else:
            self.app.bell()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        """Hovering a key shows its tooltip."""
        shown = self.key_at(event.x)
        self.tooltip = shown.tooltip if shown is not None and shown.tooltip else None
