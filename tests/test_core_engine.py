"""Table-driven tests of the span, tool-boundary, usage-baseline and decision rules."""

from __future__ import annotations

import pytest

from inspector.core.engine import PricedContext
from inspector.core.errors import ConfigError
from inspector.core.messages import Message
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import Tuning, parse_processor
from tests.conftest import call, msg

LEN4 = TokenCounter("len_div_4")


def priced(messages: list[Message], system: list[Message] | None = None) -> PricedContext:
    return PricedContext(system or [], messages, [], LEN4)


@pytest.mark.parametrize(
    ("content", "real"),
    [
        ("fix the bug", True),
        ("<system-reminder>x", False),
        ("  \n\t<memory_block_current>x", False),
        ("\u3000<recovered_context>", False),
        ("[STATE_REINJECTION] x", False),
        ("<System-Reminder>x", True),
        ("< system-reminder>x", True),
        ("[STATE REINJECTION]", True),
        ("note <system-reminder>", True),
        ([{"type": "text", "text": "<system-reminder>"}], True),
    ],
)
def test_real_user_message(content: object, real: bool) -> None:
    assert msg("user", content).is_real_user is real


def test_assistant_is_never_a_real_user() -> None:
    assert not msg("assistant", "fix the bug").is_real_user


def conversation() -> list[Message]:
    """user, assistant(call a,b), tool a, tool b, assistant, user, assistant(call c), tool c."""
    return [
        msg("user", "first question"),
        msg("assistant", "", tool_calls=[call("a"), call("b")]),
        msg("tool", "result a", tool_call_id="a"),
        msg("tool", "result b", tool_call_id="b"),
        msg("assistant", "answer"),
        msg("user", "second question"),
        msg("assistant", "", tool_calls=[call("c")]),
        msg("tool", "result c", tool_call_id="c"),
    ]


@pytest.mark.parametrize(
    ("keep", "expected"),
    [(-1, 0), (0, 0), (1, 2), (2, 2), (3, 3), (4, 4), (5, 7), (6, 7), (7, 7), (8, 8), (50, 8)],
)
def test_tool_boundary_adjustment(keep: int, expected: int) -> None:
    assert priced(conversation()).adjust_keep(keep) == expected


def test_tool_boundary_off_is_plain_keep() -> None:
    assert priced(conversation()).adjust_keep(4, tool_boundary=False) == 4


def test_empty_list_keeps_the_requested_number() -> None:
    assert priced([]).adjust_keep(5) == 5


def test_boundary_repeats_until_stable() -> None:
    messages = [
        msg("user", "go"),
        msg("assistant", "", tool_calls=[call("x")]),
        msg("assistant", "", tool_calls=[call("y")]),
        msg("tool", "x done", tool_call_id="x"),
        msg("tool", "y done", tool_call_id="y"),
    ]
    # keep 1: result y pulls call y (#2); then result x (#3) is inside and pulls #1.
    assert priced(messages).adjust_keep(1) == 4


def test_reused_ids_pull_the_earliest_call() -> None:
    messages = [
        msg("user", "go"),
        msg("assistant", "", tool_calls=[call("call_0")]),
        msg("tool", "r", tool_call_id="call_0"),
        msg("user", "again"),
        msg("assistant", "", tool_calls=[call("call_0")]),
        msg("tool", "r", tool_call_id="call_0"),
    ]
    context = priced(messages)
    assert context.adjust_keep(1) == 5
    assert context.reused_call_ids() == {"call_0": [1, 4]}


def test_orphans_and_null_ids_change_nothing() -> None:
    messages = [
        msg("user", "go"),
        msg("assistant", "", tool_calls=[call(None)]),
        msg("tool", "r", tool_call_id=""),
        msg("tool", "orphan", tool_call_id="nobody"),
    ]
    assert priced(messages).adjust_keep(2) == 2


@pytest.mark.parametrize(
    ("processor", "keep", "span"),
    [
        (
            "current_round",
            0,
            {"preserved_prefix": 6, "messages_to_compress": 2, "protected_tail": 0},
        ),
        (
            "current_round",
            1,
            {"preserved_prefix": 6, "messages_to_compress": 0, "protected_tail": 2},
        ),
        (
            "current_round",
            5,
            {"preserved_prefix": 6, "messages_to_compress": 0, "protected_tail": 2},
        ),
        ("round_level", 0, {"preserved_prefix": 0, "messages_to_compress": 8, "protected_tail": 0}),
        ("round_level", 5, {"preserved_prefix": 0, "messages_to_compress": 1, "protected_tail": 7}),
        (
            "round_level",
            100,
            {"preserved_prefix": 0, "messages_to_compress": 0, "protected_tail": 8},
        ),
        ("dialogue", 0, {"preserved_prefix": 0, "messages_to_compress": 5, "protected_tail": 3}),
    ],
)
def test_spans(processor: str, keep: int, span: dict[str, int]) -> None:
    tuning = Tuning(processor=parse_processor(processor), keep_recent=keep)
    assert priced(conversation()).span(tuning).counts == span


