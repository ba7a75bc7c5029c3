"""The context view's pin commands: pin one message (`P`) or a range (`V`: "pin messages").

Pins are the what-if of `inspector.core.pins`: messages kept verbatim (a range "never
compressed"), held beside the system messages so they count but are never part of the span.
`P` pins or unpins the message under the cursor; `V` opens a one-line prompt with the pins
written as `parse_pins` reads them (`3,7-9`) and the cursor's index started as a range
(`12-`): the user types the end (or edits the list), Enter applies it, an empty list clears
every pin, Esc closes the prompt. The list marks every pinned row, the bar's legend gives the
pinned tokens their own entry; the pins are kept with the tuning and written into an
exported snapshot (its `pins` key), and a snapshot that carries pins opens with them.
A mixin of ContextScreen (which owns `pins` and `apply_settings`); never names a strategy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.widgets import Input

from inspector.core.pins import PinError, format_pins, parse_pins, with_tool_groups
from inspector.core.snapshot import ContextSnapshot
from inspector.core.strategy.base import Settings

#: The prompt's placeholder (what it takes).
PIN_PROMPT = "pin messages: 7-9, 12 (kept verbatim; Enter: apply, empty: no pins, Esc: close)"


class PinActions:
    """Pin one message or ranges of them; mixed into ContextScreen."""

    snapshot: ContextSnapshot | None
    settings: Settings
    #: Message indices the user pinned (kept verbatim, a what-if).
    pins: frozenset[int] = frozenset()

    if TYPE_CHECKING:  # provided by the screen; declared for type checkers

        def notify(self, message: str, **kwargs: Any) -> None: ...

        def apply_settings(self, settings: Settings) -> None: ...

        def query_one(self, selector: Any, expect_type: Any = None) -> Any: ...

    def set_pins(self, pins: frozenset[int]) -> None:
        """Make `pins` the pinned messages: say which, mark the rows, decide again."""
        from inspector.tui.widgets.message_list import MessageList

        if self.snapshot is None:
            return
        self.pins = frozenset(pins)
        shown = format_pins(self.pins) or "none"
        self.notify(f"pins: {shown} (what-if: kept verbatim; openJiuwen has no pins)", timeout=4)
        self.query_one(MessageList).set_pins(self.pinned_rows())
        self.apply_settings(self.settings)

    def pinned_rows(self) -> frozenset[int]:
        """The rows the list marks: every pin, widened over tool calls as the what-if does."""
        if self.snapshot is None or not self.pins:
            return frozenset()
        return with_tool_groups(self.snapshot.messages, self.pins)

    def action_toggle_pin(self) -> None:
        """Pin or unpin the message under the cursor (keep verbatim, a what-if)."""
        from inspector.tui.widgets.message_list import MessageList

        if self.snapshot is None:
            return
        index = self.query_one(MessageList).cursor
        if 0 <= index < len(self.snapshot.messages):
            self.set_pins(self.pins ^ {index})

    def action_pin_range(self) -> None:
        """Open the pins prompt: the pins so far and a range started at the cursor."""
        from inspector.tui.widgets.message_list import MessageList

        if self.snapshot is None:
            return
        cursor = self.query_one(MessageList).cursor
        written = format_pins(self.pins)
        box = self.query_one("#pins", Input)
        box.value = f"{written},{cursor}-" if written else f"{cursor}-"
        self.query_one("#pins-bar").display = True
        # at once, not on the next idle: keys typed right after `V` go into the prompt
        screen: Any = self  # a Textual screen (the mixin declares no Screen methods)
        screen.set_focus(box)
        box.cursor_position = len(box.value)

    def close_pins_prompt(self) -> bool:
        """Close the pins prompt if it is open (focus back on the list); whether it was."""
        from inspector.tui.widgets.message_list import MessageList

        bar = self.query_one("#pins-bar")
        if not bar.display:
            return False
        bar.display = False
        self.query_one(MessageList).focus()
        return True

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the pins prompt: a bad part is said (the prompt stays open), indices past
        the last message are dropped with a word."""
        if event.input.id != "pins" or self.snapshot is None:
            return
        event.stop()
        try:
            asked = parse_pins(event.value)
        except PinError as error:
            self.notify(f"pins: {error}", severity="error", timeout=4)
            return
        count = len(self.snapshot.messages)
        beyond = frozenset(i for i in asked if i >= count)
        if beyond:
            self.notify(
                f"pins: {format_pins(beyond)} past the last message #{count - 1}: left out",
                severity="warning",
                timeout=4,
            )
        self.close_pins_prompt()
        self.set_pins(asked - beyond)
