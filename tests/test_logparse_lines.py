"""A small JSON Lines file read line by line from its bytes (`jsonio._lines_of_data`) gives
what the whole-file reader gives: its text decoded and parsed by `parse_json_text` (one
document first, then line by line), with the stdlib decoder alone. On the edge files of
`test_logs_jsonl_streaming`, generated logs with odd lines and breaks, every file of the
test data and the sample dumps, and the debug logs of the reference corpus."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.sources import jsonio
from tests.test_jsonio_fast import fast_path_off
from tests.test_logs_jsonl_streaming import _EDGES
from tests.test_logstats2_lines import _lines_text, _result

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = Path("/work/shared/reference")


def whole_file(path: Path) -> tuple[Any, ...]:
    """What reading `path` whole gives (no line reader, no fast path), as `_result`."""
    data = path.read_bytes()
    with fast_path_off():
        text, problem = jsonio._decode(data)
        if problem is not None or text is None:
            return _result(jsonio.ReadResult(problem=problem))
        return _result(jsonio.parse_json_text(text))


def assert_reads_whole(path: Path) -> bool:
    """`read_json_file(path)` is `whole_file(path)`; True when the line reader took it."""
    assert _result(jsonio.read_json_file(path)) == whole_file(path), path
    return jsonio._lines_of_data(path.read_bytes(), True) is not None


def test_the_edge_files_read_as_whole(tmp_path: Path) -> None:
    taken = 0
    for name, data in sorted(_EDGES.items()):
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(data)
        taken += assert_reads_whole(path)
    assert taken >= 10  # most of them are read line by line


@settings(max_examples=300, deadline=None)
@given(_lines_text(), st.booleans())
def test_generated_logs_read_as_whole(text: str, bom: bool) -> None:
    raw = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8", "surrogatepass")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "Log.jsonl"
        path.write_bytes(raw)
        assert_reads_whole(path)


def test_every_data_file_reads_as_whole() -> None:
    files = [
        p
        for base in (ROOT / "tests" / "data", ROOT / "sample_dumps", REFERENCE)
        if base.is_dir()
        for p in sorted(base.rglob("*"))
        if p.is_file() and p.suffix in (".json", ".jsonl", ".ndjson")
    ]
    assert len(files) > 50
    taken = sum(assert_reads_whole(path) for path in files)
    assert taken > 20


def test_one_line_documents_are_not_read_as_lines(tmp_path: Path) -> None:
    """A file without a second line (one document, on one line or many) is left whole."""
    for data in (b'{"a": 1}', b'{"a": 1}\n', b'{"a": 1}\n  \n', b'{\n  "a": 1\n}\n'):
        path = tmp_path / "one.json"
        path.write_bytes(data)
        assert jsonio._lines_of_data(data, True) is None
        assert _result(jsonio.read_json_file(path)) == whole_file(path)
