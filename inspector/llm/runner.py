"""Re-run openJiuwen's compaction for real: drive the retry policy over HTTP, build the result.

`rerun_compaction` is the one entry point (CLI and TUI worker alike). The retry rules are
the pure state machine `inspector.core.retry_policy` (overflow shrinks with budget ratios
0.85, 0.65, 0.5; transient kinds wait 0.05 s then 0.10 s; anything else stops); this module
makes the calls, waits, records each attempt and builds the `RerunResult`. What the run
does is given as `RerunOptions` (prompt, wrapper, tools, policy, counter, names); the
outside world as `RerunHooks` (HTTP transport, sleep, clock, ids, environment, a callback
per attempt), so tests swap each one.
May import `inspector.core` and httpx; never Textual or Rich.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace

import httpx

from inspector.core.compaction import (
    DEFAULT_WRAPPERS,
    Compaction,
    DumpIdentity,
    MemoryWrapper,
    build_compaction,
    extract_summary,
    merge_usage,
    processor_type,
    request_body,
    request_messages,
    require_compacting_processor,
    shrink_span,
    usage_details,
)
from inspector.core.engine import Evaluation, PricedContext, Span
from inspector.core.model_errors import HttpFailure, describe_failure
from inspector.core.releases import ReleaseProfile, choose_counting
from inspector.core.rerun import (
    Attempt,
    ModelReply,
    PromptSource,
    RerunOutcome,
    RerunResult,
    RetryPolicy,
    rerun_findings,
)
from inspector.core.retry_policy import (
    RetryState,
    RetryStep,
    SdkErrorStyle,
    classify_failure,
    on_failure,
)
from inspector.core.snapshot import ContextSnapshot
from inspector.core.summary_loss import LostItem, summary_losses
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import Tuning
from inspector.llm.client import ChatClient, EndpointConfig
from inspector.llm.errors import MissingApiKey, ModelCallFailed, NothingToCompress
from inspector.llm.prompts import builtin_prompt

Sleep = Callable[[float], Awaitable[object]]
OnAttempt = Callable[[Attempt], object]


@dataclass(frozen=True, slots=True)
class RerunOptions:
    """What to send and how to judge it; None fields take openJiuwen's defaults."""

    #: The compaction prompt (None: the inspector's built-in prompt).
    prompt: str | None = None
    prompt_source: PromptSource | None = None
    #: The memory-block wrapper (None: the processor's default).
    wrapper: MemoryWrapper | None = None
    include_tools: bool = True
    #: Which classification drives the retries: openJiuwen's text rules or the status code.
    policy: RetryPolicy = "openjiuwen"
    #: Token counter (None: the tuning's token mode under `profile`, `inspector.encoding`).
    counter: TokenCounter | None = None
    #: The release whose rules the run follows: counting (when `counter` is None), the
    #: span_built previews, usage records and error texts (None: the release the snapshot
    #: tells, `core.releases.choose_counting`).
    profile: ReleaseProfile | None = None
    #: The OpenAI SDK generation whose error text the library would join (retry records).
    sdk_errors: SdkErrorStyle = "3"
    #: Processor class and ids for the dump (None: what the snapshot carries).
    identity: DumpIdentity | None = None


@dataclass(frozen=True, slots=True)
class RerunHooks:
    """The outside world, injectable: HTTP transport, sleep, clock, ids, environment."""

    transport: httpx.AsyncBaseTransport | None = None
    sleep: Sleep = asyncio.sleep
    #: Called with each attempt as soon as it is known (progress lines, TUI messages).
    on_attempt: OnAttempt | None = None
    #: Where the API key variable is read (None: os.environ).
    env: Mapping[str, str] | None = None
    new_id: Callable[[], str] | None = None
    clock: Callable[[], float] = time.time


@dataclass(frozen=True, slots=True)
class _Plan:
    """A run resolved before any call: key, counter, evaluation and the filled-in options."""

    snapshot: ContextSnapshot
    tuning: Tuning
    endpoint: EndpointConfig
    api_key: str | None
    counter: TokenCounter
    profile: ReleaseProfile
    evaluation: Evaluation
    prompt: str
    prompt_source: PromptSource
    wrapper: MemoryWrapper
    identity: DumpIdentity
    options: RerunOptions


@dataclass(slots=True)
class _Calls:
    """What the call loop produced: every attempt, the reply (if any), the span last sent."""

    attempts: list[Attempt]
    span: Span
    reply: ModelReply | None = None
    failure_reason: str | None = None


