"""FullCompactProcessor, MicroCompactProcessor and ReasoningToolLoopCompactProcessor
(spec 6.8-6.10): the three processors that act only on a completed API round.

Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from inspector.core.checks import Finding
from inspector.core.messages import Message
from inspector.core.standard.prepared import (
    Outcome,
    StandardPrepared,
    check,
    fill_regions,
    ranges_of,
)
from inspector.core.standard.settings import (
    FullCompactSettings,
    MicroCompactSettings,
    ReasoningToolLoopSettings,
)
from inspector.core.standard.structure import (
    ends_on_api_round,
    has_calls,
    resolve_call,
)
from inspector.core.strategy.base import RegionRange


def _api_round(prep: StandardPrepared) -> bool:
    key = ("api_round",)
    if key not in prep.cache:
        prep.cache[key] = ends_on_api_round(prep.messages)
    return bool(prep.cache[key])


def _api_check(api_round: bool) -> Any:
    return check(
        "api_round",
        "ends on a completed API round",
        api_round,
        "the context ends on a completed API round"
        if api_round
        else "the context does not end on a completed API round (a call waits for results, "
        "or no round is complete): nothing runs",
    )


def _kept_start(active: Sequence[Message], keep: int, pairs: bool) -> int:
    start = max(len(active) - keep, 0) if keep > 0 else len(active)
    if not pairs:
        return start
    while True:
        wanted = {m.tool_call_id for m in active[start:] if m.role == "tool" and m.tool_call_id}
        callers = [
            i
            for i in range(start)
            if active[i].role == "assistant" and any(c.id in wanted for c in active[i].tool_calls)
        ]
        if not callers or min(callers) >= start:
            return start
        start = min(callers)


def evaluate_full_compact(prep: StandardPrepared, settings: FullCompactSettings) -> Outcome:
    """FullCompactProcessor: completed API round and context tokens over trigger_total_tokens."""
    messages = prep.messages
    n = len(messages)
    api_round = _api_round(prep)
    tokens = prep.counter.full_compact_count(messages)
    boundary = -1
    for index in range(n - 1, -1, -1):
        message = messages[index]
        if (
            message.role == "system"
            and isinstance(message.content, str)
            and message.content.startswith((settings.marker, settings.session_memory_marker))
        ):
            boundary = index
            break
    active = messages[boundary + 1 :]
    start = _kept_start(active, settings.messages_to_keep, settings.keep_tool_message_pairs)
    keep_count = len(active) - start
    over = tokens > settings.trigger_total_tokens
    hit = api_round and over
    details = {
        "api_round": api_round,
        "tokens": tokens,
        "boundary_index": boundary,
        "active_len": len(active),
        "keep_count": keep_count,
    }
    checks = [
        _api_check(api_round),
        check(
            "trigger_total_tokens",
            "context tokens vs trigger_total_tokens",
            over,
            f"{tokens} tokens of all {n} context messages (earlier compactions included) "
            f"{'>' if over else '<='} trigger_total_tokens {settings.trigger_total_tokens}",
            tokens=tokens,
            trigger_total_tokens=settings.trigger_total_tokens,
        ),
        check(
            "kept",
            "messages kept verbatim",
            None,
            f"{keep_count} of {len(active)} active message(s) kept (messages_to_keep "
            f"{settings.messages_to_keep}"
            + (", widened to whole tool pairs)" if settings.keep_tool_message_pairs else ")"),
            keep_count=keep_count,
        ),
    ]
    first_active = boundary + 1
    marked = [
        RegionRange("compress", first_active, first_active + start, "summarised"),
        RegionRange("tail", first_active + start, n, "kept verbatim"),
    ]
    reason = "reached_threshold" if hit else ("below_threshold" if api_round else "no_api_round")
    findings = []
    if boundary >= 0:
        findings.append(
            Finding(
                "counts_before_boundary",
                "info",
                f"the trigger counts the {boundary + 1} message(s) before the last compaction "
                "boundary too",
            )
        )
    return Outcome(
        hit=hit,
        reason=reason,
        verdict="COMPACTS" if hit else "DOES NOT COMPACT",
        details=details,
        total_tokens=tokens,
        threshold=settings.trigger_total_tokens,
        regions=fill_regions(n, marked, "prefix", "before the last boundary"),
        checks=tuple(checks),
        findings=tuple(findings),
        numbers={"boundary_index": boundary, "keep_count": keep_count},
        effective_keep=settings.messages_to_keep,
    )


def evaluate_micro_compact(prep: StandardPrepared, settings: MicroCompactSettings) -> Outcome:
    """MicroCompactProcessor: a tool with more results than trigger_threshold + keep."""
    messages = prep.messages
    api_round = _api_round(prep)
    grouped: dict[str, list[int]] = {}
    for index, message in enumerate(messages):
        if message.role != "tool" or message.content == settings.cleared_marker:
            continue
        call = resolve_call(messages, message.tool_call_id)
        if call is not None and call.name in settings.compactable_tool_names:
            grouped.setdefault(call.name, []).append(index)
    limit = settings.trigger_threshold + settings.keep_recent_per_tool
    over = {name: idx for name, idx in grouped.items() if len(idx) > limit}
    hit = api_round and bool(over)
    largest = max((len(v) for v in grouped.values()), default=0)
    keep = settings.keep_recent_per_tool
    cleared = sorted(i for idx in over.values() for i in (idx[:-keep] if keep else idx))
    checks = [
        _api_check(api_round),
        check(
            "groups",
            "results per tool vs trigger_threshold + keep_recent_per_tool",
            bool(over),
            f"largest group {largest} result(s); {len(over)} tool(s) exceed {limit} "
            f"(trigger_threshold {settings.trigger_threshold} + keep_recent_per_tool {keep})",
            largest=largest,
            limit=limit,
        ),
    ]
    reason = "reached_threshold" if hit else ("below_threshold" if api_round else "no_api_round")
    return Outcome(
        hit=hit,
        reason=reason,
        verdict="CLEARS OLD RESULTS" if hit else "DOES NOT CLEAR",
        details={"api_round": api_round, "grouped": grouped},
        total_tokens=largest,
        threshold=limit,
        regions=fill_regions(
            len(messages), ranges_of(cleared, "offload", "content cleared"), "outside", "unchanged"
        ),
        checks=tuple(checks),
        numbers={"groups": {k: len(v) for k, v in grouped.items()}},
        effective_keep=keep,
    )


def _tool_rounds(
    messages: Sequence[Message], min_chars: int
) -> list[tuple[int, int, str, list[str]]]:
    rounds: list[tuple[int, int, str, list[str]]] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        reasoning = message.extra.get("reasoning_content")
        ids = [c.id for c in message.tool_calls if c.id]
        names = [c.name for c in message.tool_calls if c.name]
        if not (
            has_calls(message)
            and isinstance(reasoning, str)
            and len(reasoning.strip()) >= min_chars
            and ids
            and names
        ):
            i += 1
            continue
        pending = set(ids)
        j = i + 1
        while (
            j < len(messages)
            and pending
            and messages[j].role == "tool"
            and messages[j].tool_call_id in pending
        ):
            pending.discard(messages[j].tool_call_id or "")
            j += 1
        if pending:
            i += 1
            continue
        rounds.append((i, j, reasoning.strip(), sorted(names)))
        i = j
    return rounds


def _arguments(text: str) -> Any:
    if not text:
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return text


def _fold_texts(messages: Sequence[Message], start: int, end: int) -> tuple[str, str]:
    calls = messages[start].tool_calls
    names = {c.id: c.name for c in calls if c.id}
    calls_json = json.dumps(
        [{"name": c.name, "arguments": _arguments(c.arguments)} for c in calls],
        ensure_ascii=False,
        indent=2,
    )
    results = [
        {"name": names.get(m.tool_call_id or "", "(unknown)"), "content": m.content}
        for m in messages[start + 1 : end]
        if isinstance(m.content, str) and m.content.strip()
    ]
    return calls_json, json.dumps(results, ensure_ascii=False, indent=2)


def evaluate_reasoning_loop(prep: StandardPrepared, settings: ReasoningToolLoopSettings) -> Outcome:
    """ReasoningToolLoopCompactProcessor (0.1.16): repeated reasoning with the same tool set."""
    messages = prep.messages
    n = len(messages)
    api_round = _api_round(prep)
    rounds = _tool_rounds(messages, settings.reasoning_min_chars)
    run = 0
    if rounds:
        fingerprint = rounds[-1][2:]
        for found in reversed(rounds):
            if found[2:] != fingerprint:
                break
            run += 1
    looped = run >= settings.consecutive_threshold
    details: dict[str, Any] = {
        "api_round": api_round,
        "rounds": [[s, e, r, names] for s, e, r, names in rounds],
        "fold": None,
    }
    marked: list[RegionRange] = []
    if looped:
        first = rounds[-run][0]
        details["fold"] = [first, rounds[-1][1], run]
        details["calls_json"], details["results_json"] = _fold_texts(
            messages, rounds[-1][0], rounds[-1][1]
        )
        marked.append(RegionRange("fold", first, n, "folded into one warning message"))
    hit = settings.enabled and api_round and looped
    checks = [
        check("enabled", "enabled", settings.enabled, f"enabled is {settings.enabled}"),
        _api_check(api_round),
        check(
            "loop",
            "trailing run of identical rounds vs consecutive_threshold",
            looped,
            f"{len(rounds)} tool round(s) with reasoning; the last {run} share reasoning and tool "
            f"set ({'>=' if looped else '<'} consecutive_threshold {settings.consecutive_threshold})",
            run=run,
            consecutive_threshold=settings.consecutive_threshold,
        ),
    ]
    if not settings.enabled:
        reason = "disabled"
    elif not api_round:
        reason = "no_api_round"
    else:
        reason = "reached_threshold" if looped else "below_threshold"
    findings = []
    if looped and details["fold"][1] < n:
        findings.append(
            Finding(
                "fold_takes_tail",
                "warning",
                f"the fold replaces everything from {details['fold'][0]} to the end, including "
                f"{n - details['fold'][1]} message(s) after the last looping round",
            )
        )
    return Outcome(
        hit=hit,
        reason=reason,
        verdict="FOLDS THE LOOP" if hit else "DOES NOT FOLD",
        details=details,
        total_tokens=run,
        threshold=settings.consecutive_threshold,
        regions=fill_regions(n, marked, "outside", "unchanged"),
        checks=tuple(checks),
        findings=tuple(findings),
        numbers={"rounds": len(rounds), "run": run},
    )
