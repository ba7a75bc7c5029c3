"""MessageDetailPane: the selected message in full, with why it sits in its region."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static


class MessageDetailPane(VerticalScroll):
    """A scrollable view of one message; the screen hands it a ready renderable."""

    DEFAULT_CSS = """
    MessageDetailPane { padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        """One Static holding the detail renderable."""
        yield Static(Text("select a message", "dim"), id="detail-body", markup=False)

    def show(self, renderable: RenderableType) -> None:
        """Replace the content and scroll to its top."""
        self.query_one("#detail-body", Static).update(renderable)
        self.scroll_home(animate=False)
