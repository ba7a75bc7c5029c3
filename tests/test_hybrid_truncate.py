"""Level 1 of the HybridCompressor: each shape branch on small outputs, and the cap as a property."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.hybrid_config import HybridConfig
from inspector.core.hybrid_truncate import is_read_file_tool, truncate_output

CONFIG = HybridConfig()


def balanced(text: str) -> bool:
    """Brackets outside JSON strings are balanced and properly nested."""
    stack: list[str] = []
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            stack.append("]" if char == "[" else "}")
        elif char in "]}":
            if not stack or stack.pop() != char:
                return False
    return not stack and not in_string


def test_short_output_is_left_alone() -> None:
    text, info = truncate_output("ok", "bash", CONFIG)
    assert text == "ok" and info.branch == "none" and not info.cut and info.chars_removed == 0


def test_non_text_content_is_never_cut() -> None:
    blocks = [{"type": "text", "text": "x" * 5000}]
    content, info = truncate_output(blocks, "bash", CONFIG)
    assert content is blocks and info.branch == "not_text"


def test_json_array_keeps_head_and_tail_and_stays_valid_json() -> None:
    records = [{"id": i, "name": f"item_{i}", "tags": ["a", "b"]} for i in range(400)]
    raw = json.dumps({"items": records, "total": 400})
    text, info = truncate_output(raw, "search", CONFIG)
    assert info.branch == "json" and len(text) <= CONFIG.max_tool_output_length
    parsed = json.loads(text)  # closed structure: still parses
    assert parsed["total"] == 400 and parsed["items"][0]["id"] == 0
    assert raw[-60:] in text  # the end of the output survives
    assert "omitted by ToolOutputTruncator" in text
    assert info.chars_removed == len(raw) - len(text)


def test_json_without_a_shared_container_falls_back_to_a_closed_head() -> None:
    raw = json.dumps({"a": list(range(300)), "blob": "z" * 4000})
    text, info = truncate_output(raw, None, CONFIG)
    assert info.branch == "json" and len(text) <= CONFIG.max_tool_output_length
    head, _, tail = text.partition("\n…[")
    assert balanced(head)
    assert json.loads(head)["a"][:3] == [0, 1, 2]
    assert text.endswith(raw[-CONFIG.json_tail_chars :])


def test_long_list_keeps_first_15_and_last_10_lines() -> None:
    lines = [f"src/module_{i}.py" for i in range(120)]
    text, info = truncate_output("\n".join(lines), "glob", CONFIG)
    assert info.branch == "list"
    kept = text.split("\n")
    assert kept[:15] == lines[:15] and kept[-10:] == lines[-10:]
    assert "95 lines omitted" in text
    assert len(text) <= CONFIG.max_tool_output_length


def test_twenty_lines_is_not_a_long_list() -> None:
    text = "\n".join("y" * 150 for _ in range(20))
    _, info = truncate_output(text, "bash", CONFIG)
    assert info.branch == "head_tail"


def test_file_read_keeps_the_head_only() -> None:
    raw = "".join(f"line {i}: some code here\n" for i in range(400))
    text, info = truncate_output(raw, "read_file", CONFIG)
    assert info.branch == "file_read"
    assert text.startswith(raw[:1500]) and raw[-100:] not in text
    assert len(text) <= CONFIG.max_tool_output_length
    assert "file content omitted" in text


@pytest.mark.parametrize("name", ["read_file", "ReadFile", "view_file", "cat", "readTextFile"])
def test_read_file_like_tool_names(name: str) -> None:
    assert is_read_file_tool(name)


@pytest.mark.parametrize("name", [None, "", "bash", "grep", "edit_file"])
def test_other_tool_names(name: str | None) -> None:
    assert not is_read_file_tool(name)


def test_default_branch_keeps_1200_head_and_600_tail_with_a_marker() -> None:
    raw = "".join(chr(65 + i % 26) for i in range(7000))
    text, info = truncate_output(raw, "bash", CONFIG)
    assert info.branch == "head_tail"
    assert text.startswith(raw[:1200]) and text.endswith(raw[-600:])
    assert f"{7000 - 1800} chars omitted" in text
    assert len(text) <= 2000


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(min_size=0, max_size=4000),
    cap=st.integers(min_value=50, max_value=3000),
    tool=st.sampled_from([None, "read_file", "bash", "glob"]),
)
def test_every_cut_output_fits_the_cap(text: str, cap: int, tool: str | None) -> None:
    config = CONFIG.with_(max_tool_output_length=cap)
    out, info = truncate_output(text, tool, config)
    assert isinstance(out, str)
    if len(text) <= cap:
        assert out == text and not info.cut
    else:
        assert info.cut and len(out) <= cap and info.chars_after == len(out)


@settings(max_examples=60, deadline=None)
@given(
    value=st.recursive(
        st.one_of(st.integers(), st.text(max_size=30), st.booleans(), st.none()),
        lambda inner: (
            st.lists(inner, max_size=30) | st.dictionaries(st.text(max_size=8), inner, max_size=12)
        ),
        max_leaves=400,
    ).filter(lambda v: isinstance(v, list | dict))
)
def test_json_branch_output_is_balanced_or_valid(value: object) -> None:
    raw = json.dumps(value)
    config = CONFIG.with_(max_tool_output_length=300)
    out, info = truncate_output(raw, None, config)
    if not info.cut:
        return
    assert len(out) <= 300
    if info.branch == "json":
        head = out.split("\n…[")[0]
        assert balanced(head)
