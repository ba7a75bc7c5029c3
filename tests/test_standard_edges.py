"""Edge cases of the standard processors, table-driven: thresholds, empty contexts, no user
message, Offload messages, releases, counters, settings errors, flips and sweeps, and the
CLI contract (`why --json` on the reference sample files)."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterator
from contextlib import redirect_stdout
from typing import Any

import pytest

from inspector.core.errors import ConfigError
from inspector.core.snapshot import snapshot_from_dict
from inspector.core.standard.event import compact_number, context_percent
from inspector.core.standard.release import choose_release, resolve_context_max
from inspector.core.standard.strategy import ALL, STRATEGY_LINES, for_processor
from inspector.core.strategy import registry
from inspector.core.strategy.base import Decision, flip_indices
from inspector.core.tokens import TokenCounter
from tests.test_standard_reference import STANDARD


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def _reply(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _calls(
    *ids: str, name: str = "bash", arguments: str = "{}", reasoning: str = ""
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": i, "type": "function", "name": name, "arguments": arguments} for i in ids
        ],
    }
    if reasoning:
        out["reasoning_content"] = reasoning
    return out


def _result(call_id: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "tool", "content": text, "tool_call_id": call_id, **extra}


CONVERSATION = [
    _user("please look at the logs " * 5),
    _calls("c1", "c2"),
    _result("c1", "line of a long log " * 40),
    _result("c2", "another long result " * 30),
    _reply("I looked at both."),
    _user("and now the config"),
    _calls("c3", name="read_file", arguments='{"file_path": "a/SKILL.md"}'),
    _result("c3", "config contents " * 50),
    _reply("Done."),
]


def _decide(
    processor: str,
    messages: list[dict[str, Any]],
    counters: dict[str, TokenCounter],
    config: dict[str, Any] | None = None,
    version: str | None = "0.1.16",
    **snapshot: Any,
) -> Decision:
    raw = {
        "processor": processor,
        "processor_family": "standard",
        "config": config or {},
        "messages": messages,
        "hook": snapshot.pop("hook", "add_messages"),
        "added_from": snapshot.pop("added_from", max(len(messages) - 1, 0)),
        **snapshot,
    }
    if version is not None:
        raw["openjiuwen_version"] = version
    strategy = for_processor(processor)
    snap = snapshot_from_dict(raw)
    return strategy.decide(strategy.prepare(snap, counters), strategy.recorded_settings(snap))


def _tokens(processor: str, counters: dict[str, TokenCounter], **kw: Any) -> int:
    decision = _decide(processor, CONVERSATION, counters, {"tokens_threshold": 1}, **kw)
    assert decision.total_tokens is not None
    return decision.total_tokens


@pytest.mark.parametrize(
    ("processor", "field", "offset", "hit"),
    [
        ("DialogueCompressor", "tokens_threshold", 0, False),
        ("DialogueCompressor", "tokens_threshold", -1, True),
        ("CurrentRoundCompressor", "tokens_threshold", 0, False),
        ("CurrentRoundCompressor", "tokens_threshold", -1, True),
        ("FullCompactProcessor", "trigger_total_tokens", 0, False),
        ("FullCompactProcessor", "trigger_total_tokens", -1, True),
    ],
)
def test_token_threshold_is_strictly_greater(
    processor: str, field: str, offset: int, hit: bool, counters: dict[str, TokenCounter]
) -> None:
    """Exactly on the threshold does not compress (openJiuwen tests tokens > threshold)."""
    first = _decide(processor, CONVERSATION, counters, {field: 1})
    assert first.total_tokens is not None
    decision = _decide(processor, CONVERSATION, counters, {field: first.total_tokens + offset})
    assert decision.hit is hit


def test_round_level_threshold_is_greater_or_equal(counters: dict[str, TokenCounter]) -> None:
    """RoundLevel fires at total >= threshold; threshold = max(int(budget x ratio), 1)."""
    base = _decide("RoundLevelCompressor", CONVERSATION, counters, {"model": {"model_name": "x"}})
    total = base.total_tokens
    assert total is not None and base.numbers["budget"] == 200000
    ratio = total / 200000
    at = _decide(
        "RoundLevelCompressor",
        CONVERSATION,
        counters,
        {"trigger_context_ratio": ratio, "target_total_tokens": 1},
        engine_config={"context_window_tokens": 200000},
    )
    assert at.threshold == int(200000 * ratio) and at.hit is (total >= at.threshold)


@pytest.mark.parametrize("strategy", ALL, ids=[s.processor for s in ALL])
def test_empty_context_never_acts(strategy: Any, counters: dict[str, TokenCounter]) -> None:
    """No messages: every processor decides without error and does not act."""
    decision = _decide(strategy.processor, [], counters)
    assert decision.hit is False
    assert decision.regions == ()
    assert decision.checks[0].key == "release"


def test_no_user_message_has_no_span(counters: dict[str, TokenCounter]) -> None:
    """CurrentRound without any user message: last_user_idx -1, no span, noop after a trigger."""
    messages = [m for m in CONVERSATION if m["role"] != "user"]
    decision = _decide("CurrentRoundCompressor", messages, counters, {"tokens_threshold": 1})
    assert decision.hit is True
    assert decision.numbers["details"]["last_user_idx"] == -1
    assert "span" not in decision.numbers["details"]
    assert decision.reason == "no_compressible_span"
    assert any(f.key == "noop_after_trigger" for f in decision.findings)


OFFLOADED = _result(
    "c9",
    "x" * 5000,
    openjiuwen_class="OffloadToolMessage",
    offload_handle="h",
    offload_type="in_memory",
)


@pytest.mark.parametrize(
    ("processor", "config", "hit"),
    [
        ("MessageSummaryOffloader", {"large_message_threshold": 10}, False),
        (
            "ToolResultBudgetProcessor",
            {"tokens_threshold": 10, "large_message_threshold": 20, "trim_size": 5},
            False,
        ),
        (
            "MessageOffloader",
            {
                "tokens_threshold": 1,
                "large_message_threshold": 10,
                "trim_size": 5,
                "keep_last_round": False,
            },
            False,
        ),
    ],
)
def test_offloaded_messages_are_not_offloaded_again(
    processor: str, config: dict[str, Any], hit: bool, counters: dict[str, TokenCounter]
) -> None:
    """An Offload* message is never a candidate (it still counts in the round's size)."""
    messages = [_user("go"), _calls("c9"), OFFLOADED]
    decision = _decide(processor, messages, counters, config, added_from=2)
    assert decision.hit is hit
    if processor == "ToolResultBudgetProcessor":
        rounds = decision.numbers["details"]["rounds"]
        assert rounds[0][2] > 10 and rounds[0][3] == []


def test_missing_version_uses_newest_and_says_so(counters: dict[str, TokenCounter]) -> None:
    """No openjiuwen_version: 0.1.19 rules (StringLengthCounter), said in note and check."""
    decision = _decide("DialogueCompressor", CONVERSATION, counters, version=None)
    assert decision.numbers["openjiuwen_release"] == "0.1.19"
    assert decision.numbers["counter"] == "StringLengthCounter"
    assert "assumed" in decision.counting_note
    assert "assumed" in decision.checks[0].sentence


@pytest.mark.parametrize(
    ("version", "release", "assumed"),
    [
        ("0.1.16.post3", "0.1.16", False),
        ("0.1.17", "0.1.17", False),
        ("0.1.18", "0.1.19", False),
        ("0.1.19.post2", "0.1.19", False),
        ("garbage", "0.1.19", True),
        (None, "0.1.19", True),
    ],
)
def test_release_choice(version: str | None, release: str, assumed: bool) -> None:
    """Release strings map to rule sets; unmeasured ones are flagged."""
    choice = choose_release(version)
    assert (choice.release, choice.assumed) == (release, assumed)


def test_reasoning_loop_exists_only_in_0116(counters: dict[str, TokenCounter]) -> None:
    """ReasoningToolLoopCompactProcessor was removed after 0.1.16."""
    loop = [_user("go")]
    for k in range(3):
        loop += [_calls(f"r{k}", reasoning="same thought"), _result(f"r{k}", "ok")]
    assert _decide("ReasoningToolLoopCompactProcessor", loop, counters).hit is True
    later = _decide("ReasoningToolLoopCompactProcessor", loop, counters, version="0.1.17")
    assert later.hit is False and later.reason == "not_in_release"
    assert later.checks[0].status == "fail"


def test_ignored_config_keys_are_reported(counters: dict[str, TokenCounter]) -> None:
    """jiuwenswarm's yaml keys that the config class lacks are dropped, and said so."""
    decision = _decide("RoundLevelCompressor", CONVERSATION, counters, {"messages_to_keep": 6})
    finding = next(f for f in decision.findings if f.key == "ignored_config_keys")
    assert finding.numbers["keys"] == ["messages_to_keep"]


def test_no_counter_message_offloader_never_fires_on_tokens(
    counters: dict[str, TokenCounter],
) -> None:
    """0.1.17 without enable_tiktoken_counter: the offloader's token trigger is always 0."""
    config = {
        "tokens_threshold": 1,
        "large_message_threshold": 10,
        "trim_size": 5,
        "keep_last_round": False,
    }
    decision = _decide("MessageOffloader", CONVERSATION, counters, config, version="0.1.17")
    assert decision.total_tokens == 0 and decision.hit is False
    assert any(f.key == "no_counter" for f in decision.findings)
    enabled = _decide(
        "MessageOffloader",
        CONVERSATION,
        counters,
        config,
        version="0.1.17",
        engine_config={"enable_tiktoken_counter": True},
    )
    assert enabled.hit is True and enabled.numbers["counter"] == "TiktokenCounter"


def test_counters_differ_by_release(counters: dict[str, TokenCounter]) -> None:
    """0.1.16 counts list content as its repr, 0.1.19 by default with StringLengthCounter."""
    image = [
        {"type": "text", "text": "see"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 400}},
    ]
    messages = [{"role": "user", "content": image}]
    old = _decide("DialogueCompressor", messages, counters, {"tokens_threshold": 1}, added_from=0)
    new = _decide(
        "DialogueCompressor",
        messages,
        counters,
        {"tokens_threshold": 1},
        version="0.1.19",
        added_from=0,
    )
    assert old.total_tokens is not None and new.total_tokens is not None
    assert old.total_tokens >= 90  # the base64 payload counted as text
    assert new.total_tokens == len("<|start|>user\nsee\nimage_url<|end|>") // 3 + 3


