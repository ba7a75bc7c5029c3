"""A live session's transcript over the gateway (`history.get`): no home folder needed.

The fake gateway on 127.0.0.1 serves the transcript of the real jiuwenswarm run exported
in `tests/data/jiuwenswarm/home` the way the 0.2.3 agent streams it (newest first, 20 a
page, one `history.message` event per record, a `done` event with `total_pages`); the
frames it sends were checked against a real gateway by `tests/integration` (`make
test-swarm`). The live session, with no home folder and no trajectory API, offers the
context rebuilt from those records with the compressions its frames reported folded in.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from inspector.core.live_events import NewArtifact, SourceState
from inspector.sources.jiuwenswarm.history import read_history, transcript_from_records
from inspector.sources.live.session import LiveSession
from inspector.sources.live.swarm_history import HistoryUnavailable, fetch_history
from tests.servers.fake_gateway import FakeGateway

HOME = Path(__file__).resolve().parent / "data" / "jiuwenswarm" / "home"
SID = "sess_harness_000001"
HISTORY = HOME / "agent" / "sessions" / SID / "history.jsonl"


def _records() -> list[dict[str, Any]]:
    lines = HISTORY.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _sent(gateway: FakeGateway) -> list[dict[str, Any]]:
    return [json.loads(text) for _, text in gateway.received]


async def test_every_page_is_read_oldest_first() -> None:
    """48 records are three pages; the records come back in the file's order, and the only
    thing the client sent is history.get for pages 1, 2 and 3."""
    records = _records()
    assert len(records) > 40
    gateway = await FakeGateway().astart()
    try:
        gateway.histories[SID] = records
        got = await fetch_history(gateway.url(), SID, timeout=10)
    finally:
        gateway.shutdown()
    assert got == records
    sent = _sent(gateway)
    assert [(f["method"], f["params"]) for f in sent] == [
        ("history.get", {"session_id": SID, "page_idx": page}) for page in (1, 2, 3)
    ]
    # the transcript from the wire is the transcript of the file
    assert transcript_from_records(got).messages == read_history(HISTORY).messages


async def test_unknown_session_and_refused_port_are_unavailable() -> None:
    """An unknown session ends with the agent's chat.error; a closed port with the reason."""
    gateway = await FakeGateway().astart()
    try:
        with pytest.raises(HistoryUnavailable, match="session history not found"):
            await fetch_history(gateway.url(), "sess_unknown", timeout=5)
    finally:
        gateway.shutdown()
    with pytest.raises(HistoryUnavailable, match="cannot read the history"):
        await fetch_history("ws://127.0.0.1:9/ws", SID, timeout=3)


