"""The contract between the JSON fast path and `debuglog.plainly_valid(record, vouched=True)`:
a value `jsonio.loads_strict_bytes_vouched` vouches for holds only finite floats and
integers under `FAST_INT_BOUND` (checked by walking it, on number literals made to sit on
every edge of the guard), and for such a value the vouched verdict, which skips those
bounds, is the full one (`_all_hold`'s, with no memo) on generated records with negative,
huge and odd values. The guard's digit-run search alone (no count of zeros first) refuses
what the stdlib decoder must parse, and answers for texts of many short numbers."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.sources import debuglog, jsonio
from inspector.sources.jsonio import FAST_INT_BOUND, loads_strict_bytes_vouched
from tests.test_jsonio_fast import _number, assert_same
from tests.test_stream_fast_paths import _records


def _numbers_in(value: Any) -> list[Any]:
    """Every int and float in a parsed value."""
    found: list[Any] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif type(item) in (int, float):
            found.append(item)
    return found


def _full_verdict(record: Any) -> bool:
    """`plainly_valid` as its whole walk says, without memos or vouching."""
    if type(record) is not dict:
        return False
    event = record.get("event")
    if type(event) is not str or event in debuglog._OWN_MODEL:
        return False
    return debuglog._all_hold(record, debuglog._SPECS.get(event, debuglog.COMMON_KEYS))


def test_the_bound_is_inside_what_the_models_accept() -> None:
    assert FAST_INT_BOUND * 10 == 10**jsonio._LONG_DIGITS
    assert FAST_INT_BOUND < debuglog._INT_MAX


@settings(max_examples=400, deadline=None)
@given(st.lists(_number(), min_size=1, max_size=4), st.sampled_from(["", " ", "\n"]))
def test_a_vouched_value_has_only_finite_floats_and_small_integers(
    literals: list[str], pad: str
) -> None:
    keys = ["total_tokens", "timestamp", "attempt", "budget_ratio"]
    text = "{" + ",".join(f'"{k}":{pad}{v}' for k, v in zip(keys, literals, strict=False)) + "}"
    text = text.replace("{", '{"event": "threshold_check",', 1)
    assert_same(text)  # the value is the stdlib decoder's (or its error)
    try:
        value, _, vouched = loads_strict_bytes_vouched(text.encode())
    except ValueError:  # refused (overflow): nothing vouched
        return
    if vouched:
        for number in _numbers_in(value):
            assert math.isfinite(number), text
            assert type(number) is float or abs(number) < FAST_INT_BOUND, text


_EDGE_INTS = [0, -1, 1, -(10**3), FAST_INT_BOUND - 1, -(FAST_INT_BOUND - 1), 10**300]


@pytest.mark.parametrize("number", _EDGE_INTS)
def test_integers_on_the_bound_are_vouched_for_only_below_it(number: int) -> None:
    value, _, vouched = loads_strict_bytes_vouched(json.dumps({"idx": number}).encode())
    assert value == {"idx": number}
    assert vouched is (abs(number) < FAST_INT_BOUND)


@settings(max_examples=600, deadline=None)
@given(_records())
def test_the_vouched_verdict_is_the_full_one(record: dict[str, Any]) -> None:
    try:
        text = json.dumps(record, allow_nan=False)
    except ValueError:  # an infinite float: no text, nothing vouched
        return
    value, _, vouched = loads_strict_bytes_vouched(text.encode())
    if vouched:
        for _ in range(2):  # the second time from the shape memos
            assert debuglog.plainly_valid(value, vouched=True) is _full_verdict(value), value
    assert debuglog.plainly_valid(value) is _full_verdict(value)


@pytest.mark.parametrize(
    ("record", "plain"),
    [
        ({"event": "threshold_check", "total_tokens": -1}, False),
        ({"event": "threshold_check", "total_tokens": 0, "timestamp": -5}, True),
        ({"event": "compression_retry", "attempt": -3, "delay_seconds": -1.5}, True),
        ({"event": "span_built", "messages_to_compress": [{"idx": -1}]}, False),
        ({"event": "span_built", "messages_to_compress": [{"idx": 2, "tokens": -9}]}, True),
        ({"event": "span_built", "protected_tail": [{"idx": 0}, {"idx": -2}]}, False),
        ({"event": "threshold_check", "total_tokens": 10**200}, True),
    ],
)
def test_vouched_counts_keep_their_lower_bound(record: dict[str, Any], plain: bool) -> None:
    value, _, vouched = loads_strict_bytes_vouched(json.dumps(record).encode())
    assert vouched
    for _ in range(2):
        assert debuglog.plainly_valid(value, vouched=True) is plain
        assert _full_verdict(value) is plain


@pytest.mark.parametrize(
    "text",
    [
        "[" + "1" * 210 + "]",
        "[" + "1" * 209 + "]",
        "[" + "1" * 209 + ".5e99]",
        "[" + "1" * 210 + ".0e98]",
        "[" + "1" * 100 + "." + "1" * 110 + "e98]",
        "[" + ", ".join(["10"] * 400) + "]",  # many zeros, no run: answered
        "[" + ",".join(["7"] * 400) + "]",
        '{"s": "' + "9" * 300 + '", "n": 1}',  # a digit run in a string: refused, same value
        "[" + "1" * 4301 + "]",
    ],
)
def test_digit_runs_are_refused_by_the_search_alone(text: str) -> None:
    assert_same(text)
    marks = text.encode().translate(jsonio._GUARD_TABLE, jsonio._GUARD_DELETE)
    refused = jsonio._fast_bytes(text.encode())[0] is jsonio._SLOW
    if jsonio._DIGIT_RUN in marks:
        assert refused
    if "10, 10" in text or "7,7" in text:
        assert not refused
