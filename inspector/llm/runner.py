"""Re-run openJiuwen's compaction for real: the call, its retry policy, and the result.

`rerun_compaction` is the one entry point (CLI and TUI worker alike). It follows
openJiuwen's `_invoke_compression_with_retries`: on a context overflow it shrinks the span
with budget ratios 0.85, 0.65, 0.5 (a fourth overflow gives up); on a transient kind
(rate_limit, timeout, server_unstable, unknown) it waits 0.05 s then 0.10 s (at most two
retries); anything else stops. Overflow and transient retries keep separate counters.
Sleep, clock, ids, environment and HTTP transport are injectable.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace

import httpx

from inspector.core.compaction import (
    DEFAULT_WRAPPERS,
    OVERFLOW_BUDGET_RATIOS,
    TRANSIENT_MAX_RETRIES,
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
    transient_delay,
    usage_details,
)
from inspector.core.engine import PricedContext
from inspector.core.model_errors import (
    TRANSIENT_KINDS,
    ErrorKind,
    classify_by_status,
    classify_openjiuwen,
    describe_failure,
    describe_kind,
    openjiuwen_error_text,
)
from inspector.core.rerun import (
    Attempt,
    ModelReply,
    PromptSource,
    RerunOutcome,
    RerunResult,
    RetryPolicy,
    rerun_findings,
)
from inspector.core.snapshot import ContextSnapshot
from inspector.core.summary_loss import summary_losses
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import Tuning
from inspector.llm.client import ChatClient, EndpointConfig
from inspector.llm.errors import MissingApiKey, ModelCallFailed, NothingToCompress
from inspector.llm.prompts import builtin_prompt

Sleep = Callable[[float], Awaitable[object]]
OnAttempt = Callable[[Attempt], object]


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


async def rerun_compaction(
    snapshot: ContextSnapshot,
    tuning: Tuning,
    endpoint: EndpointConfig,
    *,
    prompt: str | None = None,
    prompt_source: PromptSource | None = None,
    wrapper: MemoryWrapper | None = None,
    include_tools: bool = True,
    policy: RetryPolicy = "openjiuwen",
    counter: TokenCounter | None = None,
    identity: DumpIdentity | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    sleep: Sleep = asyncio.sleep,
    on_attempt: OnAttempt | None = None,
    env: Mapping[str, str] | None = None,
    new_id: Callable[[], str] | None = None,
    clock: Callable[[], float] = time.time,
) -> RerunResult:
    """Call the model as openJiuwen would for this context and tuning; return every detail.

    Raises ConfigError (not an LLM compressor), MissingApiKey, NothingToCompress before
    any call. A failed call never raises: the result's outcome is "failed" and its
    timeline says why. Cancellation (asyncio) propagates.
    """
    require_compacting_processor(tuning.processor)
    api_key = resolve_api_key(endpoint, env)
    if counter is None:
        from inspector.encoding import make_counters

        counter = make_counters()[tuning.token_mode]
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
    if prompt is None:
        prompt, prompt_source = builtin_prompt(), "builtin"
    wrapper = wrapper or DEFAULT_WRAPPERS[tuning.processor]
    identity = identity or default_identity(snapshot, tuning)
    make_id = new_id or (lambda: uuid.uuid4().hex)
    started = clock()
    initial_span = span
    attempts: list[Attempt] = []
    reply: ModelReply | None = None
    failure_reason: str | None = None
    overflow_index = transient_count = 0

    def record(attempt: Attempt) -> None:
        attempts.append(attempt)
        if on_attempt is not None:
            on_attempt(attempt)

    client = ChatClient(endpoint, api_key, transport=transport)
    try:
        while True:
            body = request_body(
                snapshot, span, prompt, endpoint.model, endpoint.sampling, include_tools
            )
            sent = len(request_messages(snapshot, span, prompt))
            number = len(attempts) + 1
            t0 = time.perf_counter()
            try:
                reply, status = await client.complete(body)
            except ModelCallFailed as error:
                duration = time.perf_counter() - t0
                failure = error.failure
                failure = replace(failure, body_text=_redact(failure.body_text, api_key) or "")
                text = openjiuwen_error_text(failure)
                ojw_kind: ErrorKind = classify_openjiuwen(
                    text, failure.status_code, is_timeout_error=failure.transport == "timeout"
                )
                status_kind = classify_by_status(failure)
                kind = ojw_kind if policy == "openjiuwen" else status_kind
                base = Attempt(
                    number=number,
                    span=span,
                    request_messages=sent,
                    duration_s=duration,
                    action="stop",
                    status_code=failure.status_code,
                    failure=failure,
                    openjiuwen_kind=ojw_kind,
                    status_kind=status_kind,
                    error_text=text,
                )
                if kind == "context_overflow":
                    if overflow_index >= len(OVERFLOW_BUDGET_RATIOS):
                        record(
                            replace(
                                base,
                                reason="retry_budget_exhausted",
                                record_attempt=overflow_index + 1,
                            )
                        )
                        failure_reason = (
                            f"{describe_failure(failure)}; still too large after shrinking with budget "
                            f"ratios {', '.join(str(r) for r in OVERFLOW_BUDGET_RATIOS)}"
                        )
                        break
                    ratio = OVERFLOW_BUDGET_RATIOS[overflow_index]
                    smaller = shrink_span(
                        snapshot, span, prompt, counter, tuning.context_max, ratio, include_tools
                    )
                    overflow_index += 1
                    if smaller is None or smaller.compress[1] <= smaller.compress[0]:
                        record(
                            replace(
                                base,
                                reason="no_smaller_span",
                                record_attempt=overflow_index,
                                budget_ratio=ratio,
                            )
                        )
                        failure_reason = (
                            f"{describe_failure(failure)}; no smaller span fits budget ratio {ratio} "
                            f"({span.counts['messages_to_compress']} message(s) to compress)"
                        )
                        break
                    record(
                        replace(
                            base,
                            action="shrink",
                            reason="budget_ratio_shrink",
                            record_attempt=overflow_index,
                            budget_ratio=ratio,
                        )
                    )
                    span = smaller
                    continue
                if kind in TRANSIENT_KINDS and transient_count < TRANSIENT_MAX_RETRIES:
                    transient_count += 1
                    delay = transient_delay(transient_count)
                    record(
                        replace(
                            base,
                            action="backoff",
                            reason="transient_backoff",
                            record_attempt=transient_count,
                            delay_s=delay,
                        )
                    )
                    await sleep(delay)
                    continue
                record(base)
                if kind in TRANSIENT_KINDS:
                    failure_reason = (
                        f"{describe_failure(failure)}; gave up after {TRANSIENT_MAX_RETRIES} retries "
                        f"({describe_kind(kind)})"
                    )
                else:
                    failure_reason = f"{describe_failure(failure)}; {kind} errors are not retried"
                break
            record(
                Attempt(
                    number=number,
                    span=span,
                    request_messages=sent,
                    duration_s=time.perf_counter() - t0,
                    action="accepted",
                    status_code=status,
                )
            )
            break
    finally:
        await client.aclose()

    compaction = None
    usage = None
    outcome: RerunOutcome = "failed"
    losses: tuple = ()
    if reply is not None:
        usage = (
            merge_usage([usage_details(reply.usage, reply.model or endpoint.model)])
            if reply.usage
            else None
        )
        summary = extract_summary(reply.content)
        if not summary:
            outcome = "empty_summary"
        else:
            compaction = build_compaction(
                snapshot, span, summary, counter, tuning.processor, wrapper, make_id
            )
            outcome = "applied" if compaction.beneficial else "no_benefit"
            losses = tuple(
                summary_losses(
                    snapshot.messages[span.compress[0] : span.compress[1]],
                    summary,
                    start_index=span.compress[0],
                    restored_paths=compaction.reinjection.files,
                )
            )
    result = RerunResult(
        snapshot=snapshot,
        tuning=tuning,
        identity=identity,
        evaluation=evaluation,
        initial_span=initial_span,
        final_span=span,
        prompt=prompt,
        prompt_source=prompt_source or "given",
        wrapper=wrapper,
        include_tools=include_tools,
        policy=policy,
        model=endpoint.model,
        attempts=tuple(attempts),
        outcome=outcome,
        reply=reply,
        compaction=compaction,
        usage=usage,
        losses=losses,
        started_at=started,
        failure_reason=failure_reason,
    )
    return replace(result, findings=tuple(rerun_findings(result)))
