"""Message lists in openJiuwen, OpenAI and Anthropic formats, as arrays, objects and JSON Lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspector.core.artifact import Artifact, LoadError
from inspector.sources.loader import load_paths
from tests.conftest import REFERENCE

OPENAI = [
    {"role": "system", "content": "You are helpful."},
    {"role": "user", "content": "Read a.py"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "print(1)"},
    {"role": "assistant", "content": "It prints 1."},
]

ANTHROPIC = {
    "model": "claude",
    "system": "Be brief.",
    "tools": [{"name": "read_file", "description": "read", "input_schema": {"type": "object"}}],
    "messages": [
        {"role": "user", "content": "Read a.py"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hmm"},
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "tu1", "name": "read_file", "input": {"path": "a.py"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "tu1",
                    "content": [{"type": "text", "text": "print(1)"}],
                },
                {"type": "text", "text": "And now?"},
            ],
        },
    ],
}


def _one(path: Path, counters: Any) -> Artifact:
    results = list(load_paths([path], counters=counters))
    assert len(results) == 1 and isinstance(results[0], Artifact), results
    return results[0]


def test_openai_array(tmp_path: Path, counters: Any) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(OPENAI))
    artifact = _one(path, counters)
    assert artifact.kind == "messages" and artifact.snapshot is not None
    snap = artifact.snapshot
    assert [m.role for m in snap.system_messages] == ["system"]
    assert [m.role for m in snap.messages] == ["user", "assistant", "tool", "assistant"]
    assert (
        snap.messages[1].tool_calls[0].name == "read_file" and snap.messages[2].tool_call_id == "c1"
    )
    assert artifact.extra["format"] == "openai"


def test_openai_request_object_keeps_tools(tmp_path: Path, counters: Any) -> None:
    path = tmp_path / "request.txt"  # the name does not matter for an explicit file
    tools = [
        {
            "type": "function",
            "function": {"name": "bash", "description": "run", "parameters": {"type": "object"}},
        }
    ]
    path.write_text(json.dumps({"model": "gpt", "messages": OPENAI, "tools": tools}))
    snap = _one(path, counters).snapshot
    assert snap is not None and [t.name for t in snap.tools] == ["bash"]


def test_json_lines_of_messages_make_one_list(tmp_path: Path, counters: Any) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(m) for m in OPENAI) + "\n")
    snap = _one(path, counters).snapshot
    assert snap is not None and len(snap.messages) == 4 and len(snap.system_messages) == 1


def test_anthropic_blocks_become_calls_and_tool_messages(tmp_path: Path, counters: Any) -> None:
    path = tmp_path / "anthropic.json"
    path.write_text(json.dumps(ANTHROPIC))
    artifact = _one(path, counters)
    snap = artifact.snapshot
    assert snap is not None and artifact.extra["format"] == "anthropic"
    assert [m.content for m in snap.system_messages] == ["Be brief."]
    roles = [m.role for m in snap.messages]
    assert roles == ["user", "assistant", "tool", "user"]
    assistant = snap.messages[1]
    assert assistant.content == "Reading." and assistant.tool_calls[0].id == "tu1"
    assert json.loads(assistant.tool_calls[0].arguments) == {"path": "a.py"}
    assert snap.messages[2].tool_call_id == "tu1" and snap.messages[2].content == "print(1)"
    assert snap.messages[3].content == "And now?"
    assert snap.tools[0].parameters == {"type": "object"}
    assert any("thinking" in note for note in artifact.extra["notes"])


def test_openjiuwen_list_round_trips(tmp_path: Path, counters: Any) -> None:
    expected = json.loads((REFERENCE / "k_long_coding_session" / "input.json").read_text())[
        "messages"
    ]
    path = tmp_path / "list.json"
    path.write_text(json.dumps(expected, ensure_ascii=False))
    artifact = _one(path, counters)
    assert artifact.extra["format"] == "openjiuwen" and artifact.snapshot is not None
    assert [m.to_dict() for m in artifact.snapshot.messages] == expected


def test_snapshot_json_lines_yield_one_artifact_per_line(tmp_path: Path, counters: Any) -> None:
    lines = (REFERENCE.parent / "parity" / "cases.jsonl").read_text().splitlines()[:3]
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(lines) + "\n")
    results = list(load_paths([path], counters=counters))
    assert [r.kind for r in results if isinstance(r, Artifact)] == ["snapshot"] * 3
    assert [r.id for r in results] == [json.loads(line)["id"] for line in lines]  # type: ignore[union-attr]


def test_bad_message_names_its_index(tmp_path: Path, counters: Any) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "user", "content": 5}]))
    results = list(load_paths([path], counters=counters))
    assert len(results) == 1 and isinstance(results[0], LoadError)
    assert "messages[1]" in results[0].error
