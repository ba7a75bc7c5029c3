"""The retry policy as a state machine, table-driven, without any server or tokenizer.

Each row is a sequence of error kinds a model call fails with; the machine is run until it
stops (or the kinds run out) and its steps are compared with openJiuwen's rules: budget
ratios 0.85, 0.65, 0.5 for overflows, two transient retries waiting 0.05 s and 0.10 s, and
separate counters for the two.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from inspector.core.engine import Span
from inspector.core.model_errors import HttpFailure
from inspector.core.retry_policy import (
    RetryState,
    RetryStep,
    classify_failure,
    on_failure,
)

START = Span((0, 1), (1, 11), (11, 13))


def shrink_by_one(span: Span, ratio: float) -> Span | None:
    """A fake shrink: one message moves from the compressed range into the tail."""
    start, end = span.compress
    return Span(span.prefix, (start, end - 1), (end - 1, span.tail[1]))


def never_fits(span: Span, ratio: float) -> Span | None:
    return None


def empties(span: Span, ratio: float) -> Span | None:
    start, _ = span.compress
    return Span(span.prefix, (start, start), (start, span.tail[1]))


@dataclass(frozen=True)
class Case:
    name: str
    kinds: tuple[str, ...]
    #: (action, reason, record_attempt, budget_ratio, delay_s) per step.
    steps: tuple[tuple[str, str | None, int | None, float | None, float | None], ...]
    shrink: object = shrink_by_one
    give_up: str | None = None


CASES = [
    Case(
        "three overflows shrink, the fourth gives up",
        ("context_overflow",) * 4,
        (
            ("shrink", "budget_ratio_shrink", 1, 0.85, None),
            ("shrink", "budget_ratio_shrink", 2, 0.65, None),
            ("shrink", "budget_ratio_shrink", 3, 0.5, None),
            ("stop", "retry_budget_exhausted", 4, None, None),
        ),
        give_up="still too large after shrinking with budget ratios 0.85, 0.65, 0.5",
    ),
    Case(
        "two transient retries with doubling backoff, then stop without a record",
        ("rate_limit", "timeout", "server_unstable"),
        (
            ("backoff", "transient_backoff", 1, None, 0.05),
            ("backoff", "transient_backoff", 2, None, 0.1),
            ("stop", None, None, None, None),
        ),
        give_up="gave up after 2 retries (the endpoint had a server error)",
    ),
    Case(
        "unknown is transient",
        ("unknown", "unknown", "unknown"),
        (
            ("backoff", "transient_backoff", 1, None, 0.05),
            ("backoff", "transient_backoff", 2, None, 0.1),
            ("stop", None, None, None, None),
        ),
    ),
    Case(
        "authentication is never retried",
        ("authentication",),
        (("stop", None, None, None, None),),
        give_up="authentication errors are not retried",
    ),
    Case(
        "a bad request is never retried",
        ("api_request_error",),
        (("stop", None, None, None, None),),
        give_up="api_request_error errors are not retried",
    ),
    Case(
        "overflow and transient counters are separate",
        ("rate_limit", "context_overflow", "timeout", "context_overflow", "context_overflow"),
        (
            ("backoff", "transient_backoff", 1, None, 0.05),
            ("shrink", "budget_ratio_shrink", 1, 0.85, None),
            ("backoff", "transient_backoff", 2, None, 0.1),
            ("shrink", "budget_ratio_shrink", 2, 0.65, None),
            ("shrink", "budget_ratio_shrink", 3, 0.5, None),
        ),
    ),
    Case(
        "no span fits the first ratio",
        ("context_overflow",),
        (("stop", "no_smaller_span", 1, 0.85, None),),
        shrink=never_fits,
        give_up="no smaller span fits budget ratio 0.85 (10 message(s) to compress)",
    ),
    Case(
        "a shrink that leaves nothing to compress stops",
        ("context_overflow",),
        (("stop", "no_smaller_span", 1, 0.85, None),),
        shrink=empties,
    ),
]


def run(case: Case) -> list[tuple[RetryStep, RetryState]]:
    state = RetryState(START)
    seen = []
    for kind in case.kinds:
        step = on_failure(state, kind, case.shrink)  # type: ignore[arg-type]
        seen.append((step, state))
        if step.state is None:
            break
        state = step.state
    return seen


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_steps_follow_openjiuwen(case: Case) -> None:
    seen = run(case)
    got = [(s.action, s.reason, s.record_attempt, s.budget_ratio, s.delay_s) for s, _ in seen]
    assert got == list(case.steps)
    last = seen[-1][0]
    if last.action == "stop":
        assert last.state is None and last.give_up
        if case.give_up is not None:
            assert last.give_up == case.give_up
    for step, before in seen:
        if step.action == "backoff":
            assert step.state is not None and step.state.span == before.span
        if step.action == "shrink":
            assert step.state is not None
            assert step.state.span.counts["messages_to_compress"] == (
                before.span.counts["messages_to_compress"] - 1
            )


def test_shrink_gets_the_current_span_and_ratio() -> None:
    calls: list[tuple[Span, float]] = []

    def spy(span: Span, ratio: float) -> Span | None:
        calls.append((span, ratio))
        return shrink_by_one(span, ratio)

    state = RetryState(START)
    for _ in range(3):
        step = on_failure(state, "context_overflow", spy)
        assert step.state is not None
        state = step.state
    assert [r for _, r in calls] == [0.85, 0.65, 0.5]
    assert calls[0][0] == START and calls[1][0].compress == (1, 10)
    assert state.overflow_used == 3 and state.transient_used == 0


def test_limits_are_parameters() -> None:
    state = RetryState(START)
    step = on_failure(state, "context_overflow", shrink_by_one, ratios=(0.9,))
    assert step.budget_ratio == 0.9 and step.state is not None
    step = on_failure(step.state, "context_overflow", shrink_by_one, ratios=(0.9,))
    assert step.action == "stop" and step.reason == "retry_budget_exhausted"
    assert on_failure(state, "timeout", shrink_by_one, max_transient=0).action == "stop"


def _status(status: int, body: str = "", request_id: str | None = None) -> HttpFailure:
    return HttpFailure(status, body, request_id=request_id)


CLASSIFY = [
    # (failure, openJiuwen kind, status kind)
    (_status(413, '{"error": {"message": "too big"}}'), "context_overflow", "context_overflow"),
    (
        _status(400, '{"error": {"message": "x", "code": "context_length_exceeded"}}'),
        "context_overflow",
        "context_overflow",
    ),
    # A bare "413" anywhere in the text is an overflow for openJiuwen (a request id here).
    (
        _status(429, '{"error": {"message": "slow down"}}', "req_4130"),
        "context_overflow",
        "rate_limit",
    ),
    # ... and so is a token count such as "Used 29413".
    (
        _status(429, '{"error": {"message": "Used 29413 of 30000 TPM"}}'),
        "context_overflow",
        "rate_limit",
    ),
    (_status(429, '{"error": {"message": "slow down"}}'), "rate_limit", "rate_limit"),
    (_status(401, '{"error": {"message": "no"}}'), "authentication", "authentication"),
    (_status(503, '{"error": {"message": "busy"}}'), "server_unstable", "server_unstable"),
    (HttpFailure(None, transport="timeout"), "timeout", "timeout"),
    (HttpFailure(None, transport="connection", detail="refused"), "unknown", "unknown"),
]


@pytest.mark.parametrize(("failure", "ojw", "status"), CLASSIFY)
def test_classification_both_ways(failure: HttpFailure, ojw: str, status: str) -> None:
    kinds = classify_failure(failure, "openjiuwen")
    assert (kinds.openjiuwen_kind, kinds.status_kind, kinds.kind) == (ojw, status, ojw)
    assert classify_failure(failure, "status").kind == status
    assert kinds.error_text.startswith("[181001] model call failed")


def test_a_misread_413_drives_a_shrink_under_openjiuwen_but_a_backoff_by_status() -> None:
    failure = _status(429, '{"error": {"message": "Used 29413 of 30000 TPM"}}')
    state = RetryState(START)
    ojw = on_failure(state, classify_failure(failure, "openjiuwen").kind, shrink_by_one)
    by_status = on_failure(state, classify_failure(failure, "status").kind, shrink_by_one)
    assert (ojw.action, ojw.budget_ratio) == ("shrink", 0.85)
    assert (by_status.action, by_status.delay_s) == ("backoff", 0.05)
