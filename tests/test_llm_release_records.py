"""What each release writes into its records, checked against what the real releases wrote
(`tests/data/rerun/<release>/`): retry error texts (SDK class prefix from 0.1.18, openai 3.x
message), usage details (16 or 23 keys) and span_built preview tokens."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.core.compaction import span_preview, usage_details
from inspector.core.messages import Message
from inspector.core.model_errors import HttpFailure
from inspector.core.releases import PROFILE_0_1_17, PROFILE_0_1_18
from inspector.core.retry_policy import classify_failure
from parity_live.scenarios import RATE_LIMIT, TOO_LARGE

DATA = Path(__file__).parent / "data" / "rerun"


def _records(release: str, name: str) -> list[dict[str, Any]]:
    log = next((DATA / release / name).glob("*Compressor.jsonl"))
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def _dump(release: str, name: str) -> dict[str, Any]:
    path = next(p for p in (DATA / release / name).glob("*_*.json") if p.name[0].isdigit())
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("name", "status", "error"),
    [("shrink_413_engine_default", 413, TOO_LARGE), ("retry_429_engine_default", 429, RATE_LIMIT)],
)
@pytest.mark.parametrize("release", ["0.1.17", "0.1.19.post2"])
def test_error_text_is_what_the_release_wrote(
    release: str, name: str, status: int, error: dict[str, Any]
) -> None:
    profile = PROFILE_0_1_17 if release == "0.1.17" else PROFILE_0_1_18
    failure = HttpFailure(status, json.dumps({"error": error}))
    kinds = classify_failure(failure, "openjiuwen", profile.error_message_class_prefix)
    retry = next(r for r in _records(release, name) if r["event"] == "compression_retry")
    assert kinds.error_text == retry["error_message"]
    assert kinds.openjiuwen_kind == ("context_overflow" if status == 413 else "rate_limit")


def test_openai_2_error_text_keeps_the_whole_body() -> None:
    failure = HttpFailure(413, json.dumps({"error": TOO_LARGE}))
    old = classify_failure(failure, "openjiuwen", True, sdk="2").error_text
    new = classify_failure(failure, "openjiuwen", True, sdk="3").error_text
    assert "Error code: 413 - {'error': {'message'" in old
    assert "{'error'" not in new.split("StatusCode")[0]
    # quotes of the repr'd {'error_msg': ...} follow Python's choice for the new text
    assert "{'error_msg': 'openAI API async invoke error: APIStatusError: Error code: 413 - " in new


@pytest.mark.parametrize(("release", "keys"), [("0.1.17", 16), ("0.1.19.post2", 23)])
def test_usage_details_have_the_release_keys(release: str, keys: int) -> None:
    recorded = _dump(release, "compress_tiktoken")["compression_response"]["usage"]["details"][0]
    profile = PROFILE_0_1_17 if release == "0.1.17" else PROFILE_0_1_18
    assert profile.usage_record_keys == keys
    usage = {
        "prompt_tokens": recorded["input_tokens"],
        "completion_tokens": recorded["output_tokens"],
        "total_tokens": recorded["total_tokens"],
    }
    ours = usage_details(usage, "fake-model", cache_fields=profile.writes_cache_authoritative)
    assert list(ours) == list(recorded) and len(ours) == keys
    assert ours == recorded


def test_cache_fields_read_like_the_openai_client() -> None:
    usage = {
        "prompt_tokens": 100,
        "completion_tokens": 5,
        "prompt_tokens_details": {"cached_tokens": 40},
    }
    record = usage_details(usage, "m", cache_fields=True)
    assert (record["cache_tokens"], record["cache_read_tokens"]) == (40, 40)
    assert (record["cache_status"], record["cache_source"]) == ("observed", "provider_usage")
    assert record["cache_authoritative"] is True
    legacy = usage_details({"prompt_tokens": 10, "cache_tokens": 3}, "m", cache_fields=True)
    assert (legacy["cache_read_tokens"], legacy["cache_authoritative"]) == (3, False)
    none = usage_details({"prompt_tokens": 10}, "m", cache_fields=True)
    assert none["cache_status"] is None and none["cache_authoritative"] is False
    assert "cache_read_tokens" not in usage_details(usage, "m")


@pytest.mark.parametrize("release", ["0.1.17", "0.1.19.post2"])
def test_span_preview_tokens_follow_the_release(release: str) -> None:
    profile = PROFILE_0_1_17 if release == "0.1.17" else PROFILE_0_1_18
    built = next(r for r in _records(release, "compress_tiktoken") if r["event"] == "span_built")
    scenario = json.loads((DATA / release / "compress_tiktoken" / "scenario.json").read_text())
    compressed = [Message.from_dict(m) for m in scenario["messages"][1:]]
    ours = span_preview(compressed, profile.preview_divisor)
    assert [e["tokens"] for e in ours] == [e["tokens"] for e in built["messages_to_compress"]]
