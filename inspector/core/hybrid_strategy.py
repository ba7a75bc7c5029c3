"""The HybridCompressor of `spec/hybrid-compressor.md` as a strategy.

The pipeline itself is `inspector.core.hybrid`; this module declares its settings model,
the one mapping from what a source recorded to those settings, and the protocol's
`Decision` (regions, per-message labels and sentences, checks, findings).
Must not import anything outside the standard library, pydantic and `inspector.core`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from pydantic import Field

from inspector.core.artifact import Artifact
from inspector.core.errors import ConfigError
from inspector.core.findings import with_findings
from inspector.core.hybrid import HybridContext, HybridResult, MessageOutcome
from inspector.core.hybrid_config import EstimatorKind, HybridConfig, TurnUnit
from inspector.core.snapshot import ContextSnapshot
from inspector.core.strategy.after import After
from inspector.core.strategy.base import (
    Decision,
    Family,
    Flip,
    Gauge,
    RegionName,
    RegionRange,
    Settings,
    SweepPoint,
)
from inspector.core.strategy.fields import field_named
from inspector.core.tokens import TokenCounter, TokenMode


class HybridSettings(Settings):
    """The agent-config and model-config fields of the spec that a user tunes."""

    max_context_tokens: int = Field(
        128_000,
        gt=0,
        description="Agent config: the engine's context budget in (estimated) tokens.",
        json_schema_extra={"flag": "--context-max", "tuning": "context_max"},
    )
    compression_threshold: float = Field(
        0.8,
        gt=0,
        le=1,
        description="Agent config: trigger water level as a ratio of the budget.",
        json_schema_extra={"flag": "--trigger-ratio", "tuning": "trigger_ratio"},
    )
    preserve_recent_turns: int = Field(
        5,
        ge=0,
        description="Agent config: the last N turns are never folded or summarised.",
        json_schema_extra={"flag": "--keep-recent", "tuning": "keep_recent"},
    )
    max_tool_output_length: int = Field(
        2000, gt=0, description="Agent config: level-1 cap per tool output, in characters."
    )
    context_window: int = Field(
        128_000,
        gt=0,
        description="Model config: the window the model declares, in tokens.",
        json_schema_extra={"sweep": False},
    )
    reserved_output_tokens: int = Field(
        4096,
        ge=0,
        description="Model config: tokens kept free for the reply.",
        json_schema_extra={"sweep": False},
    )
    turn_unit: TurnUnit = Field(
        "step",
        description="What one turn is: 'step' = one model call, 'user' = one real user message "
        "to the next (the spec is silent; our choice).",
    )
    estimator: EstimatorKind = Field(
        "chars_div_4",
        description="The water-level estimator: chars_div_4 (the strategy's own) or counter "
        "(a what-if: our token counter decides instead).",
        json_schema_extra={"what_if": True},
    )
    token_mode: TokenMode = Field(
        "len_div_4",
        description="The token counter used for our own counts beside the estimate.",
        json_schema_extra={"flag": "--tokens", "tuning": "token_mode", "sweep": False},
    )


_MODEL_FIELDS = ("context_window", "reserved_output_tokens")


def model_fields_given(snapshot: ContextSnapshot, settings: Settings) -> frozenset[str]:
    """The model-config fields the source recorded or the user set (not assumed defaults)."""
    return frozenset(set(_MODEL_FIELDS) & (set(snapshot.config) | settings.given))


def hybrid_config(settings: HybridSettings, given: frozenset[str] = frozenset()) -> HybridConfig:
    """The pipeline's config for these settings (`given`: model-config fields not assumed)."""
    values = settings.model_dump(exclude={"token_mode"})
    return dataclasses.replace(HybridConfig(), **values, given=given | {"max_context_tokens"})


_BRANCH = {"file_read": "file", "head_tail": "head+tail"}
_PROTECTION = {
    "system_prompt": "the system prompt",
    "latest_user_task": "the latest user task",
    "in_flight": "a tool call still in flight",
    "recent_turn": "one of the last preserve_recent_turns turns",
}
_SHORT_PROTECTION = {
    "system_prompt": "system",
    "latest_user_task": "task",
    "in_flight": "in flight",
    "recent_turn": "recent",
}


def outcome_label(outcome: MessageOutcome) -> str:
    """A row's short label: `cut json -1,234`, `folded, cut json`, `kept recent`."""
    branch = _BRANCH.get(outcome.truncation.branch, outcome.truncation.branch)
    if outcome.outcome == "truncated":
        removed = outcome.truncation.chars_removed
        amount = f"{removed:,}" if removed < 10_000 else f"{removed / 1000:.1f}k"
        return f"cut {branch} -{amount}"
    if outcome.outcome in ("folded", "summarized") and outcome.truncation.cut:
        return f"{outcome.outcome}, cut {branch}"
    if outcome.outcome == "kept" and outcome.protected_by is not None:
        return f"kept {_SHORT_PROTECTION.get(outcome.protected_by, outcome.protected_by)}"
    return outcome.outcome


