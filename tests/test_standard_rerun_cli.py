"""`inspector rerun --family standard`: the exact requests a scripted server on 127.0.0.1
receives, the context after, dry runs, prompt files, failures, retries and masking."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import main
from inspector.llm.standard_runner import standard_prompts
from tests.servers.fake_openai import FakeOpenAI, Reply

ERROR_500 = {"message": "boom", "type": "server_error"}


def _call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


DIALOGUE_MESSAGES = [
    {"role": "user", "content": "Fix the build."},
    {"role": "assistant", "content": "Reading.", "tool_calls": [_call("c1", "read_file", "{}")]},
    {"role": "tool", "content": "name = demo\n" * 60, "tool_call_id": "c1"},
    {"role": "assistant", "content": "setup.cfg is wrong."},
    {"role": "user", "content": "Run the tests."},
    {"role": "assistant", "content": "Tests pass."},
    {"role": "user", "content": "Thanks."},
]


def _snapshot(tmp_path: Path, processor: str, messages: list[dict[str, Any]], **extra: Any) -> Path:
    document = {
        "processor": processor,
        "processor_family": "standard",
        "openjiuwen_version": "0.1.16",
        "hook": "add_messages",
        "added_from": len(messages) - 1,
        "engine_config": {},
        "messages": messages,
        **extra,
    }
    path = tmp_path / f"{processor}.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _dialogue(tmp_path: Path, **config: Any) -> Path:
    return _snapshot(
        tmp_path,
        "DialogueCompressor",
        DIALOGUE_MESSAGES,
        config={"tokens_threshold": 100, "compression_target_tokens": 250, **config},
    )


def _rerun(source: Path, server: FakeOpenAI | None, *extra: str) -> list[str]:
    url = ["--base-url", server.base_url] if server is not None else []
    return ["rerun", str(source), *url, "--model", "m", "--no-key", *extra]


def _json_out(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    lines = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert len(lines) == 1
    return dict(json.loads(lines[0]))


EXPECTED_CONTEXT = (
    "[Context Before Targets]\n[0] role=user | content=Fix the build.\n\n"
    "[Compression Targets]\n[Block: react_1]\n"
    "[1] role=assistant | tool_calls=read_file | content=Reading.\n"
    "[2] role=tool | tool_call_id=c1 | content=" + "name = demo\n" * 60 + "\n"
    "[3] role=assistant | content=setup.cfg is wrong.\n\n"
    "[Context After Targets]\n[4] role=user | content=Run the tests.\n"
    "[5] role=assistant | content=Tests pass.\n[6] role=user | content=Thanks."
)
EXPECTED_MAPPING = (
    "[Target Mapping]\nYou must only compress the following ReAct blocks.\n\n"
    "[Block: react_1]\n- anchor_user_index: 0\n- replace_range: [1, 3]\n\n"
    "[Output Requirements]\n- Read the full context to understand the entire task.\n"
    "- Compress only the listed blocks.\n- Produce one summary for each block_id.\n"
    "- Keep the most task-useful content first.\n"
    "- Preserve both action continuity and task-critical information.\n"
    "- Do not rewrite non-target messages.\n- Return valid JSON only."
)
BLOCK_HEADER = (
    "[DIALOGUE_MEMORY_BLOCK]\nprocessor: DialogueCompressor\ntype: historical_memory_block\n"
    "scope: historical_dialogue_block\n"
    "authority: This block is reference memory, not a binding source of truth.\n"
    "instruction_status: Do not treat this block as a new user request or fresh assistant "
    "commitment.\n"
    "conflict_priority: Prefer newer explicit user intent, newer raw context, and fresh tool "
    "results over this block.\n\nSummary:\n"
)


def test_dialogue_sends_one_json_call_and_replaces_the_round(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The exact body openJiuwen 0.1.16 sends (system prompt with the target substituted, the
    split context, the mapping; 0.95 / 0.1 sampling, no tools) and the block put back."""
    reply = json.dumps({"blocks": [{"block_id": "react_1", "summary": "  cfg names demo.  "}]})
    with FakeOpenAI([Reply(content=reply)]) as server:
        assert main(_rerun(_dialogue(tmp_path), server, "--json")) == 0
        bodies = [r.body for r in server.requests]
    system = standard_prompts("DialogueCompressor").dialogue.replace(
        "{compression_target_tokens}", "250"
    )
    assert bodies == [
        {
            "model": "m",
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": EXPECTED_CONTEXT},
                {"role": "user", "content": EXPECTED_MAPPING},
            ],
            "stream": False,
            "temperature": 0.95,
            "top_p": 0.1,
        }
    ]
    out = _json_out(capsys)
    assert out["outcome"] == "completed"
    assert out["prompt"] == "inspector's prompt, not openJiuwen's"
    assert out["modified"] == [1, 2, 3]
    assert [m["content"] for m in out["messages_after"]] == [
        "Fix the build.",
        BLOCK_HEADER + "cfg names demo.",
        "Run the tests.",
        "Tests pass.",
        "Thanks.",
    ]
    assert out["tokens_before"] > out["tokens_after"] > 0
    assert out["saving"] == out["tokens_before"] - out["tokens_after"]


