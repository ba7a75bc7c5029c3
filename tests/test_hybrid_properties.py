"""The never-compress rules of the HybridCompressor, as properties over generated contexts.

At every level (decision only, level 3 with a summarizer, level 3 with a failing one): the
system prompt, the latest user task, the last N turns and tool calls in flight stay; no
tool-call pair is split; every tool output fits the level-1 cap; the pipeline stops at the
first level that brings the water level under the threshold.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.hybrid import (
    HybridContext,
    HybridResult,
    SummaryRequest,
    hybrid_decision,
    is_summary_message,
    is_user_task,
    run_hybrid,
    turn_starts,
)
from inspector.core.hybrid_config import HybridConfig
from inspector.core.messages import Message, ToolCall
from inspector.core.snapshot import ContextSnapshot
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import Tuning

SIZES = st.sampled_from([0, 10, 120, 900, 2600, 5000])


@st.composite
def contexts(draw: st.DrawFn) -> list[Message]:
    """Users (real and injected), assistant text, tool calls answered, late, or still in flight."""
    messages: list[Message] = []
    next_id = 0
    for _ in range(draw(st.integers(min_value=0, max_value=18))):
        kind = draw(
            st.sampled_from(["user", "reminder", "text", "calls", "calls", "calls", "system"])
        )
        size = draw(SIZES)
        if kind == "user":
            messages.append(Message("user", "task " + "u" * size))
        elif kind == "reminder":
            messages.append(Message("user", "<system-reminder>todo</system-reminder>"))
        elif kind == "system":
            messages.append(Message("system", "mid-context system note"))
        elif kind == "text":
            messages.append(Message("assistant", "a" * size))
        else:
            count = draw(st.integers(min_value=1, max_value=3))
            ids = [f"call_{next_id + k}" for k in range(count)]
            next_id += count
            tool = draw(st.sampled_from(["bash", "read_file", "grep"]))
            calls = tuple(ToolCall(i, tool, json.dumps({"file_path": f"src/f{i}.py"})) for i in ids)
            messages.append(Message("assistant", "", tool_calls=calls))
            if draw(st.booleans()) and draw(st.booleans()):
                messages.append(Message("user", "interjection while the tool runs"))
            for call_id in ids:
                if draw(st.integers(min_value=0, max_value=9)) == 0:
                    continue  # never answered: in flight
                body = draw(st.sampled_from(["x", "line\n", '{"k": [1, 2, 3], "v": "w"}, ']))
                messages.append(
                    Message("tool", body * max(draw(SIZES) // len(body), 1), tool_call_id=call_id)
                )
    return messages


configs = st.builds(
    HybridConfig,
    max_context_tokens=st.one_of(
        st.integers(min_value=20, max_value=2000), st.integers(min_value=2000, max_value=20000)
    ),
    compression_threshold=st.sampled_from([0.3, 0.5, 0.8, 1.0]),
    preserve_recent_turns=st.integers(min_value=0, max_value=4),
    max_tool_output_length=st.sampled_from([150, 800, 2000]),
    turn_unit=st.sampled_from(["step", "user"]),
    placeholder_summary_tokens=st.sampled_from([0, 50, 400]),
)


def ok_summarizer(request: SummaryRequest) -> str:
    return "## Task\nt\n## Progress\np\n## State\ns\n## Key Data\nk"


def failing_summarizer(request: SummaryRequest) -> str:
    raise ConnectionError("refused")


def in_flight(messages: list[Message]) -> list[int]:
    """Assistant messages with a call no later tool message answers (ids are unique here)."""
    out = []
    for index, message in enumerate(messages):
        answered = {m.tool_call_id for m in messages[index + 1 :] if m.role == "tool"}
        if message.tool_calls and any(c.id not in answered for c in message.tool_calls):
            out.append(index)
    return out


def check_rules(messages: list[Message], config: HybridConfig, result: HybridResult) -> None:
    after = result.messages_after
    n = len(messages)
    # 1. the system prompt, and system-role messages inside the context
    assert result.system_messages == SYSTEM
    for message in messages:
        if message.role == "system":
            assert message in after
    # 2. the latest user task, verbatim
    tasks = [m for m in messages if is_user_task(m)]
    if tasks:
        assert tasks[-1] in after
    # 3. the last N turns: at least N turns protected, kept in order at the end
    starts = turn_starts(messages, config.turn_unit)
    if config.preserve_recent_turns and starts:
        wanted = (
            starts[-config.preserve_recent_turns]
            if config.preserve_recent_turns <= len(starts)
            else 0
        )
        assert result.recent_start <= wanted
    recent = messages[result.recent_start :]
    tail = after[len(after) - len(recent) :] if recent else ()
    for index, (kept, original) in enumerate(
        zip(tail, recent, strict=True), start=result.recent_start
    ):
        assert (kept.role, kept.tool_calls, kept.tool_call_id) == (
            original.role,
            original.tool_calls,
            original.tool_call_id,
        )
        assert kept.content == original.content or result.outcomes[index].truncation.cut
    # 4. calls in flight, verbatim
    for index in in_flight(messages):
        assert messages[index] in after
    # 5. no tool-call pair split by levels 2/3
    calls = {c.id for m in messages for c in m.tool_calls}
    results = {m.tool_call_id for m in messages if m.role == "tool"}
    calls_after = {c.id for m in after for c in m.tool_calls}
    results_after = {m.tool_call_id for m in after if m.role == "tool"}
    for call_id in calls & results:
        assert (call_id in calls_after) == (call_id in results_after), call_id
    # 6. level 1 caps every tool output
    for message in after:
        if message.role == "tool" and isinstance(message.content, str):
            assert len(message.content) <= config.max_tool_output_length
    # 7. the stop rule
    levels = result.water_levels
    if result.reason == "below_threshold":
        assert not levels[0].above_threshold and result.stopped_at == 1
    elif result.reason.startswith("compressed_at_level_"):
        k = int(result.reason[-1])
        assert not levels[k].above_threshold and all(w.above_threshold for w in levels[:k])
        assert result.stopped_at == k
    else:
        assert all(w.above_threshold for w in levels)
    # 8. one summary message exactly when something was folded
    summaries = [m for m in after if is_summary_message(m)]
    assert len(summaries) == (1 if result.folded else 0)
    assert len(after) == n - len(result.folded) + len(summaries)


SYSTEM = (Message("system", "You are a coding agent."),)


def snapshot(messages: list[Message]) -> ContextSnapshot:
    return ContextSnapshot("p", SYSTEM, tuple(messages), (), Tuning(processor="hybrid"))


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=contexts(), config=configs)
def test_never_compress_rules_hold_at_every_level(
    messages: list[Message], config: HybridConfig
) -> None:
    snap = snapshot(messages)
    for result in (
        hybrid_decision(snap, config),
        run_hybrid(snap, config, summarizer=ok_summarizer),
        run_hybrid(snap, config, summarizer=failing_summarizer),
    ):
        check_rules(messages, config, result)


@settings(max_examples=100, deadline=None)
@given(messages=contexts(), config=configs)
def test_outcomes_describe_every_message(messages: list[Message], config: HybridConfig) -> None:
    result = hybrid_decision(snapshot(messages), config)
    assert [o.index for o in result.outcomes] == list(range(len(messages)))
    for outcome in result.outcomes:
        if outcome.protected_by is not None:
            assert outcome.outcome in ("kept", "truncated")
        if outcome.index in result.folded:
            assert outcome.outcome in ("folded", "summarized") and outcome.protected_by is None


@settings(max_examples=100, deadline=None)
@given(messages=contexts(), config=configs, mode=st.sampled_from(["len_div_4", "tiktoken_cl100k"]))
def test_counted_after_matches_a_full_count(
    messages: list[Message], config: HybridConfig, mode: str
) -> None:
    """The prefix-sum count of the after-context equals counting it from scratch."""
    counter = TokenCounter(mode)  # type: ignore[arg-type]
    context = HybridContext.from_snapshot(snapshot(messages), counter)
    for cfg in (config, config.with_(preserve_recent_turns=1), config.with_(max_context_tokens=50)):
        result = context.decide(cfg)
        expected = counter.count_messages(result.messages_after)
        if result.summary_source == "placeholder":
            summary = next(m for m in result.messages_after if is_summary_message(m))
            expected += cfg.placeholder_summary_tokens - counter.piece_tokens(summary)
        assert result.counted_after == expected
        assert result.counted_before == counter.count_messages(messages)
        # the cached context decides exactly like a fresh one
        assert result.to_json() == hybrid_decision(snapshot(messages), cfg, counter).to_json()
