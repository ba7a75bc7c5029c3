"""A live jiuwenswarm session with no trajectory API becomes a context you can open.

The home folder exported from a real jiuwenswarm run (`tests/data/jiuwenswarm/home`) stands
in for the agent's files; the fake gateway on 127.0.0.1 for its socket. The live session
brings the agent's thresholds to the tracker, says the trajectory API is missing, and offers
the session's context rebuilt from the files, saying what is approximated; a finished turn
rebuilds it again.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from inspector.core.live_events import GatewayEvent, NewArtifact, SourceState
from inspector.sources.live.session import LiveSession
from inspector.sources.live.swarm_context import rebuild_context
from tests.servers.fake_gateway import FakeGateway

HOME = Path(__file__).resolve().parent / "data" / "jiuwenswarm" / "home"
SID = "sess_harness_000001"


def test_rebuilt_context_says_what_it_is(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(HOME, home)
    artifact = rebuild_context(home, SID, None, 1)
    assert artifact is not None and artifact.kind == "messages" and artifact.snapshot is not None
    assert artifact.id == f"{SID}/live" and artifact.processor == "DialogueCompressor"
    live = artifact.extra["live"]
    assert "checkpoint" in live["rebuilt_from"] and live["partial"] is True
    assert any("no trajectory API" in note for note in live["approximated"])
    assert rebuild_context(home, "sess_unknown", None, 1) is None


async def test_live_session_offers_the_files_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    shutil.copytree(HOME, home)
    monkeypatch.setenv("JIUWENSWARM_DATA_DIR", str(home))
    gateway = await FakeGateway().astart()
    try:
        session = LiveSession(gateway.url(SID), trajectory_url="auto")
        seen: list[object] = []

        async def follow() -> None:
            async for event in session.events():
                seen.append(event)

        task = asyncio.create_task(follow())
        try:
            async with asyncio.timeout(30):
                while not any(isinstance(e, NewArtifact) for e in seen):
                    await asyncio.sleep(0.05)
                await gateway.await_registered(SID)
                await gateway.aemit(
                    SID, {"type": "event", "event": "chat.final", "payload": {"session_id": SID}}
                )
                while sum(isinstance(e, NewArtifact) for e in seen) < 2:
                    await asyncio.sleep(0.05)
        finally:
            await session.close()
            task.cancel()
    finally:
        gateway.shutdown()
    config = next(
        e for e in seen if isinstance(e, GatewayEvent) and e.name == "inspector.agent_config"
    )
    assert config.payload["triggers"]["DialogueCompressor"] == 3000
    assert session.tracker.config_triggers["DialogueCompressor"] == 3000
    unavailable = next(e for e in seen if isinstance(e, SourceState) and e.state == "unavailable")
    assert str(home) in unavailable.detail
    first, second = [e for e in seen if isinstance(e, NewArtifact)][:2]
    assert first.change == "added" and second.change == "updated"
    assert first.artifact.snapshot is not None and len(first.artifact.snapshot.messages) == 6
