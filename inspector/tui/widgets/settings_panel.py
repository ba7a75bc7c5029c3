"""SettingsPanel: one control per field of a strategy's settings model, generated from it,
and recorded vs tuned side by side.

A new processor with new parameters appears here without new UI code. Messages up:
`SettingsPanel.Edited(field, value)` after a control changed to a parseable value,
`ResetPressed`, `ComparePressed`; the screen validates with the model and calls `show(...)`
back (programmatic updates never echo). `use_model` rebuilds the controls for another model.

The controls are built the first time the panel is shown (the Tune tab opened): they are
about half the widgets of the context view, and opening a context does not wait for them.
What `show` and `show_problem` were given meanwhile is applied once they exist.
"""

from __future__ import annotations

import typing
from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message as TextualMessage
from textual.widgets import Button, Input, Label, Select, Static

from inspector.core.strategy.base import Settings
from inspector.core.strategy.fields import FieldInfo, fields_of
from inspector.render.plain import PlainTable
from inspector.render.styles import DEFAULT_PALETTE, Palette
from inspector.tui.theme import THEME_COMPONENT_CLASSES, palette_of

#: What an optional field's empty input means.
UNSET = "unset"


class Unset:
    """The value of an emptied optional field (posted as None)."""


def optional_kind(model: type[Settings], name: str) -> str | None:
    """'int' or 'text' for a field typed `int | None` / `str | None`, else None."""
    hint = typing.get_type_hints(model).get(name)
    args = typing.get_args(hint)
    if type(None) not in args or len(args) != 2:
        return None
    inner = next(arg for arg in args if arg is not type(None))
    return "int" if inner is int else "text" if inner is str else None


def parse_field(info: FieldInfo, text: str, optional: str | None = None) -> Any:
    """The typed value of an input, or None while the text is not a number yet.

    An optional field (`optional` is its inner kind) reads an empty input as `Unset`.
    """
    if optional is not None and not text.strip():
        return Unset
    try:
        if info.kind == "int" or optional == "int":
            return int(text.replace(",", "").replace("_", ""))
        if info.kind == "float":
            return float(text)
    except ValueError:
        return None
    return text


def input_text(value: Any) -> str:
    """A value as typed in an input: full precision, no thousands separators (None: empty)."""
    if value is None:
        return ""
    return format(value, "g") if isinstance(value, float) else str(value)


