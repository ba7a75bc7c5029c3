"""Why did (or didn't) it compress: ordered checks with numbers and plain sentences, and findings.

The checks follow openJiuwen's trigger order (model configured, total vs threshold, span,
target vs minimum); checks after the first failing one are still computed and marked
"skip" so the user sees what would come next. Findings are pitfalls worth a warning.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from inspector.core.artifact import Artifact
from inspector.core.checks import (  # noqa: F401 - re-exported
    Check,
    CheckStatus,
    Finding,
    Severity,
    by_severity,
)
from inspector.core.compaction import DEFAULT_WRAPPERS
from inspector.core.engine import ContextEngine, Evaluation, PricedContext
from inspector.core.findings.base import FindingInput, facts_of, predict_reinjected
from inspector.core.findings.registry import run_findings
from inspector.core.messages import INTERNAL_USER_PREFIXES, Message
from inspector.core.snapshot import ContextSnapshot
from inspector.core.tuning import Tuning


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """An evaluation explained."""

    evaluation: Evaluation
    checks: tuple[Check, ...]
    findings: tuple[Finding, ...]
    exact_counting: bool
    counting_note: str


def n(value: int | float) -> str:
    """A number with thousands separators (ratios shown as given)."""
    if isinstance(value, float) and not value.is_integer():
        return f"{value:g}"
    return f"{int(value):,}"


def _plural(count: int, word: str) -> str:
    return f"{n(count)} {word}" + ("" if count == 1 else "s")


_MODE_WORDS = {
    "tiktoken_cl100k": "cl100k",
    "len_div_4": "len//4",
    "string_length": "StringLengthCounter (len//3)",
}


def diagnose(
    engine: ContextEngine,
    tuning: Tuning,
    artifact: Artifact | None = None,
    counting_note: str = "",
) -> Diagnosis:
    """Evaluate `tuning` on the engine's context and explain every step."""
    priced = engine.priced(tuning.token_mode)
    evaluation = priced.evaluate(tuning)
    exact = priced.counter.exact
    checks = _checks(priced, tuning, evaluation, artifact)
    findings = _findings(priced, tuning, evaluation, artifact, exact, counting_note)
    findings += run_findings(_finding_input(engine.snapshot, priced, tuning, evaluation, artifact))
    return Diagnosis(evaluation, tuple(checks), tuple(by_severity(findings)), exact, counting_note)


def _added_tokens(priced: PricedContext, processor: str) -> int:
    """What a compaction adds besides the summary and the files: at least the memory block's
    wrapper around an empty summary (`core.compaction`)."""
    wrapper = DEFAULT_WRAPPERS.get(processor, DEFAULT_WRAPPERS["current_round"])
    return priced.counter.message_tokens(Message(role="user", content=wrapper.wrap("")))


def _finding_input(
    snapshot: ContextSnapshot,
    priced: PricedContext,
    tuning: Tuning,
    ev: Evaluation,
    artifact: Artifact | None,
) -> FindingInput:
    """The pitfall findings' input from a forked evaluation (`inspector.core.findings`)."""
    start, end = ev.span.compress
    predicted: tuple[str, ...] | None = None
    extra: dict[str, Any] = {}
    if ev.hit and end > start:
        predicted, tokens = predict_reinjected(facts_of(snapshot), (start, end), priced.pieces)
        extra = {
            "predicted_tokens": tokens,
            "compress_tokens": priced.count_range(start, end),
            "added_tokens": _added_tokens(priced, tuning.processor) if predicted else 0,
        }
    usage = priced.usage
    return FindingInput(
        snapshot=snapshot,
        artifact=artifact,
        family="forked",
        processor=tuning.processor,
        hit=ev.hit,
        reason=ev.reason,
        compress=(start, end),
        total_tokens=ev.total_tokens,
        threshold=ev.threshold,
        context_max=tuning.context_max,
        counter=priced.counter,
        counted_total=priced.counted_total if usage.value is not None else None,
        usage_index=usage.index if usage.value is not None else None,
        usage_total=usage.total_tokens if usage.value is not None else None,
        last_real_user=priced.last_real_user_index,
        predicted_files=predicted,
        extra=extra,
    )


# --- checks ---------------------------------------------------------------------------


def _checks(
    priced: PricedContext, tuning: Tuning, ev: Evaluation, artifact: Artifact | None
) -> list[Check]:
    checks: list[Check] = []
    if artifact is not None and artifact.kind in ("dump", "debug"):
        checks.append(
            Check(
                "model_configured",
                "compressor model configured",
                "pass",
                "openJiuwen wrote records for this run, so model and model_client were configured",
            )
        )
    else:
        checks.append(
            Check(
                "model_configured",
                "compressor model configured",
                "info",
                "assumed: without model and model_client openJiuwen never triggers and writes no record",
            )
        )
    checks.append(_threshold_check(priced, tuning, ev))
    reached = ev.total_tokens >= ev.threshold
    span_check = _span_check(priced, tuning, ev)
    if not reached:
        span_check = _skipped(span_check)
    checks.append(span_check)
    target_check = _target_check(priced, tuning, ev)
    if not reached or span_check.status == "fail":
        target_check = _skipped(target_check)
    checks.append(target_check)
    return checks


