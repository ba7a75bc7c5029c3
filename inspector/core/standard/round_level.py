"""RoundLevelCompressor (spec 6.7): threshold from the compression model's budget, and targets.

The only standard processor with a get-window hook, and the only one whose trigger counts
the system prompt and tool schemas there. The targets of the first two phases (raw rounds,
and merges of earlier memory blocks) are computed here; the LLM phases themselves are not.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inspector.core.checks import Check, Finding
from inspector.core.messages import Message
from inspector.core.standard.prepared import (
    GET,
    Outcome,
    StandardPrepared,
    check,
    fill_regions,
)
from inspector.core.standard.settings import RoundLevelSettings
from inspector.core.standard.structure import is_final_reply
from inspector.core.strategy.base import RegionRange

ACK = "Understood. I have recorded this compressed context."


def _is_block(message: Message, marker: str) -> bool:
    return (
        message.role == "user"
        and isinstance(message.content, str)
        and message.content.startswith(marker)
    )


def _is_ack(message: Message) -> bool:
    return (
        is_final_reply(message)
        and isinstance(message.content, str)
        and message.content.strip() == ACK
    )


def _block_end(messages: Sequence[Message], index: int, cend: int) -> int:
    """Last index of the memory block starting at `index` (its acknowledgements included)."""
    end = index
    while end + 1 <= cend and _is_ack(messages[end + 1]):
        end += 1
    return end


def _protect_tool_pairs(messages: Sequence[Message], start: int, end: int) -> int:
    callers: dict[str, int] = {}
    for index in range(start, end + 1):
        message = messages[index]
        if message.role == "assistant":
            for call in message.tool_calls:
                if call.id and call.id not in callers:
                    callers[call.id] = index
    answered = [
        callers[m.tool_call_id]
        for m in messages[end + 1 :]
        if m.role == "tool" and m.tool_call_id in callers
    ]
    if answered:
        return min(answered) - 1
    if messages[end].role == "assistant" and messages[end].tool_calls:
        return end - 1
    return end


def raw_targets(messages: Sequence[Message], cend: int, marker: str) -> list[list[Any]]:
    """`[id, scope, start, end]` of the first phase's targets over `[0, cend]`."""
    targets: list[list[Any]] = []
    i = 0
    while i <= cend:
        if _is_block(messages[i], marker):
            i = _block_end(messages, i, cend) + 1
            continue
        start, j = i, i
        end: int | None = None
        scope = "ongoing_react"
        while j <= cend:
            if _is_block(messages[j], marker):
                break
            if is_final_reply(messages[j]):
                end, scope = j, "completed_react"
                break
            j += 1
        if end is None:
            end = j - 1
        protected = _protect_tool_pairs(messages, start, end)
        if protected != end and protected <= start:
            break
        end = protected
        targets.append([f"block_{len(targets) + 1}", scope, start, end])
        i = end + 1
    return targets


def memory_targets(messages: Sequence[Message], cend: int, marker: str) -> list[list[Any]]:
    """`[id, start, end, level]` of the memory blocks in `[0, cend]`."""
    out: list[list[Any]] = []
    i = 0
    while i <= cend:
        if not _is_block(messages[i], marker):
            i += 1
            continue
        end = _block_end(messages, i, cend)
        level = 0
        for message in messages[i : end + 1]:
            value = message.metadata.get("compress_level", 0)
            if isinstance(value, int) and not isinstance(value, bool):
                level = max(level, value)
        out.append([f"memory_{len(out) + 1}", i, end, level])
        i = end + 1
    return out


def merge_targets(memory: Sequence[Sequence[Any]]) -> list[list[Any]]:
    """`[id, start, end, level, next_level, blocks]` of the recursive-merge phase's groups."""
    levels = [max(int(m[3]), 1) for m in memory]
    while True:
        present = sorted(set(levels))
        moved = False
        for low, high in zip(present, present[1:], strict=False):
            if levels.count(low) == 1:
                levels[levels.index(low)] = high
                moved = True
                break
        if not moved:
            break
    held = sorted(level for level in set(levels) if levels.count(level) >= 2)
    if not held:
        return []
    chosen = held[0]
    groups: list[list[int]] = []
    for index, level in enumerate(levels):
        if level != chosen:
            continue
        if groups and memory[groups[-1][-1]][2] + 1 == memory[index][1]:
            groups[-1].append(index)
        else:
            groups.append([index])
    out: list[list[Any]] = []
    for group in (g for g in groups if len(g) >= 2):
        out.append(
            [
                f"merge_{chosen}_{len(out) + 1}",
                memory[group[0]][1],
                memory[group[-1]][2],
                chosen,
                chosen + 1,
                len(group),
            ]
        )
    return out