def test_protected_pattern_on_non_object_arguments_fails(counters: dict[str, TokenCounter]) -> None:
    """A name:pattern protection on JSON-array arguments raises in openJiuwen: a lone failed."""
    messages = [_user("go"), _calls("c1", arguments="[1, 2]"), _result("c1", "y" * 3000)]
    decision = _decide(
        "MessageSummaryOffloader",
        messages,
        counters,
        {"large_message_threshold": 10, "protected_tool_names": ["bash:*.md"]},
        added_from=2,
    )
    assert decision.reason == "trigger_error" and decision.hit is False


@pytest.mark.parametrize(
    ("field", "value"),
    [("tokens_threshold", 0), ("keep_last_round", "yes"), ("messages_to_keep", -2)],
)
def test_bad_settings_name_the_field(field: str, value: Any) -> None:
    """Out-of-range settings raise our ConfigError naming the field."""
    settings = for_processor("DialogueCompressor").settings_model.build({})
    with pytest.raises(ConfigError) as error:
        settings.with_(**{field: value})
    assert error.value.field == field


def test_flip_is_the_boundary(counters: dict[str, TokenCounter]) -> None:
    """The tokens_threshold flip is measured - 1, and one step back keeps the decision."""
    strategy = for_processor("DialogueCompressor")
    tokens = _tokens("DialogueCompressor", counters)
    snap = snapshot_from_dict(
        {
            "processor": "DialogueCompressor",
            "processor_family": "standard",
            "openjiuwen_version": "0.1.16",
            "config": {"tokens_threshold": tokens + 50},
            "messages": CONVERSATION,
            "added_from": 8,
        }
    )
    prepared = strategy.prepare(snap, counters)
    settings = strategy.recorded_settings(snap)
    flips = {f.param: f for f in strategy.flips(prepared, settings)}
    assert flips["tokens_threshold"].value == tokens - 1
    assert flips["tokens_threshold"].decision.hit is True
    back = strategy.decide(prepared, settings.with_(tokens_threshold=tokens))
    assert back.hit is False
    assert "keep_last_round" not in flips or flips["keep_last_round"].decision.hit is True


