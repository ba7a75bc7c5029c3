"""The browser table's key bindings, cells, filter line and sort keys (helpers over
`BrowserRow`; Textual only for the bindings).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import DataTable

from inspector.render.styles import DEFAULT_PALETTE, Palette
from inspector.tui.rows import BrowserRow

#: (column key, header, sort key)
COLUMNS: tuple[tuple[str, str], ...] = (
    ("time", "time"),
    ("processor", "processor"),
    ("outcome", "outcome"),
    ("tokens", "tokens before→after"),
    ("reduction", "cut"),
    ("retries", "retries"),
    ("session", "session"),
    ("title", "id / source"),
)
OUTCOME_WIDTH = 28
#: Outcome -> style name of `inspector.render.styles`.
OUTCOME_STYLES = {
    "compressed": "good",
    "not compressed": "caution",
    "failed": "bad",
    "error": "error",
}


def _short_processor(name: str) -> str:
    return name.removesuffix("Compressor") or name


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def sort_value(row: BrowserRow, column: str) -> Any:
    """A comparable key for `column`; missing values sort last."""
    if column == "time":
        return (row.timestamp is None, -(row.timestamp or 0.0), row.key)
    if column == "tokens":
        return (row.before is None, -(row.before or 0), row.key)
    if column == "reduction":
        return (row.reduction is None, -(row.reduction or 0.0), row.key)
    if column == "retries":
        return (row.retries is None, -(row.retries or 0), row.key)
    return (getattr(row, column) == "", str(getattr(row, column)).lower(), row.key)


def row_cells(row: BrowserRow, styles: Palette = DEFAULT_PALETTE) -> list[Any]:
    """The table cells of one row (the outcome styled from `styles`)."""
    style = styles(OUTCOME_STYLES.get(row.outcome_kind, "plain"))
    if row.before is not None and row.after is not None:
        tokens = f"{row.before:,}→{row.after:,}"
    elif row.before is not None:
        tokens = f"{row.before:,}"
    else:
        tokens = ""
    return [
        row.time[5:16] if row.time else "",
        _short_processor(row.processor),
        Text(_clip(row.outcome, OUTCOME_WIDTH), style),
        Text(tokens, justify="right"),
        Text(f"{row.reduction:.0%}" if row.reduction is not None else "", justify="right"),
        Text(str(row.retries) if row.retries is not None else "", justify="right"),
        row.session,
        row.title if row.error is None else row.error.source,
    ]


def filters_text(
    processor: str | None, outcome: str | None, column: str, reverse: bool, shown: str
) -> Text:
    """The filter line: processor, outcome, sort and rows shown."""
    text = Text()
    text.append(" processor ", "dim")
    text.append(_short_processor(processor) if processor else "all", "bold")
    text.append("  outcome ", "dim")
    text.append(outcome or "all", "bold")
    text.append("  sort ", "dim")
    text.append(column + (" ↑" if reverse else ""), "bold")
    text.append(f"  rows {shown}", "dim")
    return text


BROWSER_BINDINGS: list[BindingType] = [
    Binding("enter", "open_row", "Open", tooltip="Open the selected context (error rows: say why)"),
    Binding("slash", "focus_filter", "Filter", tooltip="Type to filter rows by any text"),
    Binding("p", "cycle_processor", "Processor", tooltip="Show one processor at a time, then all"),
    Binding(
        "o",
        "cycle_outcome",
        "Outcome",
        tooltip="compressed / not compressed / failed / error / all",
    ),
    Binding("s", "cycle_sort", "Sort", tooltip="Sort by the next column (or click a header)"),
    Binding("R", "reverse_sort", "Reverse", show=False, tooltip="Reverse the sort order"),
    Binding("ctrl+r", "reload", "Reload", show=False, tooltip="Read the sources again"),
    Binding(
        "ctrl+o",
        "connect",
        "Connect",
        tooltip="Attach to a running agent (gateway ws://, trajectory http://) or follow a folder",
    ),
    Binding(
        "ctrl+x",
        "disconnect",
        "Disconnect",
        show=False,
        tooltip="Close the live connection (rows it produced stay)",
    ),
    Binding("escape", "clear_filter", "Clear filter", show=False),
]


class BrowserTable(DataTable[Any]):
    """The browser's table: Home/g and End/G go to the first and the last row."""

    BINDINGS = [
        Binding("home,g", "scroll_top", "First row", show=False),
        Binding("end,G", "scroll_bottom", "Last row", show=False),
    ]