def outcome_sentence(outcome: MessageOutcome, result: HybridResult) -> str:
    """What the pipeline did to one message, in words."""
    parts = [
        f"{outcome.outcome}, turn {outcome.turn}, estimate {outcome.estimate_before:,}"
        + (
            f" -> {outcome.estimate_after_level_1:,} after level 1"
            if outcome.truncation.cut
            else ""
        )
        + " tokens (chars/4)."
    ]
    cut = outcome.truncation
    if cut.cut:
        parts.append(
            f"Level 1 cut this tool output by shape ({cut.branch}): {cut.chars_before:,} -> "
            f"{cut.chars_after:,} characters ({cut.chars_removed:,} removed, cap "
            f"{result.config.max_tool_output_length:,})."
        )
    if outcome.outcome == "folded":
        parts.append(
            "Level 2 folded this message into the rule summary (counts, tools, files, errors)."
        )
    elif outcome.outcome == "summarized":
        parts.append(
            "Level 3 replaced this message with the LLM summary"
            + (" (priced, not run here)." if result.summary_source == "placeholder" else ".")
        )
    elif outcome.protected_by is not None:
        parts.append(
            f"Never compressed: {_PROTECTION.get(outcome.protected_by, outcome.protected_by)}."
        )
    elif result.stopped_at < 2:
        parts.append(
            f"Stays verbatim: the pipeline stopped at level {result.stopped_at} ({result.reason})."
        )
    else:
        parts.append("Stays verbatim.")
    return " ".join(parts)


@dataclass(frozen=True)
class _PerMessage(Mapping[int, str]):
    """Per-message texts computed on demand (a 20,000-message decision builds none up front)."""

    result: HybridResult
    kind: Literal["label", "sentence"]

    def __getitem__(self, index: int) -> str:
        if not 0 <= index < self.result.message_count:
            raise KeyError(index)
        outcome = self.result.outcome(index)
        if self.kind == "label":
            return outcome_label(outcome)
        return outcome_sentence(outcome, self.result)

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.result.message_count))

    def __len__(self) -> int:
        return self.result.message_count


def _regions(result: HybridResult) -> tuple[RegionRange, ...]:
    """Runs of kept-before-window, folded and recent messages."""
    folded = set(result.folded)
    names: list[RegionName] = [
        "fold" if i in folded else "tail" if i >= result.recent_start else "prefix"
        for i in range(result.message_count)
    ]
    labels = {"fold": "folded into the summary", "tail": "recent turns", "prefix": "kept"}
    out: list[RegionRange] = []
    start = 0
    for index in range(1, len(names) + 1):
        if index == len(names) or names[index] != names[start]:
            out.append(RegionRange(names[start], start, index, labels[names[start]]))
            start = index
    return tuple(out)


@dataclass
class HybridPrepared:
    """A snapshot and its pipeline context per token mode (built on first use)."""

    snapshot: ContextSnapshot
    counters: Mapping[str, TokenCounter]
    counting_note: str
    contexts: dict[str, HybridContext] = field(default_factory=dict)

    def context(self, mode: str) -> HybridContext:
        """The pipeline's context counted with `mode`'s counter (cached)."""
        if mode not in self.contexts:
            self.contexts[mode] = HybridContext.from_snapshot(self.snapshot, self.counters[mode])
        return self.contexts[mode]


