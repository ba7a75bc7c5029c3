"""The HybridCompressor pipeline on small contexts: each level's rules, turns, config, alignment."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from inspector.core.errors import ConfigError
from inspector.core.hybrid import (
    SummaryRequest,
    estimate_message,
    hybrid_decision,
    recent_window_start,
    rule_summary,
    run_hybrid,
    run_hybrid_async,
    turn_starts,
)
from inspector.core.hybrid_config import HybridConfig, alignment_check, config_from_tuning
from inspector.core.hybrid_strategy import HYBRID
from inspector.core.messages import Message
from inspector.core.snapshot import ContextSnapshot
from inspector.core.strategy.base import flip_indices
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import Tuning
from inspector.encoding import make_counters
from tests.conftest import call, msg

SYSTEM = (msg("system", "You are a careful coding agent."),)


def snap(messages: list[Message], tuning: Tuning | None = None) -> ContextSnapshot:
    return ContextSnapshot("t", SYSTEM, tuple(messages), (), tuning or Tuning(processor="hybrid"))


def step(n: int, size: int = 400, tool: str = "bash", error: bool = False) -> list[Message]:
    """One model step: an assistant call and its result."""
    out = "Traceback (most recent call last):\nValueError: bad offset\n" if error else ""
    return [
        msg(
            "assistant",
            f"step {n}",
            tool_calls=[call(f"c{n}", tool, json.dumps({"file_path": f"src/m{n}.py"}))],
        ),
        msg("tool", out + "x" * size, tool_call_id=f"c{n}"),
    ]


def session(steps: int = 12, size: int = 400) -> list[Message]:
    """An early question, the task, then `steps` model steps, the third one failing."""
    messages = [
        msg("user", "Early question: keep the public API stable."),
        msg("assistant", "Noted."),
        msg("user", "Fix the offset bug in src/parse.py."),
    ]
    for n in range(steps):
        messages += step(n, size, error=n == 2)
    return messages


# --- estimator and turns ---------------------------------------------------------------------


def test_estimator_is_ceil_chars_over_four_with_tool_calls() -> None:
    assert estimate_message(msg("user", "abcd")) == 1
    assert estimate_message(msg("user", "abcde")) == 2
    m = msg("assistant", "", tool_calls=[call("c1", "bash", '{"command": "ls"}')])
    assert estimate_message(m) == (len("bash") + len('{"command": "ls"}') + 3) // 4


def test_estimator_prices_images_by_size_not_base64_length() -> None:
    url = "data:image/png;base64," + "A" * 100_000
    m = msg("user", [{"type": "image_url", "image_url": {"url": url, "detail": "low"}}])
    assert estimate_message(m) == 85


def test_step_turns_start_at_each_model_call() -> None:
    messages = [
        msg("user", "a"),
        msg("assistant", "b"),
        *step(1),
        msg("user", "c"),
        msg("user", "d"),
        *step(2),
    ]
    # user a + assistant b | step 1 | users c, d + step 2's assistant and result
    assert turn_starts(messages, "step") == [0, 2, 4]


def test_user_turns_start_at_each_real_user_message() -> None:
    messages = [
        msg("assistant", "hello"),
        msg("user", "task 1"),
        *step(1),
        msg("user", "<system-reminder>todo</system-reminder>"),
        msg("user", "task 2"),
        *step(2),
    ]
    assert turn_starts(messages, "user") == [0, 1, 5]


def test_recent_window_widens_to_keep_a_call_with_its_result() -> None:
    messages = [
        msg("user", "task"),
        msg("assistant", "", tool_calls=[call("a", "bash")]),
        msg("user", "also check the logs"),  # arrives before the result: a new step
        msg("tool", "done", tool_call_id="a"),
        msg("assistant", "ok"),
    ]
    config = HybridConfig(preserve_recent_turns=2)
    # the last 2 steps start at index 2; the result at 3 pulls in its call at 1
    assert recent_window_start(messages, config) == 1


def test_preserve_zero_turns_protects_nothing_recent() -> None:
    assert recent_window_start(session(3), HybridConfig(preserve_recent_turns=0)) == len(session(3))


# --- the levels ----------------------------------------------------------------------------------


def test_below_threshold_only_level_1_applies() -> None:
    messages = session(3, size=5000)
    result = hybrid_decision(snap(messages), HybridConfig(max_context_tokens=100_000))
    assert (result.hit, result.reason, result.stopped_at) == (False, "below_threshold", 1)
    assert [w.stage for w in result.water_levels] == ["raw", "level_1"]
    assert len(result.truncated) == 3  # level 1 is always on
    assert all(o.outcome in ("kept", "truncated") for o in result.outcomes)
    assert len(result.messages_after) == len(messages)


def test_level_1_alone_can_bring_the_context_under() -> None:
    messages = session(6, size=6000)
    result = hybrid_decision(
        snap(messages), HybridConfig(max_context_tokens=9000, compression_threshold=0.8)
    )
    assert result.hit and result.reason == "compressed_at_level_1" and result.stopped_at == 1
    raw, after1 = result.water_levels
    assert raw.above_threshold and not after1.above_threshold
    cut = result.truncated[0]
    assert cut.outcome == "truncated" and cut.truncation.branch == "head_tail"
    assert cut.truncation.chars_before == 6000
    assert cut.truncation.chars_removed == 6000 - cut.truncation.chars_after > 4000


def test_level_2_folds_the_middle_into_a_rule_summary() -> None:
    messages = session(12, size=400)
    config = HybridConfig(
        max_context_tokens=1500, compression_threshold=0.8, preserve_recent_turns=3
    )
    result = hybrid_decision(snap(messages), config)
    assert result.reason == "compressed_at_level_2" and result.stopped_at == 2
    assert result.llm_calls == 0 and result.summary_source == "rule"
    after = result.messages_after
    # latest user task kept verbatim, then the summary, then the last 3 steps
    assert after[0] == messages[2]
    summary = after[1]
    assert summary.role == "user" and summary.content.startswith("[CONTEXT SUMMARY")
    assert after[2:] == tuple(messages[-6:])
    assert summary.content.splitlines()[0].endswith(
        "Folded 20 earlier messages (10 assistant, 9 tool, 1 user)."
    )
    assert "Tools called (9): bash ×9." in summary.content
    assert "src/m0.py" in summary.content and "src/m8.py" in summary.content
    assert "ValueError: bad offset" in summary.content
    protections = {o.index: o.protected_by for o in result.outcomes}
    assert protections[2] == "latest_user_task" and protections[len(messages) - 1] == "recent_turn"
    assert {o.outcome for o in result.outcomes[:2]} == {"folded"}
    assert result.span_counts == {
        "preserved_prefix": 1,
        "messages_to_compress": 20,
        "protected_tail": 6,
    }
    assert any(f.key == "user_messages_folded" for f in result.findings)


def test_rule_summary_counts_roles_tools_files_and_errors() -> None:
    text = rule_summary([msg("user", "hi"), *step(1, error=True), *step(2)])
    first, *rest = text.splitlines()
    assert first.endswith("Folded 5 earlier messages (2 assistant, 2 tool, 1 user).")
    assert "Tools called (2): bash ×2." in rest
    assert "Files touched (2): src/m1.py, src/m2.py." in rest
    assert any("ValueError: bad offset" in line for line in rest)


def big_recent_session() -> tuple[list[Message], HybridConfig]:
    """Level 2 is not enough: 60 small steps on 60 files make a long rule summary; 4 big recent steps."""
    messages = [msg("user", "Rename the helpers in every module.")]
    for n in range(60):
        path = f"src/package/subpackage/very_long_module_name_number_{n}.py"
        messages += [
            msg(
                "assistant",
                "",
                tool_calls=[call(f"s{n}", "edit_file", json.dumps({"file_path": path}))],
            ),
            msg("tool", "ok", tool_call_id=f"s{n}"),
        ]
    for n in range(4):
        messages += step(100 + n, size=1500)
    config = HybridConfig(
        max_context_tokens=3000, compression_threshold=0.8, preserve_recent_turns=4
    )
    return messages, config


def test_big_recent_session_needs_level_3() -> None:
    messages, config = big_recent_session()
    result = hybrid_decision(snap(messages), config)
    raw, after1, after2, after3 = result.water_levels
    assert raw.above_threshold and after1.above_threshold and after2.above_threshold
    assert not after3.above_threshold and result.reason == "compressed_at_level_3"


def test_level_3_without_a_summarizer_is_priced_by_placeholder() -> None:
    messages, config = big_recent_session()
    result = hybrid_decision(snap(messages), config)
    assert result.stopped_at == 3 and result.llm_calls == 1 and not result.llm_call_made
    assert result.summary_source == "placeholder"
    assert {o.outcome for o in result.outcomes if o.index in result.folded} == {"summarized"}
    assert result.summary_request is not None
    assert "400 words" in result.summary_request.prompt
    assert all(
        s in result.summary_request.prompt for s in ("Task", "Progress", "State", "Key Data")
    )
    assert any(f.key == "llm_summary_needed" for f in result.findings)


def test_level_3_uses_the_summarizer_and_cuts_to_400_words() -> None:
    messages, config = big_recent_session()
    seen: list[SummaryRequest] = []

    def summarizer(request: SummaryRequest) -> str:
        seen.append(request)
        return "## Task\nfix\n## Progress\n" + "word " * 600 + "\n## State\nx\n## Key Data\ny"

    result = run_hybrid(snap(messages), config, summarizer=summarizer)
    assert result.summary_source == "llm" and result.llm_call_made and result.llm_calls == 1
    assert len(seen) == 1 and seen[0].messages[0] == messages[1]  # messages[0] is the latest task
    body = result.summary_text or ""
    assert len(body.split()) <= 400 + 8  # the header line adds a few words
    assert any(
        f.key == "llm_summary_format" and "cut to 400" in f.sentence for f in result.findings
    )


def test_level_3_failure_falls_back_to_the_rule_summary() -> None:
    messages, config = big_recent_session()

    def broken(request: SummaryRequest) -> str:
        raise TimeoutError("model timed out")

    result = run_hybrid(snap(messages), config, summarizer=broken)
    assert result.summary_source == "fallback" and result.level3_error == "model timed out"
    assert result.summary_text is not None and "level 2 · rule-based" in result.summary_text
    assert {o.outcome for o in result.outcomes if o.index in result.folded} == {"folded"}
    assert any(f.key == "llm_summary_failed" for f in result.findings)


@pytest.mark.parametrize("reply", ["", "   ", None, 42])
def test_empty_or_non_text_reply_falls_back(reply: Any) -> None:
    messages, config = big_recent_session()
    result = run_hybrid(snap(messages), config, summarizer=lambda request: reply)
    assert result.summary_source == "fallback"


def test_async_summarizer() -> None:
    messages, config = big_recent_session()

    async def summarizer(request: SummaryRequest) -> str:
        await asyncio.sleep(0)
        return "## Task\nt\n## Progress\np\n## State\ns\n## Key Data\nk"

    result = asyncio.run(run_hybrid_async(snap(messages), config, summarizer=summarizer))
    assert result.summary_source == "llm"
    # the sync entry point refuses an async summarizer without failing
    sync = run_hybrid(snap(messages), config, summarizer=summarizer)
    assert sync.summary_source == "fallback" and "async" in (sync.level3_error or "")


def test_still_above_when_the_protected_part_is_too_big() -> None:
    messages = session(4, size=1900)
    config = HybridConfig(max_context_tokens=1000, preserve_recent_turns=3)
    result = hybrid_decision(snap(messages), config)
    assert result.reason == "still_above_threshold"
    assert any(f.key == "protected_part_above_threshold" for f in result.findings)


def test_nothing_to_fold_when_every_turn_is_recent() -> None:
    messages = session(2, size=1900)
    result = hybrid_decision(
        snap(messages), HybridConfig(max_context_tokens=500, preserve_recent_turns=10)
    )
    assert result.reason == "still_above_threshold" and result.stopped_at == 2
    assert result.folded == () and any(f.key == "nothing_to_fold" for f in result.findings)


def test_a_call_in_flight_in_the_middle_is_never_folded() -> None:
    messages = session(8, size=400)
    pending = msg("assistant", "", tool_calls=[call("late", "bash"), call("c_done", "bash")])
    messages[5:5] = [pending, msg("tool", "half", tool_call_id="c_done")]
    config = HybridConfig(max_context_tokens=800, preserve_recent_turns=2)
    result = hybrid_decision(snap(messages), config)
    assert result.stopped_at >= 2 and result.folded
    assert pending in result.messages_after and messages[6] in result.messages_after
    assert (
        result.outcomes[5].protected_by == "in_flight"
        and result.outcomes[6].protected_by == "in_flight"
    )


def test_counter_gives_counted_tokens_and_an_undercount_finding() -> None:
    counter = TokenCounter("len_div_4")
    messages = session(3, size=400)
    result = hybrid_decision(snap(messages), HybridConfig(), counter)
    assert result.counted_before == counter.count_messages(messages)
    assert result.counted_after is not None and result.counted_request is not None


def test_counter_estimator_what_if() -> None:
    counter = TokenCounter("len_div_4")
    messages = session(3, size=400)
    result = hybrid_decision(snap(messages), HybridConfig(estimator="counter"), counter)
    assert result.estimator == "counter (len_div_4)"
    assert result.estimate_before == counter.count_messages(SYSTEM) + sum(
        counter.piece_tokens(m) for m in messages
    )


def test_to_json_has_the_why_fields() -> None:
    result = hybrid_decision(
        snap(session(12)), HybridConfig(max_context_tokens=1500, preserve_recent_turns=3)
    )
    record = result.to_json()
    for key in (
        "hit",
        "reason",
        "total_tokens",
        "threshold",
        "span",
        "checks",
        "findings",
        "effective_keep",
    ):
        assert key in record
    assert record["reason"] == "compressed_at_level_2"
    assert [c["key"] for c in record["checks"]] == [
        "hybrid_estimator",
        "hybrid_raw",
        "hybrid_level_1",
        "hybrid_level_2",
        "hybrid_level_3",
        "hybrid_alignment",
    ]
    assert [c["status"] for c in record["checks"]][1:5] == ["fail", "fail", "pass", "skip"]
    assert record["hybrid"]["stopped_at"] == 2
    assert len(record["hybrid"]["messages"]) == len(result.outcomes)
    json.dumps(record)  # serializable


# --- configuration and alignment ------------------------------------------------------------------


def test_config_defaults_are_the_spec_defaults() -> None:
    c = HybridConfig()
    assert (c.max_context_tokens, c.compression_threshold, c.preserve_recent_turns) == (
        128_000,
        0.8,
        5,
    )
    assert (c.max_tool_output_length, c.context_window, c.reserved_output_tokens) == (
        2000,
        128_000,
        4096,
    )
    assert c.threshold == 102_400 and c.usable_window == 123_904


@pytest.mark.parametrize(
    "field,value",
    [
        ("max_context_tokens", 0),
        ("compression_threshold", 1.5),
        ("preserve_recent_turns", -1),
        ("turn_unit", "x"),
    ],
)
def test_config_validation(field: str, value: Any) -> None:
    with pytest.raises(ConfigError):
        HybridConfig(**{field: value})


def test_config_from_tuning_maps_budget_ratio_and_turns() -> None:
    tuning = Tuning(processor="hybrid", context_max=50_000, trigger_ratio=0.7, keep_recent=3)
    config = config_from_tuning(tuning)
    assert (
        config.max_context_tokens,
        config.compression_threshold,
        config.preserve_recent_turns,
    ) == (50_000, 0.7, 3)
    # keep_recent of another processor counts messages, not turns: the spec default stays
    other = config_from_tuning(Tuning(processor="current_round", keep_recent=6))
    assert other.preserve_recent_turns == 5
    # hybrid's Tuning default keep_recent 0 is not taken as "protect nothing" unless explicit
    assert config_from_tuning(Tuning(processor="hybrid")).preserve_recent_turns == 5
    assert (
        config_from_tuning(
            Tuning(processor="hybrid"), keep_recent_is_turns=True
        ).preserve_recent_turns
        == 0
    )


def test_spec_defaults_disagree_with_themselves() -> None:
    finding = alignment_check(HybridConfig())
    assert finding is not None and finding.key == "budget_window_mismatch"
    assert (
        finding.numbers["failure_mode"] == "model_rejects"
        and finding.numbers["model_window_assumed"]
    )
    assert "(1)" in finding.sentence and "(2)" in finding.sentence


def test_budget_above_usable_window_with_trigger_above_it() -> None:
    config = HybridConfig(max_context_tokens=200_000, given=frozenset({"context_window"}))
    finding = alignment_check(config)
    assert finding is not None and finding.numbers["failure_mode"] == "model_rejects"
    assert "123905..160000" in finding.sentence


def test_budget_below_usable_window_compresses_early() -> None:
    config = HybridConfig(
        max_context_tokens=32_000, given=frozenset({"context_window", "reserved_output_tokens"})
    )
    finding = alignment_check(config)
    assert finding is not None and finding.numbers["failure_mode"] == "compresses_early"
    assert "91904 tokens of room" in finding.sentence


def test_aligned_budget_has_no_finding() -> None:
    assert alignment_check(HybridConfig(max_context_tokens=123_904)) is None


def test_budget_from_a_context_without_a_model_window_is_unknown() -> None:
    finding = alignment_check(config_from_tuning(Tuning(context_max=27_097)))
    assert (
        finding is not None and finding.key == "model_window_unknown" and finding.severity == "info"
    )


def test_sweep_finds_where_the_stopping_level_changes() -> None:
    messages = session(12, size=400)
    snapshot = snap(messages)
    prepared = HYBRID.prepare(snapshot, make_counters())
    settings = HYBRID.recorded_settings(snapshot).with_(preserve_recent_turns=3)
    points = HYBRID.sweep(prepared, settings, "context_max", [500, 1500, 5000, 50_000])
    reasons = [point.decision.reason for point in points]
    assert reasons == [
        "still_above_threshold",
        "compressed_at_level_2",
        "below_threshold",
        "below_threshold",
    ]
    assert flip_indices(points) == [1, 2]
    assert [p.decision.native.config.max_context_tokens for p in points] == [
        500,
        1500,
        5000,
        50_000,
    ]
    with pytest.raises(ConfigError):
        HYBRID.sweep(prepared, settings, "min_target_ratio", None)
    assert len(HYBRID.sweep(prepared, settings, "keep_recent", None)) == 13


def test_window_overshoot_says_how_many_more_turns_would_fit() -> None:
    messages = session(30, size=400)
    raw = hybrid_decision(snap(messages), HybridConfig()).estimate_before
    config = HybridConfig(max_context_tokens=int(raw / 0.8) - 50, preserve_recent_turns=2)
    result = hybrid_decision(snap(messages), config)
    assert result.reason == "compressed_at_level_2"
    (finding,) = [f for f in result.findings if f.key == "window_overshoot"]
    more = finding.numbers["more_turns"]
    assert more >= 20
    # keeping that many more turns indeed stays under the threshold
    wider = hybrid_decision(snap(messages), config.with_(preserve_recent_turns=2 + more))
    assert wider.reason == "compressed_at_level_2" and not wider.water_levels[-1].above_threshold


def test_context_compressed_event() -> None:
    below = hybrid_decision(snap(session(3)), HybridConfig())
    assert below.event is None
    folded = hybrid_decision(
        snap(session(12)), HybridConfig(max_context_tokens=1500, preserve_recent_turns=3)
    )
    assert folded.event is not None
    assert folded.event["strategy"] == "SlidingWindowCompressor"
    assert folded.event["before"] > folded.event["after"] == folded.estimate_after
    messages, config = big_recent_session()
    assert (hybrid_decision(snap(messages), config).event or {})[
        "strategy"
    ] == "LlmSummaryCompressor"
