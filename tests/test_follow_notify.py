"""Following with OS notifications (`watchfiles`): an idle poll scans nothing, a change is
still seen, and without notifications the follower polls as before."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from inspector.core.live_events import NewArtifact
from inspector.sources.follow import ChangeWatcher, FileFollower


def snapshot(path: Path, snapshot_id: str) -> None:
    raw = {"id": snapshot_id, "context_max": 1000, "messages": [{"role": "user", "content": "x"}]}
    path.write_text(json.dumps(raw), encoding="utf-8")


def wait_until(predicate: Any, seconds: float = 10.0) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("timed out")


class CountingFollower(FileFollower):
    """Counts the scans (`files()` walks) a poll makes."""

    scans = 0

    def files(self) -> Any:
        self.scans += 1
        return super().files()


def test_idle_polls_do_not_scan_and_changes_still_appear(tmp_path: Path) -> None:
    for n in range(20):
        snapshot(tmp_path / f"s{n}.json", f"s{n}")
    follower = CountingFollower([tmp_path], settle=0.0, include_existing=False, notify=True)
    follower.prime()
    try:
        watcher = follower._watcher
        assert watcher is not None and follower.watching
        wait_until(lambda: watcher.ready)
        follower.poll()  # whatever arrived while the watch was being set up
        before = follower.scans
        for _ in range(20):
            assert follower.poll() == []
        assert follower.scans == before  # idle: not one file was looked at
        snapshot(tmp_path / "new.json", "new")
        events = wait_until(follower.poll)
        assert [e.artifact.id for e in events if isinstance(e, NewArtifact)] == ["new"]
        assert follower.scans > before
    finally:
        follower.close()
    assert wait_until(lambda: not watcher.alive)


def test_without_notifications_every_poll_scans(tmp_path: Path) -> None:
    snapshot(tmp_path / "a.json", "a")
    follower = CountingFollower([tmp_path], settle=0.0, include_existing=False, notify=False)
    follower.prime()
    assert not follower.watching
    before = follower.scans
    follower.poll()
    follower.poll()
    assert follower.scans == before + 2
    snapshot(tmp_path / "b.json", "b")
    assert [e.artifact.id for e in follower.poll() if isinstance(e, NewArtifact)] == ["b"]


def test_templates_and_missing_roots_fall_back_to_polling(tmp_path: Path) -> None:
    template = FileFollower([str(tmp_path / "{session_id}_context")], notify=True)
    template.poll()
    assert not template.watching
    missing = FileFollower([tmp_path / "not-yet"], notify=True)
    missing.poll()
    assert not missing.watching
    assert ChangeWatcher.start([tmp_path / "not-yet"]) is None


def test_a_watcher_that_fails_hands_over_to_polling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import watchfiles

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise OSError("inotify watch limit reached")

    monkeypatch.setattr(watchfiles, "watch", broken)
    snapshot(tmp_path / "a.json", "a")
    follower = CountingFollower([tmp_path], settle=0.0, include_existing=False, notify=True)
    follower.prime()
    wait_until(lambda: follower._watcher is not None and not follower._watcher.alive)
    assert not follower.watching
    assert follower._watcher is not None and "inotify" in (follower._watcher.error or "")
    before = follower.scans
    follower.poll()
    follower.poll()
    assert follower.scans == before + 2
