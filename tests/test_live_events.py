"""Typed live events from the sample frames, the tracker, and their Rich renderings."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from rich.console import Console

from inspector.core.live_events import (
    CompressionState,
    ContextCompressed,
    ContextUsage,
    GatewayEvent,
    SourceState,
    TraceUpdated,
    parse_frame,
)
from inspector.core.live_tracker import LiveTracker
from inspector.render.live_report import event_line, live_panel, usage_gauge

DATA = Path(__file__).parent / "data" / "jiuwenswarm"
SAMPLES = {
    k: v
    for k, v in json.loads((DATA / "ws-context-events.json").read_text()).items()
    if not k.startswith("_")
}
CAPTURED = json.loads((DATA / "ws-frames.captured-0.2.3.json").read_text())


def frame(name: str) -> str:
    return json.dumps(SAMPLES[name], ensure_ascii=False)


def render(renderable: object) -> str:
    console = Console(width=200, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("compression_state_started", CompressionState),
        ("compression_state_completed", CompressionState),
        ("compression_state_noop", CompressionState),
        ("compression_state_failed_cancelled", CompressionState),
        ("compression_state_full_model_dump", CompressionState),
        ("compression_state_manual_compact_push", CompressionState),
        ("context_compressed_manual", ContextCompressed),
        ("context_usage", ContextUsage),
        ("context_usage_team_member", ContextUsage),
        ("trace_updated_running", TraceUpdated),
        ("trace_updated_final", TraceUpdated),
    ],
)
def test_every_sample_frame_parses_to_its_type(name: str, kind: type) -> None:
    event = parse_frame(frame(name), "ws://x")
    assert isinstance(event, kind)
    json.dumps(event.to_dict())  # always JSON-safe


def test_compression_state_fields_and_rules() -> None:
    full = parse_frame(frame("compression_state_full_model_dump"))
    assert isinstance(full, CompressionState)
    assert full.before is not None and full.before.time == "2026-09-01T10:15:02.123+08:00"
    assert full.statistic is not None and full.statistic["user_messages"] == 2
    assert full.compression_usage is not None and full.compression_usage["total_tokens"] == 1530
    assert full.context_max == 128000 and full.error is None and full.is_compaction_boundary
    failed = parse_frame(frame("compression_state_failed_cancelled"))
    assert (
        isinstance(failed, CompressionState)
        and failed.error == "cancelled"
        and not failed.is_compaction_boundary
    )
    noop = parse_frame(frame("compression_state_noop"))
    assert isinstance(noop, CompressionState) and noop.is_terminal
    manual = parse_frame(frame("compression_state_manual_compact_push"))
    assert (
        isinstance(manual, CompressionState)
        and manual.origin == "runtime"
        and manual.phase == "active_compress"
    )
    assert (
        manual.before is not None
        and manual.before.messages is None
        and manual.before.tokens == 1000
    )


def test_lenient_parsing_of_odd_frames() -> None:
    assert isinstance(parse_frame("not json"), GatewayEvent)
    assert parse_frame("not json").frame_type == "invalid"  # type: ignore[union-attr]
    assert parse_frame("[1, 2]").frame_type == "invalid"  # type: ignore[union-attr]
    odd = parse_frame(
        json.dumps(
            {
                "type": "event",
                "event": "context.compression_state",
                "payload": {
                    "status": 3,
                    "before": "x",
                    "saved": {"tokens": "12"},
                    "duration_ms": True,
                },
            }
        )
    )
    assert isinstance(odd, CompressionState) and odd.status == "3" and odd.before is None
    assert odd.saved is not None and odd.saved.tokens == 12 and odd.duration_ms is None
    not_mapping = parse_frame(
        json.dumps({"type": "event", "event": "context.usage", "payload": [1]})
    )
    assert isinstance(not_mapping, GatewayEvent) and not_mapping.name == "context.usage"
    legacy = parse_frame(
        json.dumps({"type": "context_compression_state", "payload": {"status": "started"}})
    )
    assert isinstance(legacy, CompressionState)
    legacy_ack = parse_frame(json.dumps({"type": "connection_ack", "payload": {"session_id": "s"}}))
    assert isinstance(legacy_ack, GatewayEvent) and legacy_ack.name == "connection.ack"
    response = parse_frame(
        json.dumps(
            {
                "type": "res",
                "id": "r1",
                "ok": False,
                "payload": {},
                "error": "unknown method: x",
                "code": "METHOD_NOT_FOUND",
            }
        )
    )
    assert (
        isinstance(response, GatewayEvent)
        and response.frame_type == "res"
        and response.raw["code"] == "METHOD_NOT_FOUND"
    )
    usage = parse_frame(
        json.dumps(
            {
                "type": "event",
                "event": "context.usage",
                "payload": {"context_max": 200, "tokens_used": 50},
            }
        )
    )
    assert isinstance(usage, ContextUsage) and usage.rate == 25.0


def test_captured_0_2_3_frames_all_parse() -> None:
    for section in ("web_ws_main", "observer_same_session", "gateway_server_tui_route"):
        for item in CAPTURED[section]:
            if item.get("dir") == "recv":
                event = parse_frame(json.dumps(item["frame"], ensure_ascii=False), "ws://x")
                assert isinstance(event, GatewayEvent)
                json.dumps(event.to_dict(), ensure_ascii=False)


def test_tracker_joins_operations_and_keeps_usage() -> None:
    tracker = LiveTracker(keep=2)
    for name in (
        "compression_state_started",
        "compression_state_completed",
        "compression_state_noop",
        "context_usage",
        "context_usage_team_member",
    ):
        event = parse_frame(frame(name))
        tracker.apply(event)  # type: ignore[arg-type]
    tracker.apply(SourceState("ws://x", "ready"))
    dialogue = tracker.operations["op-dialogue"]
    assert dialogue.started is not None and dialogue.done and dialogue.status == "completed"
    assert tracker.operations["op-offloader"].status == "noop" and tracker.running == []
    assert tracker.main_usage is not None and tracker.main_usage.rate == 50.0
    assert tracker.usage["researcher"].rate == 12.5
    tracker.apply(
        parse_frame(
            json.dumps(
                {
                    "type": "event",
                    "event": "context.compression_state",
                    "payload": {"operation_id": "op-3", "status": "started"},
                }
            )
        )
    )  # type: ignore[arg-type]
    assert list(tracker.operations) == ["op-offloader", "op-3"]  # bounded
    assert [op.operation_id for op in tracker.running] == ["op-3"]
    text = render(live_panel(tracker, threshold_percent=80))
    assert "ready" in text and "50.0%" in text and "MessageSummaryOffloader" in text


def test_event_lines_read_well() -> None:
    at = datetime(2026, 1, 1, 12, 0, 0)
    done = render(event_line(parse_frame(frame("compression_state_completed")), at))  # type: ignore[arg-type]
    assert done.startswith("12:00:00 ✔ DialogueCompressor completed  get_context_window")
    assert (
        "201→3 msgs · 685,440→30,003 tok (65%→3%)  saved 655,437 tok (95.6%)  in 379.0s  qwen-max"
        in done
    )
    assert "Context compacted: 30.0K/685.4K tokens (95.6% saved)" in done
    started = render(event_line(parse_frame(frame("compression_state_started")), at))  # type: ignore[arg-type]
    assert "⟳ DialogueCompressor started" in started and "201 msgs · 685,440 tok (65%)" in started
    failed = render(event_line(parse_frame(frame("compression_state_failed_cancelled")), at))  # type: ignore[arg-type]
    assert "error: cancelled" in failed
    usage = render(event_line(parse_frame(frame("context_usage")), at, threshold_percent=80))  # type: ignore[arg-type]
    assert "usage 50.0%" in usage and "64,000/128,000 tok" in usage
    state = render(
        event_line(SourceState("ws://x", "reconnecting", "closed 1001 server shutdown", 2.0, 3), at)
    )
    assert "reconnecting in 2s (attempt 3): closed 1001 server shutdown" in state


def test_usage_gauge_marks_the_threshold() -> None:
    from inspector.core.live_tracker import TriggerMark

    # the user's own mark is ":", the agent's "|" (its config) and "¦" (seen in its frames)
    gauge = usage_gauge(50.0, 80.0, width=10).plain
    assert gauge == "█████···:·"
    assert usage_gauge(100.0, 80.0, width=10).plain == "████████:█"
    assert usage_gauge(None).plain.strip("·") == ""
    marks = (TriggerMark("DialogueCompressor", 30.0, 3000, "config"),
             TriggerMark("DialogueCompressor", 60.0, 6000, "frames", 2))  # fmt: skip
    assert usage_gauge(50.0, None, width=10, marks=marks).plain == "███|█·¦···"


def test_operation_detail_shows_everything_reported() -> None:
    from inspector.render.live_report import operation_detail

    tracker = LiveTracker()
    tracker.apply(parse_frame(frame("compression_state_full_model_dump")))  # type: ignore[arg-type]
    text = render(operation_detail(tracker.operations["compression-operation-1"]))
    for expected in (
        "DialogueCompressor",
        "12 messages, 1,200 tokens, 9% of context  at 2026-09-01T10:15:02.123+08:00",
        "8 messages, 900 tokens (75%)",
        "7.3 s",
        "1 calls, 1,320 in / 210 out tokens",
        "compressed 12 messages into 4",
        "durable compacted context",
    ):
        assert expected in text, expected
