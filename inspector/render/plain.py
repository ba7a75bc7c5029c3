"""Text from files and agents shown as it is: never read as Rich markup, and never a control
character on the terminal.

Rich reads a `str` handed to a table cell, a panel title or `Console.print` as console
markup: a folder, session id, tool name or error holding `[/x]` raised MarkupError (a
traceback, the TUI gone) and one holding `[bold]` lost those characters on screen. Every
table of `render`, `cli` and `tui` is a `PlainTable`, and titles made from data are `Text`.

A control character in such text (a debug log's `ESC ]0;...` or `ESC [31m`) is written to
the terminal as it is by Rich, whatever renderable holds it. Every console the CLI prints
with, and the one the TUI renders Rich renderables with, is a `TerminalSafeConsole`: the
last place text passes before the terminal, so no front end has to remember it. Rich only:
this module must not import Textual.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from inspector.core.redact import CONTROL_RE, escape_controls


class PlainTable(Table):
    """A Rich table whose `str` cells are `Text`: shown as they are (no markup, no emoji
    codes, no highlighting of numbers)."""

    def add_row(self, *renderables: RenderableType | None, **kwargs: Any) -> None:
        """Rich's `add_row`, each `str` cell made a `Text` first."""
        super().add_row(
            *(Text(cell) if isinstance(cell, str) else cell for cell in renderables), **kwargs
        )


class TerminalSafeConsole(Console):
    """A Rich console whose text segments carry no control character: each is written as a
    visible escape (`\\x1b`), newlines and tabs kept. Rich's own control segments (cursor
    moves) and the styles it writes itself pass as they are."""

    def on_broken_pipe(self) -> None:
        """The reader went away (`| head`): `BrokenPipeError`, which the command line
        ends on with 0, as for every other output (Rich's own exits with 1)."""
        self.quiet = True
        raise BrokenPipeError

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        """Rich's `render`, each text segment holding a control character escaped."""
        search = CONTROL_RE.search
        for segment in super().render(renderable, options):
            text = segment.text
            if segment.control is None and search(text):
                yield Segment(escape_controls(text), segment.style)
            else:
                yield segment


def make_terminal_safe(console: Console) -> Console:
    """`console` (made by another library, e.g. Textual's app) as a `TerminalSafeConsole`."""
    console.__class__ = TerminalSafeConsole
    return console
