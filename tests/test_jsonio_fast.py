"""`loads_strict`'s fast path (`pydantic_core.from_json`) against the stdlib decoder it
replaces: the same value (types, key order, float bits) or the same exception (type and
message), for JSON values and for raw near-JSON texts (big exponents, long digit runs,
surrogate escapes, duplicate keys, odd whitespace, BOM, control characters, truncation).

The reference is built here from the stdlib decoder and the module's two parse hooks only,
never from the fast path's code.
"""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from inspector.sources import jsonio
from inspector.sources.jsonio import loads_strict, loads_strict_bytes

_REFERENCE = json.JSONDecoder(
    parse_constant=jsonio._reject_constant, parse_float=jsonio._finite_float
)


def reference(text: str) -> Any:
    """What `loads_strict` gave before the fast path: the stdlib decoder alone."""
    if text.startswith("\ufeff"):
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    return _REFERENCE.decode(text)


def canonical(value: Any) -> Any:
    """A value as nested tuples that tell apart types, key order and float bits."""
    if isinstance(value, dict):
        return ("dict", tuple((key, canonical(item)) for key, item in value.items()))
    if isinstance(value, list):
        return ("list", tuple(canonical(item) for item in value))
    if isinstance(value, float):
        return ("float", value.hex())
    return (type(value).__name__, value)


def outcome(parse: Any, text: Any) -> tuple[Any, ...]:
    """("value", canonical value) or ("error", exception type name, message)."""
    try:
        return ("value", canonical(parse(text)))
    except (ValueError, RecursionError) as error:
        return ("error", type(error).__name__, str(error))


def assert_same(text: str) -> None:
    """The fast `loads_strict` and the stdlib path agree on `text` (and on its bytes), also
    padded with 4 KB of whitespace (a long text: the same guard must hold)."""
    padded = text + " " * 4096
    for case in (text, padded):
        assert outcome(loads_strict, case) == outcome(reference, case)
        assert_same_bytes(case.encode("utf-8", "surrogatepass"))


def assert_same_bytes(raw: bytes) -> None:
    """`loads_strict_bytes` agrees with decoding then the stdlib path."""
    expected = outcome(lambda data: reference(data.decode("utf-8")), raw)
    assert outcome(loads_strict_bytes, raw) == expected


# -- generated JSON values ---------------------------------------------------------------

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**60), max_value=10**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
)
_KEYS = st.sampled_from(["a", "b", "role", "content", "é", "键", ""]) | st.text(max_size=8)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_KEYS, inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(_VALUES, st.booleans(), st.sampled_from([None, 0, 2]))
def test_json_values_parse_the_same(value: Any, ascii_only: bool, indent: int | None) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, indent=indent)
    assert_same(text)
    # and the fast path did answer: from_json parsed it, not the fallback
    assert canonical(loads_strict(text)) == canonical(value)


# -- raw near-JSON texts -------------------------------------------------------------------


@st.composite
def _number(draw: st.DrawFn) -> str:
    """A JSON number literal: short or 200-320-digit mantissas, fractions, 1-4-digit
    exponents (so overflow to infinity, underflow and long-literal rounding all occur)."""
    length = draw(st.sampled_from([1, 2, 5, 13, 17, 20, 205, 209, 210, 230, 308, 309, 320]))
    digits = draw(st.text("0123456789", min_size=length, max_size=length))
    mantissa = str(draw(st.integers(1, 9))) + digits[1:] if length > 1 else digits
    sign = draw(st.sampled_from(["", "-"]))
    fraction = draw(
        st.sampled_from(["", "." + draw(st.text("0123456789", min_size=1, max_size=25))])
    )
    exponent = ""
    if draw(st.booleans()):
        marker = draw(st.sampled_from(["e", "E", "e+", "E-", "e-"]))
        exponent = marker + draw(st.text("0123456789", min_size=1, max_size=4))
    return sign + mantissa + fraction + exponent


