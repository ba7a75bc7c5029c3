"""JSON Lines parsed from their bytes (`jsonio._byte_lines`, `_parse_one`'s `raw`): the
same documents, problems and bad records as the text parsed line by line by the stdlib
decoder alone, whatever breaks the lines ("\\n", "\\r\\n", "\\r", "\\x0c", "\\u2028", ...),
with blank, bad, deep, BOM-led and overflowing lines, read whole or line by line."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.artifact import LoadError
from inspector.sources import debugstream, jsonio
from tests.test_jsonio_fast import _VALUES, canonical, fast_path_off

_BREAKS = st.sampled_from(["\n", "\n", "\n", "\r\n", "\r", "\x0c", "\u2028", "\x85", "\n\n"])
_ODD = st.sampled_from(
    [
        "",
        "   ",
        "{not json",
        '{"a": 1e999}',
        '{"a": 2e308, "a": 1}',
        "\ufeff{}",
        '{"k": "\\ud800"}',
        "[" * 205 + "]" * 205,
        '{"t": "tail"}\r',
        "[1, 2",
        "[1,\r2]",  # a "\r" inside a value: two lines, each bad, though the bytes parse
        '{"a":\r 1}',
        '{"s": "\u4e2d\u6587 \\u4e2d"}',
    ]
)
_LINE = st.builds(json.dumps, _VALUES) | _ODD


@st.composite
def _lines_text(draw: st.DrawFn) -> str:
    """JSON Lines (at least two records, so the text reads as JSON Lines) with odd lines
    and odd line breaks among them."""
    lines = [json.dumps({"event": "threshold_check", "n": 1}), *draw(st.lists(_LINE, max_size=8))]
    lines.append(json.dumps({"event": "span_built"}))
    text = "".join(line + draw(_BREAKS) for line in lines)
    return text if draw(st.booleans()) else text.rstrip("\r\n")


def _result(result: jsonio.ReadResult) -> tuple[Any, ...]:
    documents = tuple((where, canonical(value)) for where, value in result.documents)
    return documents, result.problem, result.json_lines, tuple(result.bad_records)


@settings(max_examples=400, deadline=None)
@given(_lines_text())
def test_lines_parsed_from_their_bytes_read_as_the_text_does(text: str) -> None:
    data = text.encode("utf-8", "surrogatepass")
    with fast_path_off():
        reference = _result(jsonio.parse_json_text(text))
    assert _result(jsonio.parse_json_text(text, data=data)) == reference
    assert _result(jsonio.parse_json_text(text)) == reference


@settings(max_examples=200, deadline=None)
@given(_lines_text(), st.booleans())
def test_a_log_file_reads_the_same_whole_or_line_by_line(text: str, bom: bool) -> None:
    raw = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8", "surrogatepass")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "Log.jsonl"
        path.write_bytes(raw)
        with fast_path_off():
            reference = _result(jsonio.read_json_file(path))
        assert _result(jsonio.read_json_file(path)) == reference
        # the line-by-line reader (a file of 1 MB or more), where it takes the file
        assert _result(jsonio.read_json_file(path, lines_min_bytes=1)) == reference


def test_byte_lines_are_the_lines_or_none() -> None:
    assert jsonio._byte_lines(b"a\nb\n", ["a", "b"]) == [b"a", b"b"]
    assert jsonio._byte_lines(b"a\r\nb", ["a", "b"]) == [b"a\r", b"b"]
    assert jsonio._byte_lines(b"a\n\n", ["a", ""]) == [b"a", b""]
    assert jsonio._byte_lines(b"a\rb\n", "a\rb\n".splitlines()) is None
    assert jsonio._byte_lines("a\u2028b".encode(), "a\u2028b".splitlines()) is None
    assert jsonio._byte_lines(None, ["a"]) is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=1, max_size=6), st.booleans())
def test_the_streamed_reader_skips_exactly_the_lines_over_its_limit(
    offsets: list[int], final_newline: bool
) -> None:
    """A line whose bytes (without its "\\n") are over `max_line_bytes` is one "over the
    line limit" problem, never parsed; one at the limit is read; at the end of the file
    with or without a "\\n", and the lines after a skipped one keep their numbers."""
    limit = 120
    records = []
    for number, offset in enumerate(offsets, start=1):
        head = json.dumps({"event": "threshold_check", "reason": "below_threshold", "n": number})
        pad = limit + offset - len(head) - len(', "p": ""')
        records.append(head[:-1] + ', "p": "' + "x" * pad + '"}')
    text = "\n".join(records) + ("\n" if final_newline else "")
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "Long.jsonl"
        log.write_text(text, encoding="utf-8")
        items = list(debugstream.stream_debug_runs(log, max_line_bytes=limit))
    over = [n for n, r in enumerate(records, start=1) if len(r.encode()) > limit]
    runs = [item for item in items if not isinstance(item, LoadError)]
    assert [run.line for run in runs] == [n for n in range(1, len(records) + 1) if n not in over]
    errors = [item for item in items if isinstance(item, LoadError)]
    if not over:
        assert errors == []
    else:
        (error,) = errors
        assert error.where == f"line {over[0]}" and "over the line limit" in error.error
        assert (len(over) > 1) == error.error.startswith(f"{len(over)} records")
