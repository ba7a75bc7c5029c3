"""Palette commands: exactly the key bindings active on the current screen, as actions.

The palette offers only our commands, valid now (each screen's `check_action` decides), so a
command, its key in the footer and its action are one thing.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

from textual.app import App, SystemCommand
from textual.screen import Screen

from inspector.tui.keys import key_display

#: Actions never listed: the palette itself, quit and the theme toggle (Textual's "Theme"
#: picker is the one theme entry).
SKIPPED = frozenset({"command_palette", "quit", "toggle_theme"})


def binding_commands(app: App[Any], screen: Screen[Any]) -> Iterable[SystemCommand]:
    """One palette command per enabled binding of the screen (and focused widget and app)."""
    seen: set[str] = set()
    for key, active in screen.active_bindings.items():
        binding = active.binding
        if not active.enabled or not binding.description or binding.action in seen:
            continue
        if binding.action in SKIPPED or binding.action.startswith("apply_flip("):
            continue
        if active.node is not screen and active.node is not app:
            continue  # a widget's own keys (table cursor moves, ...) are not commands
        seen.add(binding.action)
        node = active.node
        yield SystemCommand(
            binding.description,
            f"key {key_display(key)}" + (f" — {binding.tooltip}" if binding.tooltip else ""),
            partial(app.run_action, binding.action, node),
        )
