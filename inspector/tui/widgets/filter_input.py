"""The browser's filter box: an Input whose typing never lays out the whole screen.

Textual's Input sets its virtual size (the text's width) on every change of its value, and
a widget's virtual size is a reactive that asks the screen for a layout pass: in a
5,000-row browser that pass, for a box of fixed size, was a large part of each filter key.
This box has a fixed width and height (`app.tcss`) and no scrollbars, so its virtual size
only moves its own horizontal scroll, which Input keeps from the value as before.
Textual only; must not import the screens.
"""

from __future__ import annotations

from textual.geometry import Size
from textual.reactive import Reactive
from textual.widgets import Input


class FilterInput(Input):
    """An Input of fixed size whose text width changes repaint it, not the screen's layout."""

    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False)

    def watch_virtual_size(self) -> None:
        """Repaint the box itself (its scroll follows the cursor as in Input)."""
        self.refresh()
