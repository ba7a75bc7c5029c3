"""The streaming JSON reader gives json.loads' value, and read_json_file the same result with it."""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.sources.jsonio import MAX_DEPTH, ReadResult, read_json_file
from inspector.sources.jsonstream import StreamFallback, load_streaming
from tests.conftest import REFERENCE

REPO = Path(__file__).resolve().parents[1]
REAL_FILES = sorted([*REFERENCE.rglob("*.json"), *(REPO / "sample_dumps").rglob("*.json")], key=str)
DUMP = next(
    (REFERENCE / "p_dir_resolution" / "p4_config_dir_beats_env" / "cfg_dir").glob(
        "*Compressor_*.json"
    )
)
WORKDIR = Path(tempfile.mkdtemp(prefix="inspector-jsonstream-"))
atexit.register(shutil.rmtree, WORKDIR, True)
SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), database=None
)


def _write(data: bytes, name: str = "doc.json") -> Path:
    path = WORKDIR / name
    path.write_bytes(data)
    return path


def _same_read(path: Path) -> ReadResult:
    """read_json_file through the streaming reader equals the whole-file read; returns it."""
    whole = read_json_file(path, stream_min_bytes=2**62)
    streamed = read_json_file(path, stream_min_bytes=0)
    assert streamed.documents == whole.documents
    assert streamed.problem == whole.problem
    assert streamed.json_lines == whole.json_lines
    assert streamed.bad_records == whole.bad_records
    return streamed


def test_real_files_give_json_loads_value() -> None:
    assert len(REAL_FILES) > 20
    for path in REAL_FILES:
        expected = json.loads(path.read_bytes())
        for chunk in (1, 7, 4096):
            assert load_streaming(path, chunk_bytes=chunk) == expected, (path, chunk)
        for chunk, big in ((7, 64), (300, 1024)):  # big values walked, long strings in pieces
            assert load_streaming(path, chunk_bytes=chunk, big_chars=big) == expected, path
        _same_read(path)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=8), inner, max_size=6)
    ),
    max_leaves=40,
)


@SETTINGS
@given(
    value=json_values,
    indent=st.sampled_from([None, 0, 2]),
    ascii_only=st.booleans(),
    chunk=st.integers(min_value=1, max_value=64),
    depth=st.integers(min_value=0, max_value=5),
)
def test_generated_documents_match_json_loads(
    value: Any, indent: int | None, ascii_only: bool, chunk: int, depth: int
) -> None:
    data = json.dumps(value, indent=indent, ensure_ascii=ascii_only).encode("utf-8")
    path = _write(data)
    assert load_streaming(path, depth=depth, chunk_bytes=chunk) == json.loads(data)


@SETTINGS
@given(cut=st.integers(min_value=0, max_value=len(DUMP.read_bytes())), chunk=st.integers(1, 300))
def test_truncated_dump_gives_the_same_error(cut: int, chunk: int) -> None:
    data = DUMP.read_bytes()[:cut]
    path = _write(data)
    if cut < len(data.rstrip()):
        with pytest.raises(StreamFallback):
            load_streaming(path, chunk_bytes=chunk)
    _same_read(path)


@SETTINGS
@given(
    at=st.integers(min_value=0, max_value=len(DUMP.read_bytes()) - 1),
    junk=st.sampled_from([b",", b"}", b"]", b"{", b"[", b'"', b":", b"x", b"\x00", b"\xff", b" "]),
    replace=st.booleans(),
)
def test_mutated_dump_gives_the_same_result(at: int, junk: bytes, replace: bool) -> None:
    data = DUMP.read_bytes()
    data = data[:at] + junk + data[at + (1 if replace else 0) :]
    _same_read(_write(data))


@pytest.mark.parametrize(
    "text",
    [
        '{"a": [1, 2,]}',
        '{"a": 1,}',
        "[1 2]",
        '{"a" 1}',
        '{"a": NaN}',
        '{"a": [Infinity]}',
        '{"a": -Infinity}',
        '{"a": 1e999}',
        '[{"x": -1e400}]',
        "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5),
        "[" * 5000 + "]" * 5000,
        '{"a": 1}\n{"b": 2}\n',
        '{"a": 1}\n{"b": 2\n{"c": 3}\n',
        '{"a": 1} x',
        "\ufeff" + '{"a": "bom"}',
        '{"a": "\\ud800 lone surrogate", "a": "duplicate key wins last"}',
        '"just a string"',
        "12345",
        "   ",
        "[]",
        "{}",
    ],
)
def test_edge_documents_read_the_same(text: str) -> None:
    path = _write(text.encode("utf-8"))
    result = _same_read(path)
    try:
        expected = json.loads(text.encode("utf-8"))
    except (ValueError, RecursionError):
        return
    if result.problem is None and not result.json_lines:
        assert result.documents == [(None, expected)]


