"""A re-run of the compaction as data: attempts (the timeline), outcome, findings, records.

Filled by `inspector.llm.rerun_compaction`; read by the CLI report, the TUI before/after
view and the dump writer. `rerun_findings` and `debug_records` are pure functions of it.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from inspector.core.compaction import (
    Compaction,
    DumpIdentity,
    MemoryWrapper,
    debug_record,
    has_state_snapshot,
    span_preview,
)
from inspector.core.engine import Evaluation, Span
from inspector.core.model_errors import ErrorKind, HttpFailure, describe_failure, describe_kind
from inspector.core.releases.profiles import NEWEST_PROFILE, ReleaseProfile
from inspector.core.snapshot import ContextSnapshot
from inspector.core.summary_loss import LostItem
from inspector.core.tuning import Tuning

#: What happened after one attempt.
AttemptAction = Literal["accepted", "shrink", "backoff", "stop"]
#: How the whole run ended.
RerunOutcome = Literal["applied", "no_benefit", "empty_summary", "failed"]
#: Which classification drives the retry decisions.
RetryPolicy = Literal["openjiuwen", "status"]
PromptSource = Literal["recorded", "builtin", "file", "given"]


@dataclass(frozen=True, slots=True)
class Attempt:
    """One HTTP call of the run, with what the retry policy did next."""

    number: int
    span: Span
    request_messages: int
    duration_s: float
    action: AttemptAction
    status_code: int | None = None
    failure: HttpFailure | None = None
    #: openJiuwen's classification of the failure (substring rules on its error text).
    openjiuwen_kind: ErrorKind | None = None
    #: Our classification by status code and structured error code.
    status_kind: ErrorKind | None = None
    #: The joined error text openJiuwen would log (`compression_retry.error_message`).
    error_text: str | None = None
    #: openJiuwen's debug reason: budget_ratio_shrink, no_smaller_span, retry_budget_exhausted,
    #: transient_backoff; None where openJiuwen writes no record.
    reason: str | None = None
    #: The `attempt` number openJiuwen's compression_retry record carries.
    record_attempt: int | None = None
    budget_ratio: float | None = None
    delay_s: float | None = None

    @property
    def ok(self) -> bool:
        """True for the call that returned a reply."""
        return self.failure is None

    @property
    def misclassified(self) -> bool:
        """True when openJiuwen's and the status-code classification disagree."""
        return (
            self.openjiuwen_kind is not None
            and self.status_kind is not None
            and self.openjiuwen_kind != self.status_kind
        )

    def describe(self) -> str:
        """One line for a timeline: what came back and what happened next."""
        counts = self.span.counts
        head = (
            f"attempt {self.number}: span {counts['preserved_prefix']}/{counts['messages_to_compress']}/"
            f"{counts['protected_tail']}, {self.request_messages} messages sent"
        )
        if self.failure is None:
            return f"{head} -> HTTP {self.status_code}, reply accepted"
        what = describe_failure(self.failure)
        if self.action == "shrink":
            nxt = f"span shrunk with budget ratio {self.budget_ratio}"
        elif self.action == "backoff":
            nxt = f"retrying after {self.delay_s:.2f} s"
        else:
            nxt = "gave up"
        kind = f"classified {self.openjiuwen_kind}"
        if self.misclassified:
            kind += f" (by status code: {self.status_kind})"
        return f"{head} -> {what}; {kind}; {nxt}"


@dataclass(frozen=True, slots=True)
class Finding:
    """A pitfall worth a warning, in plain words."""

    code: str
    severity: Literal["info", "warning", "error"]
    message: str

    def to_dict(self) -> dict[str, str]:
        """JSON form."""
        return {"code": self.code, "severity": self.severity, "message": self.message}


@dataclass(frozen=True, slots=True)
class ModelReply:
    """The successful reply: its text, any tool calls, usage, and the model name."""

    content: str
    tool_calls: tuple[Mapping[str, Any], ...] = ()
    usage: Mapping[str, Any] | None = None
    model: str | None = None
    finish_reason: str | None = None


@dataclass(frozen=True, slots=True)
class RerunResult:
    """Everything one re-run produced, successful or not."""

    snapshot: ContextSnapshot
    tuning: Tuning
    identity: DumpIdentity
    evaluation: Evaluation
    initial_span: Span
    final_span: Span
    prompt: str
    prompt_source: PromptSource
    wrapper: MemoryWrapper
    include_tools: bool
    policy: RetryPolicy
    model: str
    attempts: tuple[Attempt, ...]
    outcome: RerunOutcome
    reply: ModelReply | None = None
    compaction: Compaction | None = None
    usage: Mapping[str, Any] | None = None
    losses: tuple[LostItem, ...] = ()
    findings: tuple[Finding, ...] = ()
    started_at: float = 0.0
    #: Plain words: why the run failed (None when a reply came back).
    failure_reason: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: The release rules the run followed (counting, previews, usage records, error text).
    profile: ReleaseProfile = NEWEST_PROFILE

    @property
    def openjiuwen_would_apply(self) -> bool:
        """True when openJiuwen would replace the context with this result."""
        return self.outcome == "applied"

    @property
    def last_failure(self) -> Attempt | None:
        """The last failed attempt, if any."""
        failed = [a for a in self.attempts if not a.ok]
        return failed[-1] if failed else None