class HybridStrategy:
    """The three-level HybridCompressor, replayed without an LLM call (level 3 priced)."""

    key: ClassVar[str] = "hybrid"
    processor: ClassVar[str] = "HybridCompressor"
    family: ClassVar[Family] = "hybrid"
    capabilities: ClassVar[frozenset[str]] = frozenset()
    title: ClassVar[str] = "truncate tool outputs, fold old turns, then summarise (spec)"
    settings_model: ClassVar[type[Settings]] = HybridSettings

    def recorded_settings(self, snapshot: ContextSnapshot) -> HybridSettings:
        """The budget is the context's window; ratio and keep window only when recorded for hybrid."""
        tuning = snapshot.tuning
        values: dict[str, Any] = {
            "max_context_tokens": tuning.context_max,
            "token_mode": tuning.token_mode,
        }
        if tuning.processor == "hybrid":
            if "trigger_ratio" in snapshot.recorded_fields:
                values["compression_threshold"] = tuning.trigger_ratio
            if "keep_recent" in snapshot.recorded_fields:
                values["preserve_recent_turns"] = tuning.keep_recent
        for name in HybridSettings.model_fields:
            if name in snapshot.config:
                values[name] = snapshot.config[name]
        return HybridSettings.build(values)

    def assumed_fields(self, snapshot: ContextSnapshot) -> frozenset[str]:
        """Everything but the budget and token mode, unless the snapshot's config gives it."""
        given = {"max_context_tokens", "token_mode", *snapshot.config}
        return frozenset(set(HybridSettings.model_fields) - given)

    def prepare(
        self,
        snapshot: ContextSnapshot,
        counters: Mapping[str, TokenCounter],
        counting_note: str = "",
    ) -> HybridPrepared:
        """Nothing is counted until the first decision."""
        return HybridPrepared(snapshot, counters, counting_note)

    def counting_key(self, settings: Settings) -> str:
        """The token mode of our own counts beside the estimate."""
        assert isinstance(settings, HybridSettings)
        return settings.token_mode

    def decide(
        self, prepared: Any, settings: Settings, artifact: Artifact | None = None
    ) -> Decision:
        """The pipeline's decision: where it stops, what each message becomes."""
        assert isinstance(prepared, HybridPrepared) and isinstance(settings, HybridSettings)
        given = model_fields_given(prepared.snapshot, settings)
        context = prepared.context(settings.token_mode)
        config = hybrid_config(settings, given)
        result = context.decide(config)
        record = result.to_json(with_outcomes=False)
        original, after_level_1, fixed = context.estimates(config)
        counter = prepared.counters[settings.token_mode]
        decision = Decision(
            strategy=self.key,
            processor=self.processor,
            family=self.family,
            settings=settings,
            hit=result.hit,
            reason=result.reason,
            verdict=f"STOPS AT LEVEL {result.stopped_at}",
            total_tokens=result.estimate_before,
            threshold=result.threshold,
            target_tokens=record["target_tokens"],
            min_target_tokens=None,
            effective_keep=record["effective_keep"],
            regions=_regions(result),
            span=result.span_counts,
            checks=result.checks(),
            findings=result.findings,
            numbers={
                "tuning": self._tuning_json(settings),
                "hybrid": record["hybrid"],
                "stopped_at": result.stopped_at,
                "estimate_after": result.estimate_after,
                "llm_calls": result.llm_calls,
            },
            exact_counting=counter.exact,
            counting_note=prepared.counting_note,
            message_notes=_PerMessage(result, "sentence"),
            message_labels=_PerMessage(result, "label"),
            message_tokens=tuple(original),
            gauge=_gauge(result, after_level_1, fixed),
            summary=_summary(result),
            native=result,
        )
        return with_findings(decision, prepared.snapshot, artifact)

    def after(
        self, prepared: Any, decision: Decision, counter: TokenCounter, summary_tokens: int
    ) -> After:
        """The replayed pipeline's context, counted with `counter`; level 3's summary, when
        reached, priced at `summary_tokens` (no LLM is called)."""
        assert isinstance(prepared, HybridPrepared)
        result = decision.native
        assert isinstance(result, HybridResult)
        settings = decision.settings
        assert isinstance(settings, HybridSettings)
        mode = counter.mode if counter.mode in prepared.counters else settings.token_mode
        if (
            summary_tokens != result.config.placeholder_summary_tokens
            or mode != settings.token_mode
        ):
            # counted with the comparison's counter, the summary at the comparison's price
            context = prepared.context(mode)
            result = context.decide(result.config.with_(placeholder_summary_tokens=summary_tokens))
        return hybrid_after(result)

    @staticmethod
    def _tuning_json(settings: HybridSettings) -> dict[str, Any]:
        return {
            "processor": "hybrid",
            "trigger_ratio": settings.compression_threshold,
            "keep_recent": settings.preserve_recent_turns,
            "context_max": settings.max_context_tokens,
            "token_mode": settings.token_mode,
        }

    def flips(self, prepared: Any, settings: Settings) -> Sequence[Flip]:
        """Per swept field, the value nearest the current one (of its sweep range) where the
        pipeline stops elsewhere or for another reason: the range is searched, not bisected,
        because the levels are not monotone in every field."""
        base = self.decide(prepared, settings)
        out: list[Flip] = []
        for name in self.sweep_params():
            current = getattr(settings, name)
            candidates = sorted(
                (v for v in _default_values(settings, name) if v != current),
                key=lambda v: abs(v - current),
            )
            for value in candidates:
                changed = settings.with_(**{name: value})
                decision = self.decide(prepared, changed)
                if (decision.reason, decision.verdict) != (base.reason, base.verdict):
                    sentence = f"{name} {current} -> {value}: {decision.verdict.lower()} ({decision.reason})"
                    out.append(Flip(name, current, value, changed, decision, sentence))
                    break
        return out

    def sweep_params(self) -> tuple[str, ...]:
        """Budget, threshold, kept turns and the level-1 cap."""
        return (
            "max_context_tokens",
            "compression_threshold",
            "preserve_recent_turns",
            "max_tool_output_length",
        )

    def sweep(
        self, prepared: Any, settings: Settings, param: str, values: Sequence[Any] | None
    ) -> list[SweepPoint]:
        """The pipeline's decision with `param` at each value."""
        name = field_named(HybridSettings, param).name
        if name not in self.sweep_params():
            raise ConfigError("param", param, "one of " + ", ".join(self.sweep_params()))
        chosen = list(values) if values is not None else _default_values(settings, name)
        return [
            SweepPoint(value, self.decide(prepared, settings.with_(**{name: value})))
            for value in chosen
        ]


