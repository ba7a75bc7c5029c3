"""Release profiles: the table, counter selection, divisors, the string_length counter, detection."""

from __future__ import annotations

import pytest

from inspector.core.engine import PricedContext
from inspector.core.errors import ConfigError
from inspector.core.messages import Tool
from inspector.core.releases import (
    NEWEST_PROFILE,
    PROFILE_0_1_17,
    PROFILE_0_1_18,
    RELEASES,
    ArtifactEvidence,
    collect_evidence,
    detect_release,
    profile_for_release,
    profile_named,
)
from inspector.core.tokens import TokenCounter
from tests.conftest import call, msg

# --- the table ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("release", "profile"),
    [
        ("0.1.17", "0.1.17"),
        ("0.1.17.post1", "0.1.17"),
        ("0.1.17.post2", "0.1.17"),
        ("0.1.18", "0.1.18"),
        ("0.1.18.post1", "0.1.18"),
        ("0.1.19", "0.1.18"),
        ("0.1.19.post2", "0.1.18"),
    ],
)
def test_every_measured_release_has_its_profile(release: str, profile: str) -> None:
    choice = profile_for_release(release)
    assert choice.profile.name == profile
    assert choice.measured
    assert RELEASES[release] is choice.profile


@pytest.mark.parametrize(
    ("release", "profile", "normalized"),
    [
        ("0.1.17.post3", "0.1.17", "0.1.17.post3"),
        ("0.1.20", "0.1.18", "0.1.20"),
        ("v0.1.19post4", "0.1.18", "0.1.19.post4"),
        ("0.2.0", "0.1.18", "0.2.0"),
    ],
)
def test_unmeasured_release_takes_the_nearest_older_and_says_so(
    release: str, profile: str, normalized: str
) -> None:
    choice = profile_for_release(release)
    assert (choice.profile.name, choice.release, choice.measured) == (profile, normalized, False)
    assert "not measured" in choice.note


@pytest.mark.parametrize("release", ["0.1.16", "0.1.16.post20", "0.0.37"])
def test_releases_without_the_forked_family_are_refused(release: str) -> None:
    with pytest.raises(ConfigError, match="no forked compressors"):
        profile_for_release(release)


@pytest.mark.parametrize("text", ["", "latest", "0.1", "0.1.x"])
def test_malformed_release_strings_are_refused(text: str) -> None:
    with pytest.raises(ConfigError, match="openjiuwen_version"):
        profile_for_release(text)


def test_profile_named_accepts_names_and_releases() -> None:
    assert profile_named("0.1.17") is PROFILE_0_1_17
    assert profile_named("0.1.19.post2") is PROFILE_0_1_18
    assert NEWEST_PROFILE is PROFILE_0_1_18
    assert PROFILE_0_1_18.title == "openJiuwen 0.1.18 – 0.1.19.post2"


# --- which counter a context gets ----------------------------------------------------------


@pytest.mark.parametrize(
    ("engine_config", "old", "new"),
    [
        ({}, "len_div_4", "string_length"),
        ({"enable_tiktoken_counter": False}, "len_div_4", "string_length"),
        ({"enable_tiktoken_counter": True}, "tiktoken_cl100k", "tiktoken_cl100k"),
        (
            {"enable_tiktoken_counter": True, "model_name": "gpt-4o"},
            "tiktoken_cl100k",
            "string_length",
        ),
        (
            {"enable_tiktoken_counter": True, "model_provider": "OpenAI"},
            "tiktoken_cl100k",
            "string_length",
        ),
        ({"enable_tiktoken_counter": True, "model_name": ""}, "tiktoken_cl100k", "tiktoken_cl100k"),
        (
            {"enable_tiktoken_counter": True, "tokenizer_spec": {"model": "x"}},
            "tiktoken_cl100k",
            "string_length",
        ),
        (
            {"enable_tiktoken_counter": False, "model_name": "qwen-plus"},
            "len_div_4",
            "string_length",
        ),
    ],
)
def test_default_token_mode(engine_config: dict, old: str, new: str) -> None:
    assert PROFILE_0_1_17.default_token_mode(engine_config) == old
    assert PROFILE_0_1_18.default_token_mode(engine_config) == new


# --- divisors ----------------------------------------------------------------------------