class SettingsPanel(VerticalScroll, can_focus=False):
    """Controls for every field of one settings model, changed fields marked."""

    COMPONENT_CLASSES = set(THEME_COMPONENT_CLASSES)
    DEFAULT_CSS = """
    SettingsPanel { padding: 0 1; }
    SettingsPanel .settings-row { height: 1; }
    SettingsPanel .settings-row Label { width: 1fr; max-width: 28; min-width: 12; padding-right: 1; text-overflow: ellipsis; text-wrap: nowrap; }
    SettingsPanel .settings-row Input { width: 1fr; min-width: 14; }
    SettingsPanel .settings-row Select { width: 1fr; min-width: 14; }
    SettingsPanel .settings-row.-changed Label { color: $warning; text-style: bold; }
    SettingsPanel #settings-problem { color: $error; height: auto; }
    SettingsPanel #settings-help { color: $text-muted; height: auto; margin-top: 1; }
    SettingsPanel #settings-buttons { height: 1; margin: 1 0; }
    SettingsPanel #settings-buttons Button { margin-right: 2; }
    """

    class ResetPressed(TextualMessage):
        """The user pressed reset."""

    class ComparePressed(TextualMessage):
        """The user pressed compare."""

    class Edited(TextualMessage):
        """The user set `field` to `value`."""

        def __init__(self, field: str, value: Any) -> None:
            super().__init__()
            self.field = field
            self.value = value

    def __init__(self, model: type[Settings], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model = model
        self.fields = {info.name: info for info in fields_of(model)}
        self.optional = {name: optional_kind(model, name) for name in self.fields}
        self._shown: dict[str, Any] = {}
        self._problem = ""
        #: Whether the controls exist (built when the panel is first shown).
        self.built = False
        #: While the controls are being (re)built (`_rebuild`): `show` waits for them.
        self._rebuilding = False
        #: The last `show` arguments received before the controls existed.
        self._pending: tuple[Settings, Settings | None, tuple[Text, Text] | None] | None = None
        #: Field -> values posted from its input since it got focus: a `show` of one of them
        #: comes back from what the user typed and must not overwrite the text typed since.
        self._typed: dict[str, list[Any]] = {}
        #: The last `show` arguments (shown again into an input when it loses focus).
        self._last: tuple[Settings, Settings | None, tuple[Text, Text] | None] | None = None

    async def on_show(self) -> None:
        """First shown: build the controls, then show what was waiting."""
        if self.built:
            return
        self.built = True
        await self._rebuild()

    async def _rebuild(self) -> None:
        """Compose the controls again, then show the problem and the settings that came
        meanwhile. A `show` during the recompose (a count finished while `p` swapped the
        strategy) found the old controls gone: NoMatches, the app gone with a traceback."""
        self._rebuilding = True
        try:
            await self.recompose()
        finally:
            self._rebuilding = False
        if self._problem:
            self.query_one("#settings-problem", Static).update(self._problem)
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self.show(*pending)

    def compose(self) -> ComposeResult:
        """One row per field, the problem line and the field descriptions (once shown)."""
        if not self.built:
            return
        for info in self.fields.values():
            with Horizontal(classes="settings-row", id=f"row-{info.name}"):
                yield Label(info.name + (" (what-if)" if info.what_if else ""))
                if info.kind in ("choice", "bool"):
                    options = info.choices if info.kind == "choice" else (True, False)
                    yield Select(
                        [(str(option), option) for option in options],
                        allow_blank=False,
                        id=f"field-{info.name}",
                        compact=True,
                    )
                else:
                    optional = self.optional.get(info.name)
                    kind = (
                        "integer"
                        if info.kind == "int" or optional == "int"
                        else "number"
                        if info.kind == "float"
                        else "text"
                    )
                    yield Input(
                        id=f"field-{info.name}",
                        type=kind,  # type: ignore[arg-type]
                        compact=True,
                        placeholder=f"{UNSET} (empty)" if optional else "",
                        tooltip=f"empty: {UNSET} (None)" if optional else None,
                    )
        yield Static("", id="settings-problem", markup=False)
        with Horizontal(id="settings-buttons"):
            yield Button("Reset to recorded (r)", id="settings-reset", compact=True)
            yield Button("Compare (c)", id="settings-compare", compact=True)
        yield Static(id="settings-compare-table", markup=False)
        yield Static(
            "\n".join(
                f"{i.name}: {i.description} ({i.range_text()})" for i in self.fields.values()
            ),
            id="settings-help",
            markup=False,
        )

    async def use_model(self, model: type[Settings]) -> None:
        """Rebuild the controls for another strategy's settings model."""
        if model is not self.model:
            self.model = model
            self.fields = {info.name: info for info in fields_of(model)}
            self.optional = {name: optional_kind(model, name) for name in self.fields}
            self._shown = {}
            self._pending = None
            if self.built:
                await self._rebuild()

    def show(
        self,
        settings: Settings,
        recorded: Settings | None,
        verdicts: tuple[Text, Text] | None = None,
    ) -> None:
        """Set every control to `settings`; mark the fields that differ from `recorded`."""
        if type(settings) is not self.model:
            return  # the model is being swapped; the screen shows again when it is
        if not self.built or self._rebuilding:
            self._pending = (settings, recorded, verdicts)
            return
        if recorded is not None and type(recorded) is self.model:
            self.query_one("#settings-compare-table", Static).update(
                compare_table(settings, recorded, verdicts, palette_of(self))
            )
        self._shown = settings.model_dump()
        self._last = (settings, recorded, verdicts)
        with self.prevent(Input.Changed, Select.Changed):
            for name, info in self.fields.items():
                value = getattr(settings, name)
                if info.kind in ("choice", "bool"):
                    select: Select[Any] = self.query_one(f"#field-{name}", Select)
                    if select.value != value:
                        select.value = value
                else:
                    box = self.query_one(f"#field-{name}", Input)
                    if box.has_focus and value in self._typed.get(name, ()):
                        pass  # the user is typing here: this value is one typed before
                    elif self._differs(info, box.value, value):
                        box.value = input_text(value)
                changed = recorded is not None and getattr(recorded, name, value) != value
                self.query_one(f"#row-{name}").set_class(changed, "-changed")

    def _differs(self, info: FieldInfo, text: str, value: Any) -> bool:
        """Whether an input's `text` does not read as `value`."""
        shown = parse_field(info, text, self.optional.get(info.name))
        return (None if shown is Unset else shown) != value or (
            value is None and bool(text.strip())
        )

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """An input got focus: what is typed into it from now on is the user's."""
        self._typed.pop((event.widget.id or "").removeprefix("field-"), None)

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        """An input lost focus: it shows the value applied (not a half-typed or refused one)."""
        name = (event.widget.id or "").removeprefix("field-")
        self._typed.pop(name, None)
        info = self.fields.get(name)
        if self._last is None or info is None or not isinstance(event.widget, Input):
            return
        value = getattr(self._last[0], name, None)
        if type(self._last[0]) is self.model and self._differs(info, event.widget.value, value):
            with self.prevent(Input.Changed):
                event.widget.value = input_text(value)
            self.show_problem("")  # the refused text is gone

    def show_problem(self, text: str) -> None:
        """A validation message under the controls (empty clears it; unchanged: no redraw)."""
        if text != self._problem:
            self._problem = text
            if self.built and not self._rebuilding:
                self.query_one("#settings-problem", Static).update(text)

    def on_input_changed(self, event: Input.Changed) -> None:
        """A value typed: post it when it parses (the screen validates the range)."""
        event.stop()
        name = (event.input.id or "").removeprefix("field-")
        info = self.fields.get(name)
        if info is None:
            return
        value = parse_field(info, event.value, self.optional.get(name))
        if value is None:
            self.show_problem(f"{name}: type a number" if event.value.strip() else "")
            return
        value = None if value is Unset else value
        typed = self._typed.setdefault(name, [])
        if value not in typed:
            typed.append(value)
        self._post(name, value)

    def on_select_changed(self, event: Select.Changed) -> None:
        """A choice made. A change to a value the select no longer holds is stale: a new
        select takes its first option when it mounts and says so after `show` has set the
        shown value, so the first look at the Tune tab switched token_mode to
        tiktoken_cl100k (the first choice) and counted the context again."""
        event.stop()
        if event.value is Select.NULL or event.value != event.select.value:
            return  # (Select.BLANK is False, a real choice here)
        self._post((event.select.id or "").removeprefix("field-"), event.value)

    def _post(self, name: str, value: Any) -> None:
        if name in self._shown and self._shown[name] != value:
            self.post_message(self.Edited(name, value))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Reset or compare."""
        if event.button.id == "settings-reset":
            event.stop()
            self.post_message(self.ResetPressed())
        elif event.button.id == "settings-compare":
            event.stop()
            self.post_message(self.ComparePressed())


def show_value(value: Any) -> str:
    """A setting as shown in the table."""
    if value is None:
        return UNSET
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return format(value, "g")
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def compare_table(
    settings: Settings,
    recorded: Settings,
    verdicts: tuple[Text, Text] | None,
    styles: Palette = DEFAULT_PALETTE,
) -> PlainTable:
    """Recorded and tuned values side by side; changed rows highlighted."""
    table = PlainTable(box=None, pad_edge=False, header_style="bold", show_edge=False)
    table.add_column("")
    table.add_column("recorded")
    table.add_column("tuned")
    for info in fields_of(type(settings)):
        old, new = getattr(recorded, info.name), getattr(settings, info.name)
        style = styles("changed", "bold") if old != new else ""
        table.add_row(info.name, show_value(old), Text(show_value(new), style))
    if verdicts is not None:
        table.add_row("verdict", verdicts[0], verdicts[1])
    for column in table.columns:
        column.no_wrap = True
        column.overflow = "ellipsis"
    return table
