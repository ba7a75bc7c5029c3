"""openJiuwen's retry policy for the compaction call, as a pure state machine.

openJiuwen's `_invoke_compression_with_retries` (spec 4.4 step 3, 6.1): a failed call is
classified (`classify_openjiuwen`, where any "413" in the error text is an overflow); on a
context overflow the span is shrunk to fit budget ratios 0.85, 0.65, 0.5 of the context
window (a fourth overflow gives up, and so does a ratio that leaves nothing to compress); on a
transient kind (rate_limit, timeout, server_unstable, unknown) it waits 0.05 s x 2^n (at most
two retries); any other kind stops. Overflow and transient retries keep separate counters.

`RetryState` is the machine's state (the span to send and both counters); `on_failure`
returns the next `RetryStep` for one failed call. Shrinking is injected as a function of the
budget ratio so the machine needs neither a tokenizer nor a snapshot. The driver
(`inspector.llm.runner`) does the HTTP call and the waiting.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from inspector.core.compaction import (
    OVERFLOW_BUDGET_RATIOS,
    TRANSIENT_MAX_RETRIES,
    transient_delay,
)
from inspector.core.engine import Span
from inspector.core.model_errors import (
    TRANSIENT_KINDS,
    ErrorKind,
    HttpFailure,
    classify_by_status,
    classify_openjiuwen,
    describe_kind,
    openjiuwen_error_text,
)
from inspector.core.rerun import AttemptAction, RetryPolicy

#: Shrink the span to fit `budget_ratio` of the context window; None when nothing fits.
Shrink = Callable[[Span, float], Span | None]


@dataclass(frozen=True, slots=True)
class FailureKinds:
    """One failed call classified both ways, and the kind the chosen policy acts on."""

    error_text: str
    openjiuwen_kind: ErrorKind
    status_kind: ErrorKind
    kind: ErrorKind


_SDK_CLASS_PREFIX = re.compile(r"^(openAI API async invoke error: )[A-Za-z_][A-Za-z0-9_]*: ")
_HEAD = "[181001] model call failed, reason: "
_AFTER_HEAD = " StatusCode.MODEL_CALL_FAILED"

#: The OpenAI SDK generation whose status-error text the library joins: "3" (openai 3.x,
#: what every release installs from PyPI today) puts only `error.message` after the
#: status, "2" (openai 2.x) the whole parsed error body.
SdkErrorStyle = Literal["3", "2"]


def _rewrite_inner(text: str, rewrite: Callable[[str], str]) -> str:
    """`text` with its inner SDK error (`openAI API async invoke error: ...`) rewritten
    everywhere it appears, the `{'error_msg': ...}` repr included (quotes as Python picks)."""
    if not text.startswith(_HEAD) or _AFTER_HEAD not in text:
        return text
    inner = text[len(_HEAD) : text.index(_AFTER_HEAD)]
    new_inner = rewrite(inner)
    if new_inner == inner:
        return text
    old_repr, new_repr = str({"error_msg": inner}), str({"error_msg": new_inner})
    return text.replace(old_repr, new_repr).replace(inner, new_inner)


def without_class_prefix(text: str) -> str:
    """The error text as releases up to 0.1.17.post2 join it: no SDK class name before the
    SDK message (`...invoke error: Error code: 413 - ...`)."""
    return _rewrite_inner(text, lambda inner: _SDK_CLASS_PREFIX.sub(r"\1", inner))


def sdk3_error_text(text: str, failure: HttpFailure) -> str:
    """`text` with openai 2.x's `Error code: N - {body}` as openai 3.x writes it,
    `Error code: N - message` (or `Error code: N` when the body has no error message)."""
    if failure.transport is not None or failure.status_code is None:
        return text
    status = failure.status_code
    try:
        body: Any = json.loads(failure.body_text.strip())
    except ValueError:
        return text
    error = body.get("error", body) if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    old = f"Error code: {status} - {body}"
    new = f"Error code: {status}" + (
        f" - {message}" if isinstance(message, str) and message else ""
    )
    return _rewrite_inner(text, lambda inner: inner.replace(old, new)).replace(old, new)


def classify_failure(
    failure: HttpFailure,
    policy: RetryPolicy = "openjiuwen",
    class_prefix: bool = True,
    sdk: SdkErrorStyle = "3",
) -> FailureKinds:
    """openJiuwen's classification of its error text, ours by status, and the one that drives.

    `class_prefix`: whether the release puts the SDK class name in the text (0.1.18 and
    later, `ReleaseProfile.error_message_class_prefix`); `sdk`: which OpenAI SDK wrote the
    status error. The text is classified as written.
    """
    text = openjiuwen_error_text(failure)
    if sdk == "3":
        text = sdk3_error_text(text, failure)
    if not class_prefix:
        text = without_class_prefix(text)
    ojw_kind = classify_openjiuwen(
        text, failure.status_code, is_timeout_error=failure.transport == "timeout"
    )
    status_kind = classify_by_status(failure)
    return FailureKinds(
        text, ojw_kind, status_kind, ojw_kind if policy == "openjiuwen" else status_kind
    )


@dataclass(frozen=True, slots=True)
class RetryState:
    """The span the next call sends and how many overflow / transient retries were used."""

    span: Span
    overflow_used: int = 0
    transient_used: int = 0


@dataclass(frozen=True, slots=True)
class RetryStep:
    """What to do after one failed call.

    `action` is "shrink" or "backoff" (call again with `state`) or "stop" (`state` is None
    and `give_up` says why in words, to follow the failure's own description). `reason`,
    `record_attempt`, `budget_ratio` and `delay_s` are what openJiuwen's
    `compression_retry` record carries (reason None: openJiuwen writes no record).
    """

    action: AttemptAction
    state: RetryState | None
    reason: str | None = None
    record_attempt: int | None = None
    budget_ratio: float | None = None
    delay_s: float | None = None
    give_up: str | None = None


def _ratios_text(ratios: tuple[float, ...]) -> str:
    return ", ".join(str(r) for r in ratios)


def _on_overflow(state: RetryState, shrink: Shrink, ratios: tuple[float, ...]) -> RetryStep:
    """Shrink with the next budget ratio; stop when the ratios are spent or nothing fits."""
    if state.overflow_used >= len(ratios):
        return RetryStep(
            "stop",
            None,
            reason="retry_budget_exhausted",
            record_attempt=state.overflow_used + 1,
            give_up=f"still too large after shrinking with budget ratios {_ratios_text(ratios)}",
        )
    ratio = ratios[state.overflow_used]
    used = state.overflow_used + 1
    smaller = shrink(state.span, ratio)
    if smaller is None or smaller.compress[1] <= smaller.compress[0]:
        return RetryStep(
            "stop",
            None,
            reason="no_smaller_span",
            record_attempt=used,
            budget_ratio=ratio,
            give_up=(
                f"no smaller span fits budget ratio {ratio} "
                f"({state.span.counts['messages_to_compress']} message(s) to compress)"
            ),
        )
    return RetryStep(
        "shrink",
        RetryState(smaller, used, state.transient_used),
        reason="budget_ratio_shrink",
        record_attempt=used,
        budget_ratio=ratio,
    )


def on_failure(
    state: RetryState,
    kind: str,
    shrink: Shrink,
    *,
    ratios: tuple[float, ...] = OVERFLOW_BUDGET_RATIOS,
    max_transient: int = TRANSIENT_MAX_RETRIES,
) -> RetryStep:
    """The next step after a call failed with error `kind` in `state` (openJiuwen's rules)."""
    if kind == "context_overflow":
        return _on_overflow(state, shrink, ratios)
    if kind in TRANSIENT_KINDS:
        if state.transient_used < max_transient:
            used = state.transient_used + 1
            return RetryStep(
                "backoff",
                RetryState(state.span, state.overflow_used, used),
                reason="transient_backoff",
                record_attempt=used,
                delay_s=transient_delay(used),
            )
        return RetryStep(
            "stop", None, give_up=f"gave up after {max_transient} retries ({describe_kind(kind)})"
        )
    return RetryStep("stop", None, give_up=f"{kind} errors are not retried")
