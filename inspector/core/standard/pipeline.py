"""A chain of standard processors evaluated as a whole: which acts first, and on what.

jiuwenswarm 0.2.3 (openJiuwen 0.1.16) installs the preset chain of the harness rail with its
`config.yaml` overrides laid over it by name (spec `standard-processors.md` 1.1). On the add
hook openJiuwen runs the processors in list order on the same context, so the first one
whose trigger fires is the one that acts first; the later ones are evaluated here on the
context as it was (what they see after an LLM rewrite cannot be known without the model,
and the result says so). On the get-window hook only RoundLevelCompressor has a trigger.
Must not import anything outside the standard library, pydantic and `inspector.core`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.core.snapshot import ContextSnapshot
from inspector.core.standard.prepared import GET, StandardPrepared
from inspector.core.standard.strategy import StandardStrategy, for_processor
from inspector.core.strategy.base import Decision
from inspector.core.tokens import TokenCounter

#: The harness preset without session memory (0.1.16), in chain order.
JIUWENSWARM_PRESET: tuple[tuple[str, Mapping[str, Any]], ...] = (
    (
        "MessageSummaryOffloader",
        {
            "large_message_threshold": 15000,
            "offload_message_type": ["tool"],
            "protected_tool_names": ["read_file"],
        },
    ),
    ("ReasoningToolLoopCompactProcessor", {}),
    (
        "DialogueCompressor",
        {
            "tokens_threshold": 100000,
            "messages_to_keep": 10,
            "keep_last_round": False,
            "compression_target_tokens": 1800,
        },
    ),
    ("CurrentRoundCompressor", {"tokens_threshold": 100000, "messages_to_keep": 3}),
    (
        "RoundLevelCompressor",
        {"trigger_context_ratio": 0.9, "target_total_tokens": 160000, "keep_recent_messages": 6},
    ),
)
#: `react.context_engine_config` keys of jiuwenswarm's config.yaml, by processor.
YAML_KEYS: Mapping[str, str] = {
    "MessageSummaryOffloader": "message_summary_offloader_config",
    "ReasoningToolLoopCompactProcessor": "reasoning_tool_loop_compact_config",
    "DialogueCompressor": "dialogue_compressor_config",
    "CurrentRoundCompressor": "current_round_compressor_config",
    "RoundLevelCompressor": "round_level_compressor_config",
}
_USES_MODEL = {
    "MessageSummaryOffloader",
    "DialogueCompressor",
    "CurrentRoundCompressor",
    "RoundLevelCompressor",
}


def jiuwenswarm_chain(
    context_engine_config: Mapping[str, Any],
    model_name: str | None = None,
    language: str | None = None,
) -> list[tuple[str, dict[str, Any]]]:
    """The chain jiuwenswarm installs: the preset with the yaml's dicts laid over it by name.

    Keys the config classes do not have stay in the dicts (each strategy reports them as
    ignored, as openJiuwen silently drops them); `model` is the agent's model unless set.
    """
    chain: list[tuple[str, dict[str, Any]]] = []
    for name, preset in JIUWENSWARM_PRESET:
        config = dict(preset)
        override = context_engine_config.get(YAML_KEYS[name])
        if isinstance(override, Mapping):
            config.update(override)
        if name in _USES_MODEL and config.get("model") is None and model_name:
            config["model"] = {"model_name": model_name}
        if name == "ReasoningToolLoopCompactProcessor" and language and "language" not in config:
            config["language"] = language
        chain.append((name, config))
    return chain


@dataclass(frozen=True, slots=True)
class PipelineStep:
    """One processor of the chain and its decision (None: it has no trigger on this hook)."""

    processor: str
    strategy: StandardStrategy
    decision: Decision | None
    note: str


@dataclass(frozen=True, slots=True)
class PipelineResult:
    """The chain's steps in order and which acts first."""

    steps: tuple[PipelineStep, ...]
    first: int | None
    sentence: str

    def to_dict(self) -> dict[str, Any]:
        """JSON form: each step's processor, hit, reason, verdict and numbers."""
        return {
            "first": self.steps[self.first].processor if self.first is not None else None,
            "sentence": self.sentence,
            "steps": [
                {
                    "processor": step.processor,
                    "hit": step.decision.hit if step.decision else None,
                    "reason": step.decision.reason if step.decision else "no_trigger_on_hook",
                    "verdict": step.decision.verdict if step.decision else "",
                    "total_tokens": step.decision.total_tokens if step.decision else None,
                    "threshold": step.decision.threshold if step.decision else None,
                    "note": step.note,
                }
                for step in self.steps
            ],
        }


def evaluate_pipeline(
    snapshot: ContextSnapshot,
    chain: Sequence[tuple[str, Mapping[str, Any]]],
    counters: Mapping[str, TokenCounter],
) -> PipelineResult:
    """Each processor's decision on the snapshot's context, in chain order."""
    steps: list[PipelineStep] = []
    first: int | None = None
    shared: StandardPrepared | None = None
    for name, config in chain:
        strategy = for_processor(name)
        own = dataclasses.replace(snapshot, processor_name=name, family="standard", config=config)
        prepared = strategy.prepare(own, counters)
        assert isinstance(prepared, StandardPrepared)
        if shared is not None:
            prepared.counter = shared.counter  # count each message once for the whole chain
        shared = shared or prepared
        if prepared.hook == GET and name != "RoundLevelCompressor":
            steps.append(PipelineStep(name, strategy, None, "no get-window trigger"))
            continue
        decision = strategy.decide(prepared, strategy.recorded_settings(own))
        if first is None and decision.hit:
            first = len(steps)
            note = "acts first"
        elif first is not None:
            note = f"evaluated on the context before {steps[first].processor} acts"
        else:
            note = ""
        steps.append(PipelineStep(name, strategy, decision, note))
    if first is None:
        sentence = "no processor of the chain triggers on this context"
    else:
        acting = steps[first]
        assert acting.decision is not None
        sentence = (
            f"{acting.processor} acts first ({acting.decision.reason}); "
            f"{first} processor(s) before it do not trigger"
        )
    return PipelineResult(tuple(steps), first, sentence)
