"""GatewayObserver against a real fake gateway on 127.0.0.1: events, routing modes, reconnect."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable

import pytest
from websockets.asyncio.client import connect

from inspector.core.live_events import (
    CompressionState,
    ContextCompressed,
    ContextUsage,
    GatewayEvent,
    LiveEvent,
    SourceState,
    TraceUpdated,
)
from inspector.sources.live.gateway import (
    Backoff,
    GatewayObserver,
    GatewayOptions,
    observer_url,
    origin_for,
)
from tests.servers.fake_gateway import FakeGateway, sample_frame

FAST = Backoff(initial=0.05, factor=2.0, cap=0.2, tries=3, steady=0.1)
SID = "sess_19a3c1f2b7e_4f2a1c"


async def next_matching(
    events: AsyncIterator[LiveEvent],
    match: Callable[[LiveEvent], bool],
    seen: list[LiveEvent],
    timeout: float = 5.0,
) -> LiveEvent:
    """The next event satisfying `match`, collecting every event into `seen`."""

    async def scan() -> LiveEvent:
        async for event in events:
            seen.append(event)
            if match(event):
                return event
        raise AssertionError("event stream ended")

    return await asyncio.wait_for(scan(), timeout)


def is_state(name: str) -> Callable[[LiveEvent], bool]:
    return lambda e: isinstance(e, SourceState) and e.state == name


@pytest.fixture
def gateway() -> FakeGateway:
    server = FakeGateway().start()
    yield server
    server.shutdown()


def test_observer_url_adds_session_user_and_drops_credentials() -> None:
    url = observer_url("ws://127.0.0.1:19000/ws?api_key=sk-1&model=m", session_id="s1")
    assert url == "ws://127.0.0.1:19000/ws?session_id=s1&user_id=inspector"
    assert origin_for(url) == "http://127.0.0.1:19000"
    assert observer_url("ws://127.0.0.1:19000?session_id=a").startswith(
        "ws://127.0.0.1:19000/ws?session_id=a"
    )


def test_backoff_follows_the_web_ui_policy() -> None:
    delays = Backoff().delays()
    assert [next(delays) for _ in range(8)] == [1, 2, 4, 8, 16, 2, 2, 2]


async def test_observer_receives_context_events_and_keeps_unknown_raw(gateway: FakeGateway) -> None:
    observer = GatewayObserver(gateway.url(SID), backoff=FAST)
    events = observer.events()
    seen: list[LiveEvent] = []
    await next_matching(events, is_state("ready"), seen)
    assert observer.state.state == "ready"
    for name in (
        "compression_state_started",
        "compression_state_completed",
        "context_usage",
        "context_compressed_manual",
    ):
        await gateway.aemit(SID, sample_frame(name, SID))
    await gateway.aemit(
        SID, {"type": "event", "event": "brand.new", "payload": {"session_id": SID, "x": 1}}
    )
    await gateway.aemit(
        SID,
        {
            "type": "event",
            "event": "context.compression_state",
            "payload": {
                "status": "started",
                "phase": "add_messages",
                "processor": "DialogueCompressor",
                "summary": "thin",
                "operation_id": "op-thin",
                "new_field": [1],
            },
        },
    )
    started = await next_matching(events, lambda e: isinstance(e, CompressionState), seen)
    assert isinstance(started, CompressionState) and started.status == "started"
    assert started.before is not None and started.before.tokens == 685440 and started.after is None
    done = await next_matching(events, lambda e: isinstance(e, CompressionState), seen)
    assert isinstance(done, CompressionState) and done.is_terminal and done.is_compaction_boundary
    assert done.saved is not None and done.saved.tokens == 655437 and done.duration_ms == 379000
    usage = await next_matching(events, lambda e: isinstance(e, ContextUsage), seen)
    assert isinstance(usage, ContextUsage) and usage.rate == 50.0 and usage.context_max == 128000
    manual = await next_matching(events, lambda e: isinstance(e, ContextCompressed), seen)
    assert isinstance(manual, ContextCompressed) and (
        manual.before_tokens,
        manual.after_tokens,
    ) == (1000, 300)
    unknown = await next_matching(
        events, lambda e: isinstance(e, GatewayEvent) and e.name == "brand.new", seen
    )
    assert isinstance(unknown, GatewayEvent) and unknown.raw["payload"]["x"] == 1
    thin = await next_matching(events, lambda e: isinstance(e, CompressionState), seen)
    assert isinstance(thin, CompressionState) and thin.to_dict()["extra"] == {"new_field": [1]}
    await observer.close()
    rest = [e async for e in events]
    assert isinstance(rest[-1], SourceState) and rest[-1].state == "closed"
    # read-only: the observer sent nothing; it sent the Origin header
    assert gateway.received == []
    assert gateway.handshakes[-1]["origin"] == f"http://127.0.0.1:{gateway.port}"
    assert "user_id=inspector" in gateway.handshakes[-1]["path"]


async def test_only_first_ack_counts_and_peers_acks_are_dropped(gateway: FakeGateway) -> None:
    observer = GatewayObserver(gateway.url(SID), backoff=FAST)
    events = observer.events()
    seen: list[LiveEvent] = []
    await next_matching(events, is_state("ready"), seen)
    async with connect(gateway.url(SID), proxy=None):  # a second client on the session
        await gateway.aemit(SID, sample_frame("trace_updated_final", SID))
        poke = await next_matching(events, lambda e: isinstance(e, TraceUpdated), seen)
        assert isinstance(poke, TraceUpdated) and poke.revision == 17
    acks = [e for e in seen if isinstance(e, GatewayEvent) and e.name == "connection.ack"]
    assert len(acks) == 1
    await observer.close()


async def test_ready_state_is_skipped_when_backend_not_ready() -> None:
    server = await FakeGateway(backend_ready=False).astart()
    try:
        observer = GatewayObserver(server.url(SID), backoff=FAST)
        events = observer.events()
        seen: list[LiveEvent] = []
        await next_matching(events, is_state("connected"), seen)
        await server.aemit(SID, sample_frame("context_usage", SID))
        await next_matching(events, lambda e: isinstance(e, ContextUsage), seen)
        assert not any(isinstance(e, SourceState) and e.state == "ready" for e in seen)
        await observer.close()
    finally:
        await server.astop()
        server.shutdown()


@pytest.mark.parametrize("routing", ["broadcast", "requester"])
async def test_routing_modes_0_2_3_and_main(routing: str) -> None:
    """0.2.3 delivers another client's request events to observers; main only trace.updated."""
    script = [
        sample_frame("compression_state_started"),
        sample_frame("compression_state_completed"),
    ]
    server = await FakeGateway(routing=routing, chat_script=script).astart()
    try:
        observer = GatewayObserver(server.url(SID), backoff=FAST)
        events = observer.events()
        seen: list[LiveEvent] = []
        await next_matching(events, is_state("ready"), seen)
        async with connect(server.url(), proxy=None) as driver:
            await driver.send(
                json.dumps(
                    {
                        "type": "req",
                        "id": "req_1",
                        "method": "chat.send",
                        "params": {"session_id": SID, "content": "hi"},
                    }
                )
            )
            await server.await_registered(SID, 2)
            await asyncio.sleep(0.1)
            await server.aemit(SID, sample_frame("trace_updated_final", SID))
            await next_matching(events, lambda e: isinstance(e, TraceUpdated), seen)
        states = [e for e in seen if isinstance(e, CompressionState)]
        if routing == "broadcast":
            assert [s.status for s in states] == ["started", "completed"]
            assert all(s.session_id == SID for s in states)
        else:
            assert states == []
        await observer.close()
    finally:
        await server.astop()
        server.shutdown()