def _redact(text: str | None, secret: str | None) -> str | None:
    """Remove the key from text a server sent back (some echo the Authorization header)."""
    if text is None or not secret:
        return text
    return text.replace(secret, "***")


def resolve_api_key(endpoint: EndpointConfig, env: Mapping[str, str] | None = None) -> str | None:
    """The key from the endpoint's variable; MissingApiKey when required and absent."""
    value = (os.environ if env is None else env).get(endpoint.api_key_env) or None
    if value is None and endpoint.require_key:
        raise MissingApiKey(endpoint.api_key_env)
    return value


def default_identity(snapshot: ContextSnapshot, tuning: Tuning) -> DumpIdentity:
    """Processor class and the session/context ids the snapshot carries (openJiuwen's fallbacks)."""
    session = snapshot.extra.get("session_id")
    context = snapshot.extra.get("context_id")
    return DumpIdentity(
        processor_type(tuning.processor),
        session if isinstance(session, str) and session else "unknown_session",
        context if isinstance(context, str) and context else "unknown_context",
    )


def _plan(
    snapshot: ContextSnapshot,
    tuning: Tuning,
    endpoint: EndpointConfig,
    options: RerunOptions,
    env: Mapping[str, str] | None,
) -> _Plan:
    """Check the run can start and fill in the defaults; raise before any call otherwise."""
    require_compacting_processor(tuning.processor)
    api_key = resolve_api_key(endpoint, env)
    profile = options.profile or choose_counting(snapshot).profile
    counter = options.counter
    if counter is None:
        from inspector.encoding import make_counters

        counter = make_counters(profile)[tuning.token_mode]
    priced = PricedContext.from_snapshot(snapshot, counter)
    evaluation = priced.evaluate(tuning)
    span = evaluation.span
    if span.compress[1] <= span.compress[0]:
        raise NothingToCompress(
            "no_compressible_span",
            f"the {tuning.processor_class} span leaves nothing between the preserved prefix and the "
            f"protected tail (effective keep {evaluation.effective_keep}, last real user message at "
            f"{priced.last_real_user_index})",
        )
    prompt, prompt_source = options.prompt, options.prompt_source
    if prompt is None:
        prompt, prompt_source = builtin_prompt(), "builtin"
    return _Plan(
        snapshot=snapshot,
        tuning=tuning,
        endpoint=endpoint,
        api_key=api_key,
        counter=counter,
        profile=profile,
        evaluation=evaluation,
        prompt=prompt,
        prompt_source=prompt_source or "given",
        wrapper=options.wrapper or DEFAULT_WRAPPERS[tuning.processor],
        identity=options.identity or default_identity(snapshot, tuning),
        options=options,
    )


def _failed_attempt(
    plan: _Plan, base: Attempt, failure: HttpFailure
) -> tuple[Attempt, HttpFailure, str]:
    """The attempt record of a failed call (key redacted), the failure and the driving kind."""
    failure = replace(failure, body_text=_redact(failure.body_text, plan.api_key) or "")
    kinds = classify_failure(
        failure,
        plan.options.policy,
        plan.profile.error_message_class_prefix,
        plan.options.sdk_errors,
    )
    attempt = replace(
        base,
        action="stop",
        status_code=failure.status_code,
        failure=failure,
        openjiuwen_kind=kinds.openjiuwen_kind,
        status_kind=kinds.status_kind,
        error_text=kinds.error_text,
    )
    return attempt, failure, kinds.kind


def _with_step(attempt: Attempt, step: RetryStep) -> Attempt:
    """The attempt annotated with what the policy did next (openJiuwen's record fields)."""
    return replace(
        attempt,
        action=step.action,
        reason=step.reason,
        record_attempt=step.record_attempt,
        budget_ratio=step.budget_ratio,
        delay_s=step.delay_s,
    )


