"""Pure explanations of regions: why a message sits where it does, tool-call links, and the
regions of a context after compression.

Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

from collections.abc import Sequence

from inspector.core.engine import Evaluation, PricedContext, Span
from inspector.core.messages import Message


def tool_links(messages: Sequence[Message]) -> dict[int, tuple[int, ...]]:
    """For each assistant message with calls, the indices of its results; for each result, its call."""
    call_at: dict[str, int] = {}
    links: dict[int, list[int]] = {}
    for index, message in enumerate(messages):
        if message.role == "assistant":
            for call_id in message.call_ids:
                call_at[call_id] = index
        elif message.role == "tool" and message.tool_call_id in call_at:
            call_index = call_at[message.tool_call_id]
            links.setdefault(call_index, []).append(index)
            links.setdefault(index, []).append(call_index)
    return {k: tuple(v) for k, v in links.items()}


def results_by_call(messages: Sequence[Message]) -> dict[str, list[int]]:
    """Tool-call id -> indices of the tool results answering it."""
    out: dict[str, list[int]] = {}
    for index, message in enumerate(messages):
        if message.role == "tool" and message.tool_call_id:
            out.setdefault(message.tool_call_id, []).append(index)
    return out


def region_reason(priced: PricedContext, evaluation: Evaluation, index: int) -> str:
    """A sentence saying why message `index` falls where it does under `evaluation.tuning`."""
    tuning = evaluation.tuning
    span = evaluation.span
    region = span.region_of(index)
    last_user = priced.last_real_user_index
    n = priced.n
    keep = evaluation.effective_keep
    processor = tuning.processor_class
    if region == "prefix":
        return (
            f"{processor} preserves everything up to and including the last real user "
            f"message (#{last_user}); this message is at or before it."
        )
    if region == "compress":
        if tuning.processor == "dialogue":
            return (
                f"{processor} compresses every turn before the last real user message "
                f"(#{last_user}); this message comes earlier."
            )
        if tuning.processor == "current_round":
            return (
                f"It comes after the last real user message (#{last_user}) and before the "
                f"protected tail (from #{span.tail[0]}), so it is sent for compression."
            )
        return (
            f"It is older than the protected tail (the last {keep} messages, from "
            f"#{span.tail[0]}), so it is sent for compression."
        )
    if region == "tail":
        if tuning.processor == "dialogue":
            if last_user < 0:
                return "There is no real user message, so Dialogue keeps the whole context."
            if index >= last_user:
                return f"{processor} keeps the last real user message (#{last_user}) and everything after it."
            return (
                "Pulled into the tail by the tool-boundary rule: a tool result after the last "
                f"real user message (#{last_user}) needs its call, which comes earlier."
            )
        keep_recent = tuning.keep_recent
        if index >= n - keep_recent:
            return f"It is one of the last {keep_recent} messages (keep-recent {keep_recent})."
        split = n - (keep or 0)
        if index >= split and tuning.tool_boundary:
            causes = priced.boundary_cause(keep_recent)
            if causes:
                call_id, result_index, call_index = min(causes, key=lambda c: c[2])
                return (
                    f"Pulled into the tail by the tool-boundary rule: result #{result_index} of "
                    f"call {call_id!r} is kept, so its call at #{call_index} and everything after "
                    f"it are kept too (keep-recent {keep_recent} widened to {keep})."
                )
        if tuning.processor == "current_round" and last_user >= 0:
            return (
                f"It comes after the last real user message (#{last_user}) and the kept window "
                f"({keep} messages) reaches back past it, so it stays; nothing is left to compress."
            )
        return f"It is in the kept window of {keep} messages."
    return "Outside the span."


def after_span(after: Sequence[Message], preserved_prefix: int | None) -> Span:
    """Regions of a dump's context after compression: kept prefix, new messages, kept tail.

    The new messages are the engine-injected user messages (memory block, recovered
    context) that follow the preserved prefix.
    """
    count = len(after)
    if preserved_prefix is None or not 0 <= preserved_prefix <= count:
        preserved_prefix = next(
            (i for i, m in enumerate(after) if m.role == "user" and not m.is_real_user), count
        )
    end = preserved_prefix
    while end < count and after[end].role == "user" and not after[end].is_real_user:
        end += 1
    return Span((0, preserved_prefix), (preserved_prefix, end), (end, count))
