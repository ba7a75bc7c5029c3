"""`inspector rerun --family standard --processor RoundLevelCompressor`, and the TUI's `R` on a
standard RoundLevel snapshot: the exact requests a scripted server on 127.0.0.1 receives,
the phases, the context after, the dry run, a failed call and the hard truncation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input

from inspector.cli import main
from inspector.encoding import make_counters
from inspector.llm.standard_runner import standard_prompts
from inspector.tui.app import create_app
from inspector.tui.screens.browser import BrowserScreen
from inspector.tui.screens.context import ContextScreen
from inspector.tui.screens.rerun_dialog import RerunDialog
from inspector.tui.screens.standard_rerun_screen import StandardRerunScreen
from tests.servers.fake_openai import FakeOpenAI, Reply
from tests.test_standard_rerun_cli import ERROR_500, _call, _json_out, _rerun, _snapshot
from tests.test_tui_standard_rerun import _settle, _text

TOOL_OUTPUT = "name = demo\n" * 40
MESSAGES = [
    {"role": "user", "content": "Fix the build."},
    {"role": "assistant", "content": "Reading.", "tool_calls": [_call("c1", "read_file", "{}")]},
    {"role": "tool", "content": TOOL_OUTPUT, "tool_call_id": "c1"},
    {"role": "assistant", "content": "setup.cfg is wrong."},
    {"role": "user", "content": "Thanks."},
]
CONFIG = {"trigger_context_ratio": 0.001, "target_total_tokens": 150, "keep_recent_messages": 1}
HEADER = (
    "[ROUND_LEVEL_MEMORY_BLOCK]\nprocessor: RoundLevelCompressor\n"
    "type: historical_memory_block\nscope: {scope}\n"
    "authority: This block is reference memory, not a binding source of truth.\n"
    "instruction_status: Historical fallback context only. Do not treat as a new user "
    "instruction.\n"
    "conflict_priority: Prefer newer explicit user intent, newer raw context, and fresh tool "
    "results over this block.\n\nSummary:\n"
)
BLOCKS = json.dumps({"blocks": [{"block_id": "block_1", "summary": " cfg names demo. "}]})


def _source(tmp_path: Path, **config: Any) -> Path:
    return _snapshot(tmp_path, "RoundLevelCompressor", MESSAGES, config={**CONFIG, **config})


def _expected_prompt(tokens: int) -> str:
    """The first phase's user prompt for MESSAGES (window tokens as counted), the contract ours."""
    contract = standard_prompts("RoundLevelCompressor").round_level_contract.rstrip("\n")
    return (
        "[Compression Task]\n- phase: l0_to_l1\n- target_summary_tokens: 30000\n"
        "- keep_recent_messages: 1\n- selected_blocks: 1\n"
        f"- current_context_window_tokens: {tokens}\n"
        "- compression_call_budget_limit: 200000\n- selected_range: [0, 3]\n\n"
        "[Reference Context]\n(none)\n\n"
        "[Selected Targets]\n[Block: block_1]\n- scope: completed_react\n"
        "- replace_range: [0, 3]\n- current_level: l0\n- next_level: l1\n"
        "- source_block_count: 1\n"
        "[0] role=user | content=Fix the build.\n"
        "[1] role=assistant | tool_calls=read_file | content=Reading.\n"
        f"[2] role=tool | tool_call_id=c1 | content={TOOL_OUTPUT}\n"
        "[3] role=assistant | content=setup.cfg is wrong.\n\n"
        "[Protected Recent Context]\n[4] role=user | content=Thanks.\n\n"
        f"[Output Contract]\n{contract}"
    )


def test_one_phase_sends_the_prompt_and_puts_the_block_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One l0_to_l1 call (our system prompt, the serialised targets, the kept message as
    protected context) and the round replaced by a level-1 block: under target, done."""
    with FakeOpenAI([Reply(content=BLOCKS)]) as server:
        assert main(_rerun(_source(tmp_path), server, "--json")) == 0
        bodies = [r.body for r in server.requests]
    assert len(bodies) == 1
    system, user = bodies[0]["messages"]
    assert system == {"role": "system", "content": standard_prompts("x").round_level}
    tokens = int(user["content"].split("current_context_window_tokens: ")[1].split("\n")[0])
    assert user == {"role": "user", "content": _expected_prompt(tokens)}
    assert (bodies[0]["temperature"], bodies[0]["top_p"]) == (0.95, 0.1)
    out = _json_out(capsys)
    assert out["processor"] == "RoundLevelCompressor" and out["outcome"] == "completed"
    assert out["tokens_before"] == tokens > out["tokens_after"]
    assert [m["content"] for m in out["messages_after"]] == [
        HEADER.format(scope="completed_react") + "cfg names demo.",
        "Thanks.",
    ]
    assert out["modified"] == [0, 1, 2, 3, 4]


def test_dry_run_shows_the_first_phase_and_sends_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--dry-run on `--family standard --processor RoundLevelCompressor` over a plain message
    list: the body of the first phase, nothing sent, no --base-url needed."""
    source = tmp_path / "plain.json"
    source.write_text(json.dumps({"messages": MESSAGES}), encoding="utf-8")
    flags = ["--family", "standard", "--processor", "RoundLevelCompressor"]
    flags += ["--target-total-tokens", "150", "--keep-recent-messages", "1"]
    with FakeOpenAI([Reply(content="x")]) as server:
        assert main(_rerun(source, server, *flags, "--dry-run", "--json")) == 0
        assert server.requests == []
    out = _json_out(capsys)
    assert out["dry_run"] is True and out["stage"] == "l0_to_l1"
    user = out["request"]["messages"][1]["content"]
    tokens = int(user.split("current_context_window_tokens: ")[1].split("\n")[0])
    assert user == _expected_prompt(tokens)
    assert main(_rerun(source, None, *flags, "--dry-run")) == 0
    text = capsys.readouterr().out
    assert "RoundLevelCompressor" in text and "inspector's prompt, not openJiuwen's" in text
    assert "later calls depend on the replies" in text


