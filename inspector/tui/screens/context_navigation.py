"""The context view's navigation: search, region jumps and the layout toggle.

A mixin of ContextScreen (which owns `decision`, `matches` and `current_messages`); it reads
only the protocol's `Decision` (regions, labels), never a strategy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self

from textual.widgets import Input

from inspector.core.messages import Message
from inspector.core.strategy.base import Decision
from inspector.render.verdict import search_text
from inspector.tui.widgets.message_list import MessageList


class ContextNavigation:
    """Search (`/`, `n`, `N`), region starts (`<`, `>`) and the layout (`z`)."""

    decision: Decision | None
    matches: list[int]
    search_query: str
    showing_after: bool

    if TYPE_CHECKING:  # provided by the screen; declared for type checkers

        def current_messages(self) -> Sequence[Message]: ...

        def query_one(self, selector: Any, expect_type: Any = None) -> Any: ...

        def notify(self, message: str, **kwargs: Any) -> None: ...

        def set_class(self, add: bool, *class_names: str, update: bool = True) -> Self: ...

    def run_search(self, query: str) -> None:
        """Find `query` (case-insensitive) in content and tool calls; jump to the first match."""
        self.search_query = query.strip().lower()
        messages = self.current_messages()
        if not self.search_query:
            self.matches = []
        else:
            self.matches = [
                i for i, m in enumerate(messages) if self.search_query in search_text(m)
            ]
        message_list = self.query_one(MessageList)
        message_list.set_matches(self.matches)
        if not self.matches:
            if self.search_query:
                self.notify(f"no message contains {query!r}", severity="warning")
            return
        after = [i for i in self.matches if i >= message_list.cursor]
        message_list.move_to(after[0] if after else self.matches[0])
        self.notify(f"{len(self.matches)} matches for {query!r} (n / N)")

    def action_search(self) -> None:
        """Open the search box."""
        self.query_one("#search-bar").display = True
        self.query_one("#search", Input).focus()

    def action_next_match(self) -> None:
        """Next search match."""
        self._step_match(1)

    def action_previous_match(self) -> None:
        """Previous search match."""
        self._step_match(-1)

    def _step_match(self, direction: int) -> None:
        if not self.matches:
            return
        message_list = self.query_one(MessageList)
        cursor = message_list.cursor
        if direction > 0:
            following = [i for i in self.matches if i > cursor]
            target = following[0] if following else self.matches[0]
        else:
            before = [i for i in self.matches if i < cursor]
            target = before[-1] if before else self.matches[-1]
        message_list.move_to(target)

    def _boundaries(self) -> list[int]:
        """Where a region (or a per-message label run) starts."""
        if self.decision is None or self.showing_after:
            return []
        marks = {r.start for r in self.decision.regions if r.end > r.start}
        return sorted(marks)

    def action_next_boundary(self) -> None:
        """Jump to the start of the next region."""
        message_list = self.query_one(MessageList)
        following = [b for b in self._boundaries() if b > message_list.cursor]
        if following:
            message_list.move_to(following[0])
            self._say_region(following[0])

    def action_previous_boundary(self) -> None:
        """Jump to the start of this region, or of the previous one."""
        message_list = self.query_one(MessageList)
        before = [b for b in self._boundaries() if b < message_list.cursor]
        if before:
            message_list.move_to(before[-1])
            self._say_region(before[-1])

    def _say_region(self, index: int) -> None:
        if self.decision is not None:
            label = self.decision.message_labels.get(index)
            where = f"start of the {self.decision.region_label(index)}"
            self.notify(f"#{index}: {where}" + (f" ({label})" if label else ""), timeout=1.5)

    def action_toggle_side(self) -> None:
        """Cycle the layout: list and panel, list only, panel only (for small terminals)."""
        side, messages = self.query_one("#side"), self.query_one(MessageList)
        if side.display and messages.display:
            side.display = False
        elif messages.display:
            side.display, messages.display = True, False
        else:
            messages.display = True
            messages.focus()
        self.set_class(not messages.display, "-side-only")