def test_sweep_shows_the_flip(counters: dict[str, TokenCounter]) -> None:
    """A default sweep of tokens_threshold crosses the boundary."""
    strategy = for_processor("CurrentRoundCompressor")
    snap = snapshot_from_dict(
        {
            "processor": "CurrentRoundCompressor",
            "processor_family": "standard",
            "openjiuwen_version": "0.1.16",
            "config": {"tokens_threshold": 50},
            "messages": CONVERSATION,
            "added_from": 8,
        }
    )
    prepared = strategy.prepare(snap, counters)
    points = strategy.sweep(prepared, strategy.recorded_settings(snap), "tokens_threshold", None)
    assert len(points) >= 10 and len(flip_indices(points)) == 1
    with pytest.raises(ConfigError):
        strategy.sweep(prepared, strategy.recorded_settings(snap), "model", None)


@pytest.mark.parametrize(
    ("value", "text"),
    [(17, "17"), (999, "999"), (1000, "1k"), (2191, "2.2k"), (29204, "29.2k"), (1_500_000, "1.5m")],
)
def test_compact_number(value: int, text: str) -> None:
    """The started summary's number format."""
    assert compact_number(value) == text


def test_context_percent_rounds_half_even() -> None:
    """round() of the percentage, clamped to 0..100."""
    assert (context_percent(2500, 200000), context_percent(3500, 200000)) == (1, 2)
    assert context_percent(10**9, 1000) == 100


