"""Plain messages filled in a mutable twin then made the frozen class (`core.frozen`'s
`plain_init`: `_made_message`, `_made_tool_call`), and `parse_messages` building plain lists straight: against the checked
path on the corpora's message lists, with a plain run broken by odd items anywhere.
`tests/test_folder2_messages.py` compares single messages both ways, field by field."""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from inspector.core.errors import FormatError
from inspector.core.messages import (
    Message,
    ToolCall,
    _made_message,
    _made_tool_call,
    parse_messages,
)

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = Path("/work/shared/reference")
BENCH = ROOT / "bench" / "out" / "folder-5000-50"


def _message_lists() -> list[list[Any]]:
    """Every `messages_sent_to_model` and `context_after.messages` list of the corpora's dumps."""
    paths: list[Path] = []
    for root in (ROOT / "sample_dumps", ROOT / "tests" / "data", REFERENCE):
        paths += sorted(root.rglob("*.json")) if root.is_dir() else []
    if BENCH.is_dir():
        paths += sorted(BENCH.rglob("*.json"))[:100]
    lists: list[list[Any]] = []
    for path in paths:
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue
        if not isinstance(document, dict):
            continue
        for section, key in (
            ("compression_request", "messages_sent_to_model"),
            ("context_after", "messages"),
        ):
            part = document.get(section)
            value = part.get(key) if isinstance(part, dict) else None
            if isinstance(value, list) and value:
                lists.append(value)
    return lists


def _reference(raw: list[Any], what: str = "messages") -> Any:
    """What `parse_messages` must give: every item through the checked path."""
    out = []
    for index, item in enumerate(raw):
        try:
            out.append(Message.checked_from_dict(item))
        except FormatError as error:
            return ("error", f"{what}[{index}]: {error.message}")
    return tuple(out)


def _outcome(raw: list[Any], what: str = "messages") -> Any:
    try:
        return parse_messages(raw, what)
    except FormatError as error:
        return ("error", error.message)


def _same(fast: Any, checked: Any) -> None:
    """Equal, of the same classes, and with the same field values and types."""
    assert fast == checked
    if isinstance(fast, tuple) and fast and isinstance(fast[0], Message):
        for a, b in zip(fast, checked, strict=True):
            assert type(a) is Message and type(b) is Message
            assert repr(a) == repr(b)  # tells 1 from 1.0 and True, field by field
            assert [type(c) for c in a.tool_calls] == [ToolCall] * len(b.tool_calls)


def test_drafts_have_the_slots_of_their_classes_in_order() -> None:
    """The twin's slots are the frozen class's fields, in order: `__class__` assignment
    keeps each value in its slot."""
    for make, cls in ((_made_message, Message), (_made_tool_call, ToolCall)):
        names = tuple(f.name for f in dataclasses.fields(cls))
        assert cls.__slots__ == names  # type: ignore[attr-defined]
        made = make(*(f"value of {name}" for name in names))
        assert type(made) is cls
        assert [getattr(made, name) for name in names] == [f"value of {n}" for n in names]


def test_a_plain_message_is_a_frozen_message() -> None:
    raw = {
        "role": "assistant",
        "content": "x",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f"}}],
        "usage_metadata": {"total_tokens": 3},
        "metadata": {"a": 1},
        "finish_reason": "stop",
    }
    (made,) = parse_messages([raw])
    checked = Message.checked_from_dict(raw)
    assert type(made) is Message and type(made.tool_calls[0]) is ToolCall
    assert made == checked and repr(made) == repr(checked)
    assert made.extra == {"finish_reason": "stop"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.role = "user"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.tool_calls[0].name = "g"  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(made)) == made
    assert copy.deepcopy(made) == made
    assert dataclasses.replace(made, content="y").content == "y"
    assert made.to_dict() == checked.to_dict()


def test_corpus_message_lists_parse_as_the_checked_path_does() -> None:
    lists = _message_lists()
    assert len(lists) > 50
    for raw in lists:
        _same(_outcome(raw), _reference(raw))


#: Items the plain path hands over (the checked path builds or refuses them).
_ODD = [
    {"role": "user", "content": "a", "name": 5},  # built: name made a string
    {"role": "user", "content": 3},  # refused
    {"role": 1},  # refused
    "text",  # refused
    {"role": "assistant", "content": "", "tool_calls": [{"id": 1, "name": "f"}]},  # built
]


@pytest.mark.parametrize("odd", _ODD, ids=range(len(_ODD)))
def test_a_plain_run_broken_anywhere_parses_as_the_checked_path_does(odd: Any) -> None:
    lists = _message_lists()
    raw = max(lists[:40], key=len)
    for position in (0, len(raw) // 2, len(raw)):
        mixed = [*raw[:position], odd, *raw[position:]]
        _same(
            _outcome(mixed, "messages_sent_to_model"), _reference(mixed, "messages_sent_to_model")
        )
    assert parse_messages([]) == ()