async def _call_until_done(plan: _Plan, client: ChatClient, hooks: RerunHooks) -> _Calls:
    """Call, and on each failure follow the retry policy, until a reply or a stop."""
    options = plan.options

    def shrink(span: Span, ratio: float) -> Span | None:
        return shrink_span(
            plan.snapshot,
            span,
            plan.prompt,
            plan.counter,
            plan.tuning.context_max,
            ratio,
            options.include_tools,
        )

    state = RetryState(plan.evaluation.span)
    calls = _Calls([], state.span)

    def record(attempt: Attempt) -> None:
        calls.attempts.append(attempt)
        if hooks.on_attempt is not None:
            hooks.on_attempt(attempt)

    while True:
        span = calls.span = state.span
        body = request_body(
            plan.snapshot,
            span,
            plan.prompt,
            plan.endpoint.model,
            plan.endpoint.sampling,
            options.include_tools,
        )
        base = Attempt(
            number=len(calls.attempts) + 1,
            span=span,
            request_messages=len(request_messages(plan.snapshot, span, plan.prompt)),
            duration_s=0.0,
            action="accepted",
        )
        t0 = time.perf_counter()
        try:
            calls.reply, status = await client.complete(body)
        except ModelCallFailed as error:
            failed = replace(base, duration_s=time.perf_counter() - t0)
            attempt, failure, kind = _failed_attempt(plan, failed, error.failure)
            step = on_failure(state, kind, shrink)
            record(_with_step(attempt, step))
            if step.state is None:
                calls.failure_reason = f"{describe_failure(failure)}; {step.give_up}"
                return calls
            if step.delay_s is not None:
                await hooks.sleep(step.delay_s)
            state = step.state
            continue
        record(replace(base, duration_s=time.perf_counter() - t0, status_code=status))
        return calls


def _judge_reply(
    plan: _Plan, span: Span, reply: ModelReply, new_id: Callable[[], str]
) -> tuple[RerunOutcome, Compaction | None, tuple[LostItem, ...]]:
    """Outcome, compaction and summary losses of a reply, as openJiuwen would apply it."""
    summary = extract_summary(reply.content)
    if not summary:
        return "empty_summary", None, ()
    compaction = build_compaction(
        plan.snapshot, span, summary, plan.counter, plan.tuning.processor, plan.wrapper, new_id
    )
    losses = tuple(
        summary_losses(
            plan.snapshot.messages[span.compress[0] : span.compress[1]],
            summary,
            start_index=span.compress[0],
            restored_paths=compaction.reinjection.files,
        )
    )
    return ("applied" if compaction.beneficial else "no_benefit"), compaction, losses


def _result(plan: _Plan, calls: _Calls, started: float, new_id: Callable[[], str]) -> RerunResult:
    """The RerunResult of a finished call loop, findings included."""
    reply = calls.reply
    outcome: RerunOutcome = "failed"
    compaction: Compaction | None = None
    losses: tuple[LostItem, ...] = ()
    usage = None
    if reply is not None:
        if reply.usage:
            details = usage_details(
                reply.usage,
                reply.model or plan.endpoint.model,
                cache_fields=plan.profile.writes_cache_authoritative,
            )
            usage = merge_usage([details])
        outcome, compaction, losses = _judge_reply(plan, calls.span, reply, new_id)
    result = RerunResult(
        snapshot=plan.snapshot,
        tuning=plan.tuning,
        identity=plan.identity,
        evaluation=plan.evaluation,
        initial_span=plan.evaluation.span,
        final_span=calls.span,
        prompt=plan.prompt,
        prompt_source=plan.prompt_source,
        wrapper=plan.wrapper,
        include_tools=plan.options.include_tools,
        policy=plan.options.policy,
        model=plan.endpoint.model,
        attempts=tuple(calls.attempts),
        outcome=outcome,
        reply=reply,
        compaction=compaction,
        usage=usage,
        losses=losses,
        started_at=started,
        failure_reason=calls.failure_reason,
        profile=plan.profile,
    )
    return replace(result, findings=tuple(rerun_findings(result)))


async def rerun_compaction(
    snapshot: ContextSnapshot,
    tuning: Tuning,
    endpoint: EndpointConfig,
    options: RerunOptions | None = None,
    hooks: RerunHooks | None = None,
) -> RerunResult:
    """Call the model as openJiuwen would for this context and tuning; return every detail.

    Raises ConfigError (not an LLM compressor), MissingApiKey, NothingToCompress before
    any call. A failed call never raises: the result's outcome is "failed" and its
    timeline says why. Cancellation (asyncio) propagates.
    """
    options = options or RerunOptions()
    hooks = hooks or RerunHooks()
    plan = _plan(snapshot, tuning, endpoint, options, hooks.env)
    new_id = hooks.new_id or (lambda: uuid.uuid4().hex)
    started = hooks.clock()
    client = ChatClient(endpoint, plan.api_key, transport=hooks.transport)
    try:
        calls = await _call_until_done(plan, client, hooks)
    finally:
        await client.aclose()
    return _result(plan, calls, started, new_id)