def explain_outcome(result: RerunResult) -> str:
    """One or two plain sentences: how the run ended and what openJiuwen would do."""
    if result.outcome == "applied":
        c = result.compaction
        assert c is not None
        return (
            f"Compressed: {c.tokens_before} -> {c.tokens_after} tokens "
            f"(saves {c.reduction}, {c.reduction_ratio:.1%}). openJiuwen would apply this result."
        )
    if result.outcome == "no_benefit":
        c = result.compaction
        assert c is not None
        why = ""
        if c.reinjection_defeated_benefit:
            why = (
                f" Without the re-injected files the new context would count "
                f"{c.tokens_after_without_reinjection} tokens; the <recovered_context> message "
                f"({c.recovered_tokens} tokens) eats the savings."
            )
        return (
            f"No benefit: the new context counts {c.tokens_after} tokens against {c.tokens_before} "
            f"before, so openJiuwen would drop this result and keep the context unchanged.{why}"
        )
    if result.outcome == "empty_summary":
        if result.reply is not None and result.reply.tool_calls:
            return (
                "The model answered with a tool call and no text, so the summary is empty: "
                "openJiuwen would silently skip the compression."
            )
        return "The model's reply is empty, so there is no summary: openJiuwen would silently skip the compression."
    return f"The model call failed: {result.failure_reason or 'unknown reason'}. The context stays unchanged."


def _orphan_tool_result(result: RerunResult) -> Finding | None:
    span = result.final_span
    messages = result.snapshot.messages
    if span.tail[0] >= span.tail[1]:
        return None
    first = messages[span.tail[0]]
    if first.role != "tool":
        return None
    call_ids = {cid for m in messages[span.compress[0] : span.compress[1]] for cid in m.call_ids}
    if first.tool_call_id not in call_ids:
        return None
    return Finding(
        "orphan_tool_result",
        "warning",
        f"After the overflow shrink the kept tail starts with a tool result ({first.tool_call_id}) whose "
        "call was summarised: an OpenAI-style API rejects a tool message without its call.",
    )


def rerun_findings(result: RerunResult) -> list[Finding]:
    """Pitfalls seen in this run (misclassified errors, tools offered, quiet drops, ...)."""
    return [*_request_findings(result), *_attempt_findings(result), *_reply_findings(result)]


def _request_findings(result: RerunResult) -> list[Finding]:
    """What the request itself risks: a forced run, tools offered to the compressor model."""
    out: list[Finding] = []
    evaluation = result.evaluation
    if not evaluation.hit:
        out.append(
            Finding(
                "not_triggered",
                "info",
                f"Under the effective tuning (trigger ratio {result.tuning.trigger_ratio}) openJiuwen would "
                f"not compress this context ({evaluation.reason}: total {evaluation.total_tokens} vs "
                f"threshold {evaluation.threshold}); the re-run was forced.",
            )
        )
    if result.include_tools and result.snapshot.tools:
        out.append(
            Finding(
                "tools_offered",
                "info",
                f"The request offers the agent's {len(result.snapshot.tools)} tools with tool_choice "
                '"auto", as openJiuwen does: a model that calls one makes the compression silently do '
                "nothing (re-run with tools left out to avoid it).",
            )
        )
    return out


def _attempt_findings(result: RerunResult) -> list[Finding]:
    """What the attempts show: misclassified errors, overflow shrinks, a failed call."""
    out: list[Finding] = []
    for attempt in result.attempts:
        if attempt.misclassified:
            out.append(
                Finding(
                    "misclassified_error",
                    "warning",
                    f"Attempt {attempt.number}: openJiuwen reads this HTTP {attempt.status_code} as "
                    f"{attempt.openjiuwen_kind} ({describe_kind(attempt.openjiuwen_kind or '')}), but by its "
                    f"status code it is {attempt.status_kind} ({describe_kind(attempt.status_kind or '')}). "
                    "openJiuwen matches numbers such as '413' anywhere in the error text.",
                )
            )
    shrinks = [a for a in result.attempts if a.action == "shrink"]
    if shrinks:
        out.append(
            Finding(
                "overflow_shrink",
                "info",
                f"The span was shrunk {len(shrinks)} time(s) after overflow errors: "
                f"{result.initial_span.counts['messages_to_compress']} -> "
                f"{result.final_span.counts['messages_to_compress']} messages summarised.",
            )
        )
        orphan = _orphan_tool_result(result)
        if orphan is not None:
            out.append(orphan)
    if result.outcome == "failed" and result.last_failure is not None:
        last = result.last_failure
        quiet = last.reason is None
        out.append(
            Finding(
                "model_call_failed",
                "error",
                f"{result.failure_reason}."
                + (" openJiuwen writes no debug record for this failure." if quiet else ""),
            )
        )
    return out