_NUMBER = _number()
_TOKENS = st.sampled_from(
    [
        "1e999",
        "-1e999",
        "1E+400",
        "1e0400",
        "1.7976931348623157e308",
        "1.7976931348623159e308",
        "1e308",
        "-0",
        "-0.0",
        "0e999",
        "1e-400",
        "4.9e-324",
        "1" * 4300,
        "1" * 4301,
        "9" * 309 + ".0",
        "NaN",
        "Infinity",
        "-Infinity",
        '"\\ud800"',
        '"\\udc00"',
        '"\\ud83d\\ude00"',
        '"\\ud800\\u0041"',
        '"\\u0000"',
        '"\\x"',
        '"\\',
        '"\\u12"',
        "\ufeff",
        "\u00a0",
        "\x0b",
        "\x0c",
        "\u2028",
        "\u3000",
        "\x85",
        "\x00",
        "\x01",
        "\x1f",
        "\x7f",
        "\ud800",
        "\udfff",
        "\\",
        '"',
        ",",
        ":",
        "[",
        "]",
        "{",
        "}",
        "\t",
        "\r",
        "\n",
        " ",
    ]  # fmt: skip
)


@st.composite
def _near_json(draw: st.DrawFn) -> str:
    """A JSON text with one to three mutations: an inserted token, a replaced character,
    a truncation, a deletion."""
    text = json.dumps(draw(_VALUES), ensure_ascii=draw(st.booleans()))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["insert", "number", "replace", "truncate", "delete"]))
        at = draw(st.integers(0, len(text)))
        if kind == "insert":
            text = text[:at] + draw(_TOKENS) + text[at:]
        elif kind == "number":
            text = text[:at] + draw(_NUMBER) + text[at:]
        elif kind == "replace" and text:
            at = min(at, len(text) - 1)
            text = text[:at] + draw(_TOKENS | st.characters()) + text[at + 1 :]
        elif kind == "truncate":
            text = text[:at]
        elif text:
            at = min(at, len(text) - 1)
            text = text[:at] + text[at + 1 :]
    return text


@settings(max_examples=700, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_near_json())
@example('{"a": 1e999}')
@example('[1, "\\ud800", 2]')
@example("\ufeff[1]")
@example('{"a": 1, "a": {"b": 2}, "c": 3}')
@example("[" + "1" * 5000 + "]")
def test_near_json_texts_parse_the_same(text: str) -> None:
    assert_same(text)


@st.composite
def _object_text(draw: st.DrawFn) -> str:
    """An object text whose keys repeat (duplicate keys: the last value wins, at the first
    key's place), with numbers from `_NUMBER` among the values."""
    pairs = draw(
        st.lists(
            st.tuples(st.sampled_from(["a", "b", "c", "é"]), _NUMBER | st.just('"s"')),
            max_size=8,
        )
    )
    separator = draw(st.sampled_from([",", ", ", " ,\n\t"]))
    return "{" + separator.join(f'"{key}": {value}' for key, value in pairs) + "}"


@settings(max_examples=300, deadline=None)
@given(_object_text())
def test_objects_with_duplicate_keys_and_odd_numbers(text: str) -> None:
    assert_same(text)


@settings(max_examples=600, deadline=None)
@given(_NUMBER)
def test_number_literals_round_and_refuse_the_same(literal: str) -> None:
    assert_same(literal)
    assert_same(f'[{literal}, {{"x": {literal}}}]')


_BAD_UTF8 = st.sampled_from(
    [
        b"\xff",
        b"\xc0\x80",
        b"\xed\xa0\x80",
        b"\xe4\xb8",
        b"\xf4\x90\x80\x80",
        b"\x80",
        b"\xef\xbb\xbf",
    ]
)


@settings(max_examples=300, deadline=None)
@given(_VALUES, _BAD_UTF8, st.data())
def test_bytes_with_invalid_utf8_fail_the_same(value: Any, bad: bytes, data: st.DataObject) -> None:
    raw = json.dumps(value, ensure_ascii=False).encode("utf-8")
    at = data.draw(st.integers(0, len(raw)))
    assert_same_bytes(raw[:at] + bad + raw[at:])
    assert_same_bytes(raw)


# -- fixed cases the guards exist for --------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "1e999",
        "[1.5, 1E+400]",
        '{"t": 2e0308}',
        "1.7976931348623159e308",
        "9" * 309 + ".5",
        "9" * 215 + ".0e95",
        "1" * 4301,
        '{"k": "\\ud800"}',
        "\ufeff{}",
        "",
        "  \n",
        "[" * 250 + "]" * 250,
        "[" * 2000 + "]" * 2000,
        '{"a": 1, "b": 2, "a": 3}',
        "-0",
        "-0.0",
        "0.1000000000000000055511151231257827021181583404541015625",
        '"' + "x" * 3_000_000 + '"',
        '["' + "é" * 1_200_000 + '", 1e999]',
        "[" + "1" * 230 + "]",
    ],
)
def test_guarded_cases(text: str) -> None:
    assert_same(text)


