"""HelpScreen: every key of every screen, generated from the bindings themselves.

The app-wide keys come from `inspector.tui.keys` (never from `inspector.tui.app`, which
imports this module's callers).
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from inspector.render.plain import PlainTable
from inspector.render.styles import DEFAULT_PALETTE, Palette
from inspector.tui.keys import APP_BINDINGS, KEY_NAMES, key_display
from inspector.tui.theme import THEME_COMPONENT_CLASSES, palette_of

__all__ = ["KEY_NAMES", "HelpScreen", "bindings_table", "help_sections", "key_display"]


#: Characters some terminals draw two cells wide (East Asian "ambiguous" width), spelled in
#: ASCII so the help box keeps its right border in every terminal.
NARROW = str.maketrans(
    {
        "−": "-",
        "—": "-",
        "–": "-",
        "…": "...",
        "→": "->",
        "←": "<-",
        "↑": "^",
        "↓": "v",
        "≥": ">=",
        "≤": "<=",
        "×": "x",
        "•": "*",
    }
)


def narrow(text: str | None) -> str:
    """`text` with every ambiguous-width character spelled in ASCII."""
    return (text or "").translate(NARROW)


def bindings_table(
    title: str, bindings: list[BindingType], styles: Palette = DEFAULT_PALETTE
) -> PlainTable:
    """A two-column table of keys (styled `name`) and what they do."""
    table = PlainTable(
        title=title,
        title_style="bold",
        title_justify="left",
        box=None,
        show_header=False,
        pad_edge=False,
    )
    table.add_column(style=styles("name"), min_width=12)
    table.add_column(min_width=16)
    table.add_column(style="dim")
    seen: set[str] = set()
    for binding in bindings:
        if not isinstance(binding, Binding):
            continue
        keys = key_display(binding.key)
        if keys in seen:
            continue
        seen.add(keys)
        table.add_row(
            narrow(keys), narrow(binding.description or binding.action), narrow(binding.tooltip)
        )
    return table


def help_sections() -> list[tuple[str, list[BindingType]]]:
    """(title, bindings) for the app and each screen and widget with keys."""
    from inspector.tui.screens.browser import BrowserScreen
    from inspector.tui.screens.compare_screen import CompareScreen
    from inspector.tui.screens.context import ContextScreen
    from inspector.tui.screens.sweep import SweepScreen
    from inspector.tui.widgets.message_list import MessageList

    flips = [
        b
        for b in ContextScreen.BINDINGS
        if isinstance(b, Binding) and b.action.startswith("apply_flip(") and b.key != "f"
    ]
    context = [b for b in ContextScreen.BINDINGS if b not in flips]
    context.append(Binding("1", "apply_flip", "1-9: apply flip number N from the Why panel"))
    return [
        (
            "Everywhere",
            [
                *APP_BINDINGS,
                Binding("ctrl+p", "command_palette", "Command palette (every command below)"),
            ],
        ),
        ("Browser", list(BrowserScreen.BINDINGS)),
        ("Context view", context),
        ("Message list", list(MessageList.BINDINGS)),
        ("Sweep view", list(SweepScreen.BINDINGS)),
        ("Strategies view (C)", list(CompareScreen.BINDINGS)),
    ]


class HelpScreen(ModalScreen[None]):
    """A scrollable list of every key; any of escape, q, ? closes it."""

    BINDINGS = [Binding("escape,q,question_mark", "close", "Close")]
    COMPONENT_CLASSES = set(THEME_COMPONENT_CLASSES)

    def compose(self) -> ComposeResult:
        """The scroll view; the tables are drawn on mount (they need the theme's styles)."""
        with VerticalScroll(id="help-body"):
            yield Static(id="help-text", markup=False)

    def help_renderable(self) -> Group:
        """The tables, one per area, in the theme's palette."""
        styles = palette_of(self)
        parts: list[RenderableType] = [
            Text("Context Inspector - keys", "bold"),
            Text(
                "Every command is also in the palette (ctrl+p); the footer shows the main ones.",
                "dim",
            ),
        ]
        for title, bindings in help_sections():
            parts.append(Text(""))
            parts.append(bindings_table(title, bindings, styles))
        return Group(*parts)

    def on_mount(self) -> None:
        """Draw the tables; focus the body so arrows and page keys scroll it."""
        self.query_one("#help-text", Static).update(self.help_renderable())
        self.query_one("#help-body").focus()

    def action_close(self) -> None:
        """Close help."""
        self.dismiss(None)
