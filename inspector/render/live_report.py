"""Rich renderings of live events: one line per event, a usage gauge, an operations table.

Shared by `inspector watch` (one `event_line` per event) and the TUI (gauge, table, state
badge). Pure Rich; never Textual.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from rich.console import Group, RenderableType
from rich.text import Text

from inspector.core.live_events import (
    CompressionState,
    ContextCompressed,
    ContextUsage,
    GatewayEvent,
    LiveEvent,
    NewArtifact,
    SourceProblem,
    SourceRemoved,
    SourceState,
    TokenPoint,
    TraceUpdated,
)
from inspector.core.live_tracker import LiveTracker, Operation, TriggerMark
from inspector.core.redact import shown_name, shown_text
from inspector.render.plain import PlainTable
from inspector.render.styles import DEFAULT_PALETTE, Palette

#: Style name (and attributes) per compression status.
STATUS_STYLES: dict[str, str] = {
    "started": "caution bold",
    "completed": "good bold",
    "compressed": "good bold",
    "noop": "note",
    "skipped": "muted",
    "failed": "error",
}
STATUS_MARKS: dict[str, str] = {
    "started": "⟳",
    "completed": "✔",
    "compressed": "✔",
    "noop": "=",
    "skipped": "–",
    "failed": "✘",
}
#: Style name (and attributes) per source state.
STATE_STYLES: dict[str, str] = {
    "connecting": "caution",
    "connected": "good",
    "ready": "good bold",
    "following": "good bold",
    "polling": "good bold",
    "reconnecting": "caution bold",
    "closed": "bad",
    "loaded": "note",
    "unavailable": "muted",
}


def _num(value: int | float | None) -> str:
    return "?" if value is None else f"{value:,}"


def _point(point: TokenPoint | None) -> tuple[str, str, str]:
    if point is None:
        return "?", "?", ""
    percent = f"{point.context_percent}%" if point.context_percent is not None else ""
    return _num(point.messages), _num(point.tokens), percent


def state_badge(state: SourceState, styles: Palette = DEFAULT_PALETTE) -> Text:
    """`● live` / `⟳ reconnecting in 2s` badge for a source state."""
    style = styles(STATE_STYLES.get(state.state, "plain"))
    mark = "●" if state.state in ("ready", "following", "polling", "connected", "loaded") else "○"
    return Text.assemble((f"{mark} ", style), (state.text, style))


#: Gauge characters: the agent's configured trigger (┃), where frames showed it compress (¦), the
#: user's own --trigger-ratio.
MARK_CHARS = {"config": "|", "frames": "¦", "user": ":"}


def usage_gauge(
    rate: float | None,
    threshold_percent: float | None = None,
    width: int = 24,
    styles: Palette = DEFAULT_PALETTE,
    marks: Sequence[TriggerMark] = (),
) -> Text:
    """A bar of `rate` percent with the trigger points marked; styled `bad` at or over one.

    `threshold_percent` is the user's own mark (`:`); `marks` the agent's (`|` from its
    config, `¦` where its frames showed it compress).
    """
    if rate is None:
        return Text("·" * width, style="dim")
    filled = max(0, min(width, round(rate / 100 * width)))
    cells: dict[int, str] = {}
    points = [(m.percent, MARK_CHARS.get(m.origin, "|")) for m in marks if m.percent is not None]
    if threshold_percent is not None:
        points.append((threshold_percent, MARK_CHARS["user"]))
    for percent, char in points:
        assert percent is not None
        cells.setdefault(max(0, min(width - 1, round(percent / 100 * width))), char)
    over = any(percent is not None and rate >= percent for percent, _ in points)
    text = Text()
    for cell in range(width):
        if cell in cells:
            text.append(cells[cell], style=styles("mark.gauge"))
        elif cell < filled:
            text.append("█", style=styles("bad" if over else "good"))
        else:
            text.append("·", style="dim")
    return text


def marks_text(marks: Sequence[TriggerMark]) -> str:
    """`triggers: DialogueCompressor | 45.1% (3,000 tok, config) ¦ 44.9% (seen 3×)`."""
    parts = []
    for mark in marks:
        where = "?" if mark.percent is None else f"{mark.percent:.1f}%"
        if mark.origin == "config":
            what = f"{_num(mark.tokens)} tok in its config"
        else:
            what = f"compressed {mark.count}× from {_num(mark.tokens)} tok"
        parts.append(f"{MARK_CHARS.get(mark.origin, '|')} {mark.processor} {where} ({what})")
    return ("triggers: " + "; ".join(parts)) if parts else ""


def compression_text(event: CompressionState, styles: Palette = DEFAULT_PALETTE) -> Text:
    """One compression frame: processor, status, before→after, saved, duration, model."""
    style = styles(STATUS_STYLES.get(event.status, "plain"))
    text = Text.assemble(
        (f"{STATUS_MARKS.get(event.status, '?')} ", style),
        (shown_name(event.processor or "compression"), "bold"),
        " ",
        (shown_name(event.status), style),
    )
    if event.phase:
        text.append(f"  {shown_name(event.phase)}", style="dim")
    b_msgs, b_tok, b_pct = _point(event.before)
    if event.after is not None:
        a_msgs, a_tok, a_pct = _point(event.after)
        text.append(f"  {b_msgs}→{a_msgs} msgs · {b_tok}→{a_tok} tok")
        if b_pct or a_pct:
            text.append(f" ({b_pct or '?'}→{a_pct or '?'})")
    elif event.before is not None:
        text.append(f"  {b_msgs} msgs · {b_tok} tok" + (f" ({b_pct})" if b_pct else ""))
    if event.saved is not None and event.status != "started":
        percent = f" ({event.saved.percent:g}%)" if event.saved.percent is not None else ""
        text.append(
            f"  saved {_num(event.saved.tokens)} tok{percent}",
            style=styles("good" if (event.saved.tokens or 0) > 0 else "muted"),
        )
    if event.duration_ms is not None:
        text.append(f"  in {event.duration_ms / 1000:.1f}s", style="dim")
    if event.model:
        text.append(f"  {shown_name(event.model)}", style=styles("model"))
    if event.error:
        text.append(f"  error: {shown_text(event.error)}", style=styles("error"))
    if event.operation_id:
        text.append(f"  [{shown_name(event.operation_id)}]", style="dim")
    if event.source.startswith(("http://", "https://")):
        text.append("  (trajectory)", style="dim")
    if event.summary:
        text.append(f"\n    {shown_text(event.summary)}", style="italic")
    return text


def event_line(
    event: LiveEvent,
    now: datetime | None = None,
    threshold_percent: float | None = None,
    styles: Palette = DEFAULT_PALETTE,
    marks: Sequence[TriggerMark] = (),
) -> Text:
    """One human line (or two) for an event, prefixed by the local time."""
    stamp = Text((now or datetime.now()).strftime("%H:%M:%S") + " ", style="dim")
    body: Text
    if isinstance(event, SourceState):
        body = Text.assemble(state_badge(event, styles), ("  " + event.source, "dim"))
    elif isinstance(event, CompressionState):
        body = compression_text(event, styles)
    elif isinstance(event, ContextUsage):
        who = f" {event.member_name}" if event.member_name else ""
        rate = f"{event.rate:.1f}%" if event.rate is not None else "?"
        body = Text.assemble(
            ("▮ usage", "bold"),
            who,
            f" {rate} ",
            usage_gauge(event.rate, threshold_percent, styles=styles, marks=marks),
            f" {_num(event.tokens_used)}/{_num(event.context_max)} tok",
        )
        if marks:
            body.append("  " + marks_text(marks), style="dim")
    elif isinstance(event, ContextCompressed):
        body = Text(
            f"✔ /compact {_num(event.before_tokens)}→{_num(event.after_tokens)} tok ({event.rate if event.rate is not None else '?'}%)",
            style=styles("good"),
        )
    elif isinstance(event, TraceUpdated):
        body = Text(
            f"↻ trace {event.trace_id} revision {event.revision} {event.lifecycle or ''}".rstrip(),
            style="dim",
        )
    elif isinstance(event, NewArtifact):
        art = event.artifact
        sizes = ""
        if art.snapshot is not None:
            sizes = f" ({len(art.snapshot.system_messages)} system + {len(art.snapshot.messages)} messages)"
        live = art.extra.get("live") if isinstance(art.extra.get("live"), dict) else None
        tail = ""
        if live:
            tail = f"  window {live.get('window_id')} rev {live.get('revision')}" + (
                "  PARTIAL" if live.get("partial") else ""
            )
        mark = "+" if event.change == "added" else "~"
        body = Text.assemble(
            (f"{mark} {art.kind} ", styles("name")),
            art.id,
            (sizes, "dim"),
            (tail, styles("caution" if live and live.get("partial") else "muted")),
        )
    elif isinstance(event, SourceProblem):
        where = f" ({event.error.where})" if event.error.where else ""
        body = Text(
            f"✘ {event.error.source}: {shown_text(event.error.error)}{where}", style=styles("bad")
        )
    elif isinstance(event, SourceRemoved):
        what = f"{event.source} {event.id}" if event.id else event.source
        body = Text(f"- removed {what}", style="dim")
    elif isinstance(event, GatewayEvent):
        body = Text(f"· {event.frame_type} {event.name}".rstrip(), style="dim")
    else:  # pragma: no cover - the union is closed
        body = Text(repr(event))
    return stamp + body


def operations_table(tracker: LiveTracker, limit: int = 20) -> PlainTable:
    """The latest compression operations, newest first, started→terminal joined."""
    table = PlainTable(expand=True, box=None, header_style="bold")
    for column in ("processor", "status", "before", "after", "saved", "duration", "model"):
        table.add_column(column)
    for operation in list(tracker.operations.values())[::-1][:limit]:
        latest = operation.latest
        if latest is None:
            continue
        b = _point(latest.before)
        a = _point(latest.after)
        saved = latest.saved
        table.add_row(
            latest.processor or "?",
            Text(latest.status, style=STATUS_STYLES.get(latest.status, "")),
            f"{b[1]} ({b[2]})" if b[2] else b[1],
            f"{a[1]} ({a[2]})" if latest.after else "",
            f"{_num(saved.tokens)} ({saved.percent:g}%)"
            if saved and saved.percent is not None
            else "",
            f"{latest.duration_ms / 1000:.1f}s" if latest.duration_ms is not None else "",
            latest.model,
        )
    return table


def live_panel(tracker: LiveTracker, threshold_percent: float | None = None) -> RenderableType:
    """Source states, the usage gauge and the operations table in one renderable."""
    parts: list[RenderableType] = [
        state_badge(s) + Text("  " + s.source, style="dim") for s in tracker.states.values()
    ]
    usage = tracker.main_usage
    if usage is not None:
        parts.append(
            Text.assemble(
                "usage ", usage_gauge(usage.rate, threshold_percent), f" {usage.rate or 0:.1f}%"
            )
        )
    parts.append(operations_table(tracker))
    return Group(*parts)


def operation_detail(operation: Operation) -> RenderableType:
    """Everything one compression operation reported: numbers, usage, summaries, error."""
    latest = operation.latest
    if latest is None:
        return Text("no frames yet", style="dim")
    table = PlainTable.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    started_at = (
        operation.started.before.time if operation.started and operation.started.before else None
    )
    rows: list[tuple[str, RenderableType]] = [
        ("operation", latest.operation_id or "?"),
        ("processor", latest.processor or "?"),
        ("status", Text(latest.status, style=STATUS_STYLES.get(latest.status, ""))),
        ("phase", latest.phase or "?"),
        ("model", latest.model or "(rule-based)"),
    ]
    for label, point in (("before", latest.before), ("after", latest.after)):
        if point is not None:
            messages, tokens, percent = _point(point)
            when = f"  at {point.time}" if point.time else ""
            rows.append(
                (
                    label,
                    f"{messages} messages, {tokens} tokens"
                    + (f", {percent} of context" if percent else "")
                    + when,
                )
            )
    if latest.saved is not None:
        percent = f" ({latest.saved.percent:g}%)" if latest.saved.percent is not None else ""
        rows.append(
            (
                "saved",
                f"{_num(latest.saved.messages)} messages, {_num(latest.saved.tokens)} tokens{percent}",
            )
        )
    if latest.duration_ms is not None:
        rows.append(("duration", f"{latest.duration_ms / 1000:.1f} s"))
    elif started_at:
        rows.append(("started", started_at))
    if latest.context_max:
        rows.append(("context max", _num(latest.context_max)))
    usage = latest.compression_usage
    if usage:
        rows.append(
            (
                "model usage",
                f"{_num(usage.get('calls'))} calls, {_num(usage.get('input_tokens'))} in / {_num(usage.get('output_tokens'))} out tokens",
            )
        )
    if latest.modified_messages:
        rows.append(("modified", f"{len(latest.modified_messages)} messages rewritten in place"))
    if latest.summary:
        rows.append(("summary", shown_text(latest.summary)))
    if latest.error:
        rows.append(("error", Text(shown_text(latest.error), style=DEFAULT_PALETTE("error"))))
    for label, value in rows:
        table.add_row(label, value)
    parts: list[RenderableType] = [table]
    if latest.compact_summary:
        parts.append(Text("\ncompact summary", style="bold"))
        parts.append(Text(shown_text(latest.compact_summary)))
    return Group(*parts)