async def test_session_list_rpc_and_refusal_of_acting_methods(gateway: FakeGateway) -> None:
    gateway.sessions_meta = [{"session_id": SID, "title": "t", "mode": "agent"}]
    observer = GatewayObserver(gateway.url(SID), backoff=FAST)
    events = observer.events()
    seen: list[LiveEvent] = []
    await next_matching(events, is_state("ready"), seen)
    reader = asyncio.create_task(next_matching(events, lambda e: False, seen, timeout=3))
    try:
        response = await observer.request("session.list", {"limit": 5})
        assert response["ok"] is True and response["payload"]["sessions"][0]["session_id"] == SID
        with pytest.raises(ValueError):
            await observer.request("chat.send", {"session_id": SID})
    finally:
        reader.cancel()
        await observer.close()


async def test_reconnects_after_server_restart_with_visible_state(gateway: FakeGateway) -> None:
    observer = GatewayObserver(gateway.url(SID), backoff=FAST)
    events = observer.events()
    seen: list[LiveEvent] = []
    await next_matching(events, is_state("ready"), seen)
    await gateway.aemit(SID, sample_frame("compression_state_started", SID))
    await next_matching(events, lambda e: isinstance(e, CompressionState), seen)
    await gateway.astop()  # mid-stream: the operation never completed
    reconnecting = await next_matching(events, is_state("reconnecting"), seen)
    assert isinstance(reconnecting, SourceState)
    assert "1001" in reconnecting.detail and reconnecting.retry_in == pytest.approx(0.05)
    assert observer.state.state in ("reconnecting", "connecting")
    # while down: attempts keep failing and the state says so
    await next_matching(
        events,
        lambda e: isinstance(e, SourceState) and e.state == "reconnecting" and e.attempt >= 2,
        seen,
    )
    await gateway.astart()
    await next_matching(events, is_state("ready"), seen)
    await gateway.await_registered(SID)
    await gateway.aemit(SID, sample_frame("compression_state_completed", SID))
    done = await next_matching(events, lambda e: isinstance(e, CompressionState), seen)
    assert isinstance(done, CompressionState) and done.status == "completed"
    await observer.close()


