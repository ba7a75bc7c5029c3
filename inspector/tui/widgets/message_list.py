"""MessageList: the context's messages, one line each, rendered with the Line API.

Only visible rows are built (render_line; previews too, on first display), so a 20,000-message context scrolls as fast as a
short one. Attributes down: the screen calls `show(...)` and `set_regions(...)`; messages
up: `MessageList.Highlighted` when the cursor moves, `MessageList.Chosen` on Enter/click.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message as TextualMessage
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from inspector.core.engine import Span
from inspector.core.messages import Message
from inspector.core.redact import shown_name
from inspector.core.strategy.base import Decision
from inspector.render.styles import COMPONENT_CLASSES, REGION_COMPONENT_CLASSES, Palette
from inspector.tui.theme import THEME_COMPONENT_CLASSES, component_style, palette_of

ROLE_WIDTH = 9
TOKENS_WIDTH = 7
LINK_WIDTH = 6
#: Cells before the preview: region mark, index, role, tokens, link, changed mark.
FIXED_WIDTH = 1 + 6 + ROLE_WIDTH + TOKENS_WIDTH + 1 + LINK_WIDTH + 1
#: The mark of a pinned message (in the changed-mark column: a pin is what changed it).
PIN_MARK = "◆"
#: Cells of the label column shown when a strategy labels its rows (per-message outcomes).
OUTCOME_WIDTH = 21


@dataclass(frozen=True, slots=True)
class RowData:
    """What one line shows: everything except region and highlight state."""

    role: str
    preview: str
    tokens: int | None
    link: str


class MessageList(ScrollView, can_focus=True):
    """Virtualized list of messages with a region colour bar, cursor, search matches."""

    COMPONENT_CLASSES = {
        "message-list--cursor",
        "message-list--match",
        "message-list--changed",
        "message-list--index",
        *THEME_COMPONENT_CLASSES,
    }
    DEFAULT_CSS = """
    MessageList > .message-list--cursor { background: $accent 40%; text-style: bold; }
    MessageList:focus > .message-list--cursor { background: $accent 70%; }
    MessageList > .message-list--match { background: $warning 30%; }
    MessageList > .message-list--changed { text-style: bold italic; }
    MessageList > .message-list--index { color: $text-muted; }
    """
    BINDINGS = [
        Binding("up,k", "cursor_up", "Up", show=False),
        Binding("down,j", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home,g", "first", "First", show=False),
        Binding("end,G", "last", "Last", show=False),
        Binding("enter", "choose", "Details", show=False),
    ]

    cursor: reactive[int] = reactive(0, always_update=True)

    class Highlighted(TextualMessage):
        """The cursor moved to message `index`."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    class Chosen(TextualMessage):
        """Enter or a click chose message `index`."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._messages: Sequence[Message] = ()
        self._tokens: Sequence[int] | None = None
        self._links: Mapping[int, Sequence[int]] = {}
        self._row_data: dict[int, RowData] = {}
        self._span: Span | None = None
        self._matches: frozenset[int] = frozenset()
        self._changed: tuple[range, ...] = ()
        self._cache: dict[tuple[int, int, str, bool, bool, bool, bool], Strip] = {}
        self._styles: dict[str, Style] = {}
        #: A strategy's decision colouring and labelling the rows (the protocol's view).
        self._decision: Decision | None = None
        #: Rows marked as pinned (the screen's pins, widened over tool calls).
        self._pins: frozenset[int] = frozenset()
        #: Screen line -> the key of the line last drawn there (what a change must repaint).
        self._drawn: dict[int, tuple[int, int, str, bool, bool, bool, bool]] = {}

    # --- attributes down ---------------------------------------------------------------

    def show(
        self,
        messages: Sequence[Message],
        tokens: Sequence[int] | None,
        links: Mapping[int, Sequence[int]],
    ) -> None:
        """Replace the rows (a new context, or before/after switched); nothing is built yet."""
        self._messages = messages
        self._tokens = tokens
        self._links = links
        self._row_data.clear()
        self._cache.clear()
        self.virtual_size = Size(self.size.width, len(messages))
        self.cursor = min(self.cursor, max(len(messages) - 1, 0))
        self.refresh()

    def set_tokens(self, tokens: Sequence[int] | None) -> None:
        """New per-message token counts (another token counter)."""
        self._tokens = tokens
        self._row_data.clear()
        self._cache.clear()
        self.refresh()

    def _row(self, index: int) -> RowData:
        """Role, preview, tokens and link of one message, built on first display."""
        row = self._row_data.get(index)
        if row is None:
            message = self._messages[index]
            link = ""
            targets = self._links.get(index, ())
            if targets:
                arrow = "→" if message.role == "assistant" else "←"
                link = f"{arrow}{targets[0]}" + ("+" if len(targets) > 1 else "")
            role = message.role
            if message.role == "user" and not message.is_real_user:
                role = "user*"
            row = RowData(
                role=role,
                preview=shown_name(message.text_preview(300)),  # no escape reaches the terminal
                tokens=None if self._tokens is None else self._tokens[index],
                link=link,
            )
            if len(self._row_data) > 5000:
                self._row_data.clear()
            self._row_data[index] = row
        return row

    def set_regions(self, span: Span | None, changed: Sequence[range] = ()) -> None:
        """Colour rows by region; rows in the `changed` ranges are marked (region differs from recorded)."""
        self._span = span
        self._changed = tuple(changed)
        self._decision = None
        self._cache.clear()
        self.refresh()

    def set_decision(self, decision: Decision | None) -> None:
        """Colour rows by a strategy's regions and label them with its per-message labels
        (the changed marks stay until `set_changed`, which the screen calls next: dropping
        them here repainted the marked lines twice per key)."""
        self._decision = decision
        if decision is not None:
            self._span = None
        # no cache to drop: a line's key holds its region and label, so unchanged rows stay
        self.refresh_changed_lines()

    def set_changed(self, changed: Sequence[range]) -> None:
        """Mark rows whose region differs from the recorded decision."""
        if tuple(changed) != self._changed:
            self._changed = tuple(changed)
            self.refresh_changed_lines()  # a line's key holds its changed mark

    def refresh_changed_lines(self) -> None:
        """Repaint only the visible lines that would be drawn differently now (a tuning key
        moves a region boundary: a few lines, not the whole list)."""
        if not self._drawn:
            self.refresh()
            return
        top = round(self.scroll_offset.y)
        width = self.scrollable_content_region.width
        for y in range(self.scrollable_content_region.height):
            index = top + y
            if index < len(self._messages) and self._drawn.get(y) != self._line_key(index, width):
                self.refresh_line(index)

    @property
    def changed_ranges(self) -> tuple[range, ...]:
        """The rows marked as changed."""
        return self._changed

    def row_label(self, index: int) -> str:
        """The label column of row `index` (empty when the strategy has no labels)."""
        if self._decision is not None:
            return self._decision.message_labels.get(index, "")
        return ""

    def set_matches(self, matches: Collection[int]) -> None:
        """Highlight search matches."""
        self._matches = frozenset(matches)
        self.refresh_changed_lines()  # a line's key holds its match state

    @property
    def row_count(self) -> int:
        """Number of messages shown."""
        return len(self._messages)

    def is_changed(self, index: int) -> bool:
        """True when row `index` is in a region other than under the recorded tuning."""
        return any(index in changed for changed in self._changed)

    def region_of(self, index: int) -> str:
        """Region name of row `index` ('outside' when unknown)."""
        if self._decision is not None:
            return self._decision.region_of(index)
        return self._span.region_of(index) if self._span is not None else "outside"

    # --- rendering ---------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        """One visible line: only rows on screen are ever built."""
        index = round(self.scroll_offset.y) + y
        width = self.scrollable_content_region.width
        if index >= len(self._messages):
            if not self._messages and y == 0:
                return Strip([Segment(" (no messages)", Style(dim=True))]).extend_cell_length(width)
            return Strip.blank(width, self.rich_style)
        key = self._line_key(index, width)
        self._drawn[y] = key
        strip = self._cache.get(key)
        if strip is None:
            strip = self._build_line(index, width, key[2], key[3])
            if len(self._cache) > 2000:
                self._cache.clear()
            self._cache[key] = strip
        return strip

    def _line_key(self, index: int, width: int) -> tuple[int, int, str, bool, bool, bool, bool]:
        """Everything a line's drawing depends on, besides the row's data and the theme."""
        region = self.region_of(index)
        if self._decision is not None:
            region = f"{region}\t{self.row_label(index)}"
        return (
            index,
            width,
            region,
            index == self.cursor,
            index in self._matches,
            self.is_changed(index),
            self.is_pinned(index),
        )

    def set_pins(self, pins: frozenset[int]) -> None:
        """Mark the rows in `pins` (kept verbatim, the what-if of `core.pins`)."""
        if pins != self._pins:
            self._pins = pins
            self.refresh_changed_lines()  # a line's key holds its pin mark

    def is_pinned(self, index: int) -> bool:
        """Whether message `index` is pinned (the what-if of `core.pins`: kept verbatim)."""
        return index in self._pins

    @property
    def palette(self) -> Palette:
        """The theme's semantic styles as this list draws them (regions, links, marks)."""
        return palette_of(self)

    def region_style(self, region: str) -> Style:
        """The style of region `region` in the current theme (`muted` for an unknown name)."""
        return self._style("region:" + region)

    def _style(self, name: str) -> Style:
        """A component style, looked up once per theme/style change."""
        style = self._styles.get(name)
        if style is None:
            if name.startswith("region:"):
                component = REGION_COMPONENT_CLASSES.get(
                    name.removeprefix("region:"), COMPONENT_CLASSES["muted"]
                )
                style = component_style(self, component)
            elif name == "base":
                style = self.rich_style
            elif name in THEME_COMPONENT_CLASSES:
                style = component_style(self, name)
            else:
                style = self.get_component_rich_style(name)
            self._styles[name] = style
        return style

    def notify_style_update(self) -> None:
        """Theme or CSS changed: drop cached styles and lines."""
        super().notify_style_update()
        self._styles.clear()
        self._cache.clear()

    def _build_line(
        self,
        index: int,
        width: int,
        region: str,
        is_cursor: bool,
    ) -> Strip:
        row = self._row(index)
        region, _, label = region.partition("\t")
        base = self._style("base")
        if index in self._matches:
            base = base + self._style("message-list--match")
        changed = self.is_changed(index)
        if changed:
            base = base + self._style("message-list--changed")
        if is_cursor:
            base = base + self._style("message-list--cursor")
        region_style = self._style("region:" + region)
        index_style = self._style("message-list--index")
        tokens = "" if row.tokens is None else f"{row.tokens:,}"
        changed_mark = PIN_MARK if self.is_pinned(index) else "•" if changed else " "
        segments = [
            Segment("▌", base + Style(color=region_style.color, bold=False)),
            Segment(f"{index:>5} ", base + index_style),
            Segment(f"{row.role[:ROLE_WIDTH]:<{ROLE_WIDTH}}", base + region_style),
            Segment(f"{tokens:>{TOKENS_WIDTH}} ", base),
            Segment(f"{row.link:<{LINK_WIDTH}}", base + self._style(COMPONENT_CLASSES["link"])),
            Segment(
                changed_mark, base + self._style(COMPONENT_CLASSES["changed"]) + Style(bold=True)
            ),
        ]
        fixed = FIXED_WIDTH
        if label:
            segments.append(
                Segment(f"{label[: OUTCOME_WIDTH - 1]:<{OUTCOME_WIDTH}}", base + region_style)
            )
            fixed += OUTCOME_WIDTH
        segments.append(Segment(row.preview[: max(width - fixed, 0)], base))
        return Strip(segments).crop_extend(0, width, base)

    def watch_cursor(self, old: int, new: int) -> None:
        """Redraw the two rows involved and keep the cursor on screen."""
        if not self._messages:
            return
        self.scroll_to_region(Region(0, new, 1, 1), animate=False, force=True)
        self.refresh()
        self.post_message(self.Highlighted(new))

    def on_resize(self, event: events.Resize) -> None:
        """Keep the virtual width in step with the widget."""
        self.virtual_size = Size(event.size.width, len(self._messages))
        self._cache.clear()

    # --- actions -----------------------------------------------------------------------

    def move_to(self, index: int) -> None:
        """Put the cursor on `index` (clamped)."""
        if self._messages:
            self.cursor = min(max(index, 0), len(self._messages) - 1)

    def action_cursor_up(self) -> None:
        """Previous message."""
        self.move_to(self.cursor - 1)

    def action_cursor_down(self) -> None:
        """Next message."""
        self.move_to(self.cursor + 1)

    def action_page_up(self) -> None:
        """One screen up."""
        self.move_to(self.cursor - max(self.size.height - 1, 1))

    def action_page_down(self) -> None:
        """One screen down."""
        self.move_to(self.cursor + max(self.size.height - 1, 1))

    def action_first(self) -> None:
        """First message."""
        self.move_to(0)

    def action_last(self) -> None:
        """Last message."""
        self.move_to(len(self._messages) - 1)

    def action_choose(self) -> None:
        """Open the selected message's details."""
        if self._messages:
            self.post_message(self.Chosen(self.cursor))

    def on_click(self, event: events.Click) -> None:
        """Click selects a row."""
        index = round(self.scroll_offset.y) + event.y
        if 0 <= index < len(self._messages):
            self.move_to(index)
            if event.chain >= 2:
                self.post_message(self.Chosen(index))