def _reply_findings(result: RerunResult) -> list[Finding]:
    """What the reply and the new context show: empty or unstructured replies, no benefit,
    heavy re-injection, what the summary lost."""
    out: list[Finding] = []
    if result.outcome == "empty_summary":
        code = "tool_call_only_reply" if result.reply and result.reply.tool_calls else "empty_reply"
        out.append(Finding(code, "warning", explain_outcome(result)))
    if (
        result.reply is not None
        and result.reply.content.strip()
        and result.outcome != "empty_summary"
    ):
        if not has_state_snapshot(result.reply.content):
            out.append(
                Finding(
                    "no_state_snapshot",
                    "warning",
                    "The reply has no <state_snapshot> block, so the whole reply became the summary.",
                )
            )
    if result.compaction is not None:
        c = result.compaction
        if result.outcome == "no_benefit":
            out.append(Finding("no_benefit", "warning", explain_outcome(result)))
        elif (
            c.recovered_message is not None
            and c.tokens_after
            and c.recovered_tokens * 2 >= c.tokens_after
        ):
            out.append(
                Finding(
                    "reinjection_heavy",
                    "info",
                    f"The re-injected files take {c.recovered_tokens} of the {c.tokens_after} tokens left.",
                )
            )
    lost = [item for item in result.losses if not item.restored]
    if lost:
        kinds = {
            kind: sum(1 for i in lost if i.kind == kind) for kind in ("path", "identifier", "error")
        }
        parts = [f"{n} {kind}{'s' if n != 1 else ''}" for kind, n in kinds.items() if n]
        out.append(
            Finding(
                "summary_lost",
                "info",
                "The summary does not mention " + ", ".join(parts) + " of the replaced region.",
            )
        )
    return out


def debug_records(result: RerunResult, timestamp: float) -> list[dict[str, Any]]:
    """The context_debug records openJiuwen would append for this run (same events, same keys,
    the `span_built` previews of the run's release profile)."""
    identity = result.identity
    evaluation = result.evaluation
    threshold: dict[str, Any] = {
        "phase": "get_context_window",
        "total_tokens": evaluation.total_tokens,
        "context_max": result.tuning.context_max,
        "threshold": evaluation.threshold,
        "hit": evaluation.hit,
        "reason": evaluation.reason,
    }
    if evaluation.target_tokens is not None:
        threshold["target_tokens"] = evaluation.target_tokens
    if evaluation.min_target_tokens is not None:
        threshold["min_target_tokens"] = evaluation.min_target_tokens
    messages = result.snapshot.messages
    span = result.initial_span
    divisor = result.profile.preview_divisor
    records = [
        debug_record(identity, "threshold_check", timestamp, **threshold),
        debug_record(
            identity,
            "span_built",
            timestamp,
            phase="get_context_window",
            preserved_prefix=span_preview(messages[span.prefix[0] : span.prefix[1]], divisor),
            messages_to_compress=span_preview(
                messages[span.compress[0] : span.compress[1]], divisor
            ),
            protected_tail=span_preview(messages[span.tail[0] : span.tail[1]], divisor),
        ),
    ]
    for attempt in result.attempts:
        if attempt.reason is None:
            continue
        fields: dict[str, Any] = {
            "attempt": attempt.record_attempt,
            "error_type": (
                "context_overflow"
                if attempt.reason
                in ("budget_ratio_shrink", "no_smaller_span", "retry_budget_exhausted")
                else f"transient:{attempt.openjiuwen_kind if result.policy == 'openjiuwen' else attempt.status_kind}"
            ),
            "error_message": attempt.error_text or "",
            "retried": attempt.action in ("shrink", "backoff"),
            "reason": attempt.reason,
        }
        if attempt.budget_ratio is not None and attempt.reason == "budget_ratio_shrink":
            fields["budget_ratio"] = attempt.budget_ratio
        if attempt.delay_s is not None and attempt.reason == "transient_backoff":
            fields["delay_seconds"] = attempt.delay_s
        records.append(debug_record(identity, "compression_retry", timestamp, **fields))
    return records