def hybrid_after(result: HybridResult) -> After:
    """What a pipeline run (replayed, or run with a real level-3 model) leaves in the context."""
    if result.counted_after is None:
        raise ValueError("the hybrid result must be computed with a counter")
    notes = [
        f"water level ({result.estimator}): "
        + " -> ".join(f"{w.stage} {w.estimated_tokens}" for w in result.water_levels)
        + f" vs threshold {result.threshold}; stopped at level {result.stopped_at} ({result.reason})"
    ]
    placeholder = result.config.placeholder_summary_tokens
    level3 = {
        "placeholder": f"estimate: level 3's LLM summary is not run, priced at {placeholder} tokens",
        "llm": "level 3 ran: the summary was written by the model",
        "fallback": f"level 3 failed ({result.level3_error}): the level-2 rule summary was kept",
    }.get(result.summary_source)
    if level3:
        notes.append(level3)
    truncated = len(result.truncated) - sum(
        1 for i in result.folded if result.rows.truncations[i].cut
    )
    return After(
        compressed=result.stopped_at > 1 or bool(result.truncated),
        reason=result.reason,
        source="replay",
        messages=result.messages_after,
        tokens_after=result.counted_after,
        llm_calls=result.llm_calls,
        at_risk=result.summary_source == "placeholder",
        notes=notes,
        truncated=truncated,
        findings=result.findings,
        record={"hybrid": result.to_json(with_outcomes=False)["hybrid"]},
        native=result,
    )


def _gauge(result: HybridResult, after_level_1: Sequence[int], fixed: int) -> Gauge:
    """The context after the pipeline: system+tools, kept middle, summary, recent turns."""
    folded = set(result.folded)
    start = result.recent_start
    before_window = sum(e for i, e in enumerate(after_level_1[:start]) if i not in folded)
    recent = sum(after_level_1[start:])
    summary = max(result.estimate_after - fixed - before_window - recent, 0)
    return Gauge(
        fixed=fixed,
        parts=(("prefix", before_window), ("summary", summary), ("tail", recent)),
        total=result.estimate_after,
        threshold=result.threshold,
        minimum=0,
        scale=result.config.max_context_tokens,
        labels={"prefix": "kept before window", "summary": "summary", "tail": "recent turns"},
        note="HybridCompressor: the context after the pipeline (chars/4 estimates)",
    )


def _summary(result: HybridResult) -> str:
    """The water level before and after, and what each level did."""
    cut = sum(1 for t in result.rows.truncations if t.cut)  # no outcome objects: 20k rows
    folded = "summarized" if result.stopped_at == 3 else "folded"
    calls = f"{result.llm_calls} LLM call" + ("s" if result.llm_calls != 1 else "")
    return (
        f"estimate {result.estimate_before:,} -> {result.estimate_after:,} (threshold "
        f"{result.threshold:,})  ·  {cut} cut (level 1)  ·  {len(result.folded)} {folded}  ·  {calls}"
    )


def _default_values(settings: Settings, name: str) -> list[Any]:
    if name == "compression_threshold":
        return [round(0.05 * i, 2) for i in range(2, 21)]
    if name == "preserve_recent_turns":
        return list(range(0, 13))
    if name == "max_tool_output_length":
        return [250, 500, 1000, 2000, 4000, 8000, 16000]
    base = getattr(settings, name)
    factors = (0.25, 0.5, 0.75, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0, 3.0)
    return sorted({max(int(base * f), 1) for f in factors})


HYBRID = HybridStrategy()