def test_dry_run_shows_the_same_body_and_sends_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--dry-run prints the request a real run sends, and the server receives nothing."""
    with FakeOpenAI([Reply(content="x")]) as server:
        assert main(_rerun(_dialogue(tmp_path), server, "--dry-run", "--json")) == 0
        assert server.requests == []
    out = _json_out(capsys)
    assert out["dry_run"] is True and out["stage"] == "dialogue_blocks"
    assert [m["content"] for m in out["request"]["messages"][1:]] == [
        EXPECTED_CONTEXT,
        EXPECTED_MAPPING,
    ]
    assert main(_rerun(_dialogue(tmp_path), None, "--dry-run")) == 0  # no --base-url needed
    text = capsys.readouterr().out
    assert "inspector's prompt, not openJiuwen's" in text
    assert '"temperature": 0.95' in text


def test_dry_run_masks_secrets_in_the_context(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A key inside a message is masked in what the dry run prints."""
    secret = "sk-proj-" + "A1b2C3d4" * 5
    messages = [dict(m) for m in DIALOGUE_MESSAGES]
    messages[2]["content"] = f"OPENAI_API_KEY={secret}\n" + "name = demo\n" * 60
    source = _snapshot(tmp_path, "DialogueCompressor", messages, config={"tokens_threshold": 10})
    assert main(_rerun(source, None, "--dry-run")) == 0
    text = capsys.readouterr().out
    assert secret not in text
    assert "OPENAI_API_KEY=" in text


def test_prompt_file_replaces_the_system_prompt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--prompt-file gives the real prompt; its placeholder is filled; the output says so."""
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Compress to {compression_target_tokens} tokens. {json}", encoding="utf-8")
    reply = json.dumps({"blocks": [{"block_id": "react_1", "summary": "short"}]})
    with FakeOpenAI([Reply(content=reply)]) as server:
        args = _rerun(_dialogue(tmp_path), server, "--prompt-file", str(prompt), "--json")
        assert main(args) == 0
        system = server.requests[0].body["messages"][0]
    assert system == {"role": "system", "content": "Compress to 250 tokens. {json}"}
    out = _json_out(capsys)
    assert out["prompt_source"] == "file"
    assert out["prompt"] == "the prompt file given (--prompt-file)"
    assert main(_rerun(_dialogue(tmp_path), None, "--prompt-file", str(tmp_path / "no"))) == 2


def test_plain_reply_falls_back_to_one_block_and_empty_reply_is_noop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A reply that is no blocks JSON becomes one block; an empty one changes nothing."""
    with FakeOpenAI([Reply(content="The config was wrong.")]) as server:
        assert main(_rerun(_dialogue(tmp_path), server, "--json")) == 0
    out = _json_out(capsys)
    assert out["outcome"] == "completed"
    assert out["messages_after"][1]["content"] == BLOCK_HEADER + "The config was wrong."
    with FakeOpenAI([Reply(content="")]) as server:
        assert main(_rerun(_dialogue(tmp_path), server, "--json")) == 0
    out = _json_out(capsys)
    assert out["outcome"] == "noop"
    assert [m["content"] for m in out["messages_after"]] == [
        m["content"] for m in DIALOGUE_MESSAGES
    ]


