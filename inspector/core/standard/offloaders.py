"""The standard offloaders (spec 6.1-6.4): MessageSummaryOffloader, MessageOffloader,
ToolResultBudgetProcessor and ToolResultWindowProcessor.

Each decides which single messages to replace by an offload placeholder; regions mark them.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

from typing import Any

from inspector.core.checks import Check, Finding
from inspector.core.standard.prepared import (
    Outcome,
    StandardPrepared,
    check,
    fill_regions,
    ranges_of,
)
from inspector.core.standard.settings import (
    MessageOffloaderSettings,
    MessageSummaryOffloaderSettings,
    ToolResultBudgetSettings,
    ToolResultWindowSettings,
)
from inspector.core.standard.structure import (
    ProtectedCheckError,
    dialogue_rounds,
    has_calls,
    is_offload,
    is_protected,
    last_role_index,
    resolve_call,
)
from inspector.core.strategy.base import RegionRange


def _error_outcome(error: ProtectedCheckError, details: dict[str, Any]) -> Outcome:
    return Outcome(
        hit=False,
        reason="trigger_error",
        verdict="FAILS",
        details={**details, "trigger_error": str(error)},
        total_tokens=None,
        threshold=None,
        regions=(),
        checks=(check("protected", "protected tools", False, f"the trigger raises: {error}"),),
        findings=(
            Finding(
                "trigger_raises",
                "warning",
                "a 'name:pattern' protection met tool arguments that are JSON but not an "
                "object: openJiuwen emits a lone failed state and appends the batch unchanged",
            ),
        ),
    )


def evaluate_mso(prep: StandardPrepared, settings: MessageSummaryOffloaderSettings) -> Outcome:
    """MessageSummaryOffloader: some new message is larger than large_message_threshold."""
    messages = prep.messages
    start = prep.added_from
    entries: list[dict[str, Any]] = []
    eligible: list[int] = []
    limit = min(settings.large_message_threshold, prep.facts.budget(settings.model))
    try:
        for offset, message in enumerate(prep.new):
            size = prep.counter.mso_size(message)
            protected = message.role == "tool" and is_protected(
                resolve_call(messages, message.tool_call_id), settings.protected_tool_names
            )
            ok = (
                message.role in settings.offload_message_type
                and not is_offload(message)
                and not has_calls(message)
                and not protected
                and size > settings.large_message_threshold
            )
            entries.append({"size": size, "protected": protected, "eligible": ok})
            if ok:
                eligible.append(start + offset)
    except ProtectedCheckError as error:
        return _error_outcome(error, {"new": entries, "placeholder_limit": limit})
    hit = bool(eligible)
    largest = max((e["size"] for e in entries), default=0)
    checks = [
        check(
            "batch",
            "incoming batch",
            None,
            f"{len(entries)} new message(s) from index {start}; stored messages are never examined",
            new=len(entries),
            added_from=start,
        ),
        check(
            "large_message",
            "new message size vs large_message_threshold",
            hit,
            f"{len(eligible)} new message(s) of roles {settings.offload_message_type} exceed "
            f"large_message_threshold {settings.large_message_threshold} (largest new: {largest})",
            eligible=len(eligible),
            largest=largest,
            large_message_threshold=settings.large_message_threshold,
        ),
    ]
    protected_count = sum(1 for e in entries if e["protected"])
    if protected_count:
        checks.append(
            check(
                "protected",
                "protected tool results",
                None,
                f"{protected_count} new tool result(s) are protected by {settings.protected_tool_names}",
                protected=protected_count,
            )
        )
    regions = fill_regions(
        len(messages),
        ranges_of(eligible, "offload", "summarised and offloaded"),
        "outside",
        "unchanged",
    )
    return Outcome(
        hit=hit,
        reason="large_message" if hit else "no_large_message",
        verdict="OFFLOADS" if hit else "DOES NOT OFFLOAD",
        details={"new": entries, "placeholder_limit": limit},
        total_tokens=largest,
        threshold=settings.large_message_threshold,
        regions=regions,
        checks=tuple(checks),
        numbers={"placeholder_limit": limit, "eligible": eligible},
        message_notes={i: "summarised by the model, original offloaded" for i in eligible},
    )


def _offload_candidates(
    prep: StandardPrepared, settings: MessageOffloaderSettings, end: int
) -> list[int]:
    messages = prep.messages
    out: list[int] = []
    for index in range(end - 1, -1, -1):
        message = messages[index]
        if (
            message.role in settings.offload_message_type
            and isinstance(message.content, str)
            and len(message.content) > settings.large_message_threshold
            and not is_offload(message)
            and not is_protected(
                resolve_call(messages, message.tool_call_id), settings.protected_tool_names
            )
        ):
            out.append(index)
    return out


def _offloader_trigger(
    prep: StandardPrepared,
    settings: MessageOffloaderSettings,
    n: int,
    tokens: int,
    candidates: list[int],
) -> tuple[bool, str, str | None, Check]:
    """MessageOffloader's three gates: keep guard, message count (no fall-through), tokens."""
    if settings.messages_to_keep and n <= settings.messages_to_keep:
        return (
            False,
            "below_messages_to_keep",
            None,
            check(
                "messages_to_keep",
                "messages vs messages_to_keep",
                False,
                f"{n} messages <= messages_to_keep {settings.messages_to_keep}: nothing to offload",
            ),
        )
    if settings.messages_threshold and n > settings.messages_threshold:
        return (
            bool(candidates),
            "messages_threshold_exceeded",
            "messages",
            check(
                "messages_threshold",
                "messages vs messages_threshold",
                True,
                f"{n} messages > messages_threshold {settings.messages_threshold} "
                "(the token test is then skipped)",
            ),
        )
    over = tokens > settings.tokens_threshold
    note = "" if prep.counter.kind != "none" else " (no counter: the token trigger is always 0)"
    return (
        over and bool(candidates),
        "reached_threshold" if over else "below_threshold",
        "tokens",
        check(
            "tokens_threshold",
            "tokens vs tokens_threshold",
            over,
            f"{tokens} tokens (stored and new counted apart){note} "
            f"{'>' if over else '<='} tokens_threshold {settings.tokens_threshold}",
            tokens=tokens,
            tokens_threshold=settings.tokens_threshold,
        ),
    )


