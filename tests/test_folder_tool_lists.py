"""Issue 16 (2): a load parses each distinct tool list once (`ToolLists`) and a counter
counts a tool tuple once (`TokenCounter.count_tools`); both must answer exactly what the
slow path (parse every list, count every time) answers.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from bench.synth import write_folder
from inspector.core.messages import Tool, parse_tools
from inspector.core.tokens import TOKEN_MODES, TokenCounter
from inspector.sources.dump import ToolLists, parse_dump, rebuild_context
from inspector.sources.loader import load_paths

ROOT = Path(__file__).resolve().parents[1]


def _encode(text: str) -> int:
    """A stand-in encoder (deterministic, not len-based): the test is about memory, not cl100k."""
    return sum(ord(ch) % 7 for ch in text) // 3 + 1


def _counter(mode: str) -> TokenCounter:
    return TokenCounter(mode, _encode if mode == "tiktoken_cl100k" else None)  # type: ignore[arg-type]


def _random_tool(rng: random.Random) -> dict[str, Any]:
    properties = {
        f"p{i}": {"type": rng.choice(["string", "integer", "number"]), "d": rng.random()}
        for i in range(rng.randrange(0, 4))
    }
    tool: dict[str, Any] = {
        "type": "function",
        "name": rng.choice(["read", "write", "grep", "run", "ls"]),
        "description": rng.choice(["", None, "does a thing", "ünïcode ✓"]),
        "parameters": {"type": "object", "properties": properties},
    }
    if rng.random() < 0.3:
        tool["extra_key"] = rng.choice([1, 1.0, True, "1"])
    return tool


def test_counted_tuples_are_answered_as_counted_afresh() -> None:
    rng = random.Random(16)
    lists = [
        tuple(parse_tools([_random_tool(rng) for _ in range(rng.randrange(0, 6))]))
        for _ in range(40)
    ]
    for mode in TOKEN_MODES:
        remembering = _counter(mode)
        for _ in range(400):
            tools = rng.choice(lists)
            assert remembering.count_tools(tools) == _counter(mode).compute_tools(tools)
            assert remembering.count_tools(list(tools)) == _counter(mode).count_tools(tools)


def test_a_tuple_that_dies_never_lends_its_count_to_one_with_its_id() -> None:
    counter = _counter("len_div_4")
    rng = random.Random(3)
    for _ in range(300):
        tools = tuple(parse_tools([_random_tool(rng) for _ in range(rng.randrange(1, 4))]))
        assert counter.count_tools(tools) == _counter("len_div_4").compute_tools(tools)
        del tools  # its id may be reused by the next tuple: the memo holds the tuple itself


def test_tool_lists_share_equal_lists_and_tell_apart_what_differs() -> None:
    rng = random.Random(7)
    memo = ToolLists()
    raws = [[_random_tool(rng) for _ in range(rng.randrange(0, 5))] for _ in range(60)]
    for raw in raws + [json.loads(json.dumps(r)) for r in raws]:
        assert memo.parse(raw) == parse_tools(raw)
    base = {"type": "function", "name": "a", "description": "d", "parameters": {"x": 1, "y": 2}}
    variants = [
        base,
        {**base, "parameters": {"y": 2, "x": 1}},  # key order (a tiktoken body keeps it)
        {**base, "parameters": {"x": 1.0, "y": 2}},
        {**base, "parameters": {"x": True, "y": 2}},
        {**base, "description": None},
    ]
    for mode in TOKEN_MODES:
        for variant in variants:
            shared = memo.parse([variant])
            assert shared == parse_tools([variant])
            assert json.dumps(shared[0].to_dict()) == json.dumps(
                parse_tools([variant])[0].to_dict()
            )
            assert _counter(mode).count_tools(shared) == _counter(mode).count_tools(
                parse_tools([variant])
            )
    assert memo.parse([dict(base)]) is memo.parse([json.loads(json.dumps(base))])


def test_rebuilt_dumps_with_shared_tools_equal_those_rebuilt_alone(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "f", dumps=40, sessions=2, messages_per_dump=6)
    paths = sorted(folder.rglob("*_*Compressor_*.json")) + sorted(
        (ROOT / "sample_dumps").rglob("*_*Compressor_*.json")
    )
    assert len(paths) > 40
    memo = ToolLists()
    for path in paths:
        dump = parse_dump(json.loads(path.read_text()), str(path))
        alone, shared = rebuild_context(dump), rebuild_context(dump, memo)
        assert shared.tools == alone.tools
        assert (shared.messages, shared.after, shared.notes) == (
            alone.messages,
            alone.after,
            alone.notes,
        )


@pytest.mark.parametrize("mode", ["len_div_4", "tiktoken_cl100k"])
def test_a_load_counts_tools_as_counting_each_dump_alone(tmp_path: Path, mode: str) -> None:
    folder = write_folder(tmp_path / "f", dumps=30, sessions=3, messages_per_dump=6)
    counters = {m: _counter(m) for m in TOKEN_MODES}
    loaded = [a for a in load_paths([str(folder)], counters=counters) if a.kind == "dump"]
    assert len(loaded) == 30
    for artifact in loaded:
        snapshot = artifact.snapshot
        assert snapshot is not None and isinstance(snapshot.tools, tuple)
        assert all(isinstance(tool, Tool) for tool in snapshot.tools)
        alone = parse_tools(
            json.loads(Path(artifact.source).read_text())["compression_request"]["tools"]
        )
        assert snapshot.tools == alone
        assert counters[mode].count_tools(snapshot.tools) == _counter(mode).compute_tools(alone)
