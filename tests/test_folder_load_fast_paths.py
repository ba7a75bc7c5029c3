"""The shortcuts a big folder's load takes give what the long way gives: the token cache's
in-memory text counts, the debug-record fast path of classification, the evidence merged
once, the stripped header-level dump, a peeked dump's tail taken from its head."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from inspector.core.artifact import Artifact
from inspector.core.releases.detect import ArtifactEvidence
from inspector.core.snapshot import ContextSnapshot
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import Tuning
from inspector.sources.cache import TokenCache
from inspector.sources.classify import _DEBUG_EVENTS, load_one
from inspector.sources.dump import parse_dump, strip_dump
from inspector.sources.evidence import evidence_for, has_own_facts, with_evidence
from inspector.sources.peek import dump_header, peek
from inspector.sources.recording import WATCH_EVENTS
from tests.conftest import msg


def test_text_counts_are_remembered_and_forgotten_on_clear(tmp_path: Path) -> None:
    counter = TokenCounter("len_div_4")
    cache = TokenCache(tmp_path / "cache")
    assert cache.lookup_text(counter, "tools") is None
    cache.save_text(counter, "tools", 7)
    cache.flush()
    assert cache.lookup_text(counter, "tools") == 7
    cache._connection = None  # noqa: SLF001 - a remembered count needs no connection
    cache.path = tmp_path / "gone" / "x.db"
    cache.directory = tmp_path / "gone"
    assert cache.lookup_text(counter, "tools") == 7
    cache.clear()
    assert cache.lookup_text(counter, "tools") is None


def test_debug_events_are_no_watch_line_or_model_call() -> None:
    assert not _DEBUG_EVENTS & WATCH_EVENTS
    assert "pre_call" not in _DEBUG_EVENTS


def test_debug_log_records_and_refusals_as_before(tmp_path: Path) -> None:
    log = tmp_path / "CurrentRoundCompressor.jsonl"
    lines = [
        {"event": "threshold_check", "processor": "CurrentRoundCompressor", "timestamp": 1.0},
        {"event": "threshold_check", "total_tokens": "many"},  # refused: a located bad line
        {"event": "span_built", "preserved_prefix": [{"idx": 0, "role": "user"}]},
        {"event": "pre_call", "processor": "llm_request", "session_id": "s", "timestamp": 2.0},
    ]
    log.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    load = load_one(log, 0, True)
    assert [r.raw["event"] for r in load.records] == ["threshold_check", "span_built"]
    assert [r.line for r in load.records] == [1, 3]
    assert len(load.calls) == 1
    assert len(load.errors) == 1 and "line 2" in (load.errors[0].where or "")
    assert "total_tokens" in load.errors[0].error


def _artifact(messages: tuple, evidence: ArtifactEvidence | None = None) -> Artifact:
    snapshot = ContextSnapshot(
        id="a", system_messages=(), messages=messages, tools=(), tuning=Tuning()
    )
    if evidence is not None:
        snapshot = dataclasses.replace(snapshot, release_evidence=evidence)
    return Artifact(source="/x/a.json", id="a", kind="dump", snapshot=snapshot)


@pytest.mark.parametrize("llm_log", [False, True])
@pytest.mark.parametrize(
    "objects",
    [
        [],
        [{"compression_response": {"usage": {"details": [{"a": 1}]}}}],
        [{"event": "span_built", "messages_to_compress": [{"preview": "hi"}]}],
    ],
)
@pytest.mark.parametrize("usage", [False, True])
def test_evidence_merged_once_equals_the_two_steps(
    objects: list, llm_log: bool, usage: bool
) -> None:
    meta = {"usage_metadata": {"input_tokens": 3, "total_tokens": 5}} if usage else {}
    artifact = _artifact((msg("user", "q"), msg("assistant", "a", **meta)))
    neighbours = [{"event": "compression_retry", "error_message": "Error code: 400"}]
    expected = with_evidence(
        artifact, objects if has_own_facts(artifact, objects) else neighbours, llm_log
    )
    assert evidence_for(artifact, objects, lambda: neighbours, llm_log) == expected


def _dump_text() -> str:
    return json.dumps(
        {
            "processor_type": "CurrentRoundCompressor",
            "session_id": "s/1",
            "context_id": "c",
            "trigger": {"context_max": 100, "total_tokens_before": 90},
            "compression_request": {"prompt": "p", "messages_sent_to_model": [{"role": "user"}]},
            "context_after": {"messages": [{"role": "user", "content": "x"}] * 3},
            "compression_response": {"extracted_summary": "sum"},
            "timestamp": 1795975303.278,
        },
        indent=2,
    )


def test_stripped_dump_keeps_every_header_field() -> None:
    dump = parse_dump(json.loads(_dump_text()), "/f/1795975303278_CurrentRoundCompressor_s-1.json")
    stripped, after = strip_dump(dump)
    expected = dataclasses.replace(
        dump,
        raw={key: None for key in dump.raw},
        sent_raw=None,
        after_raw=None,
        tools_raw=None,
        prompt=None,
    )
    assert (stripped, after) == (expected, 3)


def test_dump_tail_from_a_whole_head_equals_a_second_read(tmp_path: Path) -> None:
    path = tmp_path / "1795975303278_CurrentRoundCompressor_s-1.json"
    path.write_text(_dump_text(), encoding="utf-8")
    kind, head = peek(path)
    assert kind == "dump"
    assert dump_header(path, head, whole=True) == dump_header(path, head)
    assert dump_header(path, head).timestamp == 1795975303.278
    # a head cut short is no whole file: the tail is read from the file
    assert dump_header(path, head[:40]).timestamp == 1795975303.278


_NAME = "1795975303278_CurrentRoundCompressor_s-1.json"


def _variants() -> dict[str, bytes]:
    good = _dump_text()
    document = json.loads(good)
    deep = dict(document, extra=json.loads("[" * 210 + "]" * 210))
    shallow = dict(document, extra=json.loads("[" * 150 + "]" * 150))
    return {
        "good": good.encode(),
        "bom": b"\xef\xbb\xbf" + good.encode(),
        "bad key": json.dumps(dict(document, trigger={"context_max": "big"})).encode(),
        "nan": good.replace('"context_max": 100', '"context_max": NaN').encode(),
        "overflow": good.replace("90", "1e999").encode(),
        "deep": json.dumps(deep).encode(),
        "shallow": json.dumps(shallow).encode(),
        "nul": b"\x00" + good.encode(),
        "latin-1": good.replace("sum", "s\u00e9").encode("latin-1"),
        "empty": b"",
        "blank": b"  \n",
        "event": json.dumps(dict(document, event=3)).encode(),
        "not a dump": b'{"hello": 1}',
        "a list": b"[1, 2]",
        "json lines": b'{"event": "threshold_check"}\n{"event": "span_built"}\n',
    }


@pytest.mark.parametrize("header_only", [False, True])
@pytest.mark.parametrize("variant", sorted(_variants()))
def test_a_dump_read_the_short_way_is_read_as_the_long_way(
    tmp_path: Path, variant: str, header_only: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspector.sources import classify

    path = tmp_path / _NAME
    path.write_bytes(_variants()[variant])
    short = load_one(path, 0, False, header_only=header_only)
    monkeypatch.setattr(classify, "_dump_the_short_way", lambda *args: None)
    long = load_one(path, 0, False, header_only=header_only)
    assert short == long
    # a header-level load reads a dump's fixed keys only: no nesting walk
    fine = {"good", "bom", "shallow"} | ({"deep"} if header_only else set())
    assert bool(short.dumps) == (variant in fine)
    assert bool(short.errors) != (variant in fine | {"not a dump", "a list", "json lines"})
