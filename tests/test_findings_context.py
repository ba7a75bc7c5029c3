"""Each pitfall finding on contexts built for it, table-driven: it fires with its facts where
the situation occurs, and stays silent on the same context without it."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from inspector.core.checks import Finding
from inspector.core.diagnosis import diagnose
from inspector.core.engine import ContextEngine
from inspector.core.snapshot import snapshot_from_dict
from inspector.core.tokens import TokenCounter
from tests.conftest import call

BIG = "x = 1\n" * 400  # a file of about 1,200 tokens


def _read(call_id: str, path: str, content: str = BIG) -> list[dict[str, Any]]:
    args = json.dumps({"file_path": path})
    result = {"content": content, "file_path": path, "line_count": content.count("\n")}
    return [
        {"role": "assistant", "content": "", "tool_calls": [call(call_id, "read_file", args)]},
        {"role": "tool", "content": json.dumps(result), "tool_call_id": call_id},
    ]


def _tool(
    call_id: str, name: str, arguments: dict[str, Any], result: str = "ok"
) -> list[dict[str, Any]]:
    return [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [call(call_id, name, json.dumps(arguments))],
        },
        {"role": "tool", "content": result, "tool_call_id": call_id},
    ]


def _edit(call_id: str, path: str) -> list[dict[str, Any]]:
    return _tool(
        call_id,
        "edit_file",
        {"file_path": path, "old_string": "x = 1\nx = 1", "new_string": "y = 2"},
        json.dumps({"file_path": path, "replacements": 1}),
    )


def _findings(
    counters: dict[str, TokenCounter], messages: list[dict[str, Any]], **raw: Any
) -> list[Finding]:
    snapshot = snapshot_from_dict(
        {
            "processor": raw.pop("processor", "CurrentRoundCompressor"),
            "context_max": raw.pop("context_max", 1000),
            "token_mode": "tiktoken_cl100k",
            "messages": messages,
            **raw,
        }
    )
    engine = ContextEngine(snapshot, counters)
    return list(diagnose(engine, snapshot.tuning).findings)


def _kind(found: list[Finding], kind: str) -> list[Finding]:
    return [f for f in found if f.key == kind]


ASK = {"role": "user", "content": "Fix the bug in src/app/core.py please."}
DONE = {"role": "assistant", "content": "Done."}

CASES: list[tuple[str, list[dict[str, Any]], str, bool, tuple[str, ...]]] = [
    # (name, messages, kind, fires, facts in the sentence)
    (
        "edited after the read",
        [ASK, *_read("r1", "/w/src/app/core.py"), *_edit("e1", "/w/src/app/core.py"), DONE],
        "stale_reinjected_file",
        True,
        ("/w/src/app/core.py", "#1", "'r1'", "#3", "'e1'"),
    ),
    (
        "read after the edit",
        [ASK, *_edit("e1", "/w/src/app/core.py"), *_read("r1", "/w/src/app/core.py"), DONE],
        "stale_reinjected_file",
        False,
        (),
    ),
    (
        "another file edited",
        [ASK, *_read("r1", "/w/src/app/core.py"), *_edit("e1", "/w/src/app/other.py"), DONE],
        "stale_reinjected_file",
        False,
        (),
    ),
    (
        "moved with git mv",
        [
            ASK,
            *_read("r1", "/w/src/app/core.py"),
            *_tool("b1", "bash", {"command": "cd /w && git mv src/app/core.py src/app/engine.py"}),
            DONE,
        ],
        "reinjected_path_gone",
        True,
        ("/w/src/app/core.py", "'r1'", "#3", "'b1'", "src/app/engine.py"),
    ),
    (
        "a rename tool",
        [
            ASK,
            *_read("r1", "/w/a.py"),
            *_tool("m1", "rename_file", {"path": "/w/a.py", "new_path": "/w/b.py"}),
            DONE,
        ],
        "reinjected_path_gone",
        True,
        ("/w/a.py", "/w/b.py", "'m1'"),
    ),
    (
        "another file moved",
        [
            ASK,
            *_read("r1", "/w/src/app/core.py"),
            *_tool("b1", "bash", {"command": "mv notes.txt old-notes.txt"}),
            DONE,
        ],
        "reinjected_path_gone",
        False,
        (),
    ),
    (
        "an earlier restore summarised",
        [
            ASK,
            {
                "role": "user",
                "content": '<recovered_context>\n<section name="read_file">\nRecently read file: '
                "/w/src/app/old.py\nLines returned: 3\n\nold\n</section>\n</recovered_context>",
            },
            *_read("r1", "/w/src/app/core.py"),
            DONE,
        ],
        "earlier_restore_dropped",
        True,
        ("#1", "/w/src/app/old.py"),
    ),
    (
        "an earlier restore read again",
        [
            ASK,
            {
                "role": "user",
                "content": "<recovered_context>\nRecently read file: /w/src/app/old.py\n"
                "</recovered_context>",
            },
            *_read("r1", "/w/src/app/old.py"),
            DONE,
        ],
        "earlier_restore_dropped",
        False,
        (),
    ),
    (
        "a reminder as list content",
        [
            ASK,
            DONE,
            *_read("r1", "/w/x.py"),
            {
                "role": "user",
                "content": [{"type": "text", "text": "<system-reminder>todo list is empty"}],
            },
        ],
        "list_content_user_turn",
        True,
        ("#4", "<system-reminder>", "#0", "no_compressible_span"),
    ),
    (
        "a reminder as a string",
        [
            ASK,
            DONE,
            *_read("r1", "/w/x.py"),
            {"role": "user", "content": "<system-reminder>todo list is empty"},
        ],
        "list_content_user_turn",
        False,
        (),
    ),
    (
        "re-injection larger than the region",
        [ASK, *_read("r1", "/w/big.py", BIG * 2), DONE],
        "compaction_grows_context",
        True,
        ("/w/big.py",),
    ),
    (
        "re-injection of a file kept in the tail",
        [ASK, *_read("r1", "/w/big.py", BIG * 2), *_read("r2", "/w/big.py", BIG * 2)],
        "compaction_grows_context",
        False,
        (),
    ),
]


@pytest.mark.parametrize(
    ("messages", "kind", "fires", "facts"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_finding_fires_only_where_the_pitfall_is(
    counters: dict[str, TokenCounter],
    messages: list[dict[str, Any]],
    kind: str,
    fires: bool,
    facts: tuple[str, ...],
) -> None:
    keep = 2 if kind == "compaction_grows_context" and not fires else 0
    found = _kind(_findings(counters, messages, config={"keep_recent_messages": keep}), kind)
    assert bool(found) is fires, [f.sentence for f in found]
    for fact in facts:
        assert fact in found[0].sentence, (fact, found[0].sentence)
    if fires:
        assert found[0].fix and found[0].severity in ("warning", "problem")


def test_request_without_tool_results_when_the_boundary_is_off(
    counters: dict[str, TokenCounter],
) -> None:
    messages = [ASK, *_read("r1", "/w/a.py"), *_read("r2", "/w/b.py")]
    raw = {"config": {"keep_recent_messages": 1}}
    assert not _kind(_findings(counters, messages, **raw), "request_without_tool_results")
    snapshot = snapshot_from_dict(
        {"processor": "CurrentRoundCompressor", "context_max": 1000, "messages": messages, **raw}
    )
    what_if = snapshot.tuning.with_(tool_boundary=False)
    found = _kind(
        list(diagnose(ContextEngine(snapshot, counters), what_if).findings),
        "request_without_tool_results",
    )
    assert len(found) == 1 and found[0].severity == "problem"
    assert "#3" in found[0].sentence and "'r2'" in found[0].sentence
    assert "#4 (protected tail)" in found[0].sentence


def _usage_context(usage: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        ASK,
        *_read("r1", "/w/a.py"),
        *_read("r2", "/w/b.py"),
        {"role": "assistant", "content": "Reading done.", "usage_metadata": usage},
        {"role": "user", "content": "Now explain it."},
    ]


@pytest.mark.parametrize(
    ("usage", "severity"),
    [
        ({"input_tokens": 40, "total_tokens": 60, "cache_read_input_tokens": 2400}, "problem"),
        ({"input_tokens": 40, "total_tokens": 4000, "cache_tokens": 600}, None),
        ({"input_tokens": 40, "total_tokens": 60}, None),
    ],
    ids=["cache left out", "total close to the count", "no cache reported"],
)
def test_usage_baseline_that_hides_a_full_context(
    counters: dict[str, TokenCounter], usage: dict[str, Any], severity: str | None
) -> None:
    found = _kind(_findings(counters, _usage_context(usage)), "usage_baseline_hides_context")
    if severity is None:
        assert not found
        return
    assert len(found) == 1 and found[0].severity == severity
    sentence = found[0].sentence
    assert "message #5" in sentence and "total_tokens 60" in sentence and "2,400" in sentence
    assert found[0].numbers["cached_share"] > 0.9


@pytest.mark.parametrize(
    ("engine_config", "context_max", "severity", "fact"),
    [
        ({"model_name": "gpt-4o-2024-08-06"}, 200_000, "problem", "above the 128,000-token window"),
        ({"model_name": "gpt-4o"}, 150_000, "warning", "above the 128,000-token window"),
        ({"model_name": "gpt-4o"}, 32_000, "info", "25% of the 128,000-token window"),
        (
            {"model_name": "my-model", "model_context_window_tokens": {"my-model": 8000}},
            3000,
            "info",
            "8,000",
        ),
        ({"model_name": "gpt-4o"}, 128_000, None, ""),
        ({"model_name": "fake-model"}, 200_000, None, ""),
    ],
)
def test_window_mismatch_both_ways(
    counters: dict[str, TokenCounter],
    engine_config: dict[str, Any],
    context_max: int,
    severity: str | None,
    fact: str,
) -> None:
    messages = [ASK, *_read("r1", "/w/a.py"), DONE]
    found = _kind(
        _findings(counters, messages, context_max=context_max, engine_config=engine_config),
        "window_mismatch",
    )
    if severity is None:
        assert not found
        return
    assert found[0].severity == severity and fact in found[0].sentence


def test_window_mismatch_from_usage_above_context_max(counters: dict[str, TokenCounter]) -> None:
    usage = {"input_tokens": 5200, "output_tokens": 20, "total_tokens": 5220}
    messages = [*_usage_context(usage)]
    found = _kind(_findings(counters, messages), "window_mismatch")
    assert len(found) == 1 and "accepted 5,200 prompt tokens at message #5" in found[0].sentence


def test_a_finding_that_cannot_be_evaluated_is_a_visible_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One broken finding never loses the others, nor the report: it is named as a warning."""
    from inspector.core.findings import registry
    from inspector.core.findings.base import FindingInput

    def broken(inp: FindingInput) -> list[Any]:
        return [inp.messages[10_000]]  # an index the context does not have

    first = registry.FINDINGS[0]
    monkeypatch.setattr(
        registry, "FINDINGS", (dataclasses.replace(first, function=broken), *registry.FINDINGS[1:])
    )
    found = registry.run_findings(FindingInput(snapshot=None, artifact=None))
    (warning,) = [f for f in found if f.key == "finding_not_evaluated"]
    assert warning.severity == "warning" and "broken could not be evaluated" in warning.sentence
    assert "IndexError" in warning.sentence