def _skipped(check: Check) -> Check:
    return Check(check.key, check.title, "skip", "(not reached) " + check.sentence, check.numbers)


def _threshold_check(priced: PricedContext, tuning: Tuning, ev: Evaluation) -> Check:
    reached = ev.total_tokens >= ev.threshold
    sign = ">=" if reached else "<"
    head = (
        f"total {n(ev.total_tokens)} {sign} threshold {n(ev.threshold)} "
        f"({n(tuning.trigger_ratio)} x {n(tuning.context_max)})"
    )
    usage = priced.usage
    numbers: dict[str, Any] = {
        "total_tokens": ev.total_tokens,
        "threshold": ev.threshold,
        "trigger_ratio": tuning.trigger_ratio,
        "context_max": tuning.context_max,
    }
    if usage.value is not None and usage.index is not None:
        after = len(priced.system_messages) + priced.n - usage.index - 1
        where = _position(priced, usage.index)
        how = (
            f"usage baseline {n(usage.total_tokens or 0)} from {where} plus "
            f"{n(usage.tail_tokens)} (len//{priced.counter.tail_divisor}) for the "
            f"{_plural(after, 'message')} after it"
        )
        numbers.update(
            path="usage_baseline",
            usage_total_tokens=usage.total_tokens,
            usage_tail_tokens=usage.tail_tokens,
        )
    else:
        mode = _MODE_WORDS.get(tuning.token_mode, tuning.token_mode)
        how = (
            f"counted with {mode} over {_plural(len(priced.system_messages), 'system message')}, "
            f"{_plural(priced.n, 'context message')} and {_plural(len(priced.tools), 'tool')}"
        )
        numbers.update(
            path="counted", messages_tokens=priced.messages_tokens, tools_tokens=priced.tools_tokens
        )
    if not reached:
        how += f"; {n(ev.threshold - ev.total_tokens)} short"
    return Check(
        "threshold",
        "total reaches the threshold",
        "pass" if reached else "fail",
        f"{head}: {how}",
        numbers,
    )


def _position(priced: PricedContext, index_in_all: int) -> str:
    system_count = len(priced.system_messages)
    if index_in_all < system_count:
        return f"system message #{index_in_all}"
    return f"assistant message #{index_in_all - system_count}"


def _span_check(priced: PricedContext, tuning: Tuning, ev: Evaluation) -> Check:
    counts = ev.span.counts
    size = counts["messages_to_compress"]
    last_user = priced.last_real_user_index
    numbers: dict[str, Any] = {
        **counts,
        "last_real_user_index": last_user,
        "effective_keep": ev.effective_keep,
    }
    title = "there is something to compress"
    if size > 0:
        start, end = ev.span.compress
        return Check(
            "span",
            title,
            "pass",
            f"the region to compress is messages #{start}..#{end - 1} ({_plural(size, 'message')}); "
            f"prefix {counts['preserved_prefix']}, tail {counts['protected_tail']}",
            numbers,
        )
    if tuning.processor in ("current_round", "dialogue") and last_user < 0:
        internal = sum(1 for m in priced.messages if m.role == "user")
        reason = "there is no real user message" + (
            f": all {_plural(internal, 'user message')} start with an internal prefix "
            f"({', '.join(INTERNAL_USER_PREFIXES[:2])}, ...)"
            if internal
            else ""
        )
        return Check("span", title, "fail", f"no_compressible_span: {reason}", numbers)
    if tuning.processor == "current_round":
        after_user = priced.n - last_user - 1
        if after_user == 0:
            sentence = f"the last real user message #{last_user} is the last message: nothing comes after it"
        else:
            keep_text = _keep_text(tuning, ev)
            sentence = (
                f"the {_plural(after_user, 'message')} after the last real user message #{last_user} "
                f"all fall in the protected tail ({keep_text})"
            )
        return Check("span", title, "fail", f"no_compressible_span: {sentence}", numbers)
    if tuning.processor == "dialogue":
        sentence = (
            f"nothing comes before the kept tail: the last real user message is #{last_user}"
            + (
                f" and the tool boundary pulled the tail back to #{ev.span.tail[0]}"
                if ev.span.tail[0] < last_user
                else ""
            )
        )
        return Check("span", title, "fail", f"no_compressible_span: {sentence}", numbers)
    sentence = (
        f"the protected tail covers all {_plural(priced.n, 'message')} ({_keep_text(tuning, ev)})"
    )
    return Check("span", title, "fail", f"no_compressible_span: {sentence}", numbers)