@pytest.mark.parametrize(
    ("release", "name", "expected"),
    [
        ("0.1.16", "GPT-4O", 200000),
        ("0.1.17", "GPT-4O", 128000),
        ("0.1.16", "deepseek-chat", 65536),
        ("0.1.19", "deepseek-chat", 163840),
        ("0.1.19", None, 200000),
    ],
)
def test_context_max_lookup(release: Any, name: str | None, expected: int) -> None:
    """Exact names in 0.1.16, case-insensitive later; tables differ."""
    assert resolve_context_max(release, name, None, {}) == expected


def test_context_max_mapping_and_fallback() -> None:
    """The context window wins, then the user mapping, then the table."""
    assert resolve_context_max("0.1.17", "gpt-4o", 5000, {"gpt-4o": 7}) == 5000
    assert resolve_context_max("0.1.17", "GPT-4o", None, {"gpt-4o": 7}) == 7


def test_registry_lines_name_every_strategy() -> None:
    """The lines the lead adds to the registry resolve to our instances, keys unique."""
    assert len(STRATEGY_LINES) == len(ALL) == 10
    assert len({s.key for s in ALL}) == 10
    assert all(s.family == "standard" and s.key.startswith("standard.") for s in ALL)


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The registry with the standard lines added (a no-op once the registry lists them)."""
    missing = tuple(line for line in STRATEGY_LINES if line not in registry.STRATEGIES)
    monkeypatch.setattr(registry, "STRATEGIES", registry.STRATEGIES + missing)
    registry.all_strategies.cache_clear()
    yield
    registry.all_strategies.cache_clear()


def test_why_json_on_reference_samples(registered: None, tmp_path: Any) -> None:
    """`why --json` reads the sample files as snapshots: hit and total_tokens as the library."""
    from inspector.cli import main

    cases = []
    for path in sorted(STANDARD.glob("cases_*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            lines = [json.loads(line) for line in handle]
        cases += lines[::15]  # one case of each processor and hook
    source = tmp_path / "cases.jsonl"
    source.write_text("\n".join(json.dumps(c) for c in cases) + "\n", encoding="utf-8")
    out = io.StringIO()
    with redirect_stdout(out):
        status = main(["why", str(source), "--json"])
    assert status == 0
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(rows) == len(cases) == 31
    for row, case in zip(rows, cases, strict=True):
        details = case["expected"]["details"]
        assert row["id"] == case["id"]
        assert row["processor"] == case["processor"]
        assert row["hit"] == case["expected"]["decision"]
        compared = details.get("total" if case["processor"] == "RoundLevelCompressor" else "tokens")
        if compared is not None and case["processor"] != "MessageOffloader":
            assert row["total_tokens"] == compared
        assert set(row["span"]) == {"preserved_prefix", "messages_to_compress", "protected_tail"}
        assert row["checks"] and row["checks"][0]["key"] == "release"


def test_ratio_flip_on_the_grid(counters: dict[str, TokenCounter]) -> None:
    """RoundLevel's trigger_context_ratio flip: the largest 0.001 step that fires."""
    strategy = for_processor("RoundLevelCompressor")
    snap = snapshot_from_dict(
        {
            "processor": "RoundLevelCompressor",
            "processor_family": "standard",
            "openjiuwen_version": "0.1.16",
            "config": {"target_total_tokens": 10},
            "messages": CONVERSATION,
            "added_from": 8,
        }
    )
    prepared = strategy.prepare(snap, counters)
    settings = strategy.recorded_settings(snap)
    assert strategy.decide(prepared, settings).hit is False
    flips = {f.param: f for f in strategy.flips(prepared, settings)}
    ratio = flips["trigger_context_ratio"].value
    assert flips["trigger_context_ratio"].decision.hit is True
    above = strategy.decide(prepared, settings.with_(trigger_context_ratio=round(ratio + 0.001, 3)))
    assert above.hit is False
    assert "target_total_tokens" not in flips  # the trigger does not depend on the target


