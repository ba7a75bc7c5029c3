"""JSON lines printed without a flush each (`print_json_line(..., flush=False)`, what
`why --json` does for every line) come out whole and in order with the text around them,
through the masked stdout every command has, literals still masked."""

from __future__ import annotations

import io
import json

from inspector.cli.common import MaskedStream, print_json_line
from inspector.core.redact import Masker


class _Counting(io.BytesIO):
    def __init__(self) -> None:
        super().__init__()
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1
        super().flush()


def _stdout() -> tuple[io.TextIOWrapper, _Counting]:
    raw = _Counting()
    return io.TextIOWrapper(io.BufferedWriter(raw, 1 << 16), encoding="utf-8"), raw


def test_lines_and_text_keep_their_order_and_write_once() -> None:
    inner, raw = _stdout()
    out = MaskedStream(inner, Masker())
    out.write("first text\n")
    for number in range(200):
        print_json_line({"n": number, "note": "é"}, out, flush=False)
    out.write("between\n")
    print_json_line({"n": 200}, out, flush=False)
    before_flush = raw.getvalue()
    out.flush()
    lines = raw.getvalue().decode("utf-8").splitlines()
    assert lines[0] == "first text" and lines[201] == "between"
    assert [json.loads(line)["n"] for line in lines[1:201] + lines[202:]] == list(range(201))
    # the lines sat in the buffer: no write per line reached the raw stream
    assert len(before_flush) < len(raw.getvalue()) and raw.flushes <= 3


def test_a_flushed_line_is_out_at_once_and_literals_stay_masked() -> None:
    inner, raw = _stdout()
    out = MaskedStream(inner, Masker(["hunter2-secret"]))
    print_json_line({"said": "key hunter2-secret"}, out, flush=False)
    print_json_line({"said": "hunter2-secret again"}, out)  # flushed: both are out
    text = raw.getvalue().decode("utf-8")
    assert "hunter2-secret" not in text and text.count("***") == 2
    assert len(text.splitlines()) == 2
