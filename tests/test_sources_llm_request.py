"""`llm_request.jsonl` as a context source, and the release evidence the readers hand on.

The records are written here in the exact shape of openJiuwen 0.1.18+'s
`write_llm_request_record` (spec `openjiuwen-versions.md` section 3; key order as it writes
them): `timestamp, event, processor, session_id, context_id` then the payload.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from inspector.cli import main
from inspector.core.artifact import Artifact, LlmRequestRecorded, LoadError
from inspector.core.outcome import classify_outcome
from inspector.core.releases import PROFILE_0_1_17, PROFILE_0_1_18, choose_counting
from inspector.core.stats import compute_stats
from inspector.core.strategy import registry
from inspector.core.tokens import TokenCounter
from inspector.sources.loader import load_paths
from inspector.tui.rows import artifact_row
from tests.conftest import REFERENCE

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS_0_1_19 = REPO / "tests" / "data" / "parity" / "artifacts" / "0.1.19.post2"
SESSION, CONTEXT = "sess-9f2", "default_context_id"
TOOL = {
    "type": "function",
    "name": "read_file",
    "description": "Read a file from the workspace",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
}


def _message(role: str, content: str, **extra: Any) -> dict[str, Any]:
    """A message as `model_dump(mode="json")` gives it."""
    return {"role": role, "content": content, "name": None, **extra}


def _call(when: float, sequence: int, messages: list[dict[str, Any]]) -> dict[str, Any]:
    systems = sum(1 for m in messages if m["role"] == "system")
    return {
        "timestamp": when,
        "event": "pre_call",
        "processor": "llm_request",
        "session_id": SESSION,
        "context_id": CONTEXT,
        "request_id": f"ctxreq-{sequence:04d}",
        "sequence": sequence,
        "model": "qwen-plus",
        "provider": "OpenAI",
        "context_window_tokens": 6000,
        "message_count": len(messages),
        "system_message_count": systems,
        "context_message_count": len(messages) - systems,
        "tool_count": 1,
        "messages": messages,
        "tools": [TOOL],
        "statistic": {"total_tokens": 1234, "system_tokens": 12},
        "usage_report": {"request_id": f"ctxreq-{sequence:04d}", "sequence": sequence},
    }


def _check(when: float, total: int) -> dict[str, Any]:
    return {
        "timestamp": when,
        "event": "threshold_check",
        "processor": "CurrentRoundCompressor",
        "session_id": SESSION,
        "context_id": CONTEXT,
        "total_tokens": total,
        "context_max": 6000,
        "threshold": 4800,
        "hit": False,
        "reason": "below_threshold",
        "target_tokens": None,
        "min_target_tokens": None,
    }


def _write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


@pytest.fixture
def debug_folder(tmp_path: Path) -> Path:
    """A context-debug folder: two compressor checks, each followed by the model call."""
    folder = tmp_path / "context_debug"
    folder.mkdir()
    system = _message("system", "You are a careful coding assistant.")
    first = [system, _message("user", "Summarise the repository layout " + "word " * 900)]
    second = [
        *first,
        _message(
            "assistant",
            "",
            tool_calls=[
                {
                    "id": "c1",
                    "type": "function",
                    "name": "read_file",
                    "arguments": '{"path": "a.py"}',
                }
            ],
        ),
        _message("tool", "print('hello')\n" * 40, tool_call_id="c1"),
        _message("user", "and now the tests"),
    ]
    _write_jsonl(folder / "CurrentRoundCompressor.jsonl", [_check(100.0, 900), _check(200.0, 1500)])
    _write_jsonl(folder / "llm_request.jsonl", [_call(100.2, 0, first), _call(200.3, 1, second)])
    return folder


def _load(*paths: Path) -> list[Artifact]:
    results = list(load_paths(paths))
    assert not [r for r in results if isinstance(r, LoadError)]
    return [r for r in results if isinstance(r, Artifact)]


def test_each_record_is_a_context(debug_folder: Path) -> None:
    found = _load(debug_folder)
    calls = sorted((a for a in found if a.kind == "llm_request"), key=lambda a: a.timestamp or 0)
    assert [a.id for a in calls] == [
        f"{SESSION}/{CONTEXT}/llm_request#0",
        f"{SESSION}/{CONTEXT}/llm_request#1",
    ]
    second = calls[1]
    snapshot = second.snapshot
    assert snapshot is not None and second.processor is None
    assert [m.role for m in snapshot.system_messages] == ["system"]
    assert [m.role for m in snapshot.messages] == ["user", "assistant", "tool", "user"]
    assert snapshot.messages[1].tool_calls[0].name == "read_file"
    assert [t.name for t in snapshot.tools] == ["read_file"]
    assert snapshot.tuning.context_max == 6000 and "context_max" in snapshot.recorded_fields
    assert snapshot.engine_config == {"model_name": "qwen-plus", "model_provider": "OpenAI"}
    recorded = second.recorded
    assert isinstance(recorded, LlmRequestRecorded)
    assert (recorded.sequence, recorded.request_id, recorded.model) == (
        1,
        "ctxreq-0001",
        "qwen-plus",
    )
    assert recorded.context_window_tokens == 6000 and recorded.tool_count == 1
    # the compressor evaluation of the same call: the check between call 0 and call 1
    assert [(e["processor"], e["index"], e["reason"]) for e in recorded.evaluations] == [
        ("CurrentRoundCompressor", 2, "below_threshold")
    ]
    assert [e["index"] for e in calls[0].recorded["evaluations"]] == [1]
    # that one compressor's processor and ratio (4800 / 6000) are the call's tuning, inferred
    assert snapshot.tuning.processor == "current_round" and snapshot.tuning.trigger_ratio == 0.8
    assert recorded.inferred["trigger_ratio"] == {
        "value": 0.8,
        "from": "threshold_check.threshold = 4800",
    }
    # release and counter: 0.1.18+ from the record, StringLengthCounter from the model name
    choice = choose_counting(snapshot, evidence=snapshot.release_evidence)
    assert choice.profile is PROFILE_0_1_18 and choice.detection.source == "artifact"
    assert "llm_request.jsonl" in choice.detection.evidence
    assert choice.token_mode == "string_length" and choice.mode_source == "engine_config"


def test_timeline_shows_calls_beside_their_evaluations(debug_folder: Path) -> None:
    found = _load(debug_folder)
    timeline = next(a for a in found if a.kind == "llm_request").extra["timeline"]
    kinds = [(e["kind"], e.get("index"), e.get("sequence")) for e in timeline]
    assert kinds == [
        ("evaluation", 1, None),
        ("llm_request", None, 0),
        ("evaluation", 2, None),
        ("llm_request", None, 1),
    ]
    assert timeline[2]["model_call"] == {
        "id": f"{SESSION}/{CONTEXT}/llm_request#1",
        "sequence": 1,
        "request_id": "ctxreq-0001",
    }
    assert [e["index"] for e in timeline[3]["evaluations"]] == [2]
    # the debug runs carry the same timeline
    run = next(a for a in found if a.kind == "debug")
    assert [e["kind"] for e in run.extra["timeline"]] == [k for k, _, _ in kinds]


def test_a_call_of_another_context_links_nothing(tmp_path: Path) -> None:
    other = _call(100.2, 0, [_message("user", "hi")])
    other["context_id"] = "sub_agent"
    _write_jsonl(tmp_path / "CurrentRoundCompressor.jsonl", [_check(100.0, 900)])
    _write_jsonl(tmp_path / "llm_request.jsonl", [other])
    call = next(a for a in _load(tmp_path) if a.kind == "llm_request")
    assert call.recorded["evaluations"] == [] and call.recorded["inferred"] == {}
    assert call.snapshot is not None and "trigger_ratio" not in call.snapshot.recorded_fields


def test_why_json_valid_and_stats_list_calls(
    debug_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["schema", "why"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert main(["why", str(debug_folder), "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    for line in lines:
        jsonschema.validate(line, schema)
    calls = [line for line in lines if line["kind"] == "llm_request"]
    assert len(calls) == 2 and all(line["total_tokens"] is not None for line in calls)
    assert {line["release_profile"] for line in calls} == {PROFILE_0_1_18.name}
    assert {line["recorded"]["model"] for line in calls} == {"qwen-plus"}
    assert main(["stats", str(debug_folder), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["artifacts"] == {"llm_request": 2, "debug": 2}
    # no fake processor "llm_request", no "unknown" outcome
    assert stats["by_processor"] == {"CurrentRoundCompressor": {"not_compressed": 2}}
    assert stats["not_compressed"] == {"below_threshold": 2}


def test_browser_row_and_outcome(debug_folder: Path, counters: dict[str, TokenCounter]) -> None:
    found = _load(debug_folder)
    call = next(a for a in found if a.kind == "llm_request" and a.recorded["sequence"] == 1)
    row = artifact_row(0, call, {}, counters)
    assert row.decision is not None
    expected = "would compress" if row.decision.hit else f"no: {row.decision.reason}"
    assert row.outcome == f"call 1: {expected}"
    assert row.outcome_kind == ("compressed" if row.decision.hit else "not compressed")
    assert row.processor != "llm_request" and row.session == SESSION
    # without an evaluation (stats) the classifier still names the call, never "unknown"
    assert classify_outcome(call).text == "call 1: sent, not evaluated"
    assert compute_stats([call])["by_processor"] == {}


async def test_tui_opens_a_call_in_the_context_view(
    debug_folder: Path, counters: dict[str, TokenCounter]
) -> None:
    from inspector.tui.app import create_app
    from inspector.tui.widgets.message_list import MessageList
    from tests.test_tui_app import open_row

    app = create_app([str(debug_folder)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_row(
            app,
            pilot,
            lambda row: (
                row.artifact is not None
                and row.artifact.kind == "llm_request"
                and row.artifact.recorded["sequence"] == 1
            ),
        )
        snapshot = screen.artifact.snapshot
        assert snapshot is not None and screen.decision is not None
        strategy = registry.get(screen.strategy.key)
        expected = strategy.decide(
            strategy.prepare(snapshot, counters), screen.settings, screen.artifact
        )
        assert (screen.decision.reason, screen.decision.total_tokens) == (
            expected.reason,
            expected.total_tokens,
        )
        assert screen.settings.openjiuwen_version in PROFILE_0_1_18.releases  # type: ignore[attr-defined]
        assert screen.query_one(MessageList).row_count == len(snapshot.messages)


def test_a_bad_record_is_one_located_error(tmp_path: Path) -> None:
    bad = _call(1.0, 0, [_message("user", "hi")])
    bad["messages"] = [{"role": "user", "content": 42}]
    _write_jsonl(tmp_path / "llm_request.jsonl", [_call(0.5, 0, [_message("user", "ok")]), bad])
    results = list(load_paths([tmp_path / "llm_request.jsonl"]))
    errors = [r for r in results if isinstance(r, LoadError)]
    assert len(errors) == 1 and "line 2" in (errors[0].where or errors[0].error)
    assert [r.kind for r in results if isinstance(r, Artifact)] == ["llm_request"]


# --- release evidence from files ------------------------------------------------------


def _detected(artifact: Artifact) -> Any:
    assert artifact.snapshot is not None
    return choose_counting(artifact.snapshot, evidence=artifact.snapshot.release_evidence).detection


def test_a_0_1_19_dump_without_usage_is_detected_by_its_usage_details(tmp_path: Path) -> None:
    source = ARTIFACTS_0_1_19 / "compress_tiktoken"
    dump = next(source.glob("*_CurrentRoundCompressor_*.json"))
    assert 'usage_metadata": {' not in dump.read_text(encoding="utf-8")  # no usage record
    shutil.copy(dump, tmp_path / dump.name)  # alone: no debug log beside it
    (artifact,) = _load(tmp_path / dump.name)
    assert artifact.kind == "dump"
    detection = _detected(artifact)
    assert detection.profile is PROFILE_0_1_18 and detection.source == "artifact"
    assert "23 keys" in detection.evidence


def test_a_context_beside_an_llm_request_log_is_0_1_18(tmp_path: Path, debug_folder: Path) -> None:
    snapshot = json.loads(
        (REFERENCE / "c_below_threshold" / "input.json").read_text(encoding="utf-8")
    )
    (debug_folder / "input.json").write_text(json.dumps(snapshot), encoding="utf-8")
    found = _load(debug_folder)
    context = next(a for a in found if a.kind == "snapshot")
    detection = _detected(context)
    assert detection.profile is PROFILE_0_1_18 and "llm_request.jsonl" in detection.evidence
    # the same snapshot alone: nothing tells, the newest profile is assumed
    (tmp_path / "alone").mkdir()
    (tmp_path / "alone" / "input.json").write_text(json.dumps(snapshot), encoding="utf-8")
    (alone,) = _load(tmp_path / "alone")
    assert _detected(alone).source == "assumed"


@pytest.mark.skipif(not REFERENCE.exists(), reason="reference folder not available")
def test_the_0_1_17_reference_folder_is_still_0_1_17() -> None:
    found = _load(REFERENCE)
    dumps = [a for a in found if a.kind == "dump"]
    assert len(dumps) >= 15
    for dump in dumps:
        detection = _detected(dump)
        assert detection.profile is PROFILE_0_1_17 and detection.source == "artifact", dump.id
    told = [a for a in found if a.kind in ("debug", "snapshot") and a.snapshot is not None]
    detections = [_detected(a) for a in told]
    assert all(d.profile is PROFILE_0_1_17 for d in detections if d.source != "assumed")
    by_previews = [d for d in detections if "span_built previews count len // 4" in d.evidence]
    assert len(by_previews) >= 20
    # a scenario whose log holds threshold checks only still says nothing told
    below = next(a for a in told if a.source.endswith("c_below_threshold/input.json"))
    assert _detected(below).source == "assumed"


# --- real records: a ReActAgent of each release (`python -m parity_live.llm_requests`) ----

REAL = REPO / "tests" / "data" / "llm_request"


@pytest.mark.parametrize("release", ["0.1.18", "0.1.19.post2"])
def test_real_calls_agree_with_the_library_check_of_the_same_call(
    release: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = REAL / release
    checks = [
        json.loads(line)
        for line in (folder / "CurrentRoundCompressor.jsonl").read_text().splitlines()
    ]
    assert main(["why", str(folder), "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    calls = sorted(
        (line for line in lines if line["kind"] == "llm_request"),
        key=lambda line: line["recorded"]["sequence"],
    )
    assert [c["recorded"]["sequence"] for c in calls] == list(range(len(checks))) != []
    for call, check in zip(calls, checks, strict=True):
        # the call's evaluation is the check just before it, and our count of the window
        # the library sent equals the library's count in that check
        (evaluation,) = call["recorded"]["evaluations"]
        assert evaluation["timestamp"] == check["timestamp"]
        assert (call["reason"], call["total_tokens"], call["threshold"]) == (
            check["reason"],
            check["total_tokens"],
            check["threshold"],
        )
        assert call["recorded"]["inferred"]["trigger_ratio"]["value"] == 0.6
        assert call["release_profile"] == PROFILE_0_1_18.name and call["exact_counting"] is True
        assert call["recorded"]["model"] == "fake-model"
    debug = [line for line in lines if line["kind"] == "debug"]
    assert len(debug) == len(checks)
    assert main(["stats", str(folder), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert "llm_request" not in stats["by_processor"]
    assert stats["artifacts"]["llm_request"] == len(checks)