def test_loop_fingerprint_counts_repeated_tools(counters: dict[str, TokenCounter]) -> None:
    """Tool names are sorted with repeats: a round calling grep twice is not like one calling
    it once, so it breaks the run."""
    loop: list[dict[str, Any]] = [_user("go")]
    for k in range(3):
        loop += [_calls(f"r{k}", name="grep", reasoning="same"), _result(f"r{k}", "ok")]
    assert _decide("ReasoningToolLoopCompactProcessor", loop, counters).hit is True
    loop[1] = _calls("r0", "r0b", name="grep", reasoning="same")
    loop.insert(2, _result("r0b", "ok"))
    decision = _decide("ReasoningToolLoopCompactProcessor", loop, counters)
    assert decision.numbers["details"]["rounds"][0][3] == ["grep", "grep"]
    assert decision.hit is False


def test_release_is_a_setting(counters: dict[str, TokenCounter]) -> None:
    """The recorded release is a setting; switching it re-counts under that release's rules."""
    strategy = for_processor("MessageOffloader")
    snap = snapshot_from_dict(
        {
            "processor": "MessageOffloader",
            "processor_family": "standard",
            "openjiuwen_version": "0.1.16",
            "config": {
                "tokens_threshold": 1,
                "large_message_threshold": 10,
                "trim_size": 5,
                "keep_last_round": False,
            },
            "messages": CONVERSATION,
            "added_from": 8,
        }
    )
    prepared = strategy.prepare(snap, counters)
    settings = strategy.recorded_settings(snap)
    assert settings.openjiuwen_version == "0.1.16"  # type: ignore[attr-defined]
    assert "openjiuwen_version" not in strategy.assumed_fields(snap)
    old = strategy.decide(prepared, settings)
    new = strategy.decide(prepared, settings.with_(openjiuwen_version="0.1.17"))
    assert (old.numbers["counter"], old.hit) == ("TiktokenCounter", True)
    assert (new.numbers["counter"], new.hit, new.total_tokens) == ("None", False, 0)
    assert strategy.counting_key(settings) != strategy.counting_key(
        settings.with_(openjiuwen_version="0.1.19.post2")
    )
    with pytest.raises(ConfigError) as error:
        settings.with_(openjiuwen_version="latest")
    assert error.value.field == "openjiuwen_version"