def evaluate_message_offloader(
    prep: StandardPrepared, settings: MessageOffloaderSettings
) -> Outcome:
    """MessageOffloader: message-count or token trigger, then candidates before the range end."""
    messages = prep.messages
    n = len(messages)
    tokens = prep.counter.offloader_tokens(prep.stored, prep.new)
    keep_index = n - settings.messages_to_keep if settings.messages_to_keep else n
    offload_range = keep_index
    if settings.keep_last_round:
        last = last_role_index(messages, "assistant")
        if last is not None:
            offload_range = min(keep_index, last)
    details: dict[str, Any] = {"message_size": n, "tokens": tokens, "offload_range": offload_range}
    try:
        candidates = _offload_candidates(prep, settings, offload_range)
    except ProtectedCheckError as error:
        return _error_outcome(error, details)
    details["candidates"] = candidates
    hit, reason, total_check, trigger = _offloader_trigger(prep, settings, n, tokens, candidates)
    checks = [trigger]
    checks.append(
        check(
            "candidates",
            "messages to offload",
            bool(candidates),
            f"{len(candidates)} message(s) before index {offload_range} longer than "
            f"{settings.large_message_threshold} characters",
            candidates=len(candidates),
            offload_range=offload_range,
        )
    )
    if total_check and not candidates and reason != "below_threshold":
        reason = "no_candidate"
    marked = ranges_of(candidates, "offload", "offloaded (trimmed)")
    if 0 <= offload_range < n:
        marked.append(RegionRange("tail", max(offload_range, 0), n, "kept (recent)"))
    findings = []
    if prep.counter.kind == "none":
        findings.append(
            Finding(
                "no_counter",
                "warning",
                "this context has no token counter (0.1.17 default): the token trigger never fires",
            )
        )
    return Outcome(
        hit=hit,
        reason=reason,
        verdict="OFFLOADS" if hit else "DOES NOT OFFLOAD",
        details=details,
        total_tokens=tokens,
        threshold=settings.tokens_threshold,
        regions=fill_regions(n, marked, "outside", "unchanged"),
        checks=tuple(checks),
        findings=tuple(findings),
        numbers={"offload_range": offload_range, "candidates": candidates},
        effective_keep=settings.messages_to_keep,
    )


