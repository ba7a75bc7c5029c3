"""WhyPanel: checks, findings, recorded beside re-evaluated, and the flips as buttons.

Attributes down (`show_*`), messages up: `WhyPanel.FlipChosen` when a flip button is pressed.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.message import Message as TextualMessage
from textual.widgets import Button, Static

from inspector.core.strategy.base import Flip
from inspector.render.sweep_chart import format_value

#: Flip buttons shown (keys 1-9 apply them).
MAX_FLIP_BUTTONS = 9


def flip_label(number: int, flip: Flip) -> str:
    """Button text: key number, the verdict it gives, then the change."""
    value = (
        format_value(flip.value)
        if isinstance(flip.value, int | float) and not isinstance(flip.value, bool)
        else str(flip.value)
    )
    current = (
        format_value(flip.current)
        if isinstance(flip.current, int | float) and not isinstance(flip.current, bool)
        else str(flip.current)
    )
    decision = flip.decision
    # the outcome first: a narrow panel cuts the end of the label, never what the flip does
    then = decision.verdict.lower() if decision.hit else f"stops ({decision.reason})"
    if not isinstance(flip.value, int | float) or isinstance(flip.value, bool):
        return f"{number} {then}: {flip.param} → {value}"
    return f"{number} {then}: {flip.param} {current}→{value}"


class FlipButton(Button):
    """A button that applies flip number `number` (0-based)."""

    def __init__(self, label: str, number: int) -> None:
        super().__init__(label, classes="flip", compact=True)
        self.number = number


class WhyPanel(VerticalScroll):
    """The why report of the current tuning."""

    _recorded_rows = -1

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        #: Plain text last drawn into each static (an unchanged part is not drawn again).
        self._texts: dict[str, str] = {}

    DEFAULT_CSS = """
    WhyPanel { padding: 0 1; }
    WhyPanel .why-heading { text-style: bold underline; margin-top: 1; }
    WhyPanel #why-flips { height: auto; margin-bottom: 1; }
    WhyPanel #why-flips Button { width: 100%; height: auto; text-wrap: wrap; border: none; min-width: 10; margin: 0; text-align: left; content-align: left middle; }
    """

    class FlipChosen(TextualMessage):
        """The user pressed the button of flip number `number` (0-based)."""

        def __init__(self, number: int) -> None:
            super().__init__()
            self.number = number

    def compose(self) -> ComposeResult:
        """Verdict, checks and findings, flips, recorded comparison, timeline."""
        yield Static(id="why-verdict", markup=False)
        yield Static(
            "Smallest change that flips the verdict",
            classes="why-heading",
            id="why-flips-heading",
            markup=False,
        )
        with Vertical(id="why-flips"):
            yield Static(id="why-flips-note", markup=False)
        yield Static(id="why-body", markup=False)
        yield Static(
            "Recorded by the source, beside our re-evaluation", classes="why-heading", markup=False
        )
        yield Static(id="why-recorded", markup=False)
        yield Static("Recorded timeline", classes="why-heading", markup=False)
        yield Static(id="why-timeline", markup=False)

    def show_report(self, verdict: RenderableType, body: RenderableType | None) -> None:
        """Verdict line(s) and the checks/findings body (None: the body stays as it is)."""
        for name, part in (("why-verdict", verdict), ("why-body", body)):
            if part is None:
                continue
            text = plain_of(part)
            if self._texts.get(name) != text:
                self._texts[name] = text
                self.query_one(f"#{name}", Static).update(part)

    def show_recorded(
        self, recorded: RenderableType, timeline: RenderableType | None = None
    ) -> None:
        """The recorded-vs-ours table, and the timeline when given (it never changes)."""
        rows = recorded.row_count if isinstance(recorded, Table) else -2
        self.query_one("#why-recorded", Static).update(recorded, layout=rows != self._recorded_rows)
        self._recorded_rows = rows
        if timeline is not None:
            text = plain_of(timeline)
            if self._texts.get("why-timeline") != text:
                self._texts["why-timeline"] = text
                self.query_one("#why-timeline", Static).update(timeline)

    def show_flips(
        self,
        flips: Sequence[Flip] | None,
        available: bool = True,
        unavailable: str = "",
        dropped: int = 0,
    ) -> None:
        """One button per flip (None: still computing; not `available`: no context, no section).

        `unavailable` names why flips do not apply (the section then shows only that note).
        Existing buttons are relabelled rather than remounted, so an update costs no layout
        when the number of flips stays the same.
        """
        box = self.query_one("#why-flips", Vertical)
        box.display = available
        self.query_one("#why-flips-heading").display = available
        note = self.query_one("#why-flips-note", Static)
        if not available:
            return
        wanted = list(flips[:MAX_FLIP_BUTTONS]) if flips and not unavailable else []
        said = (
            unavailable
            or ("computing…" if flips is None else "")
            or ("" if flips else "no single change flips the verdict")
        )
        if dropped and flips is not None:
            said = (said + "; " if said else "") + (
                f"{dropped} change{'s' if dropped != 1 else ''} would trigger a compression that"
                " openJiuwen drops for no benefit (the new context would not be smaller)"
            )
        if said and self._texts.get("why-flips-note") != said:
            self._texts["why-flips-note"] = said
            note.update(Text(said, "dim"))
        note.display = not wanted or bool(dropped)
        buttons = list(box.query(FlipButton))
        for number, flip in enumerate(wanted):
            label = flip_label(number + 1, flip)
            if number < len(buttons):
                if str(buttons[number].label) != label:
                    buttons[number].label = label
                buttons[number].display = True
            else:
                box.mount(FlipButton(label, number))
        for button in buttons[len(wanted) :]:
            button.display = False

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """A flip button: tell the screen which one."""
        if isinstance(event.button, FlipButton):
            event.stop()
            self.post_message(self.FlipChosen(event.button.number))


def plain_of(renderable: RenderableType) -> str:
    """The plain text of a renderable at a fixed width (what tells two drawings apart)."""
    if isinstance(renderable, Text):
        return renderable.plain
    console = Console(width=120, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text(styles=True)


def why_body(parts: Sequence[RenderableType]) -> Group:
    """Join renderables with blank lines between them."""
    out: list[RenderableType] = []
    for part in parts:
        if out:
            out.append(Text(""))
        out.append(part)
    return Group(*out)