def test_no_real_user_message() -> None:
    messages = [
        msg("user", "<system-reminder> hi"),
        msg("assistant", "ok"),
        msg("assistant", "more"),
    ]
    context = priced(messages)
    assert context.last_real_user_index == -1
    assert context.span(Tuning(processor="current_round", keep_recent=1)).counts == {
        "preserved_prefix": 0,
        "messages_to_compress": 0,
        "protected_tail": 1,
    }
    assert context.span(Tuning(processor="dialogue")).counts["protected_tail"] == 3
    assert context.effective_keep(Tuning(processor="dialogue")) is None


def test_dialogue_boundary_can_move_split_before_last_user() -> None:
    messages = [
        msg("user", "q1"),
        msg("assistant", "", tool_calls=[call("t")]),
        msg("user", "q2 typed while the tool ran"),
        msg("tool", "late result", tool_call_id="t"),
    ]
    span = priced(messages).span(Tuning(processor="dialogue"))
    assert span.compress == (0, 1) and span.tail == (1, 4)


def test_usage_baseline_rules() -> None:
    usage = {"total_tokens": 1000}
    messages = [
        msg("user", "q"),
        msg("assistant", "a", usage_metadata=usage),
        msg("user", "x" * 40),
        msg("assistant", "b", usage_metadata={"total_tokens": 0}),
        msg(
            "assistant",
            "c",
            usage_metadata={"total_tokens": 5000},
            metadata={"context_usage_stale": True},
        ),
        msg("user", ""),
    ]
    context = priced(messages)
    assert context.usage.index == 1
    assert context.usage.total_tokens == 1000
    assert context.usage.tail_tokens == 10 + 0 + 0 + 0
    assert context.usage.skipped_stale == 1 and context.usage.skipped_zero == 1
    assert context.window_total == 1010


def test_total_without_baseline_counts_messages_and_tools() -> None:
    context = priced([msg("user", "abcdefgh")], system=[msg("system", "x" * 12)])
    assert context.window_total == 3 + 2


@pytest.mark.parametrize(
    ("ratio", "min_ratio", "context_max", "reason"),
    [
        (0.5, 0.0, 100, "below_threshold"),
        (0.01, 0.9, 100, "target_below_min"),
        (0.01, 0.0, 100, "reached_threshold"),
    ],
)
def test_decision_order(ratio: float, min_ratio: float, context_max: int, reason: str) -> None:
    messages = [msg("user", "q" * 40), msg("assistant", "a" * 40)]
    tuning = Tuning(
        processor="current_round",
        trigger_ratio=ratio,
        min_target_ratio=min_ratio,
        context_max=context_max,
    )
    assert priced(messages).evaluate(tuning).reason == reason


def test_total_equal_to_threshold_counts_as_reached() -> None:
    messages = [msg("user", "q" * 40), msg("assistant", "a" * 40)]  # total 20
    tuning = Tuning(
        processor="current_round", trigger_ratio=0.5, min_target_ratio=0.0, context_max=40
    )
    evaluation = priced(messages).evaluate(tuning)
    assert evaluation.threshold == 20 and evaluation.hit


def test_threshold_uses_double_product_truncation() -> None:
    assert (
        Tuning(trigger_ratio=0.29, context_max=100).threshold == 28
    )  # 100 * 0.29 = 28.999999999999996
    assert Tuning(trigger_ratio=0.001, context_max=10).threshold == 1


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("trigger_ratio", 1.0, "0 < trigger_ratio < 1"),
        ("trigger_ratio", 0, "0 < trigger_ratio < 1"),
        ("min_target_ratio", -0.1, "0 <= min_target_ratio < 1"),
        ("keep_recent", -1, "integer >= 0"),
        ("context_max", 0, "integer > 0"),
        ("token_mode", "bytes", "tiktoken_cl100k"),
        ("processor", "nope", "current_round"),
    ],
)
def test_bad_tuning_values_name_field_and_range(field: str, value: object, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Tuning().with_(**{field: value})
    assert field in str(caught.value) and words in str(caught.value)


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("CurrentRoundCompressor", "current_round"),
        ("dialogue", "dialogue"),
        ("round-level", "round_level"),
        ("HYBRID", "hybrid"),
    ],
)
def test_processor_names(name: str, kind: str) -> None:
    assert parse_processor(name) == kind


def test_count_range_is_list_count(counters: dict[str, TokenCounter]) -> None:
    counter = counters["tiktoken_cl100k"]
    messages = conversation()
    context = PricedContext([], messages, [], counter)
    for start in range(len(messages)):
        for end in range(start, len(messages) + 1):
            assert context.count_range(start, end) == counter.count_messages(messages[start:end])


def test_message_round_trip_keeps_unknown_fields() -> None:
    raw = {
        "role": "assistant",
        "content": "x",
        "metadata": {"context_message_id": "abc"},
        "tool_calls": [{"id": "1", "type": "function", "name": "flat", "arguments": "{}"}],
        "finish_reason": "stop",
        "reasoning_content": "thinking",
        "custom_field": [1, 2],
    }
    out = Message.from_dict(raw).to_dict()
    assert out["tool_calls"] == [
        {"id": "1", "type": "function", "function": {"name": "flat", "arguments": "{}"}}
    ]
    assert (
        out["custom_field"] == [1, 2]
        and out["reasoning_content"] == "thinking"
        and out["finish_reason"] == "stop"
    )
