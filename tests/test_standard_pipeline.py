"""jiuwenswarm's chain of standard processors evaluated as a whole."""

from __future__ import annotations

from typing import Any

from inspector.core.snapshot import snapshot_from_dict
from inspector.core.standard.pipeline import evaluate_pipeline, jiuwenswarm_chain
from inspector.core.tokens import TokenCounter

LONG_RESULT = "a long grep result line\n" * 400


def _snapshot(messages: list[dict[str, Any]], **extra: Any) -> Any:
    return snapshot_from_dict(
        {
            "processor_family": "standard",
            "processor": "DialogueCompressor",
            "openjiuwen_version": "0.1.16",
            "hook": "add_messages",
            "added_from": len(messages) - 1,
            "messages": messages,
            **extra,
        }
    )


CONTEXT: list[dict[str, Any]] = [
    {"role": "user", "content": "find the bug"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c1", "type": "function", "name": "grep", "arguments": "{}"}],
    },
    {"role": "tool", "content": LONG_RESULT, "tool_call_id": "c1"},
]


def test_chain_is_the_preset_with_yaml_overrides() -> None:
    """Overrides are laid over the preset by name; the agent's model fills `model`."""
    chain = jiuwenswarm_chain(
        {
            "dialogue_compressor_config": {
                "tokens_threshold": 2500,
                "offload_writeback_enabled": True,
            }
        },
        model_name="deepseek-chat",
        language="en",
    )
    names = [name for name, _ in chain]
    assert names == [
        "MessageSummaryOffloader",
        "ReasoningToolLoopCompactProcessor",
        "DialogueCompressor",
        "CurrentRoundCompressor",
        "RoundLevelCompressor",
    ]
    dialogue = dict(chain)["DialogueCompressor"]
    assert dialogue["tokens_threshold"] == 2500 and dialogue["messages_to_keep"] == 10
    assert dialogue["model"] == {"model_name": "deepseek-chat"}
    assert dict(chain)["ReasoningToolLoopCompactProcessor"]["language"] == "en"


def test_first_acting_processor(counters: dict[str, TokenCounter]) -> None:
    """A large incoming tool result: the offloader acts first; Dialogue at 1500 would too."""
    chain = jiuwenswarm_chain(
        {
            "message_summary_offloader_config": {"large_message_threshold": 1000},
            "dialogue_compressor_config": {"tokens_threshold": 1500, "messages_to_keep": 1},
        }
    )
    result = evaluate_pipeline(_snapshot(CONTEXT), chain, counters)
    hits = {step.processor: step.decision.hit for step in result.steps if step.decision}
    assert result.first == 0 and result.steps[0].processor == "MessageSummaryOffloader"
    assert hits["DialogueCompressor"] is True and hits["ReasoningToolLoopCompactProcessor"] is False
    assert "acts first" in result.sentence
    assert result.to_dict()["first"] == "MessageSummaryOffloader"


def test_defaults_never_trigger_on_a_small_context(counters: dict[str, TokenCounter]) -> None:
    """jiuwenswarm's defaults (100000-token thresholds) leave a small context alone."""
    result = evaluate_pipeline(_snapshot(CONTEXT), jiuwenswarm_chain({}), counters)
    assert result.first is None
    assert all(step.decision is not None and not step.decision.hit for step in result.steps)


def test_get_hook_only_round_level(counters: dict[str, TokenCounter]) -> None:
    """On the get-window hook only RoundLevelCompressor has a trigger."""
    snap = _snapshot(CONTEXT, hook="get_context_window")
    chain = jiuwenswarm_chain({"round_level_compressor_config": {"trigger_context_ratio": 0.001}})
    result = evaluate_pipeline(snap, chain, counters)
    evaluated = [step.processor for step in result.steps if step.decision is not None]
    assert evaluated == ["RoundLevelCompressor"]
    assert result.steps[result.first or 0].processor == "RoundLevelCompressor"