def _checks(details: Mapping[str, Any], settings: RoundLevelSettings, scope: str) -> list[Check]:
    total, budget, threshold = details["total"], details["budget"], details["threshold"]
    under, cend = details["under_target"], details["compress_end"]
    raw = details["raw_targets"] or []
    memory = details["memory_targets"] or []
    merges = details["merge_targets"] or []
    hit = total >= threshold
    return [
        check(
            "budget",
            "compression model budget",
            None,
            f"budget {budget} = min(context window, window of model {settings.model!r}); "
            f"threshold = max(int({budget} x {settings.trigger_context_ratio}), 1) = {threshold}",
            budget=budget,
            threshold=threshold,
        ),
        check(
            "threshold",
            "window tokens vs threshold",
            hit,
            f"{total} tokens of the {scope} {'>=' if hit else '<'} threshold {threshold}",
            total=total,
            threshold=threshold,
        ),
        check(
            "target",
            "window tokens vs target_total_tokens",
            not under,
            f"{total} tokens {'<=' if under else '>'} target_total_tokens "
            f"{settings.target_total_tokens}: "
            + ("already under target, nothing to do" if under else "compress until under it"),
            total=total,
            target_total_tokens=settings.target_total_tokens,
        ),
        check(
            "targets",
            "first-phase targets",
            bool(raw) or bool(merges),
            f"{len(raw)} raw round target(s) in [0, {cend}], {len(memory)} memory block(s), "
            f"{len(merges)} merge group(s)",
            raw_targets=len(raw),
            memory_targets=len(memory),
            merge_targets=len(merges),
        ),
    ]


def evaluate_round_level(prep: StandardPrepared, settings: RoundLevelSettings) -> Outcome:
    """RoundLevelCompressor's trigger (add or get hook), under-target test and targets."""
    messages = prep.messages
    n = len(messages)
    get = prep.hook == GET
    system = prep.system if get or prep.add_passes_window else ()
    tools = prep.tools if get or prep.add_passes_window else ()
    total = prep.counter.window_count(system, messages, tools)
    budget = prep.facts.budget(settings.model)
    threshold = max(int(budget * settings.trigger_context_ratio), 1)
    call_budget = prep.facts.budget(settings.model, settings.compression_call_max_tokens)
    under = total <= settings.target_total_tokens
    keep = 0 if get else settings.keep_recent_messages
    cend = n - keep - 1
    marker = settings.compression_marker
    raw = raw_targets(messages, cend, marker) if cend >= 0 else []
    memory = memory_targets(messages, cend, marker) if cend >= 0 else []
    merges = merge_targets(memory)
    targets_known = cend >= 0
    details = {
        "total": total,
        "budget": budget,
        "threshold": threshold,
        "call_budget": call_budget,
        "under_target": under,
        "compress_end": cend,
        "raw_targets": raw if targets_known else None,
        "memory_targets": memory if targets_known else None,
        "merge_targets": merges if targets_known else None,
    }
    hit = total >= threshold
    checks = _checks(
        details,
        settings,
        "system prompt, context messages and tools" if get else "context messages",
    )
    reason = "reached_threshold" if hit else "below_threshold"
    verdict = "COMPRESSES" if hit else "DOES NOT COMPRESS"
    findings: list[Finding] = []
    if hit and under:
        reason, verdict = "under_target", "TRIGGERS, NOTHING TO COMPRESS"
        findings.append(
            Finding(
                "threshold_below_target",
                "warning",
                f"threshold {threshold} is reached but the window is under target_total_tokens "
                f"{settings.target_total_tokens}: every evaluation emits started then noop "
                f"(a target above {int(budget * settings.trigger_context_ratio)} never acts)",
                {"threshold": threshold, "target_total_tokens": settings.target_total_tokens},
            )
        )
    marked = [RegionRange("compress", t[2], t[3] + 1, "first-phase targets") for t in raw]
    marked += [RegionRange("summary", m[1], m[2] + 1, "earlier memory blocks") for m in memory]
    notes = {i: f"{t[0]} ({t[1]})" for t in raw for i in range(t[2], t[3] + 1)}
    notes.update({i: f"{m[0]}, level {m[3]}" for m in memory for i in range(m[1], m[2] + 1)})
    if 0 <= cend + 1 < n:
        marked.append(RegionRange("tail", cend + 1, n, "kept (keep_recent_messages)"))
    return Outcome(
        hit=hit,
        reason=reason,
        verdict=verdict,
        details=details,
        total_tokens=total,
        threshold=threshold,
        regions=fill_regions(n, marked, "outside", "not targeted"),
        checks=tuple(checks),
        findings=tuple(findings),
        numbers={"budget": budget, "call_budget": call_budget, "under_target": under},
        target_tokens=settings.target_total_tokens,
        effective_keep=keep,
        message_notes=notes,
    )
