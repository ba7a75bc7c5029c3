"""The streamed reader's parse (`jsonio.loads_strict_bytes_openings`): the value or error
of decoding then the stdlib decoder, and the exact number of containers the line opens,
which `debugstream._record` trusts in place of counting (a line opening more than
MAX_DEPTH is walked); and the guard's marks (most bytes deleted) still let ordinary
records, hex ids, escapes and prose take the fast path."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings

from inspector.sources import debugstream, jsonio
from inspector.sources.jsonio import MAX_DEPTH, loads_strict_bytes_openings
from tests.test_jsonio_fast import _near_json, outcome, reference

#: The guard's first table, every byte kept (digits "0", "e"/"E" "e", brackets "[", any
#: other byte a space, "+" deleted): the reference the deleting marks are held to.
_KEPT_TABLE = bytes(
    ord("0")
    if chr(b).isdigit() and b < 128
    else ord("e")
    if b in b"eE"
    else ord("[")
    if b in b"[{"
    else ord(" ")
    for b in range(256)
)


def _kept_guard(raw: bytes) -> int | None:
    """What the guard said with every byte kept."""
    marks = raw.translate(_KEPT_TABLE, b"+")
    if b"0e000" in marks or b"0" * jsonio._LONG_DIGITS in marks:
        return None
    return marks.count(b"[")


def _expected(raw: bytes) -> tuple[Any, ...]:
    return outcome(lambda data: reference(data.decode("utf-8")), raw)


def _assert_openings(raw: bytes) -> None:
    try:
        value, openings = loads_strict_bytes_openings(raw)
    except (ValueError, RecursionError) as error:
        assert ("error", type(error).__name__, str(error)) == _expected(raw)
        return
    assert outcome(lambda _: value, raw) == _expected(raw)
    assert openings == raw.count(b"[") + raw.count(b"{")


@settings(max_examples=400, deadline=None)
@given(_near_json())
def test_openings_are_counted_and_values_are_the_stdlib_ones(text: str) -> None:
    raw = text.encode("utf-8", "surrogatepass")
    _assert_openings(raw)
    # deleting bytes only joins marks: whatever the kept marks refused is refused
    if _kept_guard(raw) is None:
        assert jsonio._fast_bytes(raw) == (jsonio._SLOW, -1)


@pytest.mark.parametrize("nesting", [1, 16, 17, 199, 200, 201, 255, 256, 300])
def test_nested_lines_count_every_opening(nesting: int) -> None:
    for opener, closer in (("[", "]"), ('{"a": ', "}")):
        _assert_openings((opener * nesting + "1" + closer * nesting).encode())
        _assert_openings(("[" + opener * nesting + "1" + closer * nesting + ", {}]").encode())


@pytest.mark.parametrize("nesting", [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 230])
def test_a_record_nested_past_the_limit_is_refused_as_the_walk_says(nesting: int) -> None:
    deep = "[" * (nesting - 1) + "]" * (nesting - 1)  # the record itself is one level
    raw = ('{"event": "threshold_check", "x": ' + deep + "}").encode()
    too_deep = jsonio.check_value(json.loads(raw)) == "depth"
    assert too_deep == (nesting > MAX_DEPTH)
    if too_deep:
        with pytest.raises(ValueError, match="depth"):
            debugstream._record(raw)
    else:
        assert debugstream._record(raw)["event"] == "threshold_check"


_ORDINARY = [
    {"timestamp": 1795900001.5, "event": "threshold_check", "total_tokens": 6102, "hit": False},
    {"session_id": "3e2f61a9-0e12-4b5c-9e01-2a3456789ebc", "context_id": "c1e20"},
    {"id": "call_9E1F3A0B12", "sha": "0e1e2e3e4e5e6e7e8e9e0e1e2e3e4e5e"},
    {"preview": "Section 1 explains 2000 tokens - 3 e-mails, 400 ms: \u4e2d\u6587 \\ done"},
    {"error_message": "HTTP 413: 1 entity too large (limit 10000, got 12000)"},
    {"preview": "\u4e2d\u6587 1 \u4e2d e \u4e2d 200", "idx": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] * 30},
    {"preview": "\u1e23\u4567 \u0e01\u2345"},  # escaped: "0e00" then four digits
    {"delay_seconds": 1.5e-3, "budget_ratio": 0.25, "attempt": -1},
]


@pytest.mark.parametrize("record", _ORDINARY)
@pytest.mark.parametrize("ascii_only", [True, False])
def test_ordinary_records_take_the_fast_path(
    record: dict[str, Any], ascii_only: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No separator a record needs is deleted from the marks: none of these goes to the
    stdlib decoder (which would be right, only slower), as with every byte kept."""
    raw = json.dumps(record, ensure_ascii=ascii_only).encode()
    assert _kept_guard(raw) is not None  # the case is one the guard has no reason to refuse
    assert jsonio._fast_bytes(raw)[0] is not jsonio._SLOW, raw
    assert jsonio._fast_bytes(raw)[1] == raw.count(b"[") + raw.count(b"{")
    monkeypatch.setattr(jsonio, "_STRICT_DECODER", None)  # any use fails
    assert loads_strict_bytes_openings(raw)[0] == record


@pytest.mark.parametrize(
    "text",
    ["[1e400]", "[1E+400]", "[1.5e0400]", '{"a": 2e308, "a": 1}', "[" + "9" * 211 + "]"],
)
def test_numbers_that_may_overflow_still_go_to_the_stdlib_decoder(text: str) -> None:
    """Deleting bytes joins marks, never parts them: each of these is refused by the
    guard, in a record or alone, whatever surrounds it."""
    for wrapped in (text, f'{{"preview": "abc xyz", "v": {text}, "w": "q"}}'):
        assert _kept_guard(wrapped.encode()) is None
        assert jsonio._fast_bytes(wrapped.encode()) == (jsonio._SLOW, -1), wrapped
        _assert_openings(wrapped.encode())
