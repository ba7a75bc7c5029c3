"""Key names and the app-wide key bindings, in a module of their own.

The help screen, the command palette and the app all read these, so none of them has to
import another: `app -> commands -> help -> app` was a cycle while the help screen took
the app's bindings from the app class. Imports only Textual's `Binding`.
"""

from __future__ import annotations

from textual.binding import Binding, BindingType

#: Key names shown in a friendlier form.
KEY_NAMES = {
    "slash": "/",
    "greater_than_sign": ">",
    "less_than_sign": "<",
    "left_square_bracket": "[",
    "right_square_bracket": "]",
    "left_curly_bracket": "{",
    "right_curly_bracket": "}",
    "equals_sign": "=",
    "minus": "-",
    "plus": "+",
    "question_mark": "?",
}

#: The keys valid on every screen (`InspectorApp.BINDINGS`).
APP_BINDINGS: list[BindingType] = [
    Binding("question_mark", "help", "Help"),
    Binding("ctrl+t", "toggle_theme", "Theme"),
    Binding("ctrl+q", "quit", "Quit", show=False),
    Binding("q", "quit", "Quit", show=False),
]


def key_display(keys: str) -> str:
    """'plus,equals_sign' -> '+ ='."""
    return " ".join(KEY_NAMES.get(k.strip(), k.strip()) for k in keys.split(","))
