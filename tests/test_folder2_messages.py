"""The fast message construction (`Message.from_dict` on plain JSON shapes) against the
checked path (`Message.checked_from_dict`, where the rules are stated): every message of
the sample dumps, tests/data and the reference corpus built both ways and compared field by
field (values and their types), plus odd shapes the fast path must hand over unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.errors import FormatError
from inspector.core.messages import (
    Message,
    ToolCall,
    _plain_message,
    _plain_tool_call,
    parse_messages,
)

ROOT = Path(__file__).resolve().parent.parent
CORPORA = [ROOT / "sample_dumps", ROOT / "tests" / "data"]
REFERENCE = Path("/work/shared/reference")


def _documents(root: Path) -> Iterator[Any]:
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".json", ".jsonl") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".json":
            try:
                yield json.loads(text)
            except ValueError:
                continue
        else:
            for line in text.splitlines():
                try:
                    yield json.loads(line)
                except ValueError:
                    continue


def _message_like(value: Any, depth: int = 0) -> Iterator[dict[str, Any]]:
    """Every object holding a `role` key, at any depth (messages wherever they sit)."""
    if depth > 40:
        return
    if isinstance(value, dict):
        if "role" in value:
            yield value
        for item in value.values():
            yield from _message_like(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _message_like(item, depth + 1)


def _corpus_messages(roots: list[Path]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for root in roots:
        for document in _documents(root):
            found.extend(_message_like(document))
    return found


def _same(a: Any, b: Any) -> None:
    """Field by field, values and their types (a tool call's fields too)."""
    assert type(a) is type(b)
    for f in fields(a):
        left, right = getattr(a, f.name), getattr(b, f.name)
        assert type(left) is type(right), f.name
        if f.name == "tool_calls":
            assert len(left) == len(right)
            for x, y in zip(left, right, strict=True):
                _same(x, y)
        else:
            assert left == right, f.name
    assert a == b
    if isinstance(a, Message):
        assert a.to_dict() == b.to_dict()
    else:
        assert a.to_openai() == b.to_openai()


def _both_ways(raw: Any) -> tuple[str, Any]:
    """("ok", message) when both paths build equal messages; ("error", text) when both
    refuse with the same words."""
    try:
        fast = Message.from_dict(raw)
    except FormatError as error:
        with pytest.raises(FormatError) as checked_error:
            Message.checked_from_dict(raw)
        assert checked_error.value.message == error.message
        return "error", error.message
    checked = Message.checked_from_dict(raw)
    _same(fast, checked)
    return "ok", fast


def test_every_corpus_message_is_built_alike_both_ways() -> None:
    messages = _corpus_messages(CORPORA)
    assert len(messages) > 200
    outcomes = [_both_ways(raw)[0] for raw in messages]
    # the fast path is what the corpus takes (else this test would compare nothing fast)
    plain = sum(_plain_message(raw) is not None for raw in messages)
    assert plain > 0.8 * len(messages)
    assert "ok" in outcomes


def test_every_reference_message_is_built_alike_both_ways() -> None:
    if not REFERENCE.is_dir():
        pytest.skip("the shared reference corpus is not on this machine")
    messages = _corpus_messages([REFERENCE])
    assert messages
    for raw in messages:
        _both_ways(raw)


def test_every_corpus_tool_call_is_built_alike_both_ways() -> None:
    calls = [
        call
        for raw in _corpus_messages(CORPORA)
        if isinstance(raw.get("tool_calls"), list)
        for call in raw["tool_calls"]
    ]
    assert calls
    for raw in calls:
        _same(ToolCall.from_dict(raw), ToolCall.checked_from_dict(raw))
    assert sum(_plain_tool_call(c) is not None for c in calls if isinstance(c, dict)) > 0


ODD_SHAPES: list[Any] = [
    {"role": "user"},  # no content
    {"role": "user", "content": None},
    {"role": "user", "content": 3},
    {"role": "user", "content": {"text": "x"}},
    {"role": "user", "content": [{"type": "text", "text": "a"}, "b", 4]},
    {"role": 7, "content": "x"},
    {"content": "x"},
    {"role": "assistant", "content": "", "tool_calls": None},
    {"role": "assistant", "content": "", "tool_calls": []},
    {"role": "assistant", "content": "", "tool_calls": {"id": "x"}},
    {"role": "assistant", "content": "", "tool_calls": ("a",)},
    {"role": "assistant", "content": "", "tool_calls": ["not a call"]},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": 5, "name": 6, "arguments": {"a": 1}}],
    },
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
            {"id": "c2", "name": "g", "arguments": None, "index": 0, "extra_key": [1]},
            {"id": None, "type": "", "function": "not an object", "name": "h"},
            {"id": "c4", "type": 3, "function": {"name": None, "arguments": [1, 2]}},
            {"function": {}, "response_item_id": 12},
        ],
    },
    {"role": "assistant", "content": "x", "usage_metadata": {"total_tokens": 10**400}},
    {"role": "assistant", "content": "x", "usage_metadata": {"total_tokens": 5.5}},
    {"role": "assistant", "content": "x", "usage_metadata": "none"},
    {"role": "assistant", "content": "x", "usage_metadata": []},
    {"role": "assistant", "content": "x", "usage_metadata": None},
    {"role": "assistant", "content": "x", "metadata": None},
    {"role": "assistant", "content": "x", "metadata": "odd"},
    {"role": "assistant", "content": "x", "metadata": [1]},
    {"role": "tool", "content": "x", "tool_call_id": 12},
    {"role": "tool", "content": "x", "tool_call_id": None, "name": 3.5},
    {"role": "tool", "content": "x", "name": "n", "finish_reason": "stop", "weird": {"a": 1}},
    {"role": "user", "content": "x", "extra": 1, "role2": "y"},
    "a string",
    ["role", "user"],
    None,
]


@pytest.mark.parametrize("raw", ODD_SHAPES, ids=range(len(ODD_SHAPES)))
def test_odd_shapes_are_built_or_refused_alike(raw: Any) -> None:
    _both_ways(raw)


def test_parse_messages_names_the_bad_item_as_before() -> None:
    raw = [{"role": "user", "content": "a"}, {"role": "user", "content": 3}]
    with pytest.raises(FormatError) as error:
        parse_messages(raw, "messages_sent_to_model")
    assert error.value.message.startswith("messages_sent_to_model[1]: ")
    good = parse_messages([{"role": "user", "content": "a"}] * 3)
    assert len(good) == 3 and all(m.content == "a" for m in good)


def test_a_subclass_takes_the_checked_path() -> None:
    class Mine(Message):
        __slots__ = ()

    made = Mine.from_dict({"role": "user", "content": "x"})
    assert type(made) is Mine and made.content == "x"


_json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5)
)
_json = st.recursive(
    _json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
_call = st.dictionaries(
    st.sampled_from(
        ["id", "type", "function", "name", "arguments", "index", "response_item_id", "x"]
    ),
    _json | st.fixed_dictionaries({}, optional={"name": _json, "arguments": _json}),
    max_size=6,
)
_message = st.dictionaries(
    st.sampled_from(
        ["role", "content", "name", "tool_calls", "tool_call_id", "usage_metadata", "metadata", "z"]
    ),
    _json
    | st.lists(_call, max_size=3)
    | st.sampled_from(["user", "assistant", "tool"])
    | st.fixed_dictionaries({}, optional={"total_tokens": _json, "context_usage_stale": _json}),
    max_size=8,
)


@settings(max_examples=300, deadline=None)
@given(_message)
def test_generated_shapes_are_built_or_refused_alike(raw: dict[str, Any]) -> None:
    _both_ways(raw)
