"""Live, right: unreadable frames skipped, oversized frames backed off, wrong targets refused.

Real WebSocket servers on 127.0.0.1 (the `websockets` server, scripted per test) send raw
frames that no fake built from dicts can: NaN, Infinity, numbers beyond float range, deep
nesting, a frame over the client's size limit. The probe is checked against a refused port,
a server that never answers, jiuwenswarm's TUI route and an unknown session; `watch` exits 1
with one clear line within its timeout, and masks secrets in session metadata.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve

from inspector.core.live_events import (
    CompressionState,
    ContextUsage,
    GatewayEvent,
    SourceProblem,
    SourceState,
    parse_frame,
)
from inspector.core.live_tracker import LiveTracker
from inspector.sources.live.gateway import (
    OVERSIZE_BACKOFF,
    Backoff,
    GatewayObserver,
    GatewayOptions,
    GatewayRefused,
    probe_gateway,
)
from tests.integration.swarm_harness import free_port

ROOT = Path(__file__).resolve().parents[1]
SID = "sess_live_1"
GOOD = {
    "type": "event",
    "event": "context.compression_state",
    "payload": {
        "operation_id": "op1",
        "status": "completed",
        "processor": "DialogueCompressor",
        "phase": "add_messages",
        "before": {"messages": 9, "tokens": 3200, "context_percent": 2},
        "after": {"messages": 4, "tokens": 900, "context_percent": 0},
        "saved": {"messages": 5, "tokens": 2300, "percent": 71.9},
        "context_max": 200000,
        "compact_summary": "the user asked questions",
        "session_id": SID,
    },
}
BAD_FRAMES = [
    '{"type":"event","event":"context.usage","payload":{"rate":NaN}}',
    '{"type":"event","event":"context.usage","payload":{"rate":Infinity}}',
    '{"type":"event","event":"context.usage","payload":{"rate":1e400}}',
    '{"type":"event","event":"context.usage","payload":{"tokens_used":1' + "0" * 400 + "}}",
    '{"type":"event","event":"x","payload":' + "[" * 100_000 + "]" * 100_000 + "}",
]


def test_unreadable_frames_become_problems_never_exceptions() -> None:
    for text in BAD_FRAMES:
        event = parse_frame(text, "ws://x")
        assert isinstance(event, SourceProblem), text[:60]
        assert "unreadable frame skipped" in event.error.error
    usage = parse_frame(
        json.dumps({"type": "event", "event": "context.usage", "payload": {"rate": 5}})
    )
    assert isinstance(usage, ContextUsage) and usage.rate == 5.0
    surrogate = parse_frame('{"type":"event","event":"chat.final","payload":{"content":"\\ud800"}}')
    assert isinstance(surrogate, GatewayEvent)  # kept; printing escapes it


Handler = Callable[[ServerConnection], Awaitable[None]]


async def _serve(handler: Handler) -> tuple[Any, str]:
    server = await serve(handler, "127.0.0.1", 0, compression=None)
    port = server.sockets[0].getsockname()[1]
    return server, f"ws://127.0.0.1:{port}/ws?session_id={SID}"


async def _collect(observer: GatewayObserver, until: Callable[[list[Any]], bool]) -> list[Any]:
    seen: list[Any] = []
    async with asyncio.timeout(10):
        async for event in observer.events():
            seen.append(event)
            if until(seen):
                break
    await observer.close()
    return seen


async def test_the_stream_goes_on_after_bad_frames() -> None:
    async def handler(ws: ServerConnection) -> None:
        for text in BAD_FRAMES:
            await ws.send(text)
        await ws.send(json.dumps(GOOD))
        await asyncio.sleep(5)

    server, url = await _serve(handler)
    try:
        observer = GatewayObserver(url, backoff=Backoff(initial=0.1))
        seen = await _collect(observer, lambda s: isinstance(s[-1], CompressionState))
    finally:
        server.close()
    problems = [e for e in seen if isinstance(e, SourceProblem)]
    assert len(problems) == len(BAD_FRAMES)
    assert isinstance(seen[-1], CompressionState) and seen[-1].operation_id == "op1"
    # no reconnect happened: one connection carried everything
    assert [e.state for e in seen if isinstance(e, SourceState)] == ["connecting", "connected"]


async def test_an_oversized_frame_is_reported_once_and_backs_off() -> None:
    async def handler(ws: ServerConnection) -> None:
        await ws.send("x" * 5000)
        await asyncio.sleep(5)

    server, url = await _serve(handler)
    try:
        options = GatewayOptions(max_size=1000)
        observer = GatewayObserver(url, backoff=Backoff(initial=0.1), options=options)
        seen = await _collect(
            observer, lambda s: isinstance(s[-1], SourceState) and s[-1].state == "reconnecting"
        )
    finally:
        server.close()
    problems = [e for e in seen if isinstance(e, SourceProblem)]
    assert len(problems) == 1 and "over the" in problems[0].error.error
    last = seen[-1]
    assert last.retry_in is not None and last.retry_in >= OVERSIZE_BACKOFF
    assert "limit" in last.detail and "connection lost" not in last.detail


async def test_probe_refuses_wrong_targets_within_the_timeout() -> None:
    port = free_port()
    started = time.monotonic()
    with pytest.raises(GatewayRefused, match="connection refused"):
        await probe_gateway(f"ws://127.0.0.1:{port}/ws", SID, timeout=3)
    assert time.monotonic() - started < 3

    async def silent(ws: ServerConnection) -> None:
        await asyncio.sleep(10)

    async def tui(ws: ServerConnection) -> None:
        await ws.send(
            json.dumps(
                {"type": "event", "event": "connection.ack", "payload": {"transport": "tui"}}
            )
        )
        request = json.loads(await ws.recv())
        payload = {"sessions": [], "current_branch": "main"}
        await ws.send(
            json.dumps({"type": "res", "id": request["id"], "ok": True, "payload": payload})
        )
        await asyncio.sleep(1)

    async def web(ws: ServerConnection) -> None:
        request = json.loads(await ws.recv())
        payload = {"sessions": [{"session_id": "sess_other"}], "total": 1}
        await ws.send(
            json.dumps({"type": "res", "id": request["id"], "ok": True, "payload": payload})
        )
        await asyncio.sleep(1)

    for handler, pattern in (
        (silent, "did not answer session.list within 1.5s"),
        (tui, "TUI gateway"),
        (web, "unknown session 'sess_live_1'.*sess_other"),
    ):
        server, url = await _serve(handler)
        try:
            started = time.monotonic()
            with pytest.raises(GatewayRefused, match=pattern):
                await probe_gateway(url, SID, timeout=1.5)
            assert time.monotonic() - started < 2.5
        finally:
            server.close()


def test_tracker_marks_the_agents_trigger_points_and_explains_the_scale() -> None:
    tracker = LiveTracker(config_triggers={"DialogueCompressor": 3000})
    tracker.apply(ContextUsage("ws", rate=7.0, context_max=65536, tokens_used=4587))
    started = dict(GOOD["payload"], status="started", after=None, saved=None)  # type: ignore[arg-type]
    tracker.apply(CompressionState.parse(started, "ws"))
    tracker.apply(CompressionState.parse(GOOD["payload"], "ws"))  # type: ignore[arg-type]
    marks = {m.origin: m for m in tracker.trigger_marks()}
    assert marks["frames"].processor == "DialogueCompressor" and marks["frames"].percent == 7.0
    assert marks["frames"].tokens == 3200 and marks["frames"].count == 1
    assert tracker.overhead == 4587 - 3200
    assert marks["config"].percent == pytest.approx((3000 + 1387) / 65536 * 100)
    note = tracker.scale_note()
    assert (
        note is not None and "200,000" in note and "65,536" in note and "conversation only" in note
    )


def test_disconnect_closes_every_state_line() -> None:
    tracker = LiveTracker()
    tracker.apply(SourceState("ws://127.0.0.1:1/ws?session_id=a&user_id=inspector", "ready"))
    tracker.apply(SourceState("trajectory for a", "unavailable"))
    tracker.apply(SourceState("ws://127.0.0.1:1/ws?session_id=a", "closed", "stopped"))
    assert {s.state for s in tracker.states.values()} == {"closed"}


def _watch(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inspector", "watch", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_watch_exits_1_on_a_refused_port_and_masks_session_metadata() -> None:
    port = free_port()
    started = time.monotonic()
    done = _watch(f"ws://127.0.0.1:{port}/ws?session_id=x", "--timeout", "4")
    assert done.returncode == 1 and "connection refused" in done.stderr
    assert "Traceback" not in done.stderr and time.monotonic() - started < 15

    from tests.servers.fake_gateway import FakeGateway

    key = "sk-live0123456789abcdefghijkl"
    with FakeGateway() as gateway:
        gateway.sessions_meta = [
            {"session_id": SID, "title": f"uses {key}", "api_key": key, "mode": "agent"}
        ]
        listed = _watch(gateway.url(), "--list-sessions", "--json")
        once = _watch(gateway.url(SID), "--once", "--json")
        unknown = _watch(gateway.url("sess_nope"), "--timeout", "5")
    assert listed.returncode == 0 and key not in listed.stdout
    assert json.loads(listed.stdout)["api_key"] == "***"
    assert once.returncode == 0 and key not in once.stdout
    line = json.loads(once.stdout)
    assert line["event"] == "session" and line["session"]["session_id"] == SID
    assert unknown.returncode == 1 and "unknown session 'sess_nope'" in unknown.stderr