def _at_depth(frames: int, text: str) -> tuple[Any, ...]:
    """Both outcomes for `text` parsed `frames` calls down the stack."""
    if frames > 0:
        return _at_depth(frames - 1, text)
    return outcome(loads_strict, text), outcome(reference, text)


@pytest.mark.parametrize("padding", [0, 5000])
@pytest.mark.parametrize("nesting", [17, 60, 199])
def test_nesting_near_the_recursion_limit(nesting: int, padding: int) -> None:
    """Deep in the stack the stdlib decoder refuses nesting it parses higher up; the fast
    path must refuse it too (it would parse it), short texts and long ones."""
    text = "[" * nesting + '"' + "x" * padding + '"' + "]" * nesting
    room = sys.getrecursionlimit() - len(_stack()) - nesting
    for frames in (10, room - 40, room - 8, room - 2):
        if frames > 0:
            fast, slow = _at_depth(frames, text)
            assert fast == slow, frames
    # the deepest case really is refused by the stdlib decoder (the test checks something)
    assert _at_depth(room - 2, text)[1][0] == "error"


def _stack() -> list[Any]:
    frames = []
    frame = sys._getframe(1)
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back  # type: ignore[assignment]
    return frames


def test_plain_records_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """An ordinary debug-log line is parsed by from_json, never by the stdlib decoder."""
    calls: list[str] = []

    class Refusing(json.JSONDecoder):
        def decode(self, s: str, *args: Any, **kwargs: Any) -> Any:
            calls.append(s)
            raise AssertionError("stdlib decoder used")

    monkeypatch.setattr(jsonio, "_STRICT_DECODER", Refusing())
    line = json.dumps(
        {"timestamp": 1795900001.5, "event": "threshold_check", "hit": True, "n": [1, 2.5e-3]}
    )
    assert loads_strict(line)["event"] == "threshold_check"
    assert loads_strict_bytes(line.encode())["n"] == [1, 2.5e-3]
    assert loads_strict(json.dumps({"content": "中文 " * 50}))["content"].startswith("中文")
    assert calls == []


@st.composite
def _file_bytes(draw: st.DrawFn) -> bytes:
    """A file's bytes: a near-JSON document or JSON Lines, maybe with a BOM or bad UTF-8."""
    if draw(st.booleans()):
        text = draw(_near_json())
    else:
        text = "\n".join(json.dumps(draw(_VALUES)) for _ in range(draw(st.integers(1, 4))))
    raw = text.encode("utf-8", "surrogatepass")
    if draw(st.booleans()):
        raw = b"\xef\xbb\xbf" + raw
    if draw(st.integers(0, 5)) == 0:
        at = draw(st.integers(0, len(raw)))
        raw = raw[:at] + draw(_BAD_UTF8 | st.just(b"\x00")) + raw[at:]
    return raw


def _read(path: Any) -> tuple[Any, ...]:
    result = jsonio.read_json_file(path)
    documents = tuple((where, canonical(value)) for where, value in result.documents)
    return documents, result.problem, result.json_lines, tuple(result.bad_records)


@settings(max_examples=300, deadline=None)
@given(_file_bytes())
def test_read_json_file_reads_the_same_without_the_fast_path(raw: bytes) -> None:
    """A whole file parsed from its bytes: the same documents and problems as with the
    fast path off (the file decoded, then parsed by the stdlib decoder alone)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "f.json"
        path.write_bytes(raw)
        fast = _read(path)
        with fast_path_off():
            slow = _read(path)
    assert fast == slow


@contextlib.contextmanager
def fast_path_off() -> Iterator[None]:
    """Every parse by the stdlib decoder alone (text or bytes)."""
    value, pair = jsonio._fast_value, jsonio._fast_bytes
    jsonio._fast_value = lambda data: jsonio._SLOW  # type: ignore[assignment]
    jsonio._fast_bytes = lambda raw: (jsonio._SLOW, -1)  # type: ignore[assignment]
    try:
        yield
    finally:
        jsonio._fast_value, jsonio._fast_bytes = value, pair  # type: ignore[assignment]
