"""choose_counting: the profile and counter for a snapshot, and what is assumed."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from inspector.core.engine import PricedContext
from inspector.core.errors import ConfigError
from inspector.core.releases import NEWEST_PROFILE, PROFILE_0_1_17, PROFILE_0_1_18, choose_counting
from inspector.core.snapshot import snapshot_from_dict
from tests.test_releases import USAGE_16, USAGE_23

CORPUS = Path(__file__).parent / "data" / "parity" / "openjiuwen-0.1.19.post2.jsonl.gz"


def _snapshot(**extra):
    raw = {
        "processor": "CurrentRoundCompressor",
        "context_max": 1000,
        "messages": [
            {"role": "user", "content": "fix it", "metadata": {}},
            {"role": "assistant", "content": "ok", **extra.pop("assistant", {})},
        ],
        **extra,
    }
    return snapshot_from_dict(raw)


@pytest.mark.parametrize(
    ("snapshot", "profile", "mode", "sources", "assumed"),
    [
        (
            _snapshot(openjiuwen_version="0.1.19", token_mode="tiktoken_cl100k"),
            PROFILE_0_1_18, "tiktoken_cl100k", ("recorded", "recorded"), (),
        ),
        (
            _snapshot(engine_config={"enable_tiktoken_counter": True, "model_name": "gpt-4o"},
                      assistant={"usage_metadata": USAGE_23}),
            PROFILE_0_1_18, "string_length", ("artifact", "engine_config"), (),
        ),
        (
            _snapshot(engine_config={"enable_tiktoken_counter": True, "model_name": "gpt-4o"},
                      assistant={"usage_metadata": USAGE_16}),
            PROFILE_0_1_17, "tiktoken_cl100k", ("artifact", "engine_config"), (),
        ),
        (
            _snapshot(assistant={"usage_metadata": USAGE_16}),
            PROFILE_0_1_17, "len_div_4", ("artifact", "assumed"), ("token_mode",),
        ),
        (
            _snapshot(),
            NEWEST_PROFILE, "string_length", ("assumed", "assumed"), ("openjiuwen_version", "token_mode"),
        ),
    ],
)  # fmt: skip
def test_choose_counting(snapshot, profile, mode, sources, assumed) -> None:
    choice = choose_counting(snapshot)
    assert choice.profile is profile
    assert choice.token_mode == mode
    assert (choice.detection.source, choice.mode_source) == sources
    assert choice.assumed == assumed
    assert choice.exact == (not assumed)
    assert choice.note.count(";") >= 1


def test_overrides_win_and_a_foreign_counter_is_a_what_if() -> None:
    snapshot = _snapshot(openjiuwen_version="0.1.19", token_mode="tiktoken_cl100k")
    choice = choose_counting(
        snapshot, release_override="0.1.17.post1", mode_override="string_length"
    )
    assert (choice.profile, choice.token_mode) == (PROFILE_0_1_17, "string_length")
    assert (choice.detection.source, choice.mode_source) == ("override", "override")
    assert "what-if" in choice.note
    with pytest.raises(ConfigError, match="token_mode"):
        choose_counting(snapshot, mode_override="cl100k")


def test_dump_evidence_passed_by_the_source_is_used() -> None:
    from inspector.core.releases import collect_evidence

    evidence = collect_evidence([{"compression_response": {"usage": {"details": [USAGE_16]}}}])
    choice = choose_counting(_snapshot(), evidence=evidence)
    assert choice.profile is PROFILE_0_1_17
    assert evidence.usage_records == []  # the caller's evidence is not changed


def test_release_and_engine_config_alone_reproduce_the_library(counters) -> None:
    """Strip the recorded counter: the release plus the engine config pick the library's
    counter, and the profile's counters give its numbers."""
    lines = gzip.decompress(CORPUS.read_bytes()).decode().splitlines()[:150]
    encode_len = counters["tiktoken_cl100k"]._encode_len
    for line in lines:
        case = json.loads(line)
        expected = case.pop("expected")
        recorded_mode = case.pop("token_mode")
        choice = choose_counting(snapshot_from_dict(case))
        assert choice.token_mode == recorded_mode
        assert choice.exact
        snapshot = snapshot_from_dict({**case, "token_mode": choice.token_mode})
        priced = PricedContext.from_snapshot(
            snapshot, choice.profile.counter(choice.token_mode, encode_len)
        )
        ev = priced.evaluate(snapshot.tuning)
        assert (ev.reason, ev.total_tokens, ev.target_tokens) == (
            expected["reason"], expected["total_tokens"], expected["target_tokens"]
        )  # fmt: skip
