"""Findings of a HybridCompressor decision: budget vs window, frequent cuts, the estimator.

Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

from collections import Counter
from typing import Protocol

from inspector.core.checks import Finding
from inspector.core.hybrid_config import HybridConfig, alignment_check
from inspector.core.hybrid_result import HybridResult, WaterLevel
from inspector.core.hybrid_truncate import Truncation
from inspector.core.messages import Message
from inspector.core.tokens import TokenCounter


class _Plan(Protocol):
    """What the findings read of the pipeline's plan (`inspector.core.hybrid._Plan`)."""

    config: HybridConfig
    threshold: int
    truncations: list[Truncation]
    est_level1: list[int]
    fixed: int
    turns: list[int]
    recent_start: int
    kept_middle: list[int]
    middle: list[int]
    levels: list[WaterLevel]
    stage: int
    notes: list[str]

    @property
    def original(self) -> tuple[Message, ...]: ...

    @property
    def counter(self) -> TokenCounter | None: ...


def kept_estimate(plan: _Plan) -> int:
    """System prompt, tools, protected middle and recent window (everything but the summary)."""
    return (
        plan.fixed
        + sum(plan.est_level1[i] for i in plan.kept_middle)
        + sum(plan.est_level1[plan.recent_start :])
    )


def hybrid_findings(plan: _Plan, result: HybridResult) -> list[Finding]:
    """Every finding of a decision, in the order the levels run."""
    out: list[Finding] = []
    mismatch = alignment_check(plan.config)
    if mismatch is not None:
        out.append(mismatch)
    out += _level1_findings(plan)
    if plan.stage >= 2:
        out += _level2_findings(plan, result)
    if plan.stage == 3:
        out += _level3_findings(plan, result)
    out += _estimator_findings(plan, result)
    return out


def _level1_findings(plan: _Plan) -> list[Finding]:
    """Tool outputs level 1 cut."""
    out: list[Finding] = []
    config = plan.config
    cut = [(i, t) for i, t in enumerate(plan.truncations) if t.cut]
    if cut:
        branches = Counter(t.branch for _, t in cut)
        biggest_index, biggest = max(cut, key=lambda item: item[1].chars_before)
        out.append(
            Finding(
                "tool_outputs_truncated",
                "info",
                f"level 1 cut {len(cut)} tool outputs over {config.max_tool_output_length} chars "
                f"({', '.join(f'{b} ×{n}' for b, n in branches.most_common())}), "
                f"{sum(t.chars_removed for _, t in cut)} chars removed; the largest was "
                f"message {biggest_index} ({biggest.chars_before} chars). Frequent large "
                "outputs (whole files, whole pages) make compression fire often: prefer narrower tools.",
                {"count": len(cut), "branches": dict(branches)},
            )
        )
    return out


def _level2_findings(plan: _Plan, result: HybridResult) -> list[Finding]:
    """The protected part, the window's size, what level 2 could not fold or folded."""
    out: list[Finding] = []
    config = plan.config
    protected = kept_estimate(plan)
    if protected > plan.threshold:
        out.append(
            Finding(
                "protected_part_above_threshold",
                "warning",
                f"the never-compressed part alone (system prompt, tools, latest task, "
                f"in-flight calls and the last {config.preserve_recent_turns} turns) is "
                f"{protected} estimated tokens, above the threshold {plan.threshold}: no level "
                "can bring the context under it. Lower preserve_recent_turns or shorten tool outputs.",
                {"protected_tokens": protected, "threshold": plan.threshold},
            )
        )
    level2 = next((w for w in plan.levels if w.stage == "level_2"), None)
    if level2 is not None and result.folded and level2.estimated_tokens < plan.threshold // 2:
        room = plan.threshold - level2.estimated_tokens
        per_turn: dict[int, int] = {}
        for index in plan.middle:
            per_turn[plan.turns[index]] = (
                per_turn.get(plan.turns[index], 0) + plan.est_level1[index]
            )
        more = 0
        for turn in sorted(per_turn, reverse=True):  # the most recent folded turns first
            room -= per_turn[turn]
            if room < 0:
                break
            more += 1
        if more:
            out.append(
                Finding(
                    "window_overshoot",
                    "info",
                    f"level 2 left {level2.estimated_tokens} estimated tokens, "
                    f"{100 * level2.estimated_tokens // max(plan.threshold, 1)}% of the threshold "
                    f"{plan.threshold}: the window keeps exactly {config.preserve_recent_turns} turns, "
                    f"so about {more} more recent turn(s) would have fitted verbatim; raising "
                    f"preserve_recent_turns to {config.preserve_recent_turns + more} loses less at no cost.",
                    {"estimated_tokens": level2.estimated_tokens, "more_turns": more},
                )
            )
    if "nothing_to_fold" in plan.notes:
        out.append(
            Finding(
                "nothing_to_fold",
                "warning",
                "level 2 is needed but every message before the recent window is protected: "
                "nothing can be folded or summarised.",
            )
        )
    folded_users = [i for i in result.folded if plan.original[i].is_real_user]
    if folded_users:
        out.append(
            Finding(
                "user_messages_folded",
                "warning",
                f"{len(folded_users)} earlier user message(s) were folded into the summary "
                f"(indices {folded_users[:8]}): an agreement or constraint stated there may be "
                "forgotten. Raise preserve_recent_turns or move it into the system prompt.",
                {"indices": folded_users},
            )
        )
    return out


def _level3_findings(plan: _Plan, result: HybridResult) -> list[Finding]:
    """The cost of level 3 and how its summary came back."""
    out: list[Finding] = []
    out.append(
        Finding(
            "llm_summary_needed",
            "info",
            "level 2 was not enough: level 3 costs one LLM call every time the pipeline gets "
            "this far; long tasks then get slower and slower. Split the task or write "
            "intermediate results to files.",
            {"llm_calls": 1, "summary_source": result.summary_source},
        )
    )
    if result.level3_error is not None:
        out.append(
            Finding(
                "llm_summary_failed",
                "warning",
                f"the level-3 LLM call failed ({result.level3_error}); the level-2 rule summary was used instead.",
            )
        )
    for note in plan.notes:
        if note.startswith("summary "):
            out.append(Finding("llm_summary_format", "info", note))
    return out


def _estimator_findings(plan: _Plan, result: HybridResult) -> list[Finding]:
    """The chars/4 estimate against the counter."""
    out: list[Finding] = []
    if (
        result.counted_request is not None
        and plan.counter is not None
        and result.estimator == "chars/4"
    ):
        counted_total = result.counted_request
        estimate = result.estimate_before
        if counted_total > estimate * 1.1:
            out.append(
                Finding(
                    "estimator_undercounts",
                    "warning",
                    f"the chars/4 estimate ({estimate}) is {100 * (counted_total - estimate) // max(estimate, 1)}% "
                    f"below the {plan.counter.mode} count ({counted_total}): the model sees more than "
                    "the engine thinks. Use a lower compression_threshold as a safety margin.",
                    {"estimated_tokens": estimate, "counted_tokens": counted_total},
                )
            )
    return out
