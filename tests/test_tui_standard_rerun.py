"""The TUI's `R` on a standard DialogueCompressor snapshot: the same form, then the
processor's real call against the scripted server on 127.0.0.1 and the context after.
Driven through the pilot from the browser, as a user would."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Static

from inspector.encoding import make_counters
from inspector.tui.app import create_app
from inspector.tui.screens.browser import BrowserScreen
from inspector.tui.screens.context import ContextScreen
from inspector.tui.screens.rerun_dialog import RerunDialog
from inspector.tui.screens.standard_rerun_screen import StandardRerunScreen
from tests.servers.fake_openai import FakeOpenAI, Reply
from tests.test_standard_rerun_cli import BLOCK_HEADER, DIALOGUE_MESSAGES

SECRET = "sk-tui-standard-SECRET-4242"


async def _settle(app: App[Any], pilot: Pilot[Any]) -> None:
    for _ in range(3):
        await pilot.pause()
        await app.workers.wait_for_complete()
    await pilot.pause()


def _text(app: App[Any], selector: str) -> str:
    widget = app.screen.query_one(selector, Static)
    console = Console(file=io.StringIO(), width=1000, color_system=None, record=True)
    console.print(widget.content)
    return console.export_text()


async def test_r_reruns_a_standard_dialogue_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R opens the endpoint form; running it sends DialogueCompressor's one JSON call and
    shows the block that replaced the round, the tokens saved, and whose prompt it was."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    folder = tmp_path / "standard"
    folder.mkdir()
    snapshot = {
        "processor": "DialogueCompressor",
        "processor_family": "standard",
        "openjiuwen_version": "0.1.16",
        "hook": "add_messages",
        "added_from": len(DIALOGUE_MESSAGES) - 1,
        "config": {"tokens_threshold": 100},
        "messages": DIALOGUE_MESSAGES,
    }
    (folder / "case.json").write_text(json.dumps(snapshot), encoding="utf-8")
    reply = json.dumps({"blocks": [{"block_id": "react_1", "summary": "cfg names demo."}]})
    app = create_app([str(folder)], counters=make_counters())
    with FakeOpenAI([Reply(content=reply)]) as server:
        async with app.run_test(size=(140, 45)) as pilot:
            await _settle(app, pilot)
            browser = app.screen
            assert isinstance(browser, BrowserScreen)
            row = next(i for i, r in enumerate(browser.shown) if r.artifact is not None)
            browser.query_one("#table", DataTable).move_cursor(row=row)
            await pilot.press("enter")
            await _settle(app, pilot)
            assert isinstance(app.screen, ContextScreen)
            assert app.screen.strategy.key == "standard.dialogue"
            await pilot.press("R")
            await pilot.pause()
            dialog = app.screen
            assert isinstance(dialog, RerunDialog)
            dialog.query_one("#base-url", Input).value = server.base_url
            dialog.query_one("#model", Input).value = "fake-model"
            dialog.query_one("#out-dir", Input).value = str(tmp_path / "out")
            await pilot.press("ctrl+r")
            await _settle(app, pilot)
            screen = app.screen
            assert isinstance(screen, StandardRerunScreen)
            assert screen.result is not None, screen.error_message
            bodies = [r.body for r in server.requests]
            assert server.requests[0].had_authorization_header
            assert len(bodies) == 1 and [m["role"] for m in bodies[0]["messages"]] == [
                "system",
                "user",
                "user",
            ]
            assert screen.result.end.state == "completed"
            assert screen.result.end.messages[1].content == BLOCK_HEADER + "cfg names demo."
            assert "inspector's prompt, not openJiuwen's" in _text(app, "#std-title")
            result = _text(app, "#std-result")
            assert "outcome: completed" in result
            assert f"saves {screen.result.saving}" in result
            assert "*[1] user: [DIALOGUE_MEMORY_BLOCK]" in result
            assert "dialogue_blocks (try 1): HTTP 200" in _text(app, "#std-calls")
            assert SECRET not in app.export_screenshot()
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, ContextScreen)
