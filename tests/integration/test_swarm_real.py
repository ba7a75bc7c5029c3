"""A real jiuwenswarm 0.2.3 on 127.0.0.1, driven until it compresses (`make test-swarm`).

jiuwenswarm is installed into its own cached venv (`swarm_harness.ensure_swarm`), started on
free loopback ports with a scripted OpenAI-compatible model, and driven over its web gateway
(as the web UI does, its API key in the socket URL) until DialogueCompressor compresses.
Checked against what jiuwenswarm itself logged (its stdout `context compression state:`
lines): `inspector watch --json` (every completed operation, its sizes, the trigger marks,
the scale note, the context rebuilt from its files, no API key anywhere), the session-folder
reader (`why --json` on the home: the compressions it made, the token count of the context
it held), the TUI live panel (the operation listed and opened), and wrong targets (its
internal agent port, its TUI gateway, an unknown session) ending with exit 1 in time.
Slow (minutes): run by `make test-swarm`, skipped by `make test`.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from inspector.sources.jiuwenswarm.records import RecordedOperation, parse_log_line
from tests.integration.scripted_model import ScriptedModel
from tests.integration.swarm_harness import RunningSwarm, chat

pytestmark = pytest.mark.swarm
ROOT = Path(__file__).resolve().parents[2]
SID = "sess_itest_000001"
KEY = "sk-webui0123456789abcdefghijklmn"
TURNS = 6


def _logged(swarm: RunningSwarm) -> list[RecordedOperation]:
    ops = [parse_log_line(line) for line in swarm.log_text().splitlines()]
    return [op for op in ops if op is not None and op.session_id == SID]


def _turn(swarm: RunningSwarm, number: int) -> None:
    asyncio.run(chat(swarm.ws_url, SID, f"Question {number}: tell me more.", api_key=KEY))


def _inspector(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inspector", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _wrong_targets(swarm: RunningSwarm) -> None:
    for url, words in (
        (f"ws://127.0.0.1:{swarm.agent_port}/ws?session_id={SID}", "not a jiuwenswarm web gateway"),
        (f"ws://127.0.0.1:{swarm.gateway_port}/tui?session_id={SID}", "TUI gateway"),
        (f"{swarm.ws_url}?session_id=sess_nope", "unknown session 'sess_nope'"),
    ):
        started = time.monotonic()
        done = _inspector("watch", url, "--timeout", "6")
        assert done.returncode == 1, (url, done.stdout, done.stderr)
        assert words in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert time.monotonic() - started < 30


def _check_watch(lines: list[dict[str, Any]], logged: list[RecordedOperation]) -> None:
    text = json.dumps(lines)
    assert KEY not in text
    frames = [x for x in lines if x["event"] == "context.compression_state"]
    done = {x["operation_id"]: x for x in frames if x["status"] != "started"}
    logged_done = {op.operation_id: op for op in logged if op.status != "started"}
    seen = set(done) & set(logged_done)
    assert seen, "the watch saw none of the logged operations"
    for op_id in seen:
        frame, op = done[op_id], logged_done[op_id]
        assert frame["processor"] == op.processor and frame["status"] == op.status
        assert frame["before"]["tokens"] == op.before_tokens
        assert frame["after"]["tokens"] == op.after_tokens
    compressed = [x for x in frames if x["status"] == "completed"]
    assert compressed and compressed[-1]["compact_summary"]
    assert any("200,000" in x.get("scale_note", "") for x in frames)
    usages = [x for x in lines if x["event"] == "context.usage"]
    marks = [m for x in usages for m in x["trigger_marks"]]
    config = [
        m for m in marks if m["origin"] == "config" and m["processor"] == "DialogueCompressor"
    ]
    assert config and config[-1]["tokens"] == 3000 and config[-1]["percent"] is not None
    assert any(m["origin"] == "frames" and m["processor"] == "DialogueCompressor" for m in marks)
    artifacts = [x for x in lines if x["event"] == "artifact"]
    assert artifacts and artifacts[-1]["live"]["rebuilt_from"]


CAPTURED_HISTORY = ROOT / "tests" / "data" / "jiuwenswarm" / "ws-history.captured-0.2.3.json"


async def _raw_history_frames(url: str) -> list[dict[str, Any]]:
    """Every frame a web client gets for `history.get` page 1, as sent (for the fixture)."""
    from websockets.asyncio.client import connect

    frames: list[dict[str, Any]] = []
    origin = url.replace("ws://", "http://").split("/ws")[0]
    async with connect(f"{url}?session_id={SID}&user_id=capture", origin=origin) as ws:  # type: ignore[arg-type]
        request = {"type": "req", "id": "req_capture", "method": "history.get"}
        await ws.send(json.dumps({**request, "params": {"session_id": SID, "page_idx": 1}}))
        async with asyncio.timeout(30):
            async for message in ws:
                frame = json.loads(message)
                frames.append(frame)
                payload = frame.get("payload") or {}
                if frame.get("event") == "history.message" and payload.get("status") == "done":
                    break
    return frames


def _history_over_the_wire(swarm: RunningSwarm, tmp_path: Path) -> None:
    """history.get over the real gateway gives the transcript of the session's file, and a
    watch with no home folder rebuilds the context from it."""
    from inspector.sources.jiuwenswarm.history import read_history, transcript_from_records
    from inspector.sources.live.swarm_history import fetch_history

    records = asyncio.run(fetch_history(swarm.ws_url, SID, timeout=30))
    history = swarm.home / "agent" / "sessions" / SID / "history.jsonl"
    assert transcript_from_records(records).messages == read_history(history).messages
    frames = asyncio.run(_raw_history_frames(swarm.ws_url))
    if os.environ.get("INSPECTOR_SWARM_RECORD"):
        CAPTURED_HISTORY.write_text(json.dumps(frames, indent=1, ensure_ascii=False) + "\n")
    env = {**os.environ, "JIUWENSWARM_DATA_DIR": str(tmp_path / "no-home")}
    watch = subprocess.Popen(
        [sys.executable, "-m", "inspector", "watch", f"{swarm.ws_url}?session_id={SID}", "--json"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(12)
    finally:
        watch.send_signal(signal.SIGINT)
        out, err = watch.communicate(timeout=30)
    lines = [json.loads(x) for x in out.splitlines()]
    artifacts = [x for x in lines if x["event"] == "artifact"]
    assert artifacts, (out[-3000:], err[-2000:])
    assert "history.get" in artifacts[-1]["live"]["rebuilt_from"]
    assert KEY not in out


def test_a_real_jiuwenswarm_compresses_and_the_inspector_agrees(tmp_path: Path) -> None:
    started = time.monotonic()
    with ScriptedModel() as model, RunningSwarm(tmp_path / "home", model.base_url) as swarm:
        _turn(swarm, 1)
        listed = _inspector("watch", swarm.ws_url, "--list-sessions", "--json")
        assert listed.returncode == 0 and KEY not in listed.stdout
        assert any(json.loads(x)["session_id"] == SID for x in listed.stdout.splitlines())
        watch = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "inspector",
                "watch",
                f"{swarm.ws_url}?session_id={SID}",
                "--json",
                "--home",
                str(swarm.home),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            time.sleep(3)
            number = 1
            while number < TURNS or not any(op.compressed for op in _logged(swarm)):
                number += 1
                assert number <= TURNS + 4, "jiuwenswarm never compressed"
                _turn(swarm, number)
            time.sleep(3)
        finally:
            watch.send_signal(signal.SIGINT)
            out, err = watch.communicate(timeout=30)
        assert watch.returncode == 0, err
        lines = [json.loads(x) for x in out.splitlines()]
        logged = _logged(swarm)
        _check_watch(lines, logged)
        _wrong_targets(swarm)
        _history_over_the_wire(swarm, tmp_path)
        log = tmp_path / "stdout.log"
        log.write_text(swarm.log_text())
        code = swarm.stop()
    assert code is not None
    why = _inspector("why", str(tmp_path / "home"), str(log), "--json", timeout=300)
    assert why.returncode == 0, why.stderr
    by = {x["processor"]: x for x in map(json.loads, why.stdout.splitlines())}
    completed = [op for op in logged if op.processor == "DialogueCompressor" and op.compressed]
    assert by["DialogueCompressor"]["recorded"]["compressions"] == len(completed) >= 1
    last = [op for op in logged if op.status != "started"][-1]
    assert by["DialogueCompressor"]["total_tokens"] == last.after_tokens
    assert KEY not in why.stdout
    print(
        f"\nswarm integration: {time.monotonic() - started:.0f} s, {len(logged)} logged states, "
        f"{len(completed)} compressions, {len(model.requests)} model calls"
    )


async def test_the_tui_live_panel_lists_and_opens_the_operations(tmp_path: Path) -> None:
    from inspector.encoding import make_counters
    from inspector.sources.connect import build_request
    from inspector.tui.app import create_app
    from inspector.tui.screens.browser import BrowserScreen
    from inspector.tui.screens.operation import OperationScreen
    from inspector.tui.widgets.live_panel import LivePanel

    with ScriptedModel() as model, RunningSwarm(tmp_path / "home", model.base_url) as swarm:
        await asyncio.to_thread(_turn, swarm, 1)
        os.environ["JIUWENSWARM_DATA_DIR"] = str(swarm.home)
        try:
            app = create_app([], counters=make_counters())
            async with app.run_test(size=(140, 44)) as pilot:
                browser = next(s for s in app.screen_stack if isinstance(s, BrowserScreen))
                browser.start_connection(build_request(swarm.ws_url, SID, "auto", "main"))
                driver = threading.Thread(
                    target=lambda: [_turn(swarm, n) for n in range(2, TURNS + 1)], daemon=True
                )
                driver.start()
                panel = browser.query_one("#live-panel", LivePanel)
                deadline = time.monotonic() + 600
                while time.monotonic() < deadline and not any(
                    op.status == "completed" for op in panel.operations
                ):
                    await pilot.pause(0.5)
                driver.join(600)
                await pilot.pause(2)
                logged = {op.operation_id: op for op in _logged(swarm) if op.status != "started"}
                for listed in panel.operations:
                    if listed.done:
                        assert logged[listed.operation_id].status == listed.status
                completed = [op for op in panel.operations if op.status == "completed"]
                assert completed, panel.plain
                assert "¦" in panel.plain or "|" in panel.plain  # the agent's trigger marks
                assert "200,000" in panel.plain
                target = completed[0]
                index = panel.operations.index(target)
                listing = panel.query_one("#live-operations")
                listing.focus()
                listing.highlighted = index  # type: ignore[attr-defined]
                await pilot.press("enter")
                await pilot.pause(0.5)
                assert isinstance(app.screen, OperationScreen)
                text = app.screen.plain
                assert target.operation_id in text and "compact summary" in text
                op = logged[target.operation_id]
                assert f"{op.before_tokens:,} tokens" in text
                await pilot.press("escape")
                await pilot.press("ctrl+x")
                await pilot.pause(0.5)
                assert "ready" not in panel.plain.split("usage")[0]
        finally:
            os.environ.pop("JIUWENSWARM_DATA_DIR", None)