async def test_live_session_without_home_rebuilds_from_the_wire(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No home folder, no trajectory API: after a turn the context comes from history.get,
    a compression frame's fold included, and it says so."""
    monkeypatch.setenv("JIUWENSWARM_DATA_DIR", str(tmp_path / "no-home"))
    records = _records()
    messages = read_history(HISTORY).messages
    gateway = await FakeGateway().astart()
    gateway.histories[SID] = records
    state = {
        "operation_id": "op1",
        "status": "completed",
        "phase": "add_messages",
        "processor": "DialogueCompressor",
        "session_id": SID,
        "before": {"messages": 4, "tokens": 900},
        "after": {"messages": 2, "tokens": 300},
        "compact_summary": "[DIALOGUE_MEMORY_BLOCK]\nthe first turns",
    }
    try:
        session = LiveSession(gateway.url(SID), trajectory_url="auto")
        assert session.home is None
        seen: list[object] = []

        async def follow() -> None:
            async for event in session.events():
                seen.append(event)

        task = asyncio.create_task(follow())
        try:
            async with asyncio.timeout(30):
                await gateway.await_registered(SID)
                while not any(
                    isinstance(e, SourceState) and e.state == "unavailable" for e in seen
                ):
                    await asyncio.sleep(0.05)
                frame = {"type": "event", "event": "context.compression_state", "payload": state}
                await gateway.aemit(SID, frame)
                while not any(isinstance(e, NewArtifact) for e in seen):
                    await asyncio.sleep(0.05)
        finally:
            await session.close()
            task.cancel()
    finally:
        gateway.shutdown()
    unavailable = next(e for e in seen if isinstance(e, SourceState) and e.state == "unavailable")
    assert "history.get" in unavailable.detail
    artifact = next(e for e in seen if isinstance(e, NewArtifact)).artifact
    assert artifact.id == f"{SID}/live" and artifact.snapshot is not None
    held = [m.content for m in artifact.snapshot.messages]
    # 4 -> 2 messages: the first three transcript messages became one memory message
    block = "[DIALOGUE_MEMORY_BLOCK]\n" + state["compact_summary"]
    assert held == [block, *[m["content"] for m in messages[3:]]]
    live = artifact.extra["live"]
    assert "history.get" in live["rebuilt_from"]
    assert any("over the gateway" in note for note in live["approximated"])
    assert any(f.get("method") == "history.get" for f in _sent(gateway))


def test_every_context_of_the_checkpoint_is_a_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session whose checkpoint stores two contexts gives one live context per context id
    (the agent's default one keeps the plain id), each from its own stored messages."""
    import shutil

    from inspector.sources.jiuwenswarm import session as swarm_session
    from inspector.sources.jiuwenswarm.records import read_checkpoint
    from inspector.sources.live.swarm_context import rebuild_contexts

    home = tmp_path / "home"
    shutil.copytree(HOME, home)
    real = read_checkpoint(home / "agent" / ".checkpoint" / "checkpoint.db")
    stored = real.contexts[SID]["default_context_id.messages"]
    sub = [{"role": "user", "content": "sub-agent task"}, {"role": "assistant", "content": "ok"}]

    def two_contexts(path: Path) -> Any:
        facts = read_checkpoint(path)
        facts.contexts[SID]["researcher_ctx.messages"] = sub
        return facts

    monkeypatch.setattr(swarm_session, "read_checkpoint", two_contexts)
    found = rebuild_contexts(home, SID, None, 1)
    assert [a.id for a in found] == [f"{SID}/live", f"{SID}/researcher_ctx/live"]
    assert [a.context_id for a in found] == ["default_context_id", "researcher_ctx"]
    assert found[0].snapshot is not None and len(found[0].snapshot.messages) == len(stored)
    assert found[1].snapshot is not None
    assert [m.content for m in found[1].snapshot.messages] == ["sub-agent task", "ok"]


CAPTURED = (
    Path(__file__).resolve().parent / "data" / "jiuwenswarm" / "ws-history.captured-0.2.3.json"
)


async def _page_one(url: str, session_id: str) -> list[dict[str, Any]]:
    from websockets.asyncio.client import connect

    frames: list[dict[str, Any]] = []
    async with connect(f"{url}?session_id={session_id}&user_id=t") as ws:
        request = {"type": "req", "id": "req_capture", "method": "history.get"}
        await ws.send(json.dumps({**request, "params": {"session_id": session_id, "page_idx": 1}}))
        async with asyncio.timeout(10):
            async for message in ws:
                frame = json.loads(message)
                frames.append(frame)
                payload = frame.get("payload") or {}
                if frame.get("event") == "history.message" and payload.get("status") == "done":
                    break
    return frames


def _shape(frames: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [
        (f.get("type"), f.get("event"), tuple(sorted(f)), tuple(sorted(f.get("payload") or {})))
        for f in frames
        if f.get("event") != "connection.ack"
    ]


async def test_the_fake_streams_history_as_the_real_gateway_did() -> None:
    """The frames a real jiuwenswarm 0.2.3 gateway sent for page 1 (captured by `make
    test-swarm`) and the fake's for the same records: same frames, keys and records."""
    captured = json.loads(CAPTURED.read_text(encoding="utf-8"))
    session = next(
        f["payload"]["session_id"] for f in captured if f.get("event") == "history.message"
    )
    page = [f["payload"]["message"] for f in captured if (f.get("payload") or {}).get("message")]
    done = captured[-1]["payload"]
    assert done["status"] == "done" and done["total_pages"] == 2 and len(page) == 20
    gateway = await FakeGateway().astart()
    try:
        older = {"role": "user", "content": "an older turn", "id": "older"}
        gateway.histories[session] = [older, *reversed(page)]
        frames = await _page_one(gateway.url(), session)
    finally:
        gateway.shutdown()
    assert _shape(frames) == _shape(captured)
    assert [
        f["payload"]["message"] for f in frames if (f.get("payload") or {}).get("message")
    ] == page
    assert frames[-1]["payload"] == done
