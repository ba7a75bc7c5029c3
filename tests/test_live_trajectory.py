"""Trajectory client and window rebuild against a real fake HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import httpx
import pytest

from inspector.core.live_events import (
    CompressionState,
    LiveEvent,
    NewArtifact,
    SourceProblem,
    SourceState,
)
from inspector.core.tuning import Tuning
from inspector.sources.live.gateway import Backoff
from inspector.sources.live.trajectory import (
    Polling,
    TrajectoryClient,
    TrajectoryError,
    TrajectoryFollower,
    load_trajectory_window,
    parse_trajectory_url,
)
from inspector.sources.live.window import DeltaError, WindowRebuilder, apply_delta
from tests.servers.fake_trajectory import SESSION, FakeTrajectory

DATA = Path(__file__).parent / "data" / "jiuwenswarm"
FAST = Backoff(initial=0.05, factor=2.0, cap=0.2, tries=3, steady=0.1)
SLOT = {
    "message_id": "openjiuwen:request-system-slot:main",
    "role": "system",
    "origin": "harness_internal",
    "content": "You are a careful assistant.",
}


@pytest.fixture
def server() -> Iterator[FakeTrajectory]:
    fake = FakeTrajectory().start()
    yield fake
    fake.stop()


def ids(artifact_or_state: object) -> list[str]:
    if isinstance(artifact_or_state, NewArtifact):
        artifact_or_state = artifact_or_state.artifact
    messages = artifact_or_state.extra["context_messages"]  # type: ignore[attr-defined]
    return [m["message_id"] for m in messages]


# ---- pure rebuild -----------------------------------------------------------------------


def test_rebuild_from_saved_samples_matches_the_spec_walkthrough() -> None:
    rebuilder = WindowRebuilder("main")
    assert rebuilder.seed_checkpoint(json.loads((DATA / "trajectory-checkpoints.json").read_text()))
    assert rebuilder.seed_window_id == "main:window-3" and len(rebuilder.seed_messages or []) == 4
    assert (
        rebuilder.add_records(
            json.loads((DATA / "trajectory-subject-records.main.json").read_text())
        )
        == 5
    )
    state = rebuilder.rebuild()
    assert state.window_id == "main:window-7" and not state.partial and state.diagnostics == []
    assert [m["message_id"] for m in state.messages] == [SLOT["message_id"], "summary-1", "user-3"]
    assert [m["message_id"] for m in state.windows["main:window-5"]][-2:] == [
        "assistant-3",
        "tool-2",
    ]
    assert [m["message_id"] for m in state.windows["main:window-6"]] == [
        SLOT["message_id"],
        "summary-1",
    ]
    assert state.compactions[0]["operation_id"] == "compact-1"


def test_apply_delta_ops_and_preconditions() -> None:
    base = [{"message_id": "a"}, {"message_id": "b"}, {"message_id": "c"}]
    out = apply_delta(
        base,
        [
            {"op": "remove", "message_id": "a", "index": 0},
            {"op": "insert", "message_id": "d", "index": 2, "message": {"message_id": "d"}},
            {"op": "move", "message_id": "d", "index": 0},
            {"op": "replace", "message_id": "b", "message": {"message_id": "b", "content": "x"}},
        ],
    )
    assert [m["message_id"] for m in out] == ["d", "b", "c"] and out[1]["content"] == "x"
    assert [m["message_id"] for m in base] == ["a", "b", "c"]
    for bad in (
        [{"op": "insert", "message_id": "a", "index": 0, "message": {"message_id": "a"}}],
        [{"op": "remove", "message_id": "zz"}],
        [{"op": "move", "message_id": "a", "index": 3}],
        [{"op": "insert", "message_id": "q", "index": 9, "message": {"message_id": "q"}}],
        [{"op": "explode", "message_id": "a"}],
    ):
        with pytest.raises(DeltaError):
            apply_delta(base, bad)


def test_parse_trajectory_url_forms() -> None:
    assert parse_trajectory_url("http://127.0.0.1:19002/api/trajectory/sessions/s1/subjects") == (
        "http://127.0.0.1:19002",
        "s1",
    )
    assert parse_trajectory_url("http://127.0.0.1:19002?session_id=s2") == (
        "http://127.0.0.1:19002",
        "s2",
    )
    assert parse_trajectory_url("http://127.0.0.1:19002", "s3") == ("http://127.0.0.1:19002", "s3")
    with pytest.raises(ValueError):
        parse_trajectory_url("ws://127.0.0.1:19000/ws")


# ---- against the fake server ------------------------------------------------------------


async def test_probe_generations_in_spec_order() -> None:
    for generation, expected in ((3, "gen3"), (2, "gen2"), (1, "gen1")):
        fake = FakeTrajectory(generation=generation).start()
        try:
            async with TrajectoryClient(fake.base_url, SESSION) as client:
                assert await client.probe() == expected
            paths = [r["path"].rsplit("/", 1)[-1] for r in fake.requests]
            assert paths[0] == "subjects"
            assert all(r["origin"] == fake.base_url for r in fake.requests)
        finally:
            fake.stop()


async def test_load_latest_window_gen3_and_gen2(server: FakeTrajectory) -> None:
    artifact = await load_trajectory_window(server.session_url(), tuning=Tuning(context_max=128000))
    assert artifact.kind == "messages" and artifact.session_id == SESSION
    assert artifact.id == f"{SESSION}/main/main:window-7"
    assert artifact.snapshot is not None and artifact.snapshot.tuning.context_max == 128000
    assert [m.role for m in artifact.snapshot.system_messages] == ["system"]
    assert [m.extra["message_id"] for m in artifact.snapshot.messages] == ["summary-1", "user-3"]
    assert (
        artifact.extra["live"]["api_generation"] == "gen3"
        and artifact.extra["live"]["partial"] is False
    )
    assert artifact.recorded["last_compaction"]["operation_id"] == "compact-1"
    # the records request started at the checkpoint boundary
    assert any(
        r["path"].endswith("/records") and r["query"]["since_revision"] == "8"
        for r in server.requests
    )
    server.generation = 2
    gen2 = await load_trajectory_window(server.base_url, SESSION)
    assert gen2.extra["live"]["api_generation"] == "gen2"
    assert ids(gen2) == [SLOT["message_id"], "summary-1", "user-3"]  # the epoch-2 baseline suffices


@pytest.mark.parametrize(
    ("setup", "status", "code"),
    [
        (lambda f: setattr(f, "enabled", False), 503, "TRAJECTORY_DISABLED"),
        (lambda f: f.add_session("team-x", mode="team.leader"), 403, "UNSUPPORTED_SESSION_MODE"),
        (lambda f: None, 404, "NOT_FOUND"),
    ],
)
async def test_server_errors_are_typed(
    server: FakeTrajectory, setup: Callable[[FakeTrajectory], object], status: int, code: str
) -> None:
    setup(server)
    session = "team-x" if status == 403 else ("nope" if status == 404 else SESSION)
    with pytest.raises(TrajectoryError) as caught:
        await load_trajectory_window(server.base_url, session)
    assert caught.value.status == status and caught.value.code == code


async def test_gen1_is_reported_not_rebuilt() -> None:
    fake = FakeTrajectory(generation=1).start()
    try:
        with pytest.raises(TrajectoryError, match="gen-1"):
            await load_trajectory_window(fake.base_url, SESSION)
    finally:
        fake.stop()


async def test_paging_with_small_budget_and_oversize_stub() -> None:
    fake = FakeTrajectory(detail_max_bytes=3000).start()
    try:
        artifact = await load_trajectory_window(fake.base_url, SESSION)
        assert ids(artifact) == [SLOT["message_id"], "summary-1", "user-3"]
        pages = [r for r in fake.requests if r["path"].endswith("/records")]
        assert len(pages) >= 3
    finally:
        fake.stop()
    fake = FakeTrajectory(detail_max_bytes=2000).start()  # every record is over budget: stubs + raw
    try:
        artifact = await load_trajectory_window(fake.base_url, SESSION)
        assert ids(artifact) == [SLOT["message_id"], "summary-1", "user-3"]
        assert any(r["path"].endswith("/raw") for r in fake.requests)
    finally:
        fake.stop()


async def test_gap_and_invalid_commit_keep_last_window_and_say_so(server: FakeTrajectory) -> None:
    server.append_event(
        SESSION,
        "context.window.commit",
        {
            "window_id": "main:window-9",
            "base_window_id": "main:window-8",
            "complete": True,
            "delta": [],
        },
        epoch="epoch-2",
        sequence=3,
    )
    artifact = await load_trajectory_window(server.base_url, SESSION)
    live = artifact.extra["live"]
    assert live["window_id"] == "main:window-7" and live["partial"] is True
    assert any("gap" in d for d in live["diagnostics"])
    server.append_event(
        SESSION,
        "context.window.commit",
        {
            "window_id": "main:window-10",
            "base_window_id": "main:window-7",
            "complete": True,
            "delta": [{"op": "remove", "message_id": "ghost"}],
        },
        epoch="epoch-3",
        sequence=1,
        recorded_at=1760000050000000000,
    )
    again = await load_trajectory_window(server.base_url, SESSION)
    assert again.extra["live"]["window_id"] == "main:window-7"
    assert any("invalid commit" in d for d in again.extra["live"]["diagnostics"])


async def next_matching(
    events: AsyncIterator[LiveEvent], match: Callable[[LiveEvent], bool], timeout: float = 5.0
) -> LiveEvent:
    async def scan() -> LiveEvent:
        async for event in events:
            if match(event):
                return event
        raise AssertionError("stream ended")

    return await asyncio.wait_for(scan(), timeout)


async def test_follower_polls_new_revisions_and_compactions(server: FakeTrajectory) -> None:
    follower = TrajectoryFollower(
        server.session_url(), polling=Polling(poll_interval=0.1, idle_interval=0.1), backoff=FAST
    )
    events = follower.events()
    first = await next_matching(events, lambda e: isinstance(e, NewArtifact))
    assert ids(first) == [SLOT["message_id"], "summary-1", "user-3"]
    server.append_event(
        SESSION,
        "context.window.commit",
        {
            "window_id": "main:window-8",
            "base_window_id": "main:window-7",
            "complete": True,
            "request_purpose": "assistant",
            "delta": [
                {
                    "op": "insert",
                    "message_id": "assistant-4",
                    "index": 3,
                    "message": {
                        "message_id": "assistant-4",
                        "role": "assistant",
                        "origin": "harness_internal",
                        "content": "Published.",
                    },
                }
            ],
        },
        epoch="epoch-2",
        sequence=2,
    )
    update = await next_matching(events, lambda e: isinstance(e, NewArtifact))
    assert isinstance(update, NewArtifact) and update.change == "updated"
    assert ids(update)[-1] == "assistant-4" and update.artifact.extra["live"]["revision"] == 20
    after = [r for r in server.requests if r["path"].endswith("/subjects")][-1]
    assert after["query"]["after_revision"] in ("19", "20")
    server.append_event(
        SESSION,
        "compaction.completed",
        {
            "operation_id": "compact-2",
            "status": "completed",
            "processor": "DialogueCompressor",
            "summary": "s2",
            "model_requests": [],
            "before": {"tokens": 900},
            "after": {"tokens": 100},
        },
        epoch="epoch-2",
        sequence=3,
    )
    compaction = await next_matching(events, lambda e: isinstance(e, CompressionState))
    assert (
        isinstance(compaction, CompressionState)
        and compaction.operation_id == "compact-2"
        and compaction.session_id == SESSION
    )
    await follower.close()


async def test_follower_poke_and_store_epoch_rotation(server: FakeTrajectory) -> None:
    follower = TrajectoryFollower(
        server.base_url,
        SESSION,
        polling=Polling(poll_interval=30, idle_interval=30, debounce=0.01),
        backoff=FAST,
    )
    events = follower.events()
    await next_matching(events, lambda e: isinstance(e, NewArtifact))
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
    follower.poke()  # without the poke this would wait 30 s
    update = await next_matching(events, lambda e: isinstance(e, NewArtifact), timeout=3)
    assert ids(update) == [SLOT["message_id"], "summary-1"]
    server.rotate_epoch(SESSION, "rebuilt")
    before = len([r for r in server.requests if r["path"].endswith("/checkpoints")])
    follower.poke()
    await next_matching(events, lambda e: isinstance(e, NewArtifact), timeout=3)
    assert len([r for r in server.requests if r["path"].endswith("/checkpoints")]) > before
    assert follower.window.store_epoch == "rebuilt"
    await follower.close()


async def test_follower_survives_server_restart(server: FakeTrajectory) -> None:
    follower = TrajectoryFollower(
        server.session_url(),
        polling=Polling(poll_interval=0.05, idle_interval=0.05, timeout=1),
        backoff=FAST,
    )
    events = follower.events()
    await next_matching(events, lambda e: isinstance(e, NewArtifact))
    server.stop()
    down = await next_matching(
        events, lambda e: isinstance(e, SourceState) and e.state == "reconnecting"
    )
    assert isinstance(down, SourceState) and down.retry_in is not None
    server.append_event(
        SESSION,
        "context.window.commit",
        {
            "window_id": "main:window-8",
            "base_window_id": "main:window-7",
            "complete": True,
            "delta": [{"op": "remove", "message_id": "summary-1"}],
        },
        epoch="epoch-2",
        sequence=2,
    )
    server.start()
    await next_matching(events, lambda e: isinstance(e, SourceState) and e.state == "polling")
    update = await next_matching(events, lambda e: isinstance(e, NewArtifact))
    assert ids(update) == [SLOT["message_id"], "user-3"]
    await follower.close()


async def test_follower_unknown_session_is_a_problem_then_closed(server: FakeTrajectory) -> None:
    follower = TrajectoryFollower(server.base_url, "missing", backoff=FAST)
    seen = [e async for e in follower.events()]
    assert isinstance(seen[-2], SourceProblem) and "session not found" in seen[-2].error.error
    assert isinstance(seen[-1], SourceState) and seen[-1].state == "closed"


async def test_injected_transport_is_used() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            503, json={"error": "trajectory UI is disabled", "code": "TRAJECTORY_DISABLED"}
        )

    with pytest.raises(TrajectoryError) as caught:
        await load_trajectory_window(
            "http://127.0.0.1:1", "s", transport=httpx.MockTransport(handler)
        )
    assert caught.value.code == "TRAJECTORY_DISABLED" and caught.value.retryable


async def test_follower_session_without_database_then_first_records(server: FakeTrajectory) -> None:
    server.add_session("fresh")
    follower = TrajectoryFollower(
        server.base_url,
        "fresh",
        polling=Polling(poll_interval=0.05, idle_interval=0.05),
        backoff=FAST,
    )
    events = follower.events()
    empty = await next_matching(events, lambda e: isinstance(e, NewArtifact))
    assert isinstance(empty, NewArtifact) and empty.artifact.extra["live"]["window_id"] is None
    assert empty.artifact.snapshot is not None and empty.artifact.snapshot.messages == ()
    server.append_event(
        "fresh",
        "context.window.commit",
        {
            "window_id": "w1",
            "base_window_id": None,
            "complete": True,
            "delta": [],
            "transition_kind": "epoch_baseline",
            "messages": [
                SLOT,
                {"message_id": "u1", "role": "user", "origin": "external_user", "content": "hi"},
            ],
        },
        epoch="e1",
        sequence=1,
    )
    first = await next_matching(events, lambda e: isinstance(e, NewArtifact))
    assert ids(first) == [SLOT["message_id"], "u1"]
    await follower.close()


async def test_big_gateway_frames_are_parsed_off_the_loop() -> None:
    from inspector.sources.live.gateway import GatewayObserver
    from tests.servers.fake_gateway import FakeGateway, sample_frame

    gateway = await FakeGateway().astart()
    try:
        observer = GatewayObserver(gateway.url("big"), backoff=FAST)
        events = observer.events()
        await next_matching(events, lambda e: isinstance(e, SourceState) and e.state == "ready")
        big = sample_frame("compression_state_completed", "big")
        big["payload"]["compact_summary"] = "x" * 600_000
        await gateway.aemit("big", big)
        event = await next_matching(events, lambda e: isinstance(e, CompressionState))
        assert isinstance(event, CompressionState) and len(event.compact_summary) == 600_000
        await observer.close()
    finally:
        await gateway.astop()
        gateway.shutdown()


def test_blocking_loader_for_front_ends(server: FakeTrajectory) -> None:
    from inspector.core.artifact import Artifact, LoadError
    from inspector.sources.connect import is_live_url
    from inspector.sources.live.trajectory import load_trajectory_source

    [ok] = load_trajectory_source(server.session_url())
    assert isinstance(ok, Artifact) and ok.extra["live"]["window_id"] == "main:window-7"
    [missing] = load_trajectory_source(server.base_url, "nope")
    assert isinstance(missing, LoadError) and "session not found" in missing.error
    [no_session] = load_trajectory_source(server.base_url)
    assert isinstance(no_session, LoadError)
    assert is_live_url("ws://x") and is_live_url("HTTP://x") and not is_live_url("/tmp/x")


async def test_reset_pages_restart_and_a_store_that_keeps_resetting_is_an_error(
    server: FakeTrajectory,
) -> None:
    server.sessions[SESSION].retained_from["main"] = 12  # retention passed the checkpoint
    with pytest.raises(TrajectoryError) as caught:
        await load_trajectory_window(server.base_url, SESSION)
    assert caught.value.code == "RESET"
    resets = [r for r in server.requests if r["path"].endswith("/records")]
    assert len(resets) == 3
