"""Palette commands: exactly the key bindings active on the current screen, as actions.

The palette offers only what is valid now (each screen's `check_action` decides), so a
command, its key in the footer and its action are one thing.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

from textual.app import App, SystemCommand
from textual.screen import Screen

from inspector.tui.keys import key_display


def binding_commands(app: App[Any], screen: Screen[Any]) -> Iterable[SystemCommand]:
    """One palette command per enabled binding of the screen (and focused widget and app)."""
    seen: set[str] = set()
    for key, active in screen.active_bindings.items():
        binding = active.binding
        if not active.enabled or not binding.description or binding.action in seen:
            continue
        if binding.action in ("command_palette", "quit") or binding.action.startswith(
            "apply_flip("
        ):
            continue
        seen.add(binding.action)
        node = active.node
        yield SystemCommand(
            binding.description,
            f"key {key_display(key)}" + (f" — {binding.tooltip}" if binding.tooltip else ""),
            partial(app.run_action, binding.action, node),
        )
