"""TuningPanel: one control per tuning field, and recorded vs tuned side by side.

Messages up: `TuningPanel.Edited(field, value)` after a control changed to a valid value,
`TuningPanel.ResetPressed` for the reset button. The screen validates with core and calls
`show(...)` back; programmatic updates never echo as `Edited`.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message as TextualMessage
from textual.widgets import Button, Input, Label, Select, Static

from inspector.core.tokens import TOKEN_MODES
from inspector.core.tuning import PROCESSOR_CLASS_NAMES, PROCESSOR_KINDS, Tuning
from inspector.render.sweep_chart import format_value

#: Field -> (label with its keys, input type) for the text inputs.
NUMBER_FIELDS: dict[str, tuple[str, str]] = {
    "trigger_ratio": ("trigger     [ ]", "number"),
    "min_target_ratio": ("min-target  { }", "number"),
    "keep_recent": ("keep-recent - +", "integer"),
    "context_max": ("context_max", "integer"),
}
FIELD_LABELS: dict[str, str] = {
    "processor": "processor",
    "trigger_ratio": "trigger ratio",
    "min_target_ratio": "min-target ratio",
    "keep_recent": "keep-recent",
    "tool_boundary": "tool boundary",
    "context_max": "context_max",
    "token_mode": "token counter",
}


#: Fields the HybridCompressor pipeline does not use (dimmed while it is the processor).
HYBRID_UNUSED_FIELDS: tuple[str, ...] = ("min_target_ratio", "tool_boundary")
#: What the panel says about the fields while hybrid is the processor.
HYBRID_TUNING_NOTE = (
    "hybrid: context_max is the budget (max_context_tokens), trigger the compression_threshold, "
    "keep-recent the last N turns never folded (0: the spec default 5); min-target and the "
    "tool boundary do not apply (the window never splits a tool-call pair)."
)


def show_value(name: str, value: Any) -> str:
    """A tuning value as shown in the panel."""
    if name == "processor":
        return PROCESSOR_CLASS_NAMES.get(value, str(value)).removesuffix("Compressor")
    if name == "tool_boundary":
        return "on" if value else "off (what-if)"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return format(value, "g")
    if isinstance(value, int):
        return format_value(value)
    return str(value)


def input_text(value: int | float) -> str:
    """A number as typed in an input: full precision, no thousands separators."""
    return format(value, "g") if isinstance(value, float) else str(value)


def parse_number(name: str, text: str) -> int | float | None:
    """The typed value of a number field, or None when the text is not a number yet."""
    try:
        if NUMBER_FIELDS[name][1] == "integer":
            return int(text.replace(",", "").replace("_", ""))
        return float(text)
    except ValueError:
        return None


class TuningPanel(VerticalScroll, can_focus=False):
    """Controls for processor, ratios, keep-recent, tool boundary, context_max, counter."""

    DEFAULT_CSS = """
    TuningPanel { padding: 0 1; }
    TuningPanel .tuning-row { height: 1; }
    TuningPanel .tuning-row Label { width: 16; }
    TuningPanel .tuning-row Input { width: 1fr; }
    TuningPanel .tuning-row Select { width: 1fr; }
    TuningPanel .tuning-row.-changed Label { color: $warning; text-style: bold; }
    TuningPanel #tuning-hint { color: $error; height: auto; }
    TuningPanel #tuning-note { color: $text-muted; height: auto; }
    TuningPanel .tuning-row.-unused Label { color: $text-disabled; }
    TuningPanel #tuning-buttons { height: 1; margin: 1 0; }
    TuningPanel #tuning-buttons Button { margin-right: 2; }
    """

    class Edited(TextualMessage):
        """The user set `field` to `value` in a control."""

        def __init__(self, field: str, value: Any) -> None:
            super().__init__()
            self.field = field
            self.value = value

    class ResetPressed(TextualMessage):
        """The user pressed reset."""

    class ComparePressed(TextualMessage):
        """The user pressed compare."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        #: The value each control was last set to by `show` (changes equal to it are echoes).
        self._shown: dict[str, Any] = {}
        self._problem = ""
        self._table_rows = -1
        #: Whether the hybrid note is on screen.
        self._hybrid_note = False

    def compose(self) -> ComposeResult:
        """One row per field, then buttons and the comparison table."""
        with Horizontal(classes="tuning-row", id="row-processor"):
            yield Label("processor   p")
            yield Select(
                [(PROCESSOR_CLASS_NAMES[k], k) for k in PROCESSOR_KINDS],
                allow_blank=False,
                id="processor",
                compact=True,
            )
        for name, (label, kind) in NUMBER_FIELDS.items():
            with Horizontal(classes="tuning-row", id=f"row-{name}"):
                yield Label(label)
                yield Input(id=name, type=kind, compact=True)  # type: ignore[arg-type]
        with Horizontal(classes="tuning-row", id="row-tool_boundary"):
            yield Label("boundary    b")
            yield Select(
                [("on (openJiuwen)", "on"), ("off (what-if)", "off")],
                allow_blank=False,
                id="tool_boundary",
                compact=True,
            )
        with Horizontal(classes="tuning-row", id="row-token_mode"):
            yield Label("tokens      m")
            yield Select(
                [(m, m) for m in TOKEN_MODES], allow_blank=False, id="token_mode", compact=True
            )
        yield Static("", id="tuning-hint")
        yield Static("", id="tuning-note")
        with Horizontal(id="tuning-buttons"):
            yield Button("Reset to recorded (r)", id="tuning-reset", compact=True)
            yield Button("Compare (c)", id="tuning-compare", compact=True)
        yield Static(id="tuning-compare-table")

    def show(
        self, tuning: Tuning, recorded: Tuning, verdicts: tuple[Text, Text] | None = None
    ) -> None:
        """Set every control to `tuning` and mark fields that differ from `recorded`."""
        self._shown = {name: getattr(tuning, name) for name in FIELD_LABELS}
        with self.prevent(Input.Changed, Select.Changed):
            for name in ("processor", "token_mode", "tool_boundary"):
                select: Select[Any] = self.query_one(f"#{name}", Select)
                wanted = getattr(tuning, name)
                if name == "tool_boundary":
                    wanted = "on" if wanted else "off"
                if select.value != wanted:
                    select.value = wanted
            for name in NUMBER_FIELDS:
                box = self.query_one(f"#{name}", Input)
                current = parse_number(name, box.value)
                if current != getattr(tuning, name):
                    box.value = input_text(getattr(tuning, name))
        for name in FIELD_LABELS:
            self.query_one(f"#row-{name}").set_class(
                getattr(tuning, name) != getattr(recorded, name), "-changed"
            )
        hybrid = tuning.processor == "hybrid"
        for name in HYBRID_UNUSED_FIELDS:
            self.query_one(f"#row-{name}").set_class(hybrid, "-unused")
        if hybrid != self._hybrid_note:
            self._hybrid_note = hybrid
            self.query_one("#tuning-note", Static).update(HYBRID_TUNING_NOTE if hybrid else "")
        table = compare_table(tuning, recorded, verdicts)
        # Same number of rows as last time: the height cannot change, skip the layout pass.
        self.query_one("#tuning-compare-table", Static).update(
            table, layout=table.row_count != self._table_rows
        )
        self._table_rows = table.row_count

    def show_problem(self, text: str) -> None:
        """A validation message under the controls (empty clears it)."""
        if text != self._problem:
            self._problem = text
            self.query_one("#tuning-hint", Static).update(text)

    def on_input_changed(self, event: Input.Changed) -> None:
        """A number typed: post it when it parses (the screen validates the range)."""
        event.stop()
        name = event.input.id or ""
        if name not in NUMBER_FIELDS:
            return
        value = parse_number(name, event.value)
        if value is None:
            self.show_problem(f"{FIELD_LABELS[name]}: type a number" if event.value.strip() else "")
            return
        self._post_edit(name, value)

    def on_select_changed(self, event: Select.Changed) -> None:
        """Processor or token counter chosen."""
        event.stop()
        if event.value is Select.BLANK:
            return
        if event.select.id == "tool_boundary":
            self._post_edit("tool_boundary", event.value == "on")
        elif event.select.id in ("processor", "token_mode"):
            self._post_edit(event.select.id, event.value)

    def _post_edit(self, name: str, value: Any) -> None:
        """Tell the screen, unless this is a control echoing what `show` set (or set up)."""
        if name in self._shown and self._shown[name] != value:
            self.post_message(self.Edited(name, value))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Reset or compare."""
        if event.button.id == "tuning-reset":
            event.stop()
            self.post_message(self.ResetPressed())
        elif event.button.id == "tuning-compare":
            event.stop()
            self.post_message(self.ComparePressed())


def compare_table(tuning: Tuning, recorded: Tuning, verdicts: tuple[Text, Text] | None) -> Table:
    """Recorded and tuned values side by side; changed rows highlighted."""
    table = Table(box=None, pad_edge=False, header_style="bold", show_edge=False)
    table.add_column("")
    table.add_column("recorded")
    table.add_column("tuned")
    for name, label in FIELD_LABELS.items():
        old, new = getattr(recorded, name), getattr(tuning, name)
        style = "bold yellow" if old != new else ""
        table.add_row(label, show_value(name, old), Text(show_value(name, new), style))
    table.add_row("threshold", f"{recorded.threshold:,}", Text(f"{tuning.threshold:,}"))
    table.add_row(
        "min target", f"{recorded.min_target_tokens:,}", Text(f"{tuning.min_target_tokens:,}")
    )
    if verdicts is not None:
        table.add_row("verdict", verdicts[0], verdicts[1])
    for column in table.columns:
        column.no_wrap = True
        column.overflow = "ellipsis"
    return table
