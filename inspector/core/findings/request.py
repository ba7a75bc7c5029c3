"""The request sent to the compression model: tool calls whose results it never carried.

openJiuwen sends the system messages, the context up to the protected tail and its prompt.
The tool boundary keeps a call with its results when the span is first built, but an
overflow shrink (`budget_ratio_shrink`) moves the end of the span into the tail without
that rule, so the request can end with an assistant message whose results were left in the
tail. Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

from collections.abc import Mapping

from inspector.core.checks import Finding
from inspector.core.findings.base import FindingInput


def _shrinks(inp: FindingInput) -> int:
    retries = inp.recorded.get("retries") or ()
    return sum(
        1 for r in retries if isinstance(r, Mapping) and r.get("reason") == "budget_ratio_shrink"
    )


def request_without_tool_results(inp: FindingInput) -> list[Finding]:
    """Assistant tool calls in the compression request whose results are not in it."""
    replaced = inp.replaced()
    if replaced is None:
        return []
    end = replaced[1]
    messages = inp.messages
    answered = {m.tool_call_id for m in messages[:end] if m.role == "tool" and m.tool_call_id}
    facts = inp.facts
    missing: list[tuple[int, str, int | None]] = []
    for index in range(end - 1, -1, -1):
        message = messages[index]
        if message.role != "assistant" or not message.tool_calls:
            continue
        for call_id in message.call_ids:
            if call_id not in answered:
                result = facts.result_index.get(call_id)
                missing.append(
                    (index, call_id, result if result is not None and result >= end else None)
                )
        break  # the last assistant message of the request is the one a model sees last
    if not missing:
        return []
    index = missing[0][0]
    calls = ", ".join(repr(c) for _, c, _ in missing)
    where = ", ".join(
        f"#{r} (protected tail)" if r is not None else "nowhere in the context"
        for _, _, r in missing
    )
    shrinks = _shrinks(inp)
    attempt = (
        f"attempt {shrinks + 1} (after {shrinks} overflow shrink(s))"
        if shrinks
        else "the request"
        if inp.after is not None
        else "the request this decision would send"
    )
    return [
        Finding(
            "request_without_tool_results",
            "problem",
            f"{attempt} ends at #{end - 1} with the assistant message #{index} whose tool call(s) "
            f"{calls} have no result in it (results at {where}): many APIs reject such a "
            "request, and the model summarises calls whose outcome it never saw",
            {
                "attempt": shrinks + 1,
                "request_end": end,
                "assistant_index": index,
                "call_ids": [c for _, c, _ in missing],
                "result_indices": [r for _, _, r in missing],
            },
            fix="keep a tool call and its results on the same side of the split when shrinking "
            "(raise the context size, or lower trigger_context_ratio so the first request fits)",
        )
    ]
