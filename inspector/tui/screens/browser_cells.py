"""The browser table's cells: one per column of `COLUMNS` for a `BrowserRow`, those of
values many rows show made once and shared (`shared_cell`), how wide each is
(`cell_width`), and the rows' sort keys.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions
from rich.measure import Measurement
from rich.segment import Segment
from rich.text import Text
from textual.render import measure
from textual.widgets._data_table import default_cell_formatter

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
#: A longer outcome is cut (the tuned ones, beside what was recorded, are the longest).
OUTCOME_WIDTH = 64
SESSION_WIDTH = 18
#: Longest id shown whole by `short_id`; longer ones keep their head and distinguishing tail.
ID_WIDTH = 26
#: The id column is never narrower than this while other columns can give way.
ID_MIN = 14
#: Outcome -> style name of `inspector.render.styles`.
OUTCOME_STYLES = {
    "compressed": "good",
    "not compressed": "caution",
    "unknown": "caution",
    "failed": "bad",
    "error": "error",
}


def short_processor(name: str) -> str:
    """A processor's name without its "Compressor" suffix (the whole name when that is all)."""
    return name.removesuffix("Compressor") or name


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def short_id(
    identifier: str, session: str = "", processor: str = "", width: int | None = ID_WIDTH
) -> str:
    """The part of an id that tells rows apart: without the session and processor the
    other columns show, and for one longer than `width` (None: any length) its head and its
    tail (where run numbers and timestamps are), joined by an ellipsis."""
    short = identifier
    if session:
        safe = session.replace("/", "-")
        for prefix in (f"{session}/", f"{safe}/"):
            short = short.removeprefix(prefix)
        for suffix in (f"_{safe}", f"_{session}"):
            short = short.removesuffix(suffix)
    if processor:
        # the processor is a column of its own, whatever joins it to the rest of the id
        for before in "_/-":
            short = short.replace(f"{before}{processor}", "")
        short = short.replace(processor, "")
    short = short.strip("/_-") or identifier
    return short if width is None else elide_middle(short, width)


def elide_middle(text: str, width: int) -> str:
    """`text` in at most `width` cells: its head and its longer tail around an ellipsis (the
    whole last part of a path when it fits: it names the case)."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    tail = width * 2 // 3
    last = text.rfind("/")
    if last > 0 and len(text) - last + 2 <= width:
        tail = len(text) - last
    return text[: width - tail - 1] + "…" + text[-tail:]


class IdText(Text):
    """An id cell: measured at its whole length, drawn elided in the middle to the width
    its column gets (`fit_columns`), so the head and the distinguishing tail both show."""

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        """Whole length at most, `ID_MIN` at least."""
        return Measurement(min(len(self.plain), ID_MIN), len(self.plain))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterable[Segment]:
        """The id elided in the middle to `options.max_width`."""
        shown = Text(elide_middle(self.plain, options.max_width), self.style, no_wrap=True)
        yield from shown.__rich_console__(console, options)


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


def plain_cell(text: str) -> Text:
    """A cell showing `text` as it is. DataTable reads a `str` cell as Rich markup: a session,
    processor or file name holding `[/]` raised MarkupError while the table was measured (a
    traceback, the app gone) and one holding `[bold]` lost those characters on screen."""
    return Text(text, no_wrap=True, end="")


class SharedText(Text):
    """A cell shown by every row with the same value (`shared_cell`), measured once."""

    measured: int | None = None


#: Cells kept by `shared_cell` before it starts again (each ~1 KB).
SHARED_MOST = 20_000
_shared: dict[tuple[str, str, Any], SharedText] = {}


def shared_cell(text: str, kind: str = "plain", style: Any = "") -> Text:
    """The cell `plain_cell(text)` ("plain"), `Text(text, style)` ("styled") or
    `Text(text, justify="right")` ("right") makes, one object for every row that shows it:
    a 50,000-file folder's rows share a few processors, outcomes, sessions and minutes,
    and making and measuring each row's cells anew was half the screen's work while it
    loaded. Rich draws a Text without changing it, so rows may share one."""
    key = (kind, text, style)
    cell = _shared.get(key)
    if cell is None:
        if len(_shared) >= SHARED_MOST:
            _shared.clear()
        if kind == "plain":
            cell = SharedText(text, no_wrap=True, end="")
        elif kind == "styled":
            cell = SharedText(text, style)
        else:
            cell = SharedText(text, justify="right")
        _shared[key] = cell
    return cell


def row_cells(row: BrowserRow, styles: Palette = DEFAULT_PALETTE) -> list[Text]:
    """The table cells of one row (the outcome styled from `styles`), every one a Rich
    `Text` (`plain_cell`), those of values many rows show shared (`shared_cell`)."""
    style = styles(OUTCOME_STYLES.get(row.outcome_kind, "plain"))
    if row.before is not None and row.after is not None:
        tokens = f"{row.before:,}→{row.after:,}"
    elif row.before is not None:
        tokens = f"{row.before:,}"
    else:
        tokens = ""
    return [
        shared_cell(row.time[5:16] if row.time else ""),
        shared_cell(short_processor(row.processor)),
        shared_cell(_clip(row.outcome, OUTCOME_WIDTH), "styled", style),
        Text(tokens, justify="right"),
        shared_cell(f"{row.reduction:.0%}" if row.reduction is not None else "", "right"),
        shared_cell(str(row.retries) if row.retries is not None else "", "right"),
        shared_cell(_clip(row.session, SESSION_WIDTH)),
        IdText(short_id(row.title, row.session, row.processor, width=None))
        if row.error is None and row.artifact is not None
        else plain_cell(_source_tail(row.error.source if row.error is not None else row.title)),
    ]


def _source_tail(path: str) -> str:
    """A file path by its distinguishing end (the file name and its folder)."""
    parts = path.replace("\\", "/").rsplit("/", 2)
    tail = "/".join(parts[-2:]) if len(parts) > 1 else path
    return tail if len(tail) <= ID_WIDTH * 2 else "…" + tail[-ID_WIDTH * 2 :]


def cell_width(cell: Any, console: Console, options: ConsoleOptions) -> int:
    """The width `textual.render.measure(console, cell, 1)` gives a cell of this table, with
    `options` made once by the caller (`console.options` builds them anew at every call)."""
    if type(cell) is Text:
        return _text_width(cell)
    if type(cell) is SharedText:
        if cell.measured is None:
            cell.measured = _text_width(cell)
        return cell.measured
    if not isinstance(cell, Text):
        return measure(console, default_cell_formatter(cell, wrap=False, height=1), 1)
    return max(0, cell.__rich_measure__(console, options).maximum)


def _text_width(cell: Text) -> int:
    """Rich's measure of a plain Text, its maximum only: the widest line."""
    return max(map(cell_len, cell.plain.splitlines()), default=0)