def _baseline_context(counter: TokenCounter) -> PricedContext:
    messages = [
        msg("user", "question"),
        msg("assistant", "answer", usage_metadata={"total_tokens": 1000}),
        msg("user", "x" * 12),  # 12 chars: 3 by //4, 4 by //3
        msg("tool", "y" * 7, tool_call_id="c"),  # 7 chars: 1 by //4, 2 by //3
    ]
    return PricedContext([], messages, [], counter)


@pytest.mark.parametrize(("profile", "tail"), [(PROFILE_0_1_17, 4), (PROFILE_0_1_18, 6)])
def test_usage_tail_follows_the_profile_in_every_mode(profile, tail: int) -> None:
    for mode in profile.token_modes:
        priced = _baseline_context(profile.counter(mode))
        assert priced.usage.tail_tokens == tail
        assert priced.window_total == 1000 + tail


def test_character_fallbacks_follow_the_profile() -> None:
    lone = "\ud800" + "z" * 11  # a lone surrogate makes the encoder fail: 12 characters
    boom = _failing_encoder
    assert PROFILE_0_1_17.counter("tiktoken_cl100k", boom).text_tokens(lone) == 3
    assert PROFILE_0_1_18.counter("tiktoken_cl100k", boom).text_tokens(lone) == 4
    assert PROFILE_0_1_17.counter("len_div_4").piece_tokens(msg("user", "a" * 9)) == 2
    assert PROFILE_0_1_18.counter("len_div_4").piece_tokens(msg("user", "a" * 9)) == 3
    assert (
        PROFILE_0_1_18.counter("len_div_4").identity != PROFILE_0_1_17.counter("len_div_4").identity
    )


def _failing_encoder(text: str) -> int:
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):
        raise UnicodeEncodeError("utf-8", text, 0, 1, "surrogates not allowed")
    return len(text)


