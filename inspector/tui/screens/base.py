"""The base of every screen: worker errors go to one handler that shows a notice; the screen's
palette of theme styles, and a `restyle` hook called after the app's theme changed.

Worker state messages do not bubble, so each screen forwards them here; nothing a worker
raises ever reaches the terminal as a traceback. Screens draw Rich renderables into statics:
those take `self.palette` (component styles of `inspector.tui.theme`), so no screen spells a
colour, and `restyle` redraws them when the theme changes.
"""

from __future__ import annotations

from typing import TypeVar

from textual.screen import Screen
from textual.theme import Theme
from textual.worker import Worker, WorkerState

from inspector.render.styles import Palette
from inspector.tui.theme import THEME_COMPONENT_CLASSES, PaletteCache

ResultType = TypeVar("ResultType")


class ThemedScreen(Screen[ResultType]):
    """A screen drawn with the theme's palette, redrawn (`restyle`) when the theme changes."""

    COMPONENT_CLASSES = set(THEME_COMPONENT_CLASSES)

    def __init__(
        self, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._palette = PaletteCache(self)

    @property
    def palette(self) -> Palette:
        """The semantic styles of the current theme (for the renderables this screen draws)."""
        return self._palette.get()

    def notify_style_update(self) -> None:
        """Theme or CSS changed: forget the palette."""
        super().notify_style_update()
        self._palette.clear()

    def on_mount(self) -> None:
        """Redraw with the new palette whenever the app's theme changes."""
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)

    def _theme_changed(self, theme: Theme) -> None:
        self._palette.clear()
        if self.is_mounted:
            self.restyle()

    def restyle(self) -> None:
        """Redraw what this screen drew with its palette (screens that draw override it)."""


class InspectorScreen(ThemedScreen[ResultType]):
    """A themed screen whose failed workers become error notices."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Turn a failed worker into a notice naming what failed."""
        if event.state == WorkerState.ERROR:
            error = event.worker.error
            self.app.notify(
                f"{type(error).__name__}: {error}",
                title=f"{event.worker.name or 'background task'} failed",
                severity="error",
            )
