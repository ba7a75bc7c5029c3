"""File and folder following: files written while the follower runs."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

from inspector.core.artifact import Artifact
from inspector.core.live_events import (
    LiveEvent,
    NewArtifact,
    SourceProblem,
    SourceRemoved,
    SourceState,
)
from inspector.sources.follow import FileFollower, follow_paths

ROOT = Path(__file__).resolve().parent.parent


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def snapshot_line(snapshot_id: str, text: str = "hello") -> str:
    return (
        json.dumps(
            {
                "id": snapshot_id,
                "context_max": 1000,
                "messages": [{"role": "user", "content": text}],
            }
        )
        + "\n"
    )


def messages_doc(*texts: str) -> str:
    return json.dumps([{"role": "user", "content": t} for t in texts])


def kinds(events: list[LiveEvent]) -> list[str]:
    out = []
    for e in events:
        if isinstance(e, NewArtifact):
            out.append(f"{e.change}:{Path(e.artifact.id).name}")
        elif isinstance(e, SourceProblem):
            out.append(f"error:{Path(e.error.source).name}")
        elif isinstance(e, SourceRemoved):
            out.append(f"removed:{Path(e.source).name}")
    return out


def bump(path: Path) -> None:
    """Make sure the next write is seen as a change even on coarse-mtime file systems."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10_000_000))


def test_new_files_appear_and_partial_files_are_retried_not_reported(tmp_path: Path) -> None:
    clock = FakeClock()
    follower = FileFollower([tmp_path], settle=2.0, clock=clock)
    assert follower.poll() == []
    (tmp_path / "a.json").write_text(messages_doc("one"))
    assert kinds(follower.poll()) == ["added:a.json"]
    partial = tmp_path / "b.json"
    full = messages_doc("two", "three")
    partial.write_text(full[:10])  # the writer is mid-way
    assert follower.poll() == []
    clock.now += 1.0
    assert follower.poll() == []  # still young: no error
    with partial.open("a") as handle:
        handle.write(full[10:])
    bump(partial)
    assert kinds(follower.poll()) == ["added:b.json"]
    clock.now += 10
    assert follower.poll() == []


def test_a_file_broken_for_good_is_reported_once_after_settling(tmp_path: Path) -> None:
    clock = FakeClock()
    follower = FileFollower([tmp_path], settle=2.0, clock=clock)
    (tmp_path / "bad.json").write_text("{ not json")
    assert follower.poll() == []
    clock.now += 2.5
    assert kinds(follower.poll()) == ["error:bad.json"]
    clock.now += 5
    assert follower.poll() == []


def test_appended_records_update_and_partial_lines_wait(tmp_path: Path) -> None:
    clock = FakeClock()
    log = tmp_path / "Dialogue.jsonl"
    log.write_text(snapshot_line("s1") + snapshot_line("s2"))
    follower = FileFollower([log], clock=clock)
    assert kinds(follower.poll()) == ["added:s1", "added:s2"]
    with log.open("a") as handle:
        handle.write(snapshot_line("s3")[:15])
    bump(log)
    assert follower.poll() == []  # half a line: retried later, nothing reported
    with log.open("a") as handle:
        handle.write(snapshot_line("s3")[15:])
    bump(log)
    assert kinds(follower.poll()) == ["added:s3"]
    log.write_text(snapshot_line("s1", "changed") + snapshot_line("s2") + snapshot_line("s3"))
    bump(log)
    assert kinds(follower.poll()) == ["updated:s1"]


def test_removed_ignored_and_existing_files(tmp_path: Path) -> None:
    (tmp_path / "old.json").write_text(messages_doc("old"))
    follower = FileFollower([tmp_path], include_existing=False, clock=FakeClock())
    assert follower.poll() == []
    (tmp_path / "x.json.tmp").write_text(messages_doc("tmp"))
    (tmp_path / ".hidden.json").write_text(messages_doc("h"))
    assert follower.poll() == []
    os.replace(tmp_path / "x.json.tmp", tmp_path / "x.json")
    assert kinds(follower.poll()) == ["added:x.json"]
    (tmp_path / "old.json").write_text(messages_doc("old", "more"))
    bump(tmp_path / "old.json")
    assert kinds(follower.poll()) == ["updated:old.json"]
    (tmp_path / "old.json").unlink()
    assert kinds(follower.poll()) == ["removed:old.json"]