async def test_abrupt_drop_reconnects_too(gateway: FakeGateway) -> None:
    observer = GatewayObserver(gateway.url(SID), backoff=FAST)
    events = observer.events()
    seen: list[LiveEvent] = []
    await next_matching(events, is_state("ready"), seen)
    await gateway.astop(abrupt=True)
    await gateway.astart()
    await next_matching(events, is_state("reconnecting"), seen)
    await next_matching(events, is_state("ready"), seen)
    await observer.close()


async def test_bad_path_and_forbidden_origin_are_fatal() -> None:
    server = await FakeGateway(origin_check=True, allowed_hosts=("example.org",)).astart()
    try:
        seen: list[LiveEvent] = []
        refused = GatewayObserver(server.url(SID), backoff=FAST)
        closed = await next_matching(refused.events(), is_state("closed"), seen)
        assert isinstance(closed, SourceState) and "403" in closed.detail
        allowed = GatewayObserver(
            server.url(SID), backoff=FAST, options=GatewayOptions(origin="http://example.org")
        )
        await next_matching(allowed.events(), is_state("ready"), seen)
        await allowed.close()
    finally:
        await server.astop()
        server.shutdown()
    server = await FakeGateway().astart()
    try:
        seen = []
        wrong = GatewayObserver(server.url(SID, path="/other"), backoff=FAST)
        closed = await next_matching(wrong.events(), is_state("closed"), seen)
        assert (
            isinstance(closed, SourceState)
            and "1008" in closed.detail
            and "unsupported path" in closed.detail
        )
    finally:
        await server.astop()
        server.shutdown()


async def test_nothing_listening_keeps_retrying_until_closed() -> None:
    observer = GatewayObserver(
        "ws://127.0.0.1:9/ws?session_id=x", backoff=FAST, options=GatewayOptions(open_timeout=1)
    )
    events = observer.events()
    seen: list[LiveEvent] = []
    await next_matching(events, lambda e: isinstance(e, SourceState) and e.attempt >= 3, seen)
    await observer.close()
    rest = [e async for e in events]
    assert rest and isinstance(rest[-1], SourceState) and rest[-1].state == "closed"


async def test_token_travels_as_header_never_in_the_url(gateway: FakeGateway) -> None:
    observer = GatewayObserver(gateway.url(SID) + "&token=jwt-secret&api_key=sk-x", backoff=FAST)
    assert "jwt-secret" not in observer.url and "sk-x" not in observer.url
    events = observer.events()
    seen: list[LiveEvent] = []
    await next_matching(events, is_state("ready"), seen)
    handshake = gateway.handshakes[-1]
    assert handshake["authorization"] == "Bearer jwt-secret"
    assert "jwt-secret" not in handshake["path"] and "sk-x" not in handshake["path"]
    assert all("jwt-secret" not in json.dumps(e.to_dict()) for e in seen)
    await observer.close()


async def test_list_sessions_helper(gateway: FakeGateway) -> None:
    from inspector.sources.live.gateway import list_sessions

    gateway.sessions_meta = [{"session_id": "a"}, {"session_id": "b"}]
    assert [s["session_id"] for s in await list_sessions(gateway.url())] == ["a", "b"]
    with pytest.raises(ConnectionError, match="1008"):
        await list_sessions(gateway.url(path="/nope"))
    with pytest.raises(ConnectionError):
        await list_sessions("ws://127.0.0.1:9/ws", timeout=1)


async def test_protocol_pings_are_answered_and_the_link_stays_up() -> None:
    server = await FakeGateway(ping_interval=0.05).astart()
    try:
        observer = GatewayObserver(server.url(SID), backoff=FAST)
        events = observer.events()
        seen: list[LiveEvent] = []
        await next_matching(events, is_state("ready"), seen)
        await asyncio.sleep(0.4)  # several server pings go by
        await server.aemit(SID, sample_frame("context_usage", SID))
        await next_matching(events, lambda e: isinstance(e, ContextUsage), seen)
        assert not any(isinstance(e, SourceState) and e.state == "reconnecting" for e in seen)
        await observer.close()
    finally:
        await server.astop()
        server.shutdown()
