"""`classify._classify`'s direct route for the usual debug-log line (`_plain_debug_line`)
gives what the full chain gives: the same records (raw, source, line), artifacts, errors and
refused records, on generated JSON Lines mixing debug records (good, broken, with a `role`),
messages, watch-like and unknown objects, and on every JSON Lines file of the test data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.sources import classify
from tests.test_stream_fast_paths import _records

ROOT = Path(__file__).resolve().parent.parent

_OTHERS = st.sampled_from(
    [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "ok", "event": "span_built"},
        {"event": "threshold_check", "role": 3, "total_tokens": 1},
        {"event": "span_built", "messages_to_compress": [{"idx": -1}]},
        {"event": 5, "processor": "P"},
        {"unrelated": 1},
        [1, 2],
        "text",
    ]
)


def _outcome(documents: list[tuple[str | None, Any]], direct: bool) -> tuple[Any, ...]:
    load = classify.FileLoad(Path("/tmp/Log.jsonl"), 0, False, 0.0)
    saved = classify._plain_debug_line
    if not direct:
        classify._plain_debug_line = lambda document: False  # type: ignore[assignment]
    try:
        bad = classify._classify(documents, True, load)
    finally:
        classify._plain_debug_line = saved  # type: ignore[assignment]
    records = [(r.raw, r.source, r.line) for r in load.records]
    artifacts = [(a.kind, a.id, a.source) for a in load.artifacts]
    return records, artifacts, load.errors, load.calls, bad


def assert_same(documents: list[tuple[str | None, Any]]) -> None:
    assert _outcome(documents, True) == _outcome(documents, False)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_records(), _OTHERS), max_size=12))
def test_generated_lines_classify_the_same(documents: list[Any]) -> None:
    assert_same([(f"line {n}", d) for n, d in enumerate(documents, start=1)])


def test_a_debug_record_with_a_role_is_a_message() -> None:
    documents = [("line 1", {"event": "threshold_check", "role": "user", "content": "x"})]
    assert_same(documents)
    assert _outcome(documents, True)[0] == []


@pytest.mark.parametrize("where", ["line 7", "line 12345"])
def test_the_line_number_is_read_from_the_label(where: str) -> None:
    record = {"event": "threshold_check", "total_tokens": 3}
    assert _outcome([(where, record)], True)[0] == [(record, "/tmp/Log.jsonl", int(where[5:]))]


def test_every_test_data_log_classifies_the_same() -> None:
    logs = sorted(p for p in (ROOT / "tests" / "data").rglob("*.jsonl") if p.is_file())
    assert logs
    for path in logs:
        result = classify.read_json_file(path)
        if result.json_lines:
            assert_same(result.documents)