@pytest.mark.parametrize(
    ("content", "tokens"),
    [
        ("a" * 10, 10 // 4),
        ([{"type": "text", "text": "abcdef"}], len("[{'type': 'text', 'text': 'abcdef'}]") // 3),
        ("ab", 1),
    ],
)
def test_span_preview_tokens(content, tokens: int) -> None:
    if isinstance(content, str) and len(content) == 10:
        assert PROFILE_0_1_17.preview_tokens(content) == tokens
        assert PROFILE_0_1_18.preview_tokens(content) == 10 // 3
    else:
        assert PROFILE_0_1_18.preview_tokens(content) == tokens


# --- string_length: StringLengthCounter exactly ---------------------------------------------

SL = TokenCounter("string_length")


@pytest.mark.parametrize(
    ("message", "text"),
    [
        (msg("user", "hello"), "<|start|>user\nhello<|end|>"),
        (msg("system", "规则：保持接口不变"), "<|start|>system\n规则：保持接口不变<|end|>"),
        (
            msg("user", "see data:image/png;base64,iVBORw0KGgo= now"),
            "<|start|>user\nsee [image:data-url-omitted] now<|end|>",
        ),
        (
            msg(
                "user",
                [
                    {"type": "text", "text": "ab"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                    "raw data:image/png;base64,AAAA",
                    {"type": "text", "text": ""},
                    {"type": "image", "source": {"type": "base64", "data": "QUJD"}},
                    {"note": "no text, no type"},
                    7,
                ],
            ),
            "<|start|>user\nab\nimage_url\nraw data:image/png;base64,AAAA\ntext\nimage\n<|end|>",
        ),
        (msg("user", []), "<|start|>user\n<|end|>"),
    ],
)
def test_string_length_message_text(message, text: str) -> None:
    assert SL.piece_tokens(message) == len(text) // 3
    assert SL.count_messages([message]) == len(text) // 3 + 3
    assert SL.message_tokens(message) == len(text) // 3 + 3


def test_string_length_counts_flat_tool_calls_with_nulls() -> None:
    assistant = msg(
        "assistant",
        "",
        tool_calls=[
            call("c1", "bash", '{"a": 1}'),
            {**call(None, "grep", "{}"), "response_item_id": "r9"},
        ],
    )
    calls = (
        '[{"id": "c1", "type": "function", "name": "bash", "arguments": "{\\"a\\": 1}", '
        '"index": null, "response_item_id": null}, '
        '{"id": null, "type": "function", "name": "grep", "arguments": "{}", '
        '"index": null, "response_item_id": "r9"}]'
    )
    envelope = "<|start|>assistant\n<|end|>"
    assert SL.piece_tokens(assistant) == len(envelope) // 3 + len(calls) // 3
    # a tool message's tool_call_id is never counted; only an assistant's calls are
    assert (
        SL.piece_tokens(msg("tool", "ok", tool_call_id="c1"))
        == len("<|start|>tool\nok<|end|>") // 3
    )


def test_string_length_list_count_adds_three_once() -> None:
    a, b = msg("user", "x" * 30), msg("assistant", "y" * 31)
    pieces = (
        len("<|start|>user\n" + "x" * 30 + "<|end|>") // 3
        + len("<|start|>assistant\n" + "y" * 31 + "<|end|>") // 3
    )
    assert SL.count_messages([a, b]) == pieces + 3
    assert SL.count_messages([]) == 0


def test_string_length_tools() -> None:
    tools = [
        Tool.from_dict(
            {
                "type": "function",
                "name": "bash",
                "description": "run",
                "parameters": {"type": "object"},
            }
        ),
        Tool.from_dict({"type": "function", "name": "grep", "parameters": {}}),
    ]
    first = '<|start|>functions.bash:0\n{"name":"bash","description":"run","parameters":{"type":"object"}}<|end|>'
    second = '<|start|>functions.grep:1\n{"name":"grep","description":"","parameters":{}}<|end|>'
    assert SL.count_tools(tools) == len(first) // 3 + len(second) // 3 + 3
    assert SL.count_tools([]) == 0


# --- detection -----------------------------------------------------------------------------

USAGE_16 = {
    "code": 0, "err_msg": "", "prompt": "", "task_id": "", "model_name": "m", "total_latency": 0.0,
    "first_token_time": "", "request_start_time": "", "input_tokens": 1, "output_tokens": 1,
    "total_tokens": 2, "cache_tokens": 0, "reasoning_tokens": 0, "input_cost": 0.0,
    "output_cost": 0.0, "total_cost": 0.0,
}  # fmt: skip
USAGE_23 = {
    **USAGE_16, "cache_read_tokens": None, "cache_miss_tokens": None, "cache_write_tokens": None,
    "cache_status": None, "cache_source": None, "cache_authoritative": False,
    "cache_creation_input_tokens": None,
}  # fmt: skip


RETRY_ERROR = (
    "[181001] model call failed, reason: openAI API async invoke error: {}Error code: 429 - "
    "Rate limit reached for requests StatusCode.MODEL_CALL_FAILED"
)


def _dump(details: dict) -> dict:
    return {
        "processor_type": "CurrentRoundCompressor",
        "compression_response": {"usage": {"calls": 1, "details": [details]}},
        "context_after": {"messages": [{"role": "user", "content": "x", "metadata": {}}]},
    }


def _span_built(preview: str, tokens: int) -> dict:
    entry = {"idx": 0, "role": "user", "tokens": tokens, "preview": preview}
    return {
        "event": "span_built",
        "preserved_prefix": [],
        "messages_to_compress": [entry],
        "protected_tail": [],
    }


@pytest.mark.parametrize(
    ("objects", "names", "profile", "words"),
    [
        (
            [{"messages": [{"role": "assistant", "usage_metadata": USAGE_23}]}],
            [],
            "0.1.18",
            "cache_authoritative",
        ),
        (
            [{"messages": [{"role": "assistant", "usage_metadata": USAGE_16}]}],
            [],
            "0.1.17",
            "16 keys",
        ),
        ([_dump(USAGE_23)], [], "0.1.18", "23 keys"),
        ([_dump(USAGE_16)], [], "0.1.17", "16 keys"),
        (
            [],
            ["ctx/llm_request.jsonl", "CurrentRoundCompressor.jsonl"],
            "0.1.18",
            "llm_request.jsonl",
        ),
        (
            [{"processor": "llm_request", "event": "pre_call", "messages": []}],
            [],
            "0.1.18",
            "llm_request",
        ),
        ([_span_built("a" * 12, 4)], [], "0.1.18", "len // 3"),
        ([_span_built("a" * 12, 3)], [], "0.1.17", "len // 4"),
        ([_span_built("a" * 200, 60)], [], "0.1.17", "len // 4"),  # truncated, < 200 // 3
        (
            [
                {
                    "event": "compression_retry",
                    "error_message": "RateLimitError: Error code: 429 - slow",
                }
            ],
            [],
            "0.1.18",
            "SDK exception class",
        ),
        (
            [{"event": "compression_retry", "error_message": "Error code: 429 - slow"}],
            [],
            "0.1.17",
            "no SDK",
        ),
    ],
)
def test_detection_from_artifact_evidence(objects, names, profile: str, words: str) -> None:
    found = detect_release(collect_evidence(objects, names))
    assert (found.profile.name, found.source, found.known) == (profile, "artifact", True)
    assert words in found.evidence


@pytest.mark.parametrize(
    "objects",
    [
        [],
        [_span_built("a" * 200, 70)],  # truncated, 70 tokens: either divisor fits
        [_span_built("ab", 1)],  # both divisors give 1
        [{"messages": [{"role": "user", "content": "hi", "metadata": {}}]}],
        [{"event": "compression_retry", "error_message": "Connection error."}],
    ],
)
def test_no_evidence_assumes_the_newest_and_says_so(objects) -> None:
    found = detect_release(collect_evidence(objects))
    assert (found.profile, found.source, found.known) == (NEWEST_PROFILE, "assumed", False)
    assert "nothing in the artifact tells" in found.evidence


def test_usage_fields_outrank_weaker_evidence() -> None:
    objects = [_dump(USAGE_16), _span_built("a" * 12, 4)]
    found = detect_release(collect_evidence(objects))
    assert found.profile is PROFILE_0_1_17


def test_conflicting_evidence_is_reported() -> None:
    objects = [{"messages": [{"usage_metadata": USAGE_16}, {"usage_metadata": USAGE_23}]}]
    found = detect_release(collect_evidence(objects))
    assert found.profile is PROFILE_0_1_18
    assert found.evidence.startswith("conflicting evidence")


def test_override_and_recorded_release_win_over_the_artifact() -> None:
    evidence = collect_evidence([_dump(USAGE_23)])
    recorded = detect_release(evidence, recorded="0.1.17.post1")
    assert (recorded.profile, recorded.release, recorded.source) == (
        PROFILE_0_1_17,
        "0.1.17.post1",
        "recorded",
    )
    override = detect_release(evidence, recorded="0.1.17", override="0.1.19")
    assert (override.profile, override.source) == (PROFILE_0_1_18, "override")
    with pytest.raises(ConfigError):
        detect_release(evidence, override="0.1.16")


def test_bad_recorded_release_is_reported_and_the_artifact_decides() -> None:
    found = detect_release(collect_evidence([_dump(USAGE_16)]), recorded="0.1.16")
    assert (found.profile, found.source) == (PROFILE_0_1_17, "artifact")
    assert found.evidence.startswith("recorded release ignored")


def test_evidence_collection_is_bounded() -> None:
    many = [{"messages": [{"usage_metadata": USAGE_23}] * 500}]
    evidence = collect_evidence(many)
    assert 0 < len(evidence.usage_records) <= 64
    assert isinstance(evidence, ArtifactEvidence)


def test_default_counters_string_length_follows_its_releases(counters) -> None:
    """`string_length` exists only from 0.1.18, so its counter always has their divisors."""
    assert (counters["string_length"].tail_divisor, counters["string_length"].char_divisor) == (
        3,
        3,
    )
    assert counters["len_div_4"].tail_divisor == 4
    assert counters["tiktoken_cl100k"].tail_divisor == 4


def test_counter_identity_names_a_divisor_that_changes_piece_counts() -> None:
    """The on-disk token cache is keyed by identity: 0.1.18's fallback //3 must not reuse
    0.1.17's //4 counts, while 0.1.17's keys stay what they always were."""
    old, new = (
        PROFILE_0_1_17.counter("tiktoken_cl100k", len),
        PROFILE_0_1_18.counter("tiktoken_cl100k", len),
    )
    assert old.identity == TokenCounter("tiktoken_cl100k", len).identity
    assert old.identity != new.identity
    assert (
        PROFILE_0_1_18.counter("string_length").identity == TokenCounter("string_length").identity
    )
