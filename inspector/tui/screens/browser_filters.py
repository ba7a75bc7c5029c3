"""The browser's filter and sort keys: text filter focus, processor and outcome filters,
sort column and order. A mixin of BrowserScreen (which owns the rows, the filter state and
`_refresh_table`); nothing here reads a file.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from textual.widgets import DataTable, Input

from inspector.tui.rows import OUTCOMES, BrowserRow
from inspector.tui.screens.browser_table import COLUMNS


class BrowserFilters:
    """`/`, Esc, `p`, `o`, `s` and `R` of the browser."""

    rows: list[BrowserRow]
    processor_filter: str | None
    outcome_filter: str | None
    sort_column: str
    sort_reverse: bool

    if TYPE_CHECKING:  # provided by the screen; declared for type checkers

        def query_one(self, selector: Any, expect_type: Any = None) -> Any: ...

        def _refresh_table(self) -> None: ...

    def action_focus_filter(self) -> None:
        """Type to filter rows."""
        self.query_one("#filter", Input).focus()

    def action_clear_filter(self) -> None:
        """Clear the text filter and go back to the table."""
        box = self.query_one("#filter", Input)
        box.value = ""
        self.query_one("#table", DataTable).focus()

    def _cycle(self, current: str | None, choices: Sequence[str]) -> str | None:
        options: list[str | None] = [None, *choices]
        index = options.index(current) if current in options else 0
        return options[(index + 1) % len(options)]

    def action_cycle_processor(self) -> None:
        """Show only one processor (cycles through those found, then all)."""
        found = sorted({row.processor for row in self.rows if row.processor})
        self.processor_filter = self._cycle(self.processor_filter, found)
        self._refresh_table()

    def action_cycle_outcome(self) -> None:
        """Show only one outcome: compressed, not compressed, failed, error, then all."""
        self.outcome_filter = self._cycle(self.outcome_filter, OUTCOMES)
        self._refresh_table()

    def action_cycle_sort(self) -> None:
        """Sort by the next column."""
        keys = [key for key, _ in COLUMNS]
        self.sort_column = keys[(keys.index(self.sort_column) + 1) % len(keys)]
        self.sort_reverse = False
        self._refresh_table()

    def action_reverse_sort(self) -> None:
        """Reverse the sort order."""
        self.sort_reverse = not self.sort_reverse
        self._refresh_table()