def evaluate_tool_result_budget(
    prep: StandardPrepared, settings: ToolResultBudgetSettings
) -> Outcome:
    """ToolResultBudgetProcessor: a dialogue round whose tool results exceed the budget."""
    messages = prep.messages
    n = len(messages)
    allow = set(settings.tool_name_allowlist or ())
    rounds: list[list[Any]] = []
    for user, final in reversed(dialogue_rounds(messages)):
        end = n - 1 if final is None else final
        size = 0
        candidates: list[list[int]] = []
        for index in range(user, end + 1):
            message = messages[index]
            if message.role != "tool":
                continue
            tokens = prep.counter.result_size(message)
            size += tokens
            call = resolve_call(messages, message.tool_call_id)
            if (
                not is_offload(message)
                and isinstance(message.content, str)
                and (call.name if call else None) not in allow
                and tokens > settings.large_message_threshold
            ):
                candidates.append([index, tokens])
        rounds.append([user, end, size, candidates])
    over = [r for r in rounds if r[2] > settings.tokens_threshold]
    acting = [r for r in over if r[3]]
    hit = bool(acting)
    biggest = max((r[2] for r in rounds), default=0)
    checks = [
        check(
            "rounds",
            "tool-result tokens per dialogue round",
            bool(over),
            f"{len(over)} of {len(rounds)} round(s) exceed tokens_threshold "
            f"{settings.tokens_threshold} (largest: {biggest})",
            rounds=len(rounds),
            over=len(over),
            largest=biggest,
        ),
        check(
            "candidates",
            "results larger than large_message_threshold",
            hit,
            f"{sum(len(r[3]) for r in over)} result(s) in those rounds exceed "
            f"large_message_threshold {settings.large_message_threshold}",
        ),
    ]
    offload = [c[0] for r in acting for c in r[3]]
    reason = "below_threshold" if not over else ("reached_threshold" if hit else "no_candidate")
    return Outcome(
        hit=hit,
        reason=reason,
        verdict="OFFLOADS" if hit else "DOES NOT OFFLOAD",
        details={"rounds": rounds},
        total_tokens=biggest,
        threshold=settings.tokens_threshold,
        regions=fill_regions(
            n,
            ranges_of(offload, "offload", "offload candidate (largest first)"),
            "outside",
            "unchanged",
        ),
        checks=tuple(checks),
        numbers={"rounds_over_budget": len(over)},
    )


def evaluate_tool_result_window(
    prep: StandardPrepared, settings: ToolResultWindowSettings
) -> Outcome:
    """ToolResultWindowProcessor: matching results older than the newest keep_last_k."""
    messages = prep.messages
    n = len(messages)
    matched: list[int] = []
    for index, message in enumerate(messages):
        if message.role != "tool" or not isinstance(message.content, str):
            continue
        call = resolve_call(messages, message.tool_call_id)
        name = call.name if call is not None else message.name
        if name and any(name.endswith(suffix) for suffix in settings.tool_names):
            matched.append(index)
    managed = prep.release != "0.1.16"

    def handled(index: int) -> bool:
        message = messages[index]
        return is_offload(message) or (
            managed and bool(message.metadata.get("tool_result_window_managed"))
        )

    k = settings.keep_last_k
    older = matched[:-k] if len(matched) > k else []
    to_process = [i for i in older if not handled(i)]
    hit = len(matched) > k and bool(to_process)
    checks = [
        check(
            "matched",
            "matching tool results",
            len(matched) > k,
            f"{len(matched)} result(s) of tools ending with {settings.tool_names}; keep_last_k {k}",
            matched=len(matched),
            keep_last_k=k,
        ),
        check(
            "to_process",
            "older results not yet handled",
            bool(to_process),
            f"{len(to_process)} older result(s) still to offload",
            to_process=len(to_process),
        ),
    ]
    if not settings.tool_names:
        reason = "no_tool_names"
    elif len(matched) <= k:
        reason = "within_window"
    else:
        reason = "reached_threshold" if hit else "already_handled"
    marked = ranges_of(to_process, "offload", "offloaded (windowed)")
    marked += ranges_of(matched[-k:] if matched else [], "tail", "kept (newest results)")
    return Outcome(
        hit=hit,
        reason=reason,
        verdict="OFFLOADS" if hit else "DOES NOT OFFLOAD",
        details={"matched": matched, "to_process": to_process},
        total_tokens=None,
        threshold=k,
        regions=fill_regions(n, marked, "outside", "unchanged"),
        checks=tuple(checks),
        numbers={"matched": len(matched)},
        effective_keep=k,
    )
