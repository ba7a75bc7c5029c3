"""No escape sequence from a file, an agent or a model reaches the terminal.

A dump whose session id, context id and messages hold `ESC ]0;PWNED BEL` (retitle the
window) and `ESC [31m`: the context view's title and message list wrote them to the
terminal as they were (tried in tmux: the pane was retitled "PWNED"). A model whose summary
holds the same: the re-run's views showed it raw. Every screen a key opens, and every
re-run renderable, must show them escaped (`\\x1b`), never as control characters.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from inspector.cli import main
from inspector.core.live_events import parse_frame
from inspector.core.tokens import TokenCounter
from inspector.llm import EndpointConfig, RerunHooks, RerunOptions, rerun_compaction
from inspector.render.live_report import event_line
from inspector.render.rerun_report import rerun_report
from inspector.render.rerun_view import (
    after_renderable,
    before_renderable,
    findings_renderable,
    lost_renderable,
)
from inspector.tui.app import create_app
from inspector.tui.screens.context import ContextScreen
from tests.llm_reference import model_scenarios
from tests.servers.fake_openai import FakeOpenAI, Reply
from tests.test_tui_app import loaded, settle

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = next(ROOT.glob("sample_dumps/**/1796159289784_CurrentRound*.json"))
LOG = SAMPLE.parents[1] / "context_debug" / "CurrentRoundCompressor.jsonl"
RETITLE = "\x1b]0;PWNED\x07"
RED = "\x1b[31m"


def _controls(text: str) -> int:
    return text.count("\x1b") + text.count("\x07")


@pytest.fixture()
def counters() -> dict[str, TokenCounter]:
    """Offline counters (the test is about what is shown)."""
    return {mode: TokenCounter(mode) for mode in ("tiktoken_cl100k", "len_div_4", "string_length")}


def _hostile_folder(tmp_path: Path) -> Path:
    """A dump and its session's debug log, their ids and words full of escapes."""
    dump = json.loads(SAMPLE.read_text())
    dump["session_id"] = f"s{RETITLE}x"
    dump["context_id"] = f"c{RED}x"
    for message in dump["compression_request"]["messages_sent_to_model"][:3]:
        if isinstance(message.get("content"), str):
            message["content"] = f"{RETITLE} {RED}red\x1b[0m {message['content']}"
    (tmp_path / SAMPLE.name).write_text(json.dumps(dump))
    records = [json.loads(line) for line in LOG.read_text().splitlines() if line.strip()]
    for record in records:  # the debug log's words, shown in rows, verdicts and timelines
        for key in ("reason", "error_type", "error_message"):
            if isinstance(record.get(key), str):
                record[key] = f"{record[key]}{RED}{RETITLE}"
    (tmp_path / LOG.name).write_text("".join(json.dumps(record) + "\n" for record in records))
    return tmp_path


@pytest.mark.parametrize("command", ["why", "stats", "compare"])
def test_no_cli_report_writes_an_escape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    assert main([command, str(_hostile_folder(tmp_path))]) == 0
    out, err = capsys.readouterr()
    assert out and _controls(out + err) == 0, out
    if command == "why":
        assert "\\x1b[31m" in out  # the log's words are there, escaped


async def test_no_screen_writes_an_escape_from_the_dump(
    tmp_path: Path, counters: dict[str, TokenCounter]
) -> None:
    app = create_app([str(_hostile_folder(tmp_path))], counters=counters)
    async with app.run_test(size=(140, 45)) as pilot:
        browser = await loaded(app, pilot)
        assert _controls(app.export_screenshot()) == 0
        kinds = {row.artifact.kind: i for i, row in enumerate(browser.shown) if row.artifact}
        assert "dump" in kinds and len(kinds) > 1  # a dump, and the log's evaluations
        for kind, row in kinds.items():
            browser.query_one("#table").move_cursor(row=row)
            await pilot.press("enter")
            await settle(app, pilot)
            context = app.screen
            assert isinstance(context, ContextScreen)
            shot = app.export_screenshot()
            assert _controls(shot) == 0, kind
            if kind == "dump":  # the title and the list show the dump's escapes escaped
                assert "\\x1b]0;PWNED\\x07" in shot
            for key in ("w", "t", "d", "a", "a"):
                await pilot.press(key)
                await settle(app, pilot)
                assert _controls(app.export_screenshot()) == 0, (kind, key)
            for key in ("s", "C") if context.snapshot is not None else ():
                await pilot.press(key)
                await settle(app, pilot)
                assert app.screen is not context
                assert _controls(app.export_screenshot()) == 0, (kind, key)
                await pilot.press("escape")
                await settle(app, pilot)
            await pilot.press("escape")
            await settle(app, pilot)


async def test_a_models_escapes_are_shown_escaped(counters: dict[str, TokenCounter]) -> None:
    snapshot = next(s for s in model_scenarios() if s.name == "a_current_round_plain").snapshot
    summary = (
        f"<coverage_check>ok {RETITLE}</coverage_check>\n<state_snapshot>\n### 1. Goal\n"
        f"- {RED}Fix parse() offsets in src/tinycal/parse.py.\n</state_snapshot>"
    )
    env = {"OPENAI_API_KEY": "sk-control-tests-0001"}
    tuning = snapshot.tuning
    with FakeOpenAI([Reply(content=summary)]) as server:
        result = await rerun_compaction(
            snapshot,
            tuning,
            EndpointConfig(server.base_url, "fake-model", timeout_s=5.0),
            RerunOptions(counter=counters[tuning.token_mode]),
            RerunHooks(env=env),
        )
    assert RED in result.compaction.summary  # the model's bytes, kept as they came
    shown: list[Any] = [
        before_renderable(result),
        after_renderable(result),
        lost_renderable(result),
        findings_renderable(result),
        rerun_report(result),
    ]
    for renderable in shown:
        console = Console(width=120, record=True, color_system=None, file=io.StringIO())
        console.print(renderable)
        text = console.export_text()
        assert _controls(text) == 0, text
    console = Console(width=120, record=True, color_system=None, file=io.StringIO())
    console.print(after_renderable(result))
    assert "\\x1b[31m" in console.export_text()


def test_a_gateways_escapes_are_shown_escaped() -> None:
    frames = json.loads((ROOT / "tests/data/jiuwenswarm/ws-context-events.json").read_text())
    frame = frames["compression_state_failed_cancelled"]
    payload = frame["payload"]
    for key in ("operation_id", "status", "phase", "processor", "model", "summary", "error"):
        payload[key] = f"{payload[key]}{RETITLE}{RED}"
    event = parse_frame(json.dumps(frame))
    console = Console(width=400, record=True, color_system=None, file=io.StringIO())
    console.print(event_line(event, None))  # type: ignore[arg-type]
    text = console.export_text()
    assert _controls(text) == 0, text
    assert text.count("\\x1b]0;PWNED") == 7  # every field shown, escaped
