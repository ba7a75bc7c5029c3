"""QuietFooter: Textual's Footer, recomposed only when the keys it shows change.

Textual's Footer removes and mounts every key widget each time the screen's bindings are
said to have changed (a focus change, `refresh_bindings`), and each new key is styled
twice: opening a context recomposed it three to four times, about 90 key widgets styled
for 13 keys shown. Textual only; no inspector import.
"""

from __future__ import annotations

from typing import Any

from textual.dom import NoScreen
from textual.screen import Screen
from textual.widgets import Footer


class QuietFooter(Footer):
    """A Footer that coalesces binding changes and skips a recompose that shows the same."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._shown: tuple[Any, ...] | None = None
        self._queued = False

    def shown_keys(self) -> tuple[Any, ...]:
        """What a compose would draw: each shown binding with its state, and the palette key."""
        app = self.app
        keys = tuple(
            (
                binding.key,
                app.get_key_display(binding),
                binding.description,
                binding.action,
                enabled,
                tooltip,
                binding.group,
            )
            for (_, binding, enabled, tooltip) in self.screen.active_bindings.values()
            if binding.show
        )
        return (keys, self.compact, self.show_command_palette, app.COMMAND_PALETTE_BINDING)

    def bindings_changed(self, screen: Screen[Any]) -> None:
        """The screen's bindings may have changed: check once, after the next refresh."""
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._queued:
            self._queued = True
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        self._queued = False
        if not self.is_attached or self._closing or self._closed:
            return  # the screen went away meanwhile
        try:
            shown = self.shown_keys()
        except NoScreen:
            return
        if shown == self._shown:
            return
        self._shown = shown
        await self.recompose()