def _keep_text(tuning: Tuning, ev: Evaluation) -> str:
    keep = tuning.keep_recent
    if ev.effective_keep is not None and ev.effective_keep > keep:
        return f"keep_recent {keep}, widened to {ev.effective_keep} by the tool boundary"
    if ev.effective_keep is not None and ev.effective_keep < keep:
        return f"keep_recent {keep} covers all {ev.effective_keep} messages"
    return f"keep_recent {keep}"


def _target_check(priced: PricedContext, tuning: Tuning, ev: Evaluation) -> Check:
    size = ev.span.counts["messages_to_compress"]
    target, minimum = ev.span_target_tokens, ev.min_target_value
    ok = target >= minimum
    sign = ">=" if ok else "below"
    sentence = (
        f"the region to compress holds {_plural(size, 'message')}, {n(target)} tokens: "
        f"{sign} the minimum {n(minimum)} ({n(tuning.min_target_ratio)} x {n(tuning.context_max)})"
    )
    if not ok:
        sentence = "target_below_min: " + sentence
    numbers = {
        "target_tokens": target,
        "min_target_tokens": minimum,
        "min_target_ratio": tuning.min_target_ratio,
    }
    return Check("min_target", "enough to compress", "pass" if ok else "fail", sentence, numbers)


# --- findings ---------------------------------------------------------------------------


def _findings(
    priced: PricedContext,
    tuning: Tuning,
    ev: Evaluation,
    artifact: Artifact | None,
    exact: bool,
    counting_note: str,
) -> list[Finding]:
    found: list[Finding] = []
    if not exact:
        found.append(
            Finding(
                "inexact_counting",
                "warning",
                "exact cl100k counting is unavailable here: counts use len//4 per piece, so numbers "
                "may differ from openJiuwen's" + (f" ({counting_note})" if counting_note else ""),
            )
        )
    if not tuning.tool_boundary:
        found.append(
            Finding(
                "hypothetical_no_tool_boundary",
                "warning",
                "tool-boundary protection is off: openJiuwen cannot do this, the result is hypothetical "
                "and may split a tool call from its result",
            )
        )
    found.extend(_boundary_findings(priced, tuning, ev))
    found.extend(_usage_findings(priced, tuning))
    if artifact is not None:
        found.extend(_artifact_findings(priced, tuning, ev, artifact))
    return found


def _boundary_findings(priced: PricedContext, tuning: Tuning, ev: Evaluation) -> list[Finding]:
    if ev.effective_keep is None or not tuning.tool_boundary:
        return []
    if tuning.processor == "dialogue":
        requested = priced.n - priced.last_real_user_index
    else:
        requested = tuning.keep_recent
    widened = ev.effective_keep - min(requested, priced.n) if requested > 0 else 0
    if widened <= 0:
        return []
    causes = priced.boundary_cause(requested)
    reused = priced.reused_call_ids()
    reused_causes = sorted({cid for cid, _, _ in causes if cid in reused})
    sentence = (
        f"the tool boundary widened the tail by {_plural(widened, 'message')} "
        f"(keep {requested} -> {ev.effective_keep}) so that tool results keep their calls"
    )
    if causes:
        first = causes[0]
        sentence += (
            f"; e.g. result #{first[1]} (id {first[0]!r}) belongs to the call at #{first[2]}"
        )
    if reused_causes:
        shown = ", ".join(
            f"{cid!r} at #" + ", #".join(str(i) for i in reused[cid][:4])
            for cid in reused_causes[:3]
        )
        sentence += f". Reused tool-call ids pull the split back to the earliest assistant that used them: {shown}"
    return [
        Finding(
            "tool_boundary_widened",
            "warning" if reused_causes else "info",
            sentence,
            {
                "requested_keep": requested,
                "effective_keep": ev.effective_keep,
                "widened_by": widened,
                "reused_ids": reused_causes,
            },
        )
    ]


def _usage_findings(priced: PricedContext, tuning: Tuning) -> list[Finding]:
    usage = priced.usage
    found: list[Finding] = []
    if usage.value is not None:
        found.append(
            Finding(
                "usage_baseline_used",
                "info",
                f"the total uses the model's own usage record ({n(usage.total_tokens or 0)} total_tokens) "
                f"plus len//{priced.counter.tail_divisor} of later messages; counted with the tokenizer it would be "
                f"{n(priced.counted_total)}",
                {
                    "usage_total_tokens": usage.total_tokens,
                    "tail_tokens": usage.tail_tokens,
                    "counted_total": priced.counted_total,
                },
            )
        )
    if usage.skipped_stale:
        found.append(
            Finding(
                "usage_baseline_stale",
                "info",
                f"{_plural(usage.skipped_stale, 'newer usage record')} skipped: marked context_usage_stale "
                "(openJiuwen marks every kept usage record stale after a compression)",
                {"skipped_stale": usage.skipped_stale},
            )
        )
    if usage.skipped_zero:
        found.append(
            Finding(
                "usage_baseline_zero",
                "info",
                f"{_plural(usage.skipped_zero, 'usage record')} skipped: total_tokens is 0 or missing",
                {"skipped_zero": usage.skipped_zero},
            )
        )
    return found