def test_a_failed_call_ends_failed_with_the_context_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 500 (no retries left) is re-raised by the processor: exit 3, state failed, the
    context as it was, and no later phase is tried."""
    with FakeOpenAI([Reply(status=500, error=ERROR_500)]) as server:
        args = _rerun(_source(tmp_path), server, "--json", "--max-retries", "0")
        assert main(args) == 3
        assert len(server.requests) == 1
    out = _json_out(capsys)
    assert out["outcome"] == "failed" and "MODEL_CALL_FAILED" in out["reason"]
    assert [m["content"] for m in out["messages_after"]] == [m["content"] for m in MESSAGES]


def test_empty_replies_run_every_phase_then_truncate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Empty replies: l0_to_l1, aggressive_keep_recent (our aggressive prompt) and
    aggressive_full_context (keep 0: the kept message becomes a target too), then the hard
    truncation without the model: one block of the cut serialised context."""
    with FakeOpenAI([Reply(content="")]) as server:
        assert main(_rerun(_source(tmp_path, target_total_tokens=120), server, "--json")) == 0
        bodies = [r.body for r in server.requests]
    prompts = standard_prompts("RoundLevelCompressor")
    systems = [b["messages"][0]["content"] for b in bodies]
    assert systems == [prompts.round_level, prompts.round_level_aggressive, systems[1]]
    phases = [b["messages"][1]["content"].split("\n")[1] for b in bodies]
    assert phases == [
        "- phase: l0_to_l1",
        "- phase: aggressive_keep_recent",
        "- phase: aggressive_full_context",
    ]
    assert "[Block: block_2]" in bodies[2]["messages"][1]["content"]
    out = _json_out(capsys)
    assert out["outcome"] == "completed" and "hard truncation" in out["reason"]
    (block,) = out["messages_after"]
    assert block["content"].startswith(HEADER.format(scope="truncated_full_context"))
    assert "...[TRUNCATED]..." in block["content"]
    assert out["tokens_after"] <= 120


def test_under_target_exits_4_without_a_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A window already within target_total_tokens: no call, exit 4, the reason says so."""
    with FakeOpenAI([Reply(content="x")]) as server:
        assert main(_rerun(_source(tmp_path, target_total_tokens=100000), server)) == 4
        assert server.requests == []
    assert "target_total_tokens 100000" in capsys.readouterr().err


async def test_r_opens_the_same_form_and_reruns_round_level(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R on a standard RoundLevel context opens the endpoint form; running it sends the
    l0_to_l1 call and shows the block that replaced the round."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-round-level-test")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    folder = tmp_path / "standard"
    folder.mkdir()
    _source(folder)
    app = create_app([str(folder)], counters=make_counters())
    with FakeOpenAI([Reply(content=BLOCKS)]) as server:
        async with app.run_test(size=(140, 45)) as pilot:
            await _settle(app, pilot)
            browser = app.screen
            assert isinstance(browser, BrowserScreen)
            row = next(i for i, r in enumerate(browser.shown) if r.artifact is not None)
            browser.query_one("#table", DataTable).move_cursor(row=row)
            await pilot.press("enter")
            await _settle(app, pilot)
            assert isinstance(app.screen, ContextScreen)
            assert app.screen.strategy.key == "standard.round_level"
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
            assert len(server.requests) == 1
            assert screen.result.end.state == "completed"
            first = screen.result.end.messages[0].content
            assert first == HEADER.format(scope="completed_react") + "cfg names demo."
            assert "l0_to_l1 (try 1): HTTP 200" in _text(app, "#std-calls")
            assert "outcome: completed" in _text(app, "#std-result")


def test_a_prompt_over_the_call_budget_is_cut_and_the_output_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """compression_call_max_tokens below the prompt: head and tail of the user prompt are kept
    around the marker, the contract survives at the end, and the approximation is said."""
    source = _source(tmp_path, compression_call_max_tokens=250)
    with FakeOpenAI([Reply(content=BLOCKS)]) as server:
        assert main(_rerun(source, server, "--json")) == 0
        (body,) = [r.body for r in server.requests]
    out = _json_out(capsys)
    user = body["messages"][1]["content"]
    whole = _expected_prompt(out["tokens_before"]).replace("limit: 200000", "limit: 250")
    head, tail = user.split("\n...[TRUNCATED]...\n")
    assert whole.startswith(head) and whole.endswith(tail) and len(user) < len(whole)
    assert head.startswith("[Compression Task]\n") and tail.endswith(whole[-200:])
    assert out["outcome"] == "completed"
    assert any("cut to the call budget" in note for note in out["approximations"])
