"""LiveSession: gateway + trajectory merged, pokes, discovery of the trajectory API."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import httpx

from inspector.core.live_events import CompressionState, LiveEvent, NewArtifact, SourceState
from inspector.sources.live.gateway import Backoff
from inspector.sources.live.session import LiveSession, discover_trajectory, trajectory_candidates
from inspector.sources.live.trajectory import Polling
from tests.servers.fake_gateway import FakeGateway, sample_frame
from tests.servers.fake_trajectory import SESSION, FakeTrajectory

FAST = Backoff(initial=0.05, factor=2.0, cap=0.2, tries=3, steady=0.1)


async def next_matching(
    events: AsyncIterator[LiveEvent], match: Callable[[LiveEvent], bool], timeout: float = 5.0
) -> LiveEvent:
    async def scan() -> LiveEvent:
        async for event in events:
            if match(event):
                return event
        raise AssertionError("stream ended")

    return await asyncio.wait_for(scan(), timeout)


def test_trajectory_candidates() -> None:
    assert trajectory_candidates("ws://127.0.0.1:19000/ws?session_id=s") == [
        "http://127.0.0.1:19000",
        "http://127.0.0.1:19002",
    ]
    assert trajectory_candidates("ws://localhost:5000/ws")[1:] == [
        "http://localhost:5002",
        "http://localhost:19002",
    ]


async def test_discover_trajectory_probes_in_order() -> None:
    asked: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append(f"{request.url.port}")
        if request.url.port == 5000:
            return httpx.Response(426, text="Upgrade Required")
        if request.url.port == 5002:
            return httpx.Response(
                503, json={"error": "trajectory UI is disabled", "code": "TRAJECTORY_DISABLED"}
            )
        raise httpx.ConnectError("refused")

    found = await discover_trajectory(
        "ws://127.0.0.1:5000/ws", "s", transport=httpx.MockTransport(handler)
    )
    assert found == "http://127.0.0.1:5002" and asked == ["5000", "5002"]

    def nothing(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused")

    assert (
        await discover_trajectory(
            "ws://127.0.0.1:5000/ws", "s", transport=httpx.MockTransport(nothing)
        )
        is None
    )


async def test_session_merges_gateway_and_trajectory_with_pokes() -> None:
    gateway = await FakeGateway().astart()
    server = FakeTrajectory().start()
    try:
        live = LiveSession(
            gateway.url(SESSION),
            trajectory_url=server.base_url,
            backoff=FAST,
            polling=Polling(poll_interval=30, idle_interval=30),
        )
        events = live.events()
        first = await next_matching(events, lambda e: isinstance(e, NewArtifact))
        assert (
            isinstance(first, NewArtifact)
            and first.artifact.extra["live"]["window_id"] == "main:window-7"
        )
        await gateway.await_registered(SESSION)
        await gateway.aemit(SESSION, sample_frame("compression_state_completed", SESSION))
        await next_matching(
            events, lambda e: isinstance(e, CompressionState) and e.operation_id == "op-dialogue"
        )
        server.append_event(
            SESSION,
            "context.window.commit",
            {
                "window_id": "main:window-8",
                "base_window_id": "main:window-7",
                "complete": True,
                "delta": [{"op": "remove", "message_id": "user-3"}],
            },
            epoch="epoch-2",
            sequence=2,
        )
        await gateway.aemit(SESSION, sample_frame("context_usage", SESSION))
        await gateway.aemit(SESSION, sample_frame("trace_updated_final", SESSION))
        repriced = await next_matching(events, lambda e: isinstance(e, NewArtifact), timeout=4)
        assert isinstance(repriced, NewArtifact) and repriced.change == "updated"
        assert repriced.artifact.extra["live"]["window_id"] == "main:window-7"
        assert repriced.artifact.snapshot is not None
        assert (
            repriced.artifact.snapshot.tuning.context_max
            != first.artifact.snapshot.tuning.context_max
        ), "the window rebuilt before the agent reported its size is priced again"
        update = await next_matching(
            events,
            lambda e: (
                isinstance(e, NewArtifact)
                and e.artifact.extra["live"]["window_id"] == "main:window-8"
            ),
            timeout=4,
        )
        assert isinstance(update, NewArtifact)
        assert update.artifact.snapshot is not None
        assert update.artifact.snapshot.tuning.context_max == 128000  # learned from context.usage
        assert live.tracker.operations["op-dialogue"].done
        assert {s.state for s in live.tracker.states.values()} >= {"ready", "polling"}
        await live.close()
    finally:
        await gateway.astop()
        gateway.shutdown()
        server.stop()


async def test_session_without_trajectory_api_says_unavailable() -> None:
    gateway = await FakeGateway().astart()
    try:
        live = LiveSession(gateway.url("s1"), backoff=FAST)
        events = live.events()
        state = await next_matching(
            events, lambda e: isinstance(e, SourceState) and e.state == "unavailable"
        )
        assert isinstance(state, SourceState) and "0.2.3" in state.detail
        await gateway.await_registered("s1")
        await gateway.aemit("s1", sample_frame("compression_state_started", "s1"))
        await next_matching(events, lambda e: isinstance(e, CompressionState))
        await live.close()
    finally:
        await gateway.astop()
        gateway.shutdown()
