"""Palette commands: exactly the key bindings active on the current screen, as actions.

The palette offers only our commands, valid now (each screen's `check_action` decides), so a
command, its key in the footer and its action are one thing.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

from textual.actions import parse
from textual.app import App, SystemCommand
from textual.screen import Screen

from inspector.tui.keys import key_display

#: Actions never listed: the palette itself, quit and the theme toggle (Textual's "Theme"
#: picker is the one theme entry).
SKIPPED = frozenset({"command_palette", "quit", "toggle_theme"})
#: Textual's own screen and app bindings (focus moves, copy, maximize, ...): not ours.
TEXTUAL_ACTIONS = frozenset(
    {
        "app.focus_next",
        "app.focus_previous",
        "focus_next",
        "focus_previous",
        "screen.copy_text",
        "copy_text",
        "maximize",
        "minimize",
        "screen.maximize",
        "screen.minimize",
        "app.bell",
    }
)


def binding_commands(app: App[Any], screen: Screen[Any]) -> Iterable[SystemCommand]:
    """One palette command per enabled binding of the screen and of the app (never a
    widget's own keys, nor Textual's focus and copy bindings): our commands only."""
    seen: set[str] = set()
    for node in (screen, app):
        for key, bindings in node._bindings.key_to_bindings.items():
            for binding in bindings:
                action = binding.action
                if not binding.description or action in SKIPPED or action in seen:
                    continue
                if action.startswith("apply_flip(") or action in TEXTUAL_ACTIONS:
                    continue
                _, name, parameters = parse(action)
                if node.check_action(name, parameters) is False:
                    continue
                seen.add(action)
                yield SystemCommand(
                    binding.description,
                    f"key {key_display(key)}"
                    + (f" — {binding.tooltip}" if binding.tooltip else ""),
                    partial(app.run_action, action, node),
                )