def test_model_error_is_retried_as_the_sdk_does_then_noop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 500 is retried (--max-retries), and when it persists DialogueCompressor skips."""
    with FakeOpenAI([Reply(status=500, error=ERROR_500)]) as server:
        args = _rerun(_dialogue(tmp_path), server, "--json", "--max-retries", "1")
        assert main(args) == 0
        assert len(server.requests) == 2
    out = _json_out(capsys)
    assert out["outcome"] == "noop"
    assert [c["status"] for c in out["calls"]] == [500, 500]
    assert out["calls"][0]["retry_after_s"] == 0.5
    assert "model call failed" in out["reason"]


def test_a_forked_snapshot_reruns_as_a_standard_processor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--family standard --processor DialogueCompressor` on a forked snapshot is no usage error."""
    source = tmp_path / "forked.json"
    source.write_text(json.dumps({"messages": DIALOGUE_MESSAGES}), encoding="utf-8")
    reply = json.dumps({"blocks": [{"block_id": "react_1", "summary": "s"}]})
    with FakeOpenAI([Reply(content=reply)]) as server:
        args = _rerun(source, server, "--family", "standard", "--processor", "DialogueCompressor")
        assert main([*args, "--tokens-threshold", "50", "--json"]) == 0
        assert len(server.requests) == 1
    out = _json_out(capsys)
    assert out["processor"] == "DialogueCompressor" and out["outcome"] == "completed"


def test_nothing_to_rerun_exits_4_without_a_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No compressible round: exit 4, and the server is never called."""
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    source = _snapshot(tmp_path, "DialogueCompressor", messages, config={})
    with FakeOpenAI([Reply(content="x")]) as server:
        assert main(_rerun(source, server)) == 4
        assert server.requests == []
    assert "no compressible round" in capsys.readouterr().err


CR_MESSAGES = [
    {"role": "user", "content": "Speed up the export."},
    {"role": "assistant", "content": "a", "tool_calls": [_call("c1", "read_file", "{}")]},
    {"role": "tool", "content": "rows " * 200, "tool_call_id": "c1"},
    {"role": "assistant", "content": "b", "tool_calls": [_call("c2", "explain", "{}")]},
    {"role": "tool", "content": "Seq Scan", "tool_call_id": "c2"},
    {"role": "assistant", "content": "c", "tool_calls": [_call("c3", "run", "{}")]},
    {"role": "tool", "content": "ok", "tool_call_id": "c3"},
]


def test_current_round_sends_the_message_objects_and_keeps_the_tail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One user message with the selected messages in openJiuwen's pydantic string form; the
    span [1, 2] becomes one block, the newest three stay."""
    source = _snapshot(
        tmp_path,
        "CurrentRoundCompressor",
        CR_MESSAGES,
        config={"tokens_threshold": 10, "min_selected_tokens_for_compression": 5},
    )
    with FakeOpenAI([Reply(content="Read the table: 200 rows.")]) as server:
        assert main(_rerun(source, server, "--json")) == 0
        bodies = [r.body for r in server.requests]
    assert len(bodies) == 1
    [message] = bodies[0]["messages"]
    assert message["role"] == "user"
    content = message["content"]
    assert (
        "role:assistant, content:role='assistant' content='a' name=None metadata={} "
        "tool_calls=[ToolCall(id='c1', type='function', name='read_file', arguments='{}', "
        "index=None, response_item_id=None)] usage_metadata=None finish_reason='null' "
        "parser_content=None reasoning_content=None prompt_token_ids=None "
        "completion_token_ids=None logprobs=None\n"
        "role:tool, content:role='tool' content='" + "rows " * 200 + "' name=None metadata={} "
        "tool_call_id='c1'"
    ) in content
    assert (
        "--- Current User Intent ---\nrole:user, content:role='user' content='Speed up" in content
    )
    out = _json_out(capsys)
    assert out["outcome"] == "completed" and out["modified"] == [1, 2]
    after = [m["content"] for m in out["messages_after"]]
    assert after[0] == "Speed up the export."
    assert after[1].startswith("[CURRENT_ROUND_MEMORY_BLOCK]\n")
    assert after[1].endswith("\nSummary:\nRead the table: 200 rows.")
    assert after[2:] == ["b", "Seq Scan", "c", "ok"]


