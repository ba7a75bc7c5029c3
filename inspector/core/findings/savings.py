"""Compactions that grow the context or save less than they cost.

openJiuwen drops a result that does not shrink the context (no dump is written), but a
compaction can still pay off badly: the read_file re-injection can eat most of the saving,
and the summary call's input can cost more than many later calls save. For a decision that
compresses, the re-injection is predicted from the context (`base.predict_reinjected`).
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

from inspector.core.checks import Finding
from inspector.core.findings.base import RECOVERED_PREFIX, FindingInput, n

#: The summary call should pay for itself within this many later model calls.
PAYBACK_CALLS = 5


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _recorded_change(inp: FindingInput) -> list[Finding]:
    before = _int(inp.recorded.get("tokens_before"))
    after = _int(inp.recorded.get("tokens_after"))
    if before is None or after is None or after < before:
        return []
    return [
        Finding(
            "compaction_grows_context",
            "problem",
            f"the compaction left {n(after)} context tokens where there were {n(before)}: it grew "
            f"the context by {n(after - before)}",
            {"tokens_before": before, "tokens_after": after},
            fix="compress a larger span (lower keep_recent_messages) or keep large file reads in "
            "the tail so they are not re-injected",
        )
    ]


def _recorded_reinjection(inp: FindingInput) -> list[Finding]:
    after = inp.after
    counter = inp.counter
    before = _int(inp.recorded.get("tokens_before"))
    tokens_after = _int(inp.recorded.get("tokens_after"))
    if not after or counter is None or before is None or tokens_after is None:
        return []
    recovered = next(
        (
            m
            for m in after
            if m.role == "user"
            and isinstance(m.content, str)
            and m.content.lstrip().startswith(RECOVERED_PREFIX)
        ),
        None,
    )
    if recovered is None:
        return []
    reinjected = counter.message_tokens(recovered)
    gross = before - (tokens_after - reinjected)
    if gross <= 0 or reinjected * 2 < gross:
        return []
    return [
        Finding(
            "reinjection_cancels_saving",
            "warning",
            f"the summary alone saved {n(gross)} tokens, but the re-injected <recovered_context> "
            f"took {n(reinjected)} of them back ({reinjected / gross:.0%}): the compaction saved "
            f"{n(before - tokens_after)}",
            {
                "saved_by_summary": gross,
                "reinjected_tokens": reinjected,
                "net_saving": before - tokens_after,
            },
            fix="keep the large files' reads in the protected tail (raise keep_recent_messages) or "
            "read only the needed part of them (offset/limit)",
        )
    ]


def _predicted(inp: FindingInput) -> list[Finding]:
    files = inp.reinjected_files()
    region_tokens = _int(inp.extra.get("compress_tokens"))
    estimate = _int(inp.extra.get("predicted_tokens"))
    added = _int(inp.extra.get("added_tokens")) or 0
    if inp.after is not None or not files or not region_tokens or not estimate:
        return []
    numbers = {
        "region_tokens": region_tokens,
        "reinjected_estimate": estimate,
        "files": list(files),
    }
    fix = (
        "keep the file reads in the protected tail (raise keep_recent_messages), or read "
        "only the needed part of large files (offset/limit)"
    )
    if estimate + added >= region_tokens:
        return [
            Finding(
                "compaction_grows_context",
                "problem",
                f"the read_file re-injection would copy back about {n(estimate)} tokens "
                f"({len(files)} file(s): {', '.join(files[:3])}) and the memory block's wrapper "
                f"{n(added)} more, for a region of {n(region_tokens)} tokens: with any summary "
                "the context cannot shrink, and "
                "openJiuwen drops the result (no benefit) after paying for the model call",
                numbers,
                fix=fix,
            )
        ]
    if estimate * 2 >= region_tokens:
        return [
            Finding(
                "reinjection_cancels_saving",
                "warning",
                f"the read_file re-injection would copy back about {n(estimate)} of the "
                f"{n(region_tokens)} tokens the summary replaces ({estimate / region_tokens:.0%})",
                numbers,
                fix=fix,
            )
        ]
    return []


def _payback(inp: FindingInput) -> list[Finding]:
    replaced = inp.replaced()
    counter = inp.counter
    reduction = _int(inp.recorded.get("reduction"))
    if (
        inp.after is None
        or replaced is None
        or counter is None
        or not reduction
        or inp.snapshot is None
    ):
        return []
    request = counter.count_messages([*inp.snapshot.system_messages, *inp.messages[: replaced[1]]])
    if request <= reduction * PAYBACK_CALLS:
        return []
    calls = -(-request // reduction)
    return [
        Finding(
            "compaction_costs_more_than_it_saves",
            "info",
            f"the summary call read about {n(request)} tokens to save {n(reduction)} per later "
            f"call: it pays for itself only after {calls} more model calls (more than "
            f"{PAYBACK_CALLS})",
            {"request_tokens": request, "saved_per_call": reduction, "payback_calls": calls},
            fix="compress less often with larger spans (raise trigger_context_ratio, lower "
            "keep_recent_messages)",
        )
    ]


def compaction_savings(inp: FindingInput) -> list[Finding]:
    """Growth, re-injection that cancels the saving, and a summary call that does not pay off."""
    return [*_recorded_change(inp), *_recorded_reinjection(inp), *_predicted(inp), *_payback(inp)]
