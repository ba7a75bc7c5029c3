"""JSON Lines read line by line (`jsonio._read_lines_streaming`) give what the whole-file
reader gives: the same documents, locations, problems and bad records, on every file of
the test data and on files made to sit on the edges (line separators `str.splitlines`
knows inside a line, CRLF, blank and whitespace lines, invalid UTF-8 late in the file, a
byte-order mark, NUL bytes, a document spread over lines, over-deep records, one line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.sources import jsonio
from inspector.sources.jsonio import read_json_file

ROOT = Path(__file__).resolve().parent.parent
_NEVER = 1 << 62


def _both(path: Path) -> tuple[jsonio.ReadResult, jsonio.ReadResult]:
    return (
        read_json_file(path, lines_min_bytes=0),
        read_json_file(path, lines_min_bytes=_NEVER),
    )


def _record(n: int) -> str:
    return json.dumps({"event": "threshold_check", "timestamp": 1795900000 + n, "n": n})


_EDGES: dict[str, bytes] = {
    "plain": "\n".join(_record(i) for i in range(5)).encode() + b"\n",
    "no_final_newline": "\n".join(_record(i) for i in range(3)).encode(),
    "crlf": "\r\n".join(_record(i) for i in range(3)).encode() + b"\r\n",
    "u2028_in_string": (
        _record(0) + "\n" + '{"event": "x", "text": "a\u2028b"}\n' + _record(2) + "\n"
    ).encode(),
    "lone_cr_and_ff": (_record(0) + "\n" + _record(1) + "\r" + _record(2) + "\x0c\n").encode(),
    "blank_second_line": (_record(0) + "\n\n" + _record(1) + "\n").encode(),
    "blank_later": (_record(0) + "\n" + _record(1) + "\n   \n\n" + _record(2)).encode(),
    "nbsp_line": (_record(0) + "\n" + _record(1) + "\n\u00a0\n").encode(),
    "bad_utf8_late": (_record(0) + "\n" + _record(1) + "\n").encode() + b'{"a": "\xff"}\n',
    "bad_utf8_split": (_record(0) + "\n").encode() + b'{"a": "\xe4\xb8\n' + b"x\n",
    "bom": b"\xef\xbb\xbf" + (_record(0) + "\n" + _record(1) + "\n").encode(),
    "bom_later": (_record(0) + "\n\ufeff" + _record(1) + "\n").encode(),
    "nul_early": (_record(0) + "\n").encode() + b"\x00\n" + (_record(1) + "\n").encode(),
    "bad_lines": (_record(0) + "\n{oops\n" + _record(1) + "\nNaN\n[1, 2]\n").encode(),
    "multiline_document": json.dumps({"a": [1, 2], "b": {"c": 3}}, indent=2).encode(),
    "first_line_array": b"[1, 2]\n" + (_record(1) + "\n").encode(),
    "first_line_bad": b"{oops\n" + (_record(1) + "\n" + _record(2) + "\n").encode(),
    "one_line": (_record(0) + "\n").encode(),
    "too_deep": (_record(0) + "\n" + "[" * 300 + "]" * 300 + "\n" + _record(1) + "\n").encode(),
    "infinite": (_record(0) + "\n" + '{"x": 1e999}\n' + _record(1) + "\n").encode(),
    "first_line_two_pieces": (_record(0) + "\u2029" + _record(1) + "\n" + _record(2)).encode(),
}


@pytest.mark.parametrize("name", sorted(_EDGES))
def test_an_edge_file_reads_the_same_line_by_line(tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(_EDGES[name])
    streamed, whole = _both(path)
    assert streamed == whole


def test_a_plain_log_is_read_line_by_line_without_the_whole_text(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(_EDGES["bad_lines"])
    assert jsonio._read_lines_streaming(path) is not None  # the fast path is taken
    path.write_bytes(_EDGES["multiline_document"])
    assert jsonio._read_lines_streaming(path) is None  # one document: read whole


def test_every_test_data_file_reads_the_same_line_by_line() -> None:
    files = [
        p
        for base in (ROOT / "tests" / "data", ROOT / "sample_dumps")
        for p in sorted(base.rglob("*"))
        if p.is_file() and p.suffix in (".json", ".jsonl", ".ndjson")
    ]
    assert len(files) > 50
    streamed_count = 0
    for path in files:
        streamed, whole = _both(path)
        assert streamed == whole, path
        streamed_count += jsonio._read_lines_streaming(path) is not None
    assert streamed_count > 20
