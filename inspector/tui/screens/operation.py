"""OperationScreen: everything one `context.compression_state` operation reported.

Opened from the browser's live panel (Enter on an operation). Shows, with the shared
`inspector.render.live_report.operation_detail`: before and after (messages, tokens,
percent, time), what was saved, the duration, the compression model and its usage
(calls, tokens in and out, cost), the summary and the compact summary (the memory text
that replaced the folded messages), the message statistic of the frame, and every frame
of the operation (started, then terminal). What the numbers are measured against is said
beside them (the frames' window and the model's). Escape closes it. Text from the agent
goes through the secret masking.
"""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from inspector.core.live_tracker import LiveTracker, Operation
from inspector.core.redact import mask_text
from inspector.render.live_report import compression_text, operation_detail
from inspector.render.plain import PlainTable
from inspector.render.verdict import render_to_text


def statistic_table(operation: Operation) -> PlainTable | None:
    """The frame's message statistic (counts and tokens by role), when it carries one."""
    latest = operation.latest
    statistic = latest.statistic if latest is not None else None
    if not statistic:
        return None
    table = PlainTable(box=None, show_header=True, header_style="bold", pad_edge=False)
    for column in ("", "messages", "tokens"):
        table.add_column(column, justify="right" if column else "left")
    for role in ("system", "user", "assistant", "tool"):
        table.add_row(
            role,
            f"{statistic.get(f'{role}_messages', '?')}",
            f"{statistic.get(f'{role}_message_tokens', '?')}",
        )
    table.add_row("tools", f"{statistic.get('tools', '?')}", f"{statistic.get('tool_tokens', '?')}")
    table.add_row(
        "total", f"{statistic.get('total_messages', '?')}", f"{statistic.get('total_tokens', '?')}"
    )
    return table


def operation_view(operation: Operation, tracker: LiveTracker | None = None) -> RenderableType:
    """The screen's content: detail, compaction usage, statistic, the frames, the scale."""
    parts: list[RenderableType] = [operation_detail(operation)]
    usage = operation.latest.compression_usage if operation.latest is not None else None
    if usage:
        cost = usage.get("total_cost")
        parts.append(Text("\ncompaction usage", style="bold"))
        parts.append(
            Text(
                f"{usage.get('calls', '?')} calls · {usage.get('input_tokens', '?')} in · "
                f"{usage.get('output_tokens', '?')} out · {usage.get('total_tokens', '?')} total"
                f" · {usage.get('cache_tokens', 0)} cached"
                + (f" · cost {cost}" if cost else "")
                + (
                    f" · {mask_text(str(usage.get('model_name')))}"
                    if usage.get("model_name")
                    else ""
                )
            )
        )
    table = statistic_table(operation)
    if table is not None:
        parts += [Text("\nstatistic (after, else before)", style="bold"), table]
    frames = [f for f in (operation.started, operation.latest) if f is not None]
    if operation.started is operation.latest:
        frames = frames[:1]
    parts.append(Text("\nframes", style="bold"))
    parts += [compression_text(frame) for frame in frames]
    note = tracker.scale_note() if tracker is not None else None
    if note:
        parts.append(Text("\nⓘ " + note, style="dim"))
    return Group(*parts)


class OperationScreen(ModalScreen[None]):
    """One operation in full; Escape closes."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "close", "Close")]

    DEFAULT_CSS = """
    OperationScreen { align: center middle; }
    OperationScreen > VerticalScroll {
        width: 90%; height: 85%; border: round $accent; background: $surface; padding: 0 1;
    }
    """

    def __init__(self, operation: Operation, tracker: LiveTracker | None = None) -> None:
        super().__init__()
        self.operation = operation
        self.tracker = tracker
        self._content = operation_view(operation, tracker)

    def compose(self) -> ComposeResult:
        """The detail in a scrollable box."""
        with VerticalScroll():
            yield Static(self._content, id="operation-detail", markup=False)

    def action_close(self) -> None:
        """Back to the browser."""
        self.dismiss(None)

    @property
    def plain(self) -> str:
        """The screen's text without styles (tests and captures)."""
        return render_to_text(self._content, width=120)
