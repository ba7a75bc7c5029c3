"""Property-based: mutated real dumps and logs never raise, they load or give one LoadError."""

from __future__ import annotations

import atexit
import io
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.cli.common import print_json_line
from inspector.core.artifact import Artifact, LoadError
from inspector.core.engine import PricedContext
from inspector.encoding import make_counters
from inspector.sources.loader import UNEXPECTED, load_paths
from tests.conftest import REFERENCE

DUMP = next(
    (REFERENCE / "p_dir_resolution" / "p4_config_dir_beats_env" / "cfg_dir").glob(
        "*Compressor_*.json"
    )
)
DUMP_BYTES = DUMP.read_bytes()
DUMP_JSON = json.loads(DUMP_BYTES)
LOG_BYTES = (REFERENCE / "f_overflow_413_retry" / "CurrentRoundCompressor.jsonl").read_bytes()
IMAGES_DUMP = json.loads(
    next((REFERENCE / "l2_multimodal_dialogue").glob("*Compressor_*.json")).read_bytes()
)
COUNTERS = make_counters()
WORKDIR = Path(tempfile.mkdtemp(prefix="inspector-fuzz-"))
atexit.register(shutil.rmtree, WORKDIR, True)
SETTINGS = settings(
    max_examples=600, deadline=None, suppress_health_check=list(HealthCheck), database=None
)


def _check(data: bytes, name: str = "1795975646584_CurrentRoundCompressor_x.json") -> list[Any]:
    path = WORKDIR / name
    path.write_bytes(data)
    results = list(load_paths([path], counters=COUNTERS))
    errors = [r for r in results if isinstance(r, LoadError)]
    assert len(errors) <= 1
    out = io.BytesIO()
    stream = io.TextIOWrapper(out, encoding="ascii")  # a strict stdout that cannot hold UTF-8
    for result in results:
        line = result.to_dict() if isinstance(result, LoadError) else dict(result.recorded)
        print_json_line(line, stream)
    written = out.getvalue().decode("utf-8").splitlines()  # valid UTF-8 JSON Lines
    assert len(written) == len(results) and all(json.loads(text) is not None for text in written)
    stream.detach()
    for result in results:
        assert isinstance(result, Artifact | LoadError)
        if isinstance(result, LoadError):
            assert result.error and isinstance(result.error, str)
            assert not result.error.startswith(UNEXPECTED), result.error
        elif result.snapshot is not None:
            snap = result.snapshot
            PricedContext.from_snapshot(snap, COUNTERS["len_div_4"]).evaluate(
                snap.tuning.with_(token_mode="len_div_4")
            )
    return results


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value[:6]):
            out += _paths(item, prefix + (index,))
    return out


DUMP_PATHS = _paths(DUMP_JSON)[1:]
IMAGE_PATHS = _paths(IMAGES_DUMP)[1:]
SWAPS = st.sampled_from(
    [None, True, 0, -1, 2**70, 10**400, -(10**400), 1.5, "", "x", "a\ud800", "\udfff"]
    + [[], {}, [1, "a"], {"role": 3}]
)


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    copy = json.loads(json.dumps(doc))
    node = copy
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return copy


@SETTINGS
@given(st.integers(min_value=0, max_value=len(DUMP_BYTES) - 1))
def test_truncated_dump(cut: int) -> None:
    results = _check(DUMP_BYTES[:cut])
    assert len(results) == 1 and isinstance(results[0], LoadError)


@SETTINGS
@given(
    st.lists(
        st.tuples(st.integers(0, len(DUMP_BYTES) - 1), st.integers(0, 255)), min_size=1, max_size=8
    )
)
def test_byte_flips(flips: list[tuple[int, int]]) -> None:
    data = bytearray(DUMP_BYTES)
    for position, value in flips:
        data[position] = value
    _check(bytes(data))


@settings(max_examples=900, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(st.sampled_from(DUMP_PATHS), SWAPS)
def test_type_swaps(path: tuple[Any, ...], value: Any) -> None:
    _check(json.dumps(_set(DUMP_JSON, path, value)).encode())


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(st.sampled_from(IMAGE_PATHS), SWAPS)
def test_type_swaps_in_image_dump(path: tuple[Any, ...], value: Any) -> None:
    _check(json.dumps(_set(IMAGES_DUMP, path, value)).encode())


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(
    st.sampled_from(DUMP_PATHS),
    st.integers(100_000, 2_000_000),
    st.sampled_from(["a", "é", "<", "data:image/png;base64,"]),
)
def test_huge_strings(path: tuple[Any, ...], size: int, unit: str) -> None:
    _check(
        json.dumps(_set(DUMP_JSON, path, unit * (size // len(unit))), ensure_ascii=False).encode()
    )


@SETTINGS
@given(st.integers(0, len(LOG_BYTES) - 1), st.integers(0, 255))
def test_debug_log_mutations(position: int, value: int) -> None:
    data = bytearray(LOG_BYTES)
    data[position] = value
    _check(
        bytes(data[: position + 1 + (value % 2) * len(data)]), name="CurrentRoundCompressor.jsonl"
    )


INPUT_JSON = json.loads(
    (REFERENCE / "b_keep_recent_tool_boundary" / "input.json").read_text(encoding="utf-8")
)
INPUT_PATHS = [
    p
    for p in _paths(INPUT_JSON)[1:]
    if p[0]
    in ("messages", "system_messages", "tools", "config", "processor", "context_max", "token_mode")
]
ANTHROPIC = {
    "system": [{"type": "text", "text": "Be brief."}],
    "tools": [{"name": "read_file", "description": "read", "input_schema": {"type": "object"}}],
    "messages": [
        {"role": "user", "content": "Read a.py"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "ok"},
                {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a.py"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": [{"type": "text", "text": "x"}],
                },
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
                },
            ],
        },
    ],
}
ANTHROPIC_PATHS = _paths(ANTHROPIC)[1:]


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(st.sampled_from(INPUT_PATHS), SWAPS)
def test_type_swaps_in_a_snapshot(path: tuple[Any, ...], value: Any) -> None:
    _check(json.dumps(_set(INPUT_JSON, path, value)).encode(), name="input.json")


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(st.sampled_from(ANTHROPIC_PATHS), SWAPS)
def test_type_swaps_in_anthropic_messages(path: tuple[Any, ...], value: Any) -> None:
    _check(json.dumps(_set(ANTHROPIC, path, value)).encode(), name="chat.json")


LOG_RECORDS = [json.loads(line) for line in LOG_BYTES.decode("utf-8").splitlines() if line.strip()]
LOG_PATHS = [
    (index, *path) for index, record in enumerate(LOG_RECORDS) for path in _paths(record)[1:]
]


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(st.sampled_from(LOG_PATHS), SWAPS)
def test_type_swaps_in_debug_records(path: tuple[Any, ...], value: Any) -> None:
    records = _set(LOG_RECORDS, path, value)
    results = _check(
        "\n".join(json.dumps(r) for r in records).encode(), name="CurrentRoundCompressor.jsonl"
    )
    assert results  # the other records still load, or the one bad record is reported
