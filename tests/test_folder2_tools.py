"""`ToolLists` keys raw tool lists by their `marshal` bytes: lists parsed from two files
share one tuple, and what the parsed tools tell apart (numbers' types, -0.0, big
integers, key order, odd strings) never shares."""

from __future__ import annotations

import json
from typing import Any

import pytest

from inspector.core.messages import parse_tools
from inspector.sources.dump import ToolLists


def _tool(parameters: Any, description: Any = "d") -> dict[str, Any]:
    return {"type": "function", "name": "t", "description": description, "parameters": parameters}


DIFFERENT = [
    _tool({"x": 1}),
    _tool({"x": 1.0}),
    _tool({"x": True}),
    _tool({"x": 0.0}),
    _tool({"x": -0.0}),
    _tool({"x": 10**30}),
    _tool({"x": 10**30 + 1}),
    _tool({"x": 1, "y": 2}),
    _tool({"y": 2, "x": 1}),
    _tool({"x": "é\ud800"}),
    _tool({"x": "e\ud800"}),
    _tool({"x": None}),
    _tool({"x": 1}, description=None),
]


def test_lists_read_from_two_documents_share_one_tuple() -> None:
    memo = ToolLists()
    text = json.dumps([_tool({"type": "object", "properties": {"a": {"type": "string"}}})])
    first, second = memo.parse(json.loads(text)), memo.parse(json.loads(text))
    assert first is second
    assert first == parse_tools(json.loads(text))


@pytest.mark.parametrize("index", range(len(DIFFERENT)))
def test_what_the_tools_tell_apart_is_never_shared(index: int) -> None:
    memo = ToolLists()
    seen = [memo.parse([dict(other)]) for other in DIFFERENT]
    raw = [DIFFERENT[index]]
    got = memo.parse(raw)
    assert got is seen[index]
    assert json.dumps(got[0].to_dict()) == json.dumps(parse_tools(raw)[0].to_dict())
    for other, parsed in enumerate(seen):
        if other != index:
            assert parsed is not got


def test_a_list_marshal_cannot_write_is_parsed_as_it_is() -> None:
    class Odd:
        pass

    raw: list[Any] = [_tool({"x": Odd()})]  # no JSON gives one; marshal refuses it
    assert ToolLists().parse(raw) == parse_tools(raw)
