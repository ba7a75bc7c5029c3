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
    ("tokens", "before→after"),
    ("reduction", "cut"),
    ("retries", "retry"),
    ("session", "session"),
    ("title", "id / source"),
)
OUTCOME_WIDTH = 28
SESSION_WIDTH = 18
#: Longest id shown whole; longer ones keep their head and their distinguishing tail.
ID_WIDTH = 26
#: Outcome -> style name of `inspector.render.styles`.
OUTCOME_STYLES = {
    "compressed": "good",
    "not compressed": "caution",
    "unknown": "caution",
    "failed": "bad",
    "error": "error",
}


def _short_processor(name: str) -> str:
    return name.removesuffix("Compressor") or name


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def short_id(identifier: str, session: str = "", processor: str = "") -> str:
    """The part of an id that tells rows apart: without the session and processor the
    other columns show, and for a long one its head and its tail (where run numbers and
    timestamps are), joined by an ellipsis."""
    short = identifier
    if session:
        safe = session.replace("/", "-")
        for prefix in (f"{session}/", f"{safe}/"):
            short = short.removeprefix(prefix)
        for suffix in (f"_{safe}", f"_{session}"):
            short = short.removesuffix(suffix)
    if processor:
        short = short.replace(f"_{processor}", "").replace(f"/{processor}", "")
    short = short.strip("/_") or identifier
    if len(short) <= ID_WIDTH:
        return short
    tail = ID_WIDTH * 2 // 3
    return short[: ID_WIDTH - tail - 1] + "…" + short[-tail:]


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
        _clip(row.session, SESSION_WIDTH),
        short_id(row.title, row.session, row.processor)
        if row.error is None and row.artifact is not None
        else _source_tail(row.error.source if row.error is not None else row.title),
    ]


def _source_tail(path: str) -> str:
    """A file path by its distinguishing end (the file name and its folder)."""
    parts = path.replace("\\", "/").rsplit("/", 2)
    tail = "/".join(parts[-2:]) if len(parts) > 1 else path
    return tail if len(tail) <= ID_WIDTH * 2 else "…" + tail[-ID_WIDTH * 2 :]


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
        tooltip="compressed / not compressed / unknown / failed / error / all",
    ),
    Binding("s", "cycle_sort", "Sort", tooltip="Sort by the next column (or click a header)"),
    Binding("R", "reverse_sort", "Reverse", show=False, tooltip="Reverse the sort order"),
    Binding("ctrl+r", "reload", "Reload", show=False, tooltip="Read the sources again"),
    Binding(
        "O",
        "focus_operations",
        "Operations",
        show=False,
        tooltip="Focus the live operations list: Enter opens an operation's detail",
    ),
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
