"""Pure parts of the re-run: classification, summary extraction, re-injection, losses, names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.compaction import (
    DEFAULT_WRAPPERS,
    dump_file_name,
    expand_dir_template,
    extract_summary,
    parse_memory_wrapper,
    safe_name,
    shrink_span,
    transient_delay,
)
from inspector.core.engine import Span
from inspector.core.messages import Message
from inspector.core.model_errors import (
    HttpFailure,
    classify_by_status,
    classify_openjiuwen,
    openjiuwen_error_text,
)
from inspector.core.reinjection import (
    build_reinjection,
    group_completed_api_rounds,
    parse_jsonish_tool_result,
    truncate_state_text,
)
from inspector.core.summary_loss import path_mentioned, summary_losses
from inspector.core.tokens import TokenCounter
from inspector.llm import OutputDirError, check_out_dir
from tests.conftest import REFERENCE, call, msg
from tests.llm_reference import model_scenarios


@pytest.mark.parametrize(
    ("status", "error", "ojw", "by_status"),
    [
        (
            413,
            {"message": "too long", "code": "context_length_exceeded"},
            "context_overflow",
            "context_overflow",
        ),
        (
            429,
            {"message": "Limit 30000, Used 29413, Requested 7100.", "code": "rate_limit_exceeded"},
            "context_overflow",
            "rate_limit",
        ),
        (429, {"message": "slow down", "code": "rate_limit_exceeded"}, "rate_limit", "rate_limit"),
        (
            401,
            {"message": "Incorrect API key", "code": "invalid_api_key"},
            "authentication",
            "authentication",
        ),
        (
            400,
            {
                "message": "This model's maximum context length is 8192",
                "code": "context_length_exceeded",
            },
            "context_overflow",
            "context_overflow",
        ),
        (
            400,
            {"message": "bad field", "code": "invalid_value"},
            "api_request_error",
            "api_request_error",
        ),
        (504, {"message": "Gateway Timeout"}, "timeout", "timeout"),
        (502, {"message": "upstream"}, "server_unstable", "server_unstable"),
        (
            404,
            {"message": "no such model", "code": "model_not_found"},
            "unknown",
            "api_request_error",
        ),
    ],
)
def test_two_classifications(status: int, error: dict[str, str], ojw: str, by_status: str) -> None:
    failure = HttpFailure(status, json.dumps({"error": error}))
    assert classify_openjiuwen(openjiuwen_error_text(failure), status) == ojw
    assert classify_by_status(failure) == by_status


def test_request_id_with_413_misleads_openjiuwen() -> None:
    failure = HttpFailure(500, json.dumps({"error": {"message": "oops"}}), request_id="req_4130abc")
    assert classify_openjiuwen(openjiuwen_error_text(failure), 500) == "context_overflow"
    assert classify_by_status(failure) == "server_unstable"


def test_error_text_matches_openjiuwen_record() -> None:
    log = REFERENCE / "g3_429_misclassified_as_overflow" / "CurrentRoundCompressor.jsonl"
    record = next(json.loads(x) for x in log.read_text().splitlines() if "compression_retry" in x)
    script = json.loads(
        (REFERENCE / "g3_429_misclassified_as_overflow" / "input.json").read_text()
    )["fake_server_script"][0]
    failure = HttpFailure(429, json.dumps({"error": script["error"]}))
    assert openjiuwen_error_text(failure) == record["error_message"]


def test_transport_failures() -> None:
    timeout = HttpFailure(None, transport="timeout")
    assert (
        classify_openjiuwen(openjiuwen_error_text(timeout), None, is_timeout_error=True)
        == "timeout"
    )
    connection = HttpFailure(None, transport="connection")
    assert classify_openjiuwen(openjiuwen_error_text(connection), None) == "unknown"
    assert classify_by_status(connection) == "unknown"


def test_transient_delays() -> None:
    assert [transient_delay(1), transient_delay(2)] == [0.05, 0.1]


@pytest.mark.parametrize(
    ("reply", "summary"),
    [
        (
            "<coverage_check>x</coverage_check>\n<state_snapshot>\n  body  \n</state_snapshot>",
            "body",
        ),
        ("<STATE_SNAPSHOT>Upper</State_Snapshot>", "Upper"),
        ("<state_snapshot>  </state_snapshot> tail", "<state_snapshot>  </state_snapshot> tail"),
        ("  just text  ", "just text"),
        ("", ""),
        ("<state_snapshot>a</state_snapshot><state_snapshot>b</state_snapshot>", "a"),
    ],
)
def test_extract_summary(reply: str, summary: str) -> None:
    assert extract_summary(reply) == summary


def test_memory_wrapper_round_trip() -> None:
    for wrapper in DEFAULT_WRAPPERS.values():
        content = wrapper.wrap("S")
        assert parse_memory_wrapper([Message(role="user", content=content)]) == wrapper
        assert content.endswith(f"<summary>\nS\n</summary>\n</{wrapper.tag}>")
    assert parse_memory_wrapper([Message(role="user", content="hi")]) is None


def test_truncate_state_text() -> None:
    text = "a" * 10 + "b" * 10
    assert truncate_state_text(text, 100) == text
    out = truncate_state_text(text, 10)
    assert out == "aaaaa\n...[STATE_REINJECTION_TRUNCATED]...\nbbbbb"


def test_rounds() -> None:
    messages = [
        msg("user", "q"),
        msg("assistant", "", tool_calls=[call("c1"), call("c2")]),
        msg("tool", "r1", tool_call_id="c1"),
        msg("tool", "r2", tool_call_id="c2"),
        msg("assistant", "done"),
        msg("user", "again"),
        msg("assistant", "", tool_calls=[call("c3")]),
    ]
    assert group_completed_api_rounds(messages) == [(0, 4), (4, 5)]


def _read(path: str, content: str, call_id: str, **args: object) -> list[Message]:
    arguments = json.dumps({"file_path": path, **args})
    data = {"file_path": path, "content": content, "line_count": content.count("\n") + 1}
    return [
        msg("assistant", "", tool_calls=[call(call_id, "read_file", arguments)]),
        msg("tool", f"success=True data={data!r} error=None", tool_call_id=call_id),
    ]


def test_reinjection_rules() -> None:
    source = [
        msg("user", "fix it"),
        *_read("/w/a.py", "A = 1", "c1"),
        *_read("/w/.git/config", "x", "c2"),
        *_read("/w/b.py", "B = 2", "c3", offset=10),
        *_read("/w/a.py", "A = 2", "c4"),
        msg(
            "assistant",
            "",
            tool_calls=[call("c5", "edit_file", json.dumps({"file_path": "/w/c.py"}))],
        ),
        msg(
            "tool",
            "success=True data={'file_path': '/w/c.py', 'replacements': 1} error=None",
            tool_call_id="c5",
        ),
        *_read("/w/c.py", "C = 3", "c6"),
    ]
    keep = [
        source[0],
        msg("user", "<memory_block_current>..."),
        *source[-4:-2],
    ]  # the edit of c.py is kept
    result = build_reinjection("current_round", source, keep)
    assert result.files == (
        "/w/b.py",
        "/w/a.py",
    )  # oldest selected first; .git and kept c.py skipped
    assert result.content is not None and result.content.startswith(
        "<recovered_context>\n<instruction>"
    )
    assert "Note: only part of this file was available." in result.content
    assert "A = 2" in result.content and "A = 1" not in result.content  # newest read wins
    assert build_reinjection("dialogue", source[:1], keep).content is None


def test_reinjection_truncates_section() -> None:
    big = "\n".join(f"line {i} " + "x" * 60 for i in range(400))
    result = build_reinjection(
        "round_level", [msg("user", "go"), *_read("/w/big.py", big, "c1")], []
    )
    assert result.content is not None and "[STATE_REINJECTION_TRUNCATED]" in result.content
    section = result.content.split('<section name="read_file">\n', 1)[1].rsplit("\n</section>", 1)[
        0
    ]
    assert len(section) == 12_000 + len("\n...[STATE_REINJECTION_TRUNCATED]...\n")
    assert section.startswith("Recently read file: /w/big.py\nLines returned: 400\n")


def test_jsonish_results() -> None:
    assert parse_jsonish_tool_result('{"file_path": "/x"}') == {"file_path": "/x"}
    assert parse_jsonish_tool_result("success=True data={'n': 1} error=None") == {"n": 1}
    assert parse_jsonish_tool_result("garbage data={oops} error=None") == {}


def test_summary_losses() -> None:
    region = [
        msg(
            "assistant",
            "",
            tool_calls=[call("c1", "read_file", '{"file_path": "/repo/src/pkg/parse.py"}')],
        ),
        msg(
            "tool",
            "Traceback ...\nValueError: bad offset '-05:30'\nFAILED tests/test_parse.py::test_offset",
        ),
        msg("assistant", "The helper `helper_parse_2` ignores minutes; see /repo/src/pkg/tz.py."),
    ]
    summary = "Fix helper_parse_2 in src/pkg/parse.py; test_parse.py::test_offset fails."
    lost = summary_losses(region, summary, start_index=5, restored_paths=["/repo/src/pkg/tz.py"])
    texts = {(i.kind, i.text): i for i in lost}
    assert ("path", "/repo/src/pkg/parse.py") not in texts
    assert texts[("path", "/repo/src/pkg/tz.py")].restored
    assert ("identifier", "helper_parse_2") not in texts
    assert any(kind == "error" and "ValueError" in text for kind, text in texts)
    assert all(i.message_index >= 5 for i in lost)
    assert path_mentioned("/a/b/c.py", "see b/c.py") and not path_mentioned("/a/b/c.py", "see c.py")


def test_names_and_dirs(tmp_path: Path) -> None:
    assert safe_name("ojw-ref/a_current_round_plain") == "ojw-ref-a_current_round_plain"
    assert safe_name("//") == "unknown" and len(safe_name("x" * 200)) == 80
    assert dump_file_name(1795975303278, "CurrentRoundCompressor", "ojw-ref/a") == (
        "1795975303278_CurrentRoundCompressor_ojw-ref-a.json"
    )
    assert expand_dir_template("d/{session_id}/{context_id}", "s/1", "c.2") == "d/s-1/c.2"
    source = tmp_path / "dumps"
    source.mkdir()
    (source / "x.json").write_text("{}")
    with pytest.raises(OutputDirError):
        check_out_dir(source / "out", [source / "x.json"])
    with pytest.raises(OutputDirError):
        check_out_dir(source, [source])
    check_out_dir(tmp_path / "elsewhere", [source / "x.json"])


def test_shrink_without_room(counters: dict[str, TokenCounter]) -> None:
    scenario = next(s for s in model_scenarios() if s.name.startswith("a_"))
    snapshot = scenario.snapshot
    span = Span((0, 3), (3, 18), (18, 18))
    counter = counters["tiktoken_cl100k"]
    assert (
        shrink_span(snapshot, span, scenario.prompt, counter, 2000, 0.5) is None
    )  # budget below the fixed part
    context_max = snapshot.tuning.context_max
    smaller = shrink_span(snapshot, span, scenario.prompt, counter, context_max, 0.85)
    assert (
        smaller is not None
        and smaller.prefix == (0, 3)
        and smaller.tail == (smaller.compress[1], 18)
    )
    fixed = counter.count_messages(
        [*snapshot.system_messages, *snapshot.messages[:3], Message("user", scenario.prompt)]
    )
    room = int(context_max * 0.85) - fixed - counter.count_tools(snapshot.tools)
    kept = [counter.message_tokens(m) for m in snapshot.messages[3 : smaller.compress[1]]]
    nxt = counter.message_tokens(snapshot.messages[smaller.compress[1]])
    assert sum(kept) <= room < sum(kept) + nxt  # the greedy head that fits


def test_core_compaction_modules_stay_pure() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import inspector.core.compaction, inspector.core.reinjection, inspector.core.rerun\n"
        "import inspector.core.model_errors, inspector.core.summary_loss\n"
        "bad = [m for m in ('httpx', 'rich', 'textual') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


@settings(max_examples=60, deadline=None)
@given(
    ratio=st.floats(min_value=0.05, max_value=0.99),
    start=st.integers(min_value=3, max_value=17),
    end=st.integers(min_value=4, max_value=18),
)
def test_shrink_invariants(ratio: float, start: int, end: int) -> None:
    from inspector.encoding import make_counters

    if end <= start:
        return
    scenario = _SCENARIO_A
    snapshot = scenario.snapshot
    span = Span((0, 3), (start, end), (end, 18))
    smaller = shrink_span(
        snapshot, span, scenario.prompt, make_counters()["tiktoken_cl100k"], 8174, ratio
    )
    if smaller is None:
        return
    assert smaller.prefix == span.prefix and smaller.compress[0] == start
    assert start < smaller.compress[1] < end  # at least one moves, at least one stays
    assert smaller.tail == (smaller.compress[1], 18)


_SCENARIO_A = next(s for s in model_scenarios() if s.name.startswith("a_"))
