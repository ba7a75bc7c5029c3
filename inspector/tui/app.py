"""The Textual app: thin. `create_app` is the one factory used by the CLI and every test.

State lives in the screens; this module wires sources, tuning overrides, the token counters
and the loader together and offers palette commands (screens turn worker errors into notices).
"""

from __future__ import annotations

import functools
import gc
import os
import time
from collections.abc import Iterable, Sequence
from typing import Any

from textual.app import App, SystemCommand
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.theme import Theme

from inspector.core.redact import mask_text
from inspector.core.tokens import TokenCounter
from inspector.render.plain import make_terminal_safe
from inspector.tui.commands import binding_commands
from inspector.tui.count_cancel import install_gates
from inspector.tui.keys import APP_BINDINGS
from inspector.tui.screens.browser import BrowserScreen, Loader

#: Seconds within which a second `q` quits while a re-run is still going.
QUIT_AGAIN = 3.0
#: Textual's own palette commands that stay: its theme picker (the one theme entry) and Quit.
KEPT_SYSTEM_COMMANDS = frozenset({"Theme", "Quit"})


class InspectorApp(App[int]):
    """Context Inspector: browse, see the regions, ask why, tune live."""

    CSS_PATH = "app.tcss"
    TITLE = "Context Inspector"
    #: Screens get `-narrow` below 100 columns (the side panel takes half the width).
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    BINDINGS = APP_BINDINGS

    def __init__(
        self,
        sources: Sequence[str],
        overrides: dict[str, Any],
        counters: dict[str, TokenCounter],
        loader: Loader,
    ) -> None:
        super().__init__()
        # every Rich renderable is drawn through this console: a control character in the
        # text of one (a debug log's ESC ]0;...) is escaped there, never sent to the terminal
        make_terminal_safe(self.console)
        self.sources = list(sources)
        self.overrides = overrides
        self.counters = counters
        # a count in a worker can then be stopped between messages (Esc on its progress)
        install_gates(counters)
        self.loader = loader
        #: When `q` last asked to confirm quitting during a re-run (monotonic seconds).
        self._quit_asked = float("-inf")
        #: Tuning left on each context, (source, id) -> (strategy key, settings): it survives
        #: going back to the browser and opening the context again.
        #: (source, id) -> (strategy key, settings, pins) left on a context (kept across opens).
        self.tunings: dict[tuple[str, str], tuple[str, Any, frozenset[int]]] = {}

    @property
    def _background_screens(self) -> list[Screen[Any]]:
        """Screens that show through the top one: none when the top screen is opaque.

        Textual (8.2) always counts the screen just below the top one as visible, even under
        an opaque screen. A background screen that is dirty marks itself for a repaint again
        each time it hands its regions to the top screen, so once the browser had anything to
        paint while a context was open, every later frame of the context screen was painted
        whole (the browser first, then every widget on top). An opaque top screen hides what
        is below it: nothing below takes part in its frames (a screen coming back to the top
        lays itself out and repaints anyway).
        """
        stack = self._screen_stack
        if stack and stack[-1].styles.background.a == 1:
            return []
        return list(App._background_screens.fget(self))  # type: ignore[attr-defined]

    def push_screen(self, screen: Any, *args: Any, **kwargs: Any) -> Any:
        """Push `screen` with its width class (`-narrow`/`-wide`) already set: set on its
        first resize instead, the class restyled every widget of the new screen a second
        time (a third of opening a context)."""
        if isinstance(screen, Screen) and not screen.is_attached:
            width = self.size.width
            for start, name in reversed(self.HORIZONTAL_BREAKPOINTS):
                if width >= start:
                    screen.add_class(name)
                    break
        return super().push_screen(screen, *args, **kwargs)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Textual's notice, its message never read as markup (whatever a caller asks):
        notices carry file names, ids and errors, and one holding `[/x]` raised MarkupError
        (the app gone with a traceback)."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    def on_mount(self) -> None:
        """Open the browser on the sources, in the theme chosen last time."""
        from inspector.prefs import load_prefs

        prefs, problem = load_prefs()
        self.theme = prefs.theme if prefs.theme in self.available_themes else "textual-dark"
        if problem:
            self.notify(problem, severity="warning")
        self.theme_changed_signal.subscribe(self, self._remember_theme)
        self.push_screen(BrowserScreen(self.sources, self.overrides, self.counters, self.loader))

    def _remember_theme(self, theme: Theme) -> None:
        """Save the theme in the preferences file (best-effort: a read-only home is fine)."""
        from inspector.prefs import load_prefs, update_prefs

        if load_prefs()[0].theme == theme.name:
            return
        try:
            update_prefs(theme=theme.name)
        except OSError as error:
            self.notify(f"could not save the theme: {error}", severity="warning")

    def freeze_heap(self) -> None:
        """Take what is alive now (loaded rows, counted contexts) out of the garbage
        collector's scans: with 5,000 rows loaded, a full collection in the middle of a
        filter key cost 0.5 s, and the smaller ones about a third of every table repaint.
        Undone when the app ends."""
        gc.freeze()

    def on_unmount(self) -> None:
        """Write the token cache and close it; the frozen heap is collectable again."""
        gc.unfreeze()
        for counter in self.counters.values():
            store = counter.store
            if store is not None and hasattr(store, "close"):
                store.close()

    def copy_to_clipboard(self, text: str) -> None:
        """Copy `text` with its secrets masked (every copy command goes through here)."""
        super().copy_to_clipboard(mask_text(text))

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Textual's theme picker and Quit, then every key binding valid on this screen."""
        for command in super().get_system_commands(screen):
            if command.title in KEPT_SYSTEM_COMMANDS:
                yield command
        yield from binding_commands(self, screen)

    async def action_quit(self) -> None:
        """Quit; while a model call runs (a re-run), only when `q` comes again within
        `QUIT_AGAIN` seconds, so a stray key does not throw the run away."""
        running = any(getattr(s, "calls_running", False) for s in self.screen_stack)
        now = time.monotonic()
        if running and now - self._quit_asked > QUIT_AGAIN:
            self._quit_asked = now
            self.notify(
                "a re-run is still going: press q again to quit (Esc cancels only the run)",
                severity="warning",
                timeout=QUIT_AGAIN,
            )
            return
        self.exit()

    def action_help(self) -> None:
        """Show every key."""
        from inspector.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_toggle_theme(self) -> None:
        """Switch between dark and light themes."""
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"


def create_app(
    sources: Sequence[str],
    overrides: dict[str, Any] | None = None,
    *,
    counters: dict[str, TokenCounter] | None = None,
    loader: Loader | None = None,
) -> InspectorApp:
    """Build the app: sources to open, tuning overrides, and injectable counters and loader."""
    if counters is None:
        from inspector.sources.cache import TokenCache, cached_counters

        counters = cached_counters(TokenCache())  # cl100k counts persist between runs
    if loader is None:
        from inspector.sources import fork_server
        from inspector.sources.loader import load_paths

        if any(os.path.isdir(source) for source in sources):
            # a big folder's load takes helpers from it; it starts while the app does
            fork_server.warm_fork_server()
        # rows from each file's recorded fields; a dump's context is rebuilt when opened
        loader = functools.partial(load_paths, counters=counters, on_demand=True)
    return InspectorApp(sources, dict(overrides or {}), counters, loader)
