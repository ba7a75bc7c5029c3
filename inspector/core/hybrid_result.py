"""What one HybridCompressor decision is: per-message outcomes, water levels, checks, JSON.

Pure values built by `inspector.core.hybrid`. Must not import anything outside the
standard library and `inspector.core`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from inspector.core.checks import Check, Finding
from inspector.core.hybrid_config import HybridConfig, alignment_check
from inspector.core.hybrid_truncate import Truncation
from inspector.core.messages import Message

Outcome = Literal["kept", "truncated", "folded", "summarized"]
Protection = Literal["system_prompt", "latest_user_task", "in_flight", "recent_turn"]
Stage = Literal["raw", "level_1", "level_2", "level_3"]
SummarySource = Literal["none", "rule", "llm", "fallback", "placeholder"]
Reason = Literal[
    "below_threshold",
    "compressed_at_level_1",
    "compressed_at_level_2",
    "compressed_at_level_3",
    "still_above_threshold",
]

SUMMARY_PREFIX = "[CONTEXT SUMMARY"
SUMMARY_SECTIONS: tuple[str, ...] = ("Task", "Progress", "State", "Key Data")
_FILE_ARG_KEYS = ("file_path", "path", "filepath", "filename", "file", "target_file", "paths")

# --- results ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """What level 3 asks the LLM: the prompt and the middle messages to summarise."""

    prompt: str
    messages: tuple[Message, ...]
    max_words: int


Summarizer = Callable[[SummaryRequest], "str | Awaitable[str]"]


@dataclass(frozen=True, slots=True)
class MessageOutcome:
    """What the pipeline did to one context message."""

    index: int
    role: str
    turn: int
    outcome: Outcome
    truncation: Truncation
    protected_by: Protection | None
    estimate_before: int
    estimate_after_level_1: int

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        out: dict[str, Any] = {
            "index": self.index,
            "role": self.role,
            "turn": self.turn,
            "outcome": self.outcome,
            "protected_by": self.protected_by,
        }
        if self.truncation.cut:
            out["branch"] = self.truncation.branch
            out["chars_removed"] = self.truncation.chars_removed
        return out


@dataclass(frozen=True, slots=True)
class WaterLevel:
    """The estimate after one stage, and whether it is above the threshold."""

    stage: Stage
    estimated_tokens: int
    above_threshold: bool


@dataclass(frozen=True, slots=True)
class _Rows:
    """Per-message arrays of one decision; MessageOutcome objects are built from them on demand."""

    roles: tuple[str, ...]
    turns: Sequence[int]
    truncations: Sequence[Truncation]
    protection: Sequence[Protection | None]
    est_original: Sequence[int]
    est_level1: Sequence[int]
    folded: frozenset[int]
    summarized: bool

    def outcome(self, index: int) -> MessageOutcome:
        """What happened to message `index`."""
        truncation = self.truncations[index]
        if index in self.folded:
            outcome: Outcome = "summarized" if self.summarized else "folded"
        elif truncation.cut:
            outcome = "truncated"
        else:
            outcome = "kept"
        return MessageOutcome(
            index=index,
            role=self.roles[index],
            turn=self.turns[index],
            outcome=outcome,
            truncation=truncation,
            protected_by=self.protection[index],
            estimate_before=self.est_original[index],
            estimate_after_level_1=self.est_level1[index],
        )


@dataclass(frozen=True)
class HybridResult:
    """The pipeline's full decision on one context (per-message outcomes built on first use)."""

    config: HybridConfig
    threshold: int
    hit: bool
    reason: Reason
    stopped_at: int
    water_levels: tuple[WaterLevel, ...]
    rows: _Rows = field(repr=False)
    system_messages: tuple[Message, ...]
    messages_after: tuple[Message, ...]
    recent_start: int
    kept_middle: tuple[int, ...]
    folded: tuple[int, ...]
    summary_source: SummarySource
    summary_text: str | None
    llm_calls: int
    llm_call_made: bool
    level3_error: str | None
    findings: tuple[Finding, ...]
    counted_before: int | None = None
    counted_after: int | None = None
    counter_mode: str | None = None
    #: Our count of the whole request (system + messages + tools) as loaded, when a counter was given.
    counted_request: int | None = None
    estimator: str = "chars/4"
    summary_request: SummaryRequest | None = field(default=None, repr=False)

    @functools.cached_property
    def outcomes(self) -> tuple[MessageOutcome, ...]:
        """What the pipeline did to each context message, in order."""
        return tuple(self.rows.outcome(i) for i in range(len(self.rows.roles)))

    def outcome(self, index: int) -> MessageOutcome:
        """What the pipeline did to one message (cheap: no list of all outcomes is built)."""
        return self.rows.outcome(index)

    @property
    def event(self) -> dict[str, Any] | None:
        """The runtime's `ContextCompressed(before, after, strategy)` for this decision, or None.

        Level 1 alone emits none: it runs on arrival and is not a compression of the context.
        """
        if self.stopped_at < 2 or not self.folded:
            return None
        strategy = (
            "LlmSummaryCompressor"
            if self.summary_source in ("llm", "placeholder")
            else "SlidingWindowCompressor"
        )
        return {
            "type": "ContextCompressed",
            "before": self.water_levels[1].estimated_tokens,
            "after": self.estimate_after,
            "strategy": strategy,
            "messages_folded": len(self.folded),
        }

    @property
    def message_count(self) -> int:
        """How many context messages went in."""
        return len(self.rows.roles)

    @property
    def estimate_before(self) -> int:
        """The raw water level (as loaded)."""
        return self.water_levels[0].estimated_tokens

    @property
    def estimate_after(self) -> int:
        """The water level after the last stage that ran."""
        return self.water_levels[-1].estimated_tokens

    @property
    def truncated(self) -> tuple[MessageOutcome, ...]:
        """Outcomes of the tool outputs level 1 cut."""
        return tuple(self.rows.outcome(i) for i, t in enumerate(self.rows.truncations) if t.cut)

    @property
    def span_counts(self) -> dict[str, int]:
        """openJiuwen-like counts: kept before the summary / folded / protected recent window."""
        n = self.message_count
        return {
            "preserved_prefix": len(self.kept_middle),
            "messages_to_compress": len(self.folded),
            "protected_tail": n - self.recent_start,
        }

    def checks(self) -> tuple[Check, ...]:
        """The ordered checks of the why panel: the water level after each stage, then alignment."""
        out: list[Check] = []
        counted = (
            f"; our {self.counter_mode} count of the same is {self.counted_request}"
            if self.counted_request is not None
            else ""
        )
        out.append(
            Check(
                "hybrid_estimator",
                "Estimator",
                "info",
                f"{self.estimator} estimate of system prompt + messages + tool schemas: "
                f"{self.estimate_before}{counted}. An estimate decides every level.",
                {"estimated_tokens": self.estimate_before, "counted_tokens": self.counted_request},
            )
        )
        titles = {
            "raw": "Water level as loaded",
            "level_1": "Level 1 · ToolOutputTruncator (free, always on)",
            "level_2": "Level 2 · SlidingWindowCompressor (free)",
            "level_3": "Level 3 · LlmSummaryCompressor (one LLM call)",
        }
        seen = {w.stage for w in self.water_levels}
        for level in self.water_levels:
            relation = "above" if level.above_threshold else "at or under"
            sentence = f"{level.estimated_tokens} estimated tokens, {relation} the threshold {self.threshold}"
            if level.stage == "raw":
                sentence += f" (= floor({self.config.max_context_tokens} x {self.config.compression_threshold}))"
            elif level.stage == "level_1":
                cut = [t for t in self.rows.truncations if t.cut]
                removed = sum(t.chars_removed for t in cut)
                sentence += f"; {len(cut)} tool outputs cut by shape, {removed} characters removed"
            elif level.stage == "level_2":
                sentence += (
                    f"; {len(self.folded)} messages folded into one rule summary, "
                    f"{self.message_count - self.recent_start} kept in the last "
                    f"{self.config.preserve_recent_turns} turns"
                )
            elif level.stage == "level_3":
                sentence += {
                    "llm": "; the middle summarised by the LLM",
                    "fallback": f"; the LLM call failed ({self.level3_error}), the level-2 summary is kept",
                    "placeholder": (
                        "; not run here: the summary is priced at "
                        f"{self.config.placeholder_summary_tokens} tokens"
                    ),
                }.get(self.summary_source, "")
            if level.stage != "raw" and self.stopped_at == int(level.stage[-1]):
                sentence += ". The pipeline stops here."
            out.append(
                Check(
                    f"hybrid_{level.stage}",
                    titles[level.stage],
                    "fail" if level.above_threshold else "pass",
                    sentence,
                    {"estimated_tokens": level.estimated_tokens, "threshold": self.threshold},
                )
            )
        for stage in ("level_2", "level_3"):
            if stage not in seen:
                out.append(
                    Check(
                        f"hybrid_{stage}",
                        titles[stage],
                        "skip",
                        "not needed: an earlier level was enough",
                    )
                )
        out.append(self._alignment_check())
        return tuple(out)

    def _alignment_check(self) -> Check:
        """The engine budget against the model's usable window."""
        mismatch = alignment_check(self.config)
        return Check(
            "hybrid_alignment",
            "Engine budget vs model window",
            "pass"
            if mismatch is None
            else "info"
            if mismatch.key == "model_window_unknown"
            else "fail",
            f"engine budget {self.config.max_context_tokens} vs the model's usable window "
            f"{self.config.usable_window} (= context_window {self.config.context_window} - "
            f"reserved_output_tokens {self.config.reserved_output_tokens})"
            + (
                ": they agree"
                if mismatch is None
                else ": the model window is not known"
                if mismatch.key == "model_window_unknown"
                else ": they disagree (see findings)"
            ),
            {
                "max_context_tokens": self.config.max_context_tokens,
                "usable_window": self.config.usable_window,
            },
        )

    def to_json(self, with_outcomes: bool = True) -> dict[str, Any]:
        """The decision fields of `why --json` for `--processor hybrid`, plus a `hybrid` block."""
        middle_estimate = sum(self.rows.est_level1[i] for i in self.folded)
        out: dict[str, Any] = {
            "processor": "hybrid",
            "hit": self.hit,
            "reason": self.reason,
            "total_tokens": self.estimate_before,
            "threshold": self.threshold,
            "target_tokens": middle_estimate if self.folded else None,
            "min_target_tokens": None,
            "effective_keep": self.message_count - self.recent_start,
            "span": self.span_counts,
            "checks": [c.to_dict() for c in self.checks()],
            "findings": [f.to_dict() for f in self.findings],
            "hybrid": {
                "estimator": self.estimator,
                "stopped_at": self.stopped_at,
                "event": self.event,
                "water_levels": [
                    {
                        "stage": w.stage,
                        "estimated_tokens": w.estimated_tokens,
                        "above_threshold": w.above_threshold,
                    }
                    for w in self.water_levels
                ],
                "truncated": sum(1 for t in self.rows.truncations if t.cut),
                "chars_removed": sum(t.chars_removed for t in self.rows.truncations if t.cut),
                "folded": len(self.folded),
                "summary_source": self.summary_source,
                "llm_calls": self.llm_calls,
                "llm_call_made": self.llm_call_made,
                "level3_error": self.level3_error,
                "messages_after": len(self.messages_after),
                "counted_before": self.counted_before,
                "counted_after": self.counted_after,
                "counter_mode": self.counter_mode,
                "counted_request": self.counted_request,
                "config": {
                    k: v for k, v in dataclasses.asdict(self.config).items() if k != "given"
                },
            },
        }
        if with_outcomes:
            out["hybrid"]["messages"] = [o.to_dict() for o in self.outcomes]
        return out
