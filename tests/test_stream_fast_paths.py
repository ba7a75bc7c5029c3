"""The fast paths of the streaming work give what the slow paths give: a record `plainly_valid`
calls valid is one pydantic accepts (and the tables name exactly the models' fields); a JSON
text `_json_may_change` calls safe is one masking leaves alone, also through the skeleton
memo; the summary-loss scans with their pre-checks and slash runs find what a whole scan
finds; the tool-result pre-check never hides a `file_path`."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from inspector.core import summary_loss
from inspector.core.errors import FormatError
from inspector.core.messages import Message
from inspector.core.redact import Masker, _json_may_change
from inspector.core.reinjection import parse_jsonish_tool_result
from inspector.formats import debug as debug_formats
from inspector.formats.debug import parse_debug_record
from inspector.sources.debuglog import COMMON_KEYS, EVENT_KEYS, SPAN_ENTRY_KEYS, plainly_valid

_BIG = int(sys.float_info.max)
_odd_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([_BIG, _BIG + 1, -_BIG, -_BIG - 1, 2**70, 10**400]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=3),
    st.lists(st.integers(0, 2), max_size=2),
    st.just({}),
)
_span_entries = (
    st.lists(
        st.dictionaries(st.sampled_from(["idx", "role", "tokens", "preview", "x"]), _odd_values),
        max_size=3,
    )
    | _odd_values
)
_events = st.sampled_from(
    ["threshold_check", "span_built", "compression_retry", "mine", "pre_call"]
)


@st.composite
def _records(draw: Any) -> dict[str, Any]:
    event = draw(_events)
    keys = [*COMMON_KEYS, *EVENT_KEYS.get(event, {}), "extra_key"]
    record: dict[str, Any] = {"event": event}
    for key in draw(st.lists(st.sampled_from(keys), unique=True)):
        spans = key in ("preserved_prefix", "messages_to_compress", "protected_tail")
        record[key] = draw(_span_entries if spans else _odd_values)
    return record


@settings(max_examples=600, deadline=None)
@given(_records())
def test_a_plainly_valid_record_is_one_pydantic_accepts(record: dict[str, Any]) -> None:
    try:
        parse_debug_record(record)
        accepted = True
    except FormatError:
        accepted = False
    if plainly_valid(record):
        assert accepted, record


def test_plainly_valid_knows_every_field_of_the_models() -> None:
    common = set(debug_formats.DebugRecordBase.model_fields) - {"event"}
    assert set(COMMON_KEYS) == common
    models: dict[str, type[debug_formats.DebugRecordBase]] = {
        "threshold_check": debug_formats.ThresholdCheck,
        "span_built": debug_formats.SpanBuilt,
        "compression_retry": debug_formats.CompressionRetry,
    }
    for event, model in models.items():
        assert set(EVENT_KEYS[event]) == set(model.model_fields) - common - {"event"}, event
    assert set(SPAN_ENTRY_KEYS) == set(debug_formats.SpanEntry.model_fields)
    assert set(debug_formats.EVENT_MODELS) == {*models, "pre_call"}


def test_the_records_of_real_logs_are_plainly_valid() -> None:
    check: dict[str, Any] = {"event": "threshold_check", "timestamp": 1.5, "total_tokens": 5}
    span: dict[str, Any] = {"event": "span_built", "preserved_prefix": [{"idx": 0, "tokens": 3}]}
    for record in (check, span, {"event": "compression_retry", "delay_seconds": 1}):
        assert plainly_valid(record)
    for record in ({**check, "total_tokens": -1}, {**check, "hit": 1}, {"event": 3}):
        assert not plainly_valid(record)


_pieces = st.sampled_from(
    ["token", "tokens", "Bearer ", "key", '"', "\\", ":", "=", " ", "\n", "cookie", "sk-",
     "sk-abcdefghijklmnopqrstuvwxyz", "password", "PWD", "\u0130", "1", "23", "://u:p@h",
     "api_", "X-Api-", "_", "secret"]
)  # fmt: skip
_texts = st.lists(st.one_of(_pieces, st.text(max_size=4)), max_size=8).map("".join)
_values = st.recursive(
    st.one_of(st.none(), st.integers(), st.booleans(), _texts),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.one_of(_texts, _pieces), inner, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=500, deadline=None)
@given(_values)
def test_a_text_judged_safe_is_one_masking_leaves_alone(value: Any) -> None:
    text = json.dumps(value, ensure_ascii=False)
    masked = json.dumps(Masker().value(value), ensure_ascii=False)
    if masked != text:
        assert _json_may_change(text)


def test_a_word_closing_a_string_triggers_only_for_a_secret_field_name() -> None:
    # every check of a `why --json` line has a "key": no walk for it
    assert not _json_may_change(json.dumps({"checks": [{"key": "trigger", "ok": True}]}))
    assert not _json_may_change(json.dumps({"note": "the cache key"}))
    for value in ({"api_key": "v"}, {"X-Api-Key": "v"}, {"auth_token": "v"}, {'a"key': "v"}):
        assert _json_may_change(json.dumps(value, ensure_ascii=False)), value
        assert Masker().value(value) != value or '"' in next(iter(value))


@settings(max_examples=60, deadline=None)
@given(st.lists(_values, min_size=2, max_size=12))
def test_one_masker_over_many_lines_writes_what_fresh_maskers_write(values: list[Any]) -> None:
    shared = Masker()  # its skeleton memo sees every line: digits differ, verdicts must not
    for value in values + values:
        assert shared.json_text(value) == json.dumps(Masker().value(value), ensure_ascii=False)


_path_pieces = st.sampled_from(
    ["/", "./", "../", "~/", "src/", "a.py", "x.tar.gz", "://", "http://h/p.py", " ", "\n",
     "-", ".", "_", "~", "é/", "ab", "/usr/lib/x.so", "`f`", "def g(", "ValueError: bad"]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_path_pieces, st.text(max_size=3)), max_size=30).map("".join))
def test_paths_found_in_slash_runs_are_those_of_a_whole_scan(
    text: str,
) -> None:
    def whole(body: str) -> list[str]:
        found = []
        for match in summary_loss._PATH_RE.finditer(body):
            path = match.group(1).rstrip(".")
            start = match.start()
            if len(path) > 3 and "://" not in body[max(start - 3, 0) : start + 3]:
                found.append(path)
        return found

    assert summary_loss._paths(text) == whole(text)  # as chosen: none, runs or whole
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(summary_loss, "_SLASH_SPACING", 0)  # always the runs
        assert summary_loss._paths(text) == whole(text)
        padded = "x" * 300 + text + " y" * 200  # the window looking back doubles
        assert summary_loss._paths(padded) == whole(padded)


_error_pieces = st.sampled_from(
    ["Error", "error", "ERROR", "FAILED", "Traceback", "Exception", "Failure", "ValueError",
     "KeyError: 'k'", ": bad", " ", "\n", "\t", "\r", "=====", "error=None", "x", "É", "_",
     "A" * 170, "  File \"a.py\"", "FAILED t.py::t_x - AssertionError: 1 != 2", "\u2028"]
)  # fmt: skip


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.one_of(_error_pieces, st.text(max_size=3)), max_size=40).map("".join))
@example("Traceback\n  File a.py, line 3\nok")  # a word ending its line: into the next
@example("x ValueError:\n bad value\nTraceback \n")
@example("\nerror: one\n\nerror\ttwo" + "y" * 200 + " Error: three")
def test_errors_found_in_their_lines_are_those_of_a_whole_scan(text: str) -> None:
    found = []
    for match in summary_loss._ERROR_LINE_RE.finditer(text):
        line = " ".join(match.group(1).split())
        line = re.split(r"\s={3,}", line)[0].strip()
        if not line.lower().startswith("error=none") and " " in line:
            found.append(line)
    assert summary_loss._errors(text) == found
    assert summary_loss._errors("x\n" * 50 + text) == found  # no match before its lines


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_path_pieces, st.text(max_size=3)), max_size=20).map("".join))
def test_identifier_and_error_pre_checks_skip_only_texts_without_matches(text: str) -> None:
    names = [
        *summary_loss._BACKTICK_RE.findall(text),
        *summary_loss._DEF_RE.findall(text),
        *summary_loss._CALL_RE.findall(text),
    ]
    expected = [
        n for n in names if len(n) >= 4 and n not in summary_loss._COMMON_WORDS and "/" not in n
    ]
    assert summary_loss._identifiers(text) == expected
    if not any(word in text for word in summary_loss._ERROR_WORDS):
        assert not summary_loss._ERROR_LINE_RE.search(text)


def test_a_long_text_is_scanned_for_paths_around_its_slashes() -> None:
    body = "plain words " * 10_000 + " see /work/src/x/parse.py and ./a/b.c, http://h/x/y.py"
    assert summary_loss._paths(body) == ["/work/src/x/parse.py", "./a/b.c"]


@pytest.mark.parametrize(
    "text",
    [
        '{"file_path": "/a/b.py"}',
        '{"file\\u005fpath": "/a/b.py"}',
        "data={'file_path': '/a/b.py'} ok=1",
        "data={'\\x66ile_path': '/a/b.py'} ok=1",
        "no path here",
    ],
)
def test_the_tool_result_pre_check_never_hides_a_file_path(text: str) -> None:
    message = Message(role="tool", content=text)
    parsed = parse_jsonish_tool_result(text)
    expected = parsed.get("file_path") if isinstance(parsed, dict) else None
    assert summary_loss._result_path(message) == expected


def test_a_streamed_runs_timeline_is_made_when_read(tmp_path: Any) -> None:
    from inspector.core.artifact import Artifact
    from inspector.sources.debugstream import stream_debug_log

    key = {"processor": "P", "session_id": "s", "context_id": "c"}
    lines = [
        {"event": "threshold_check", "timestamp": 1.0, **key, "reason": "below_threshold"},
        {"event": "threshold_check", "timestamp": 2.0, **key, "reason": "reached_threshold"},
        {"event": "compression_retry", "timestamp": 2.5, **key, "attempt": 1, "retried": True},
    ]
    log = tmp_path / "P.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    runs = [item for item in stream_debug_log(log) if isinstance(item, Artifact)]
    assert [run.extra["run_index"] for run in runs] == [1, 2]
    second = runs[1].extra
    assert set(second) == {
        "timeline",
        "run_index",
        "context_from",
        "context_snapshot_id",
        "context_link",
    }
    (entry,) = second["timeline"]
    assert entry["index"] == 2 and entry["reason"] == "reached_threshold"
    assert entry["retries"] == [{"attempt": 1, "retried": True}]
    assert dict(second)["timeline"] is second["timeline"]  # made once


def test_recorded_keys_are_a_keys_view() -> None:
    from inspector.core.artifact import DebugRecorded, DumpRecorded

    recorded = DebugRecorded(reason="below_threshold", line=3)
    every = [k for k in DebugRecorded.keys_of() if k not in DebugRecorded.OPTIONAL]
    assert list(recorded.keys()) == list(recorded) == every
    twins = DebugRecorded(duplicate_records=2)  # an optional field is in once it is set
    assert list(twins.keys()) == list(twins) == list(DebugRecorded.keys_of())
    assert recorded.keys() & {"reason", "nope"} == {"reason"}
    keys = recorded.keys()
    assert "line" in keys and "nope" not in keys and len(keys) == len(recorded)
    dump = DumpRecorded()  # optional fields left out while None
    assert "threshold_check" not in list(dump.keys()) and "threshold_check" not in dict(dump)


def test_recorded_get_answers_as_mapping_get() -> None:
    from collections.abc import Mapping

    from inspector.core.artifact import DebugRecorded, DumpRecorded, SpanCounts

    records = [
        DebugRecorded(reason="below_threshold", line=3, retries=({"attempt": 1},)),
        DumpRecorded(tokens_before=5, span=SpanCounts(1, 2, 3), threshold_check={"a": 1}),
        DumpRecorded(),
    ]
    for record in records:
        for key in (*type(record).keys_of(), "nope"):
            for default in (None, 7):
                assert record.get(key, default) == Mapping.get(record, key, default), key


def test_recorded_to_dict_is_the_mapping_read_key_by_key() -> None:
    """`why --json` writes `to_dict()`: the same keys, order and plain values as `dict()`,
    on hand-made records and on every artifact of the samples and the test logs."""
    from pathlib import Path

    from inspector.core.artifact import DebugRecorded, DumpRecorded, Recorded, SpanCounts
    from inspector.sources.loader import load_paths

    records: list[Recorded] = [
        DebugRecorded(reason="below_threshold", line=3, retries=({"attempt": 1},)),
        DebugRecorded(duplicate_records=2, other_events=({"event": "x"},)),
        DumpRecorded(tokens_before=5, span=SpanCounts(1, 2, 3), threshold_check={"a": 1}),
        DumpRecorded(),
    ]
    root = Path(__file__).resolve().parents[1]
    paths = [root / "sample_dumps", *sorted((root / "tests" / "data").rglob("*.jsonl"))]
    for result in load_paths(paths):
        recorded = getattr(result, "recorded", None)
        if isinstance(recorded, Recorded):
            records.append(recorded)
    assert len(records) > 20
    for record in records:
        fast, slow = record.to_dict(), {key: record[key] for key in record}
        assert list(fast) == list(slow) and fast == slow
        assert json.dumps(fast) == json.dumps(slow)