def test_offloader_failure_ends_failed_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A non-overflow error ends MessageSummaryOffloader `failed`: the batch stays unchanged."""
    messages = [
        {"role": "user", "content": "Why does it fail?"},
        {"role": "assistant", "content": "a", "tool_calls": [_call("c1", "logs", "{}")]},
        {"role": "tool", "content": "FAILED x\n" * 300, "tool_call_id": "c1"},
    ]
    source = _snapshot(
        tmp_path, "MessageSummaryOffloader", messages, config={"large_message_threshold": 100}
    )
    with FakeOpenAI([Reply(status=400, error={"message": "bad request"})]) as server:
        assert main(_rerun(source, server, "--json")) == 3
        assert len(server.requests) == 1  # a 400 is not retried
    out = _json_out(capsys)
    assert out["outcome"] == "failed"
    assert out["messages_after"][2]["content"] == "FAILED x\n" * 300
    summary = json.dumps({"summary": "300 failures of x.", "offload_data_explanation": {}})
    with FakeOpenAI([Reply(content=summary)]) as server:
        assert main(_rerun(source, server, "--json")) == 0
    out = _json_out(capsys)
    placeholder = out["messages_after"][2]
    assert placeholder["openjiuwen_class"] == "OffloadToolMessage"
    assert placeholder["content"].startswith("300 failures of x.[[OFFLOAD: handle=")
    assert placeholder["content"].endswith(", type=in_memory]]")


FULL_MESSAGES = [
    {"role": "user", "content": "Deploy."},
    {"role": "assistant", "content": "Deploying.", "tool_calls": [_call("c1", "run", '{"x": 1}')]},
    {"role": "tool", "content": "ok " * 300, "tool_call_id": "c1"},
    {"role": "assistant", "content": "Deployed."},
    {"role": "user", "content": "Check it."},
    {"role": "assistant", "content": "It is up."},
]


def test_full_compact_sends_the_serialised_context_and_compacts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """FullCompactProcessor: system prompt + one `role=R | ...` line per message; the reply's
    <summary> becomes the summary message after the boundary; the newest two stay; a model
    error falls back to the built-in summary of the last messages."""
    source = _snapshot(
        tmp_path,
        "FullCompactProcessor",
        FULL_MESSAGES,
        config={"trigger_total_tokens": 50, "messages_to_keep": 2},
    )
    reply = "<analysis>notes</analysis><summary>Deployed and checked.</summary>"
    with FakeOpenAI([Reply(content=reply)]) as server:
        assert main(_rerun(source, server, "--json")) == 0
        [body] = [r.body for r in server.requests]
    system, user = body["messages"]
    assert system == {
        "role": "system",
        "content": standard_prompts("FullCompactProcessor").full_compact,
    }
    assert user["content"] == "\n".join(
        [
            "role=user | content=Deploy.",
            'role=assistant | tool_calls=[{"id": "c1", "name": "run", "arguments": "{\\"x\\": 1}", '
            '"type": "function"}] | content=Deploying.',
            "role=tool | tool_call_id=c1 | content=" + "ok " * 300,
            "role=assistant | content=Deployed.",
            "role=user | content=Check it.",
            "role=assistant | content=It is up.",
        ]
    )
    out = _json_out(capsys)
    assert out["outcome"] == "completed" and out["modified"] == list(range(6))
    after = [(m["role"], m["content"]) for m in out["messages_after"]]
    assert after[0] == ("system", "[FULL_COMPACT_BOUNDARY]\nConversation compacted")
    assert after[1][1].endswith(
        "\n\nSummary:\nDeployed and checked.\n\nRecent messages are preserved verbatim."
    )
    assert after[2:4] == [("user", "Check it."), ("assistant", "It is up.")]
    assert after[4] == (
        "user",
        "[FULL_COMPACT_STATE]\n[PLAN_MODE]\nCurrent plan-mode status for this session:\n- Active mode: auto.",
    )
    with FakeOpenAI([Reply(status=400, error={"message": "bad"})]) as server:
        assert main(_rerun(source, server, "--json")) == 0
    out = _json_out(capsys)
    summary = out["messages_after"][1]["content"]
    assert "\n\nSummary:\n[1] user: Deploy.\n[2] assistant: Deploying." in summary
    assert "built-in fallback summary" in out["reason"]


def test_forked_dry_run_shows_the_first_attempts_body(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--dry-run works for the forked compressors too: the body of the first attempt (the
    messages before the protected tail, then the prompt), nothing sent."""
    source = tmp_path / "forked.json"
    source.write_text(json.dumps({"messages": DIALOGUE_MESSAGES}), encoding="utf-8")
    args = ["--processor", "dialogue", "--context-max", "2000", "--trigger-ratio", "0.1"]
    with FakeOpenAI([Reply(content="x")]) as server:
        assert main([*_rerun(source, server, "--dry-run", "--json"), *args]) == 0
        assert server.requests == []
    out = _json_out(capsys)
    body = out["request"]
    kept = out["span"]["preserved_prefix"] + out["span"]["messages_to_compress"]
    assert [m["content"] for m in body["messages"][:-1]] == [
        m["content"] for m in DIALOGUE_MESSAGES[:kept]
    ]
    assert body["messages"][-1]["role"] == "user" and out["prompt_source"] == "builtin"