def _artifact_findings(
    priced: PricedContext, tuning: Tuning, ev: Evaluation, artifact: Artifact
) -> list[Finding]:
    found: list[Finding] = []
    recorded_mode = artifact.recorded_token_mode
    if recorded_mode and recorded_mode != tuning.token_mode:
        found.append(
            Finding(
                "token_mode_differs",
                "warning",
                f"counting with {_MODE_WORDS.get(tuning.token_mode, tuning.token_mode)} while the source "
                f"was counted with {_MODE_WORDS.get(recorded_mode, recorded_mode)}",
                {"recorded": recorded_mode, "used": tuning.token_mode},
            )
        )
    recorded = artifact.recorded
    check = recorded.get("threshold_check")
    if isinstance(check, Mapping):
        found.extend(_compare_recorded(check, ev, artifact))
    for retry in recorded.get("retries") or ():
        if not isinstance(retry, Mapping):
            continue
        message = str(retry.get("error_message") or "").lower()
        if retry.get("error_type") == "context_overflow" and (
            "429" in message.replace("413", "")
            or any(
                word in message
                for word in ("rate limit", "rate_limit", "ratelimit", "too many requests")
            )
        ):
            found.append(
                Finding(
                    "rate_limit_taken_for_overflow",
                    "warning",
                    f"attempt {retry.get('attempt')}: openJiuwen classified a rate-limit error as a context "
                    "overflow (any '413' in the error text counts) and shrank the span instead of waiting",
                    {"attempt": retry.get("attempt")},
                )
            )
    if artifact.after:
        found.extend(_after_findings(priced, artifact))
    return found


def _compare_recorded(
    check: Mapping[str, Any], ev: Evaluation, artifact: Artifact
) -> list[Finding]:
    pairs = [("total_tokens", ev.total_tokens), ("threshold", ev.threshold), ("reason", ev.reason)]
    differences = [
        (k, check.get(k), ours) for k, ours in pairs if k in check and check.get(k) != ours
    ]
    if not differences:
        return [
            Finding(
                "recorded_matches",
                "info",
                f"re-evaluation agrees with openJiuwen's record: {check.get('reason')}, total "
                f"{n(ev.total_tokens)}, threshold {n(ev.threshold)}",
            )
        ]
    text = "; ".join(f"{k} recorded {v} vs re-evaluated {o}" for k, v, o in differences)
    why = ""
    if artifact.kind == "dump":
        why = (
            ": a dump only keeps the context after compression, where openJiuwen marked every kept "
            "usage record stale, so a total built on a usage baseline cannot be recomputed exactly"
        )
    elif artifact.snapshot is not None:
        why = ": the tuning or counting mode differs from the recorded run"
    return [
        Finding(
            "recorded_differs",
            "warning",
            text + why,
            {"differences": [list(d) for d in differences]},
        )
    ]


def _after_findings(priced: PricedContext, artifact: Artifact) -> list[Finding]:
    after = artifact.after or ()
    found: list[Finding] = []
    called: set[str] = set()
    for index, message in enumerate(after):
        if message.role == "assistant":
            called.update(message.call_ids)
        elif message.role == "tool" and message.tool_call_id and message.tool_call_id not in called:
            found.append(
                Finding(
                    "orphan_tool_result_after",
                    "warning",
                    f"after compression, tool result #{index} (id {message.tool_call_id!r}) has no call "
                    "before it: an overflow shrink split the pair, and OpenAI-style APIs reject such a context",
                    {"index": index},
                )
            )
            break
    counter = priced.counter
    for message in after:
        if (
            message.role == "user"
            and isinstance(message.content, str)
            and message.content.lstrip().startswith("<recovered_context>")
        ):
            reinjected = counter.message_tokens(message)
            total_after = counter.count_messages(after)
            if total_after:
                share = reinjected / total_after
                found.append(
                    Finding(
                        "reinjection_share",
                        "warning" if share >= 0.5 else "info",
                        f"the re-injected <recovered_context> message is {n(reinjected)} of the "
                        f"{n(total_after)} tokens left after compression ({share:.0%})",
                        {"reinjected_tokens": reinjected, "tokens_after": total_after},
                    )
                )
            break
    return found
