"""Text from files and agents shown as it is, never read as Rich markup.

Rich reads a `str` handed to a table cell, a panel title or `Console.print` as console
markup: a folder, session id, tool name or error holding `[/x]` raised MarkupError (a
traceback, the TUI gone) and one holding `[bold]` lost those characters on screen. Every
table of `render`, `cli` and `tui` is a `PlainTable`, and titles made from data are `Text`.
Rich only: this module must not import Textual.
"""

from __future__ import annotations

from typing import Any

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text


class PlainTable(Table):
    """A Rich table whose `str` cells are `Text`: shown as they are (no markup, no emoji
    codes, no highlighting of numbers)."""

    def add_row(self, *renderables: RenderableType | None, **kwargs: Any) -> None:
        """Rich's `add_row`, each `str` cell made a `Text` first."""
        super().add_row(
            *(Text(cell) if isinstance(cell, str) else cell for cell in renderables), **kwargs
        )