def test_bad_bytes_read_the_same() -> None:
    for data in (b'{"a": "\xff"}', b'{"a": "\xe4\xbd"}', b"\x00\x01", b'{"a": "\xe4\xbd\xa0"}'):
        _same_read(_write(data))


def test_error_says_where_for_a_streamed_file() -> None:
    data = DUMP.read_bytes()
    cut = data.index(b"[", data.index(b'"messages_sent_to_model"')) + 1
    result = read_json_file(_write(data[:cut] + b"!" + data[cut:]), stream_min_bytes=0)
    assert result.problem is not None and result.problem.error.startswith("not valid JSON")
    assert result.problem.where is not None and "byte" in result.problem.where


def test_nesting_check_can_be_left_to_the_parser() -> None:
    deep = "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5)
    path = _write(deep.encode())
    assert read_json_file(path).problem is not None
    assert read_json_file(path, check_nesting=False).problem is None
    deeper = _write(("[" * 100_000 + "]" * 100_000).encode())
    problem = read_json_file(deeper, check_nesting=False).problem
    assert problem is not None and "nested too deeply" in problem.error
    infinite = _write(b'{"a": [1e999]}')
    problem = read_json_file(infinite, check_nesting=False).problem
    assert problem is not None and "infinity" in problem.error


_long_texts = st.lists(
    st.one_of(
        st.text(alphabet="abcdefghij KLMNOP", min_size=0, max_size=40),
        st.sampled_from(['"', "\\", "\n", "\t", "\x01", "\u00e9", "\u4e2d", "\U0001f600", "/"]),
        st.text(max_size=3),
    ),
    max_size=40,
).map("".join)


_FEW = settings(SETTINGS, max_examples=80)


@_FEW
@given(
    value=st.recursive(
        _long_texts,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_long_texts, inner, max_size=3),
        max_leaves=8,
    ),
    ascii_only=st.booleans(),
    chunk=st.integers(min_value=1, max_value=80),
    big=st.integers(min_value=1, max_value=200),
    depth=st.integers(min_value=0, max_value=3),
)
def test_big_values_walked_and_long_strings_in_pieces_match_json_loads(
    value: Any, ascii_only: bool, chunk: int, big: int, depth: int
) -> None:
    data = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8")
    path = _write(data)
    assert load_streaming(path, depth=depth, chunk_bytes=chunk, big_chars=big) == json.loads(data)


@_FEW
@given(
    cut=st.integers(min_value=0, max_value=len(DUMP.read_bytes())),
    chunk=st.integers(16, 300),
    big=st.integers(1, 400),
)
def test_truncated_dump_falls_back_with_pieces_too(cut: int, chunk: int, big: int) -> None:
    data = DUMP.read_bytes()[:cut]
    path = _write(data)
    try:
        expected = json.loads(data)
    except ValueError:
        with pytest.raises(StreamFallback):
            load_streaming(path, chunk_bytes=chunk, big_chars=big)
        return
    assert load_streaming(path, chunk_bytes=chunk, big_chars=big) == expected


@pytest.mark.parametrize(
    "body",
    [
        "x\\\\" * 50 + "y",  # dense escapes: no cut until the string ends
        "a" * 300 + "\\ud83d\\ude00" + "b" * 300,  # a surrogate pair near a cut
        "a" * 300 + "\\\\" + '\\"' * 3 + "c" * 300,
        "a" * 300 + "\x01",  # a raw control character: refused as json.loads refuses it
        "a" * 300,  # never closed
    ],
)
def test_long_string_edges_match_json_loads(body: str) -> None:
    data = ('{"k": ["' + body + '"]}').encode("utf-8")
    path = _write(data)
    for chunk in (1, 7, 64):
        try:
            expected = json.loads(data)
        except ValueError:
            with pytest.raises(StreamFallback):
                load_streaming(path, chunk_bytes=chunk, big_chars=32)
            continue
        assert load_streaming(path, chunk_bytes=chunk, big_chars=32) == expected


def test_one_huge_string_is_read_without_the_windows_copies() -> None:
    import tracemalloc

    size = 17_000_000  # read whole in a doubling window this needs ~2.47x its size
    text = ("abcdefghij klmnop\n" * (size // 18 + 1))[:size]
    path = _write(json.dumps({"request": {"messages": [{"content": text}]}}).encode(), "big.json")
    del text
    tracemalloc.start()
    try:
        value = load_streaming(path, big_chars=1_000_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(value["request"]["messages"][0]["content"]) == size
    # the string once (grown in place), a window and one piece: neither the window's
    # doubling nor the pieces beside their join (which needed ~2x)
    assert peak < 1.3 * size, peak / size  # measured ~1.1x
