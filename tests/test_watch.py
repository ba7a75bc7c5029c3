"""`inspector watch` in a subprocess against real folders and real local servers."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.servers.fake_gateway import FakeGateway, sample_frame
from tests.servers.fake_trajectory import SESSION, FakeTrajectory

ROOT = Path(__file__).resolve().parent.parent
SID = "sess_watch_0001"


class Watch:
    """A running `inspector watch` whose stdout lines are read in a thread."""

    def __init__(self, *args: str) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "NO_COLOR": "1", "COLUMNS": "200"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "inspector", "watch", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def next_line(self, timeout: float = 8.0) -> str | None:
        line = self.lines.get(timeout=timeout)
        if line is not None:
            self.seen.append(line)
        return line

    def wait_json(self, match: Any, timeout: float = 8.0) -> dict[str, Any]:
        """The next JSON line for which `match(obj)` is true."""
        deadline = time.monotonic() + timeout
        while True:
            line = self.next_line(max(0.01, deadline - time.monotonic()))
            if line is None:
                raise AssertionError(f"watch ended; saw {self.seen}; stderr {self.stderr()}")
            obj = json.loads(line)
            if match(obj):
                return obj

    def rest(self, timeout: float = 8.0) -> list[str]:
        out: list[str] = []
        while (line := self.next_line(timeout)) is not None:
            out.append(line)
        return out

    def stderr(self) -> str:
        if self.process.poll() is None:
            return ""
        assert self.process.stderr is not None
        return self.process.stderr.read()

    def wait(self, timeout: float = 8.0) -> int:
        return self.process.wait(timeout)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)


@pytest.fixture
def watches() -> Iterator[list[Watch]]:
    started: list[Watch] = []
    yield started
    for watch in started:
        watch.kill()


def start(watches: list[Watch], *args: str) -> Watch:
    watch = Watch(*args)
    watches.append(watch)
    return watch


def test_folder_watch_prints_new_dumps_and_stops_on_sigint(
    tmp_path: Path, watches: list[Watch]
) -> None:
    (tmp_path / "old.json").write_text(json.dumps([{"role": "user", "content": "old"}]))
    watch = start(
        watches, str(tmp_path), "--json", "--interval", "0.1", "--new-only", "--timeout", "20"
    )
    state = watch.wait_json(lambda o: o["event"] == "state")
    assert state["state"] == "following"
    written = time.monotonic()
    target = tmp_path / "new.json"
    text = json.dumps([{"role": "system", "content": "s"}, {"role": "user", "content": "new"}])
    target.write_text(text[:9])  # partially written first
    time.sleep(0.3)
    target.write_text(text)
    artifact = watch.wait_json(lambda o: o["event"] in ("artifact", "error"))
    assert artifact["event"] == "artifact" and artifact["source"].endswith("new.json")
    assert (artifact["system_messages"], artifact["messages"]) == (1, 1)
    assert time.monotonic() - written < 2.5  # 0.1 s polling; the rest is slack for busy CI
    watch.process.send_signal(signal.SIGINT)
    assert watch.wait() == 0
    assert all(
        json.loads(line)["source"] != str(tmp_path / "old.json")
        for line in watch.seen
        if '"artifact"' in line
    )


def test_gateway_watch_prints_compression_events(watches: list[Watch]) -> None:
    with FakeGateway() as gateway:
        gateway.sessions_meta = [{"session_id": SID}]
        watch = start(watches, gateway.url(SID), "--json", "--count", "4", "--timeout", "20")
        watch.wait_json(lambda o: o["event"] == "state" and o["state"] == "ready")
        gateway.wait_registered(SID)
        for name in ("compression_state_started", "compression_state_completed", "context_usage"):
            gateway.emit_sample(SID, name)
        gateway.emit(
            SID,
            {
                "type": "event",
                "event": "mystery.event",
                "payload": {"session_id": SID, "k": "v", "leak": "sk-abcdefghijklmnopqrstuvwx"},
            },
        )
        lines = [json.loads(line) for line in watch.rest()]
        assert watch.wait() == 0
    events = [o for o in lines if o["event"] != "state"]
    assert [o["event"] for o in events] == [
        "context.compression_state",
        "context.compression_state",
        "context.usage",
        "gateway",
    ]
    started, completed, usage, mystery = events
    assert started["status"] == "started" and started["before"]["tokens"] == 685440
    assert (
        completed["status"] == "completed"
        and completed["saved"]["percent"] == 95.6
        and completed["duration_ms"] == 379000
    )
    assert completed["after"]["context_percent"] == 3 and completed["model"] == "qwen-max"
    assert usage["rate"] == 50.0 and usage["context_max"] == 128000
    assert mystery["name"] == "mystery.event" and mystery["raw"]["payload"]["k"] == "v"
    assert mystery["raw"]["payload"]["leak"] == "***"  # exports never show key-like values


def test_gateway_watch_text_output_and_reconnect(watches: list[Watch]) -> None:
    gateway = FakeGateway().start()
    gateway.sessions_meta = [{"session_id": SID}]
    try:
        watch = start(watches, gateway.url(SID), "--timeout", "20")
        deadline = time.monotonic() + 8
        while "ready" not in " ".join(watch.seen) and time.monotonic() < deadline:
            watch.next_line()
        gateway.wait_registered(SID)
        gateway.emit_sample(SID, "compression_state_completed")
        while "DialogueCompressor completed" not in "\n".join(watch.seen):
            watch.next_line()
        gateway.stop()
        while "reconnecting" not in "\n".join(watch.seen):
            watch.next_line()
        gateway.start()
        # the watcher's own socket is back (a history.get socket may register first)
        while "\n".join(watch.seen).count("● ready") < 2:
            watch.next_line()
        gateway.emit_sample(SID, "context_usage")
        while "usage 50.0%" not in "\n".join(watch.seen):
            watch.next_line()
        watch.process.send_signal(signal.SIGINT)
        assert watch.wait() == 0
    finally:
        gateway.shutdown()
    text = "\n".join(watch.seen)
    assert "201→3 msgs · 685,440→30,003 tok (65%→3%)" in text
    assert "saved 655,437 tok (95.6%)" in text and "in 379.0s" in text
    assert "closed 1001 server shutdown" in text


def test_trajectory_once_and_errors(watches: list[Watch]) -> None:
    with FakeTrajectory() as server:
        watch = start(watches, server.session_url(), "--json", "--once")
        lines = [json.loads(line) for line in watch.rest()]
        assert watch.wait() == 0
        artifact = next(o for o in lines if o["event"] == "artifact")
        assert artifact["id"] == f"{SESSION}/main/main:window-7" and artifact["messages"] == 2
        assert artifact["live"]["api_generation"] == "gen3" and artifact["live"]["partial"] is False
        missing = start(watches, server.base_url, "--session", "nope", "--json", "--once")
        lines = [json.loads(line) for line in missing.rest()]
        assert missing.wait() == 1
        assert any(o["event"] == "error" and "session not found" in o["error"] for o in lines)


def test_gateway_poke_wakes_the_trajectory_follower(watches: list[Watch]) -> None:
    with FakeGateway() as gateway, FakeTrajectory() as server:
        gateway.sessions_meta = [{"session_id": SESSION}]
        watch = start(
            watches,
            gateway.url(SESSION),
            server.session_url(),
            "--json",
            "--interval",
            "30",
            "--timeout",
            "20",
        )
        watch.wait_json(lambda o: o["event"] == "artifact")
        gateway.wait_registered(SESSION)
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
        poked = time.monotonic()
        gateway.emit(SESSION, sample_frame("trace_updated_final", SESSION))
        update = watch.wait_json(lambda o: o["event"] == "artifact")
        assert update["change"] == "updated" and update["live"]["window_id"] == "main:window-8"
        assert time.monotonic() - poked < 5  # the 30 s poll interval was not what woke it
        watch.process.send_signal(signal.SIGINT)
        assert watch.wait() == 0


def test_usage_errors_exit_2() -> None:
    for args in (["ws://127.0.0.1:1/ws"], ["x", "--count", "0"], ["http://127.0.0.1:1/"]):
        done = subprocess.run(
            [sys.executable, "-m", "inspector", "watch", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=20,
        )
        assert done.returncode == 2, (args, done.stderr)
        assert "Traceback" not in done.stderr


def test_list_sessions(watches: list[Watch]) -> None:
    with FakeGateway() as gateway:
        gateway.sessions_meta = [{"session_id": "sess_a", "mode": "agent", "title": "first"}]
        watch = start(watches, gateway.url(), "--list-sessions", "--json")
        lines = [json.loads(line) for line in watch.rest()]
        assert watch.wait() == 0
        assert lines == [{"session_id": "sess_a", "mode": "agent", "title": "first"}]


def test_watch_never_imports_textual(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps([{"role": "user", "content": "x"}]))
    code = (
        "import sys, io, contextlib\n"
        "from inspector.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    rc = main(['watch', {str(tmp_path)!r}, '--once'])\n"
        "assert rc == 0, rc\n"
        "assert not any(m == 'textual' or m.startswith('textual.') for m in sys.modules), 'textual imported'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr


def test_snapshot_of_the_live_window_feeds_why(tmp_path: Path, watches: list[Watch]) -> None:
    with FakeTrajectory() as server:
        watch = start(watches, server.session_url(), "--json", "--once", "--snapshots")
        lines = [json.loads(line) for line in watch.rest()]
        assert watch.wait() == 0
    artifact = next(o for o in lines if o["event"] == "artifact")
    snapshot = artifact["snapshot"]
    assert [m["content"] for m in snapshot["messages"]] == [
        "Release notes found; formal summary drafted.",
        "Now publish it.",
    ]
    path = tmp_path / "live-window.json"
    path.write_text(json.dumps(snapshot))
    why = subprocess.run(
        [sys.executable, "-m", "inspector", "why", str(path), "--json", "--context-max", "1000"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert why.returncode == 0, why.stderr
    verdict = json.loads(why.stdout.splitlines()[0])
    assert verdict["kind"] == "snapshot" and verdict["hit"] is False and verdict["reason"]


def test_once_on_a_folder_reports_broken_files_and_exits_1(tmp_path: Path) -> None:
    (tmp_path / "good.json").write_text(json.dumps([{"role": "user", "content": "x"}]))
    (tmp_path / "bad.json").write_text("{ truncated")
    (tmp_path / "result.json").write_text(
        json.dumps({"context_changed": True})
    )  # not ours: skipped
    done = subprocess.run(
        [sys.executable, "-m", "inspector", "watch", str(tmp_path), "--once", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 1, done.stderr
    assert [o["source"].rsplit("/", 1)[-1] for o in lines if o["event"] == "error"] == ["bad.json"]
    assert [o["id"] for o in lines if o["event"] == "artifact"] == ["good.json"]


def test_watch_reads_a_trajectory_archive_once(tmp_path: Path) -> None:
    archive = tmp_path / "trajectory-retention-single.trajectory.zip"
    archive.write_bytes(FakeTrajectory().archive_zip())
    done = subprocess.run(
        [sys.executable, "-m", "inspector", "watch", str(archive), "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    [artifact] = [o for o in lines if o["event"] == "artifact"]
    assert artifact["id"] == f"{SESSION}/main/main:window-7"
    assert artifact["live"]["api_generation"] == "archive v3"