def test_a_log_that_does_not_exist_yet_is_picked_up(tmp_path: Path) -> None:
    log = tmp_path / "sub" / "later.jsonl"
    follower = FileFollower([log], clock=FakeClock())
    assert follower.poll() == []
    log.parent.mkdir()
    log.write_text(snapshot_line("late"))
    assert kinds(follower.poll()) == ["added:late"]


async def test_follow_paths_reports_new_dumps_within_a_second(tmp_path: Path) -> None:
    (tmp_path / "nested").mkdir()
    (tmp_path / "first.json").write_text(messages_doc("first"))
    stream: AsyncIterator[LiveEvent] = follow_paths([tmp_path], interval=0.1)
    state = await asyncio.wait_for(stream.__anext__(), 2)
    assert (
        isinstance(state, SourceState) and state.state == "following" and state.detail == "1 file"
    )
    first = await asyncio.wait_for(stream.__anext__(), 2)
    assert isinstance(first, NewArtifact) and first.artifact.source.endswith("first.json")

    async def writer() -> None:
        await asyncio.sleep(0.2)
        target = tmp_path / "nested" / "new.json"
        text = messages_doc("a", "b")
        target.write_text(text[:7])
        await asyncio.sleep(0.25)
        with target.open("a") as handle:
            handle.write(text[7:])

    task = asyncio.create_task(writer())
    started = time.monotonic()
    event = await asyncio.wait_for(stream.__anext__(), 3)
    await task
    assert isinstance(event, NewArtifact) and event.artifact.source.endswith("new.json")
    assert event.artifact.snapshot is not None and len(event.artifact.snapshot.messages) == 2
    assert time.monotonic() - started < 2.5  # 0.1 s polling; slack for busy CI
    await stream.aclose()  # type: ignore[attr-defined]


def test_session_folder_written_live_matches_a_full_load(tmp_path: Path) -> None:
    """Dumps and debug records of one session are linked as they appear, like a full load."""
    from inspector.core.live_tracker import LiveTracker
    from inspector.sources.loader import load_paths

    source = ROOT / "sample_dumps" / "workspace" / "context" / "ops-incident-42_context"
    target = tmp_path / "workspace" / "ops-incident-42_context"
    (target / "context_debug").mkdir(parents=True)
    (target / "compression_logs").mkdir()
    follower = FileFollower([tmp_path / "workspace"], clock=FakeClock())
    tracker = LiveTracker()
    lines = (
        (source / "context_debug" / "CurrentRoundCompressor.jsonl")
        .read_text()
        .splitlines(keepends=True)
    )
    log = target / "context_debug" / "CurrentRoundCompressor.jsonl"
    for chunk in (lines[:5], lines[5:12], [lines[12][:30]], [lines[12][30:], *lines[13:]]):
        with log.open("a") as handle:
            handle.write("".join(chunk))
        bump(log)
        for event in follower.poll():
            assert not isinstance(event, SourceProblem)
            tracker.apply(event)
    for dump in sorted((source / "compression_logs").iterdir()):
        (target / "compression_logs" / dump.name).write_text(dump.read_text())
        for event in follower.poll():
            tracker.apply(event)
    full = {a.id: a for a in load_paths([target]) if isinstance(a, Artifact)}
    live = {artifact.id: artifact for artifact in tracker.artifacts.values()}
    assert set(live) == set(full)
    for artifact_id, artifact in full.items():
        assert live[artifact_id].recorded == artifact.recorded
        assert len(live[artifact_id].extra["timeline"]) == len(artifact.extra["timeline"])


def test_session_templates_pick_up_new_sessions(tmp_path: Path) -> None:
    template = tmp_path / "context" / "{session_id}_context" / "compression_logs"
    follower = FileFollower([template], clock=FakeClock())
    assert follower.poll() == []
    folder = tmp_path / "context" / "s1_context" / "compression_logs"
    folder.mkdir(parents=True)
    (folder / "list.json").write_text(messages_doc("in a new session"))
    assert kinds(follower.poll()) == ["added:list.json"]
