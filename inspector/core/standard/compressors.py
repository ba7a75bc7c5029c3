"""DialogueCompressor and CurrentRoundCompressor (spec 6.5, 6.6): trigger, selection, regions.

Both trigger on an absolute token count of the context messages (stored + new; never the
system prompt or tools) and then summarise with one LLM call; the call itself is out of
scope here (`rerun` makes it). Must not import anything outside the standard library and
`inspector.core`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspector.core.checks import Check, Finding
from inspector.core.messages import Message
from inspector.core.standard.prepared import (
    Outcome,
    StandardPrepared,
    check,
    fill_regions,
)
from inspector.core.standard.settings import CurrentRoundSettings, DialogueSettings
from inspector.core.standard.structure import completed_api_rounds, is_final_reply
from inspector.core.strategy.base import RegionRange

CR_MARKER = "[CURRENT_ROUND_MEMORY_BLOCK]"


def _all_tokens(prep: StandardPrepared) -> int:
    key = ("util_count_all",)
    if key not in prep.cache:
        prep.cache[key] = prep.counter.util_count(prep.messages)
    return int(prep.cache[key])


def dialogue_cut(messages: Sequence[Message], settings: DialogueSettings) -> int:
    """The cut `c`: messages before it may be compressed (may be negative, Python slicing)."""
    n = len(messages)
    keep_index = n - settings.messages_to_keep if settings.messages_to_keep else n
    if settings.keep_last_round:
        finals = [i for i, m in enumerate(messages) if is_final_reply(m)]
        if finals:
            return min(finals[-1], keep_index)
    return keep_index


def dialogue_targets(messages: Sequence[Message], cut: int) -> list[list[Any]] | None:
    """`[id, user, start, end]` of each target round in `messages[:cut]` (inclusive ranges).

    None when the cut is -1 (openJiuwen stops before looking for rounds).
    """
    if cut == -1:
        return None
    prefix = messages[:cut]
    pairs: list[tuple[int, int]] = []
    opened: int | None = None
    for i, message in enumerate(prefix):
        if message.role == "user" and opened is None:
            opened = i
        elif is_final_reply(message) and opened is not None:
            pairs.append((opened, i))
            opened = None
    compressible = [k for k, (u, a) in enumerate(pairs) if a - u + 1 > 2]
    if not compressible:
        return []
    chosen = pairs[compressible[0] : compressible[-1] + 1]
    return [[f"react_{k + 1}", u, u + 1, a] for k, (u, a) in enumerate(chosen)]


def tokens_check(tokens: int, n: int, threshold: int) -> tuple[bool, str, Check]:
    """The absolute token test of Dialogue and CurrentRound (tokens > tokens_threshold)."""
    hit = tokens > threshold
    return (
        hit,
        "reached_threshold" if hit else "below_threshold",
        check(
            "tokens_threshold",
            "context tokens vs tokens_threshold",
            hit,
            f"{tokens} tokens of {n} context messages {'>' if hit else '<='} tokens_threshold "
            f"{threshold} (absolute; no system prompt, no tools)",
            tokens=tokens,
            tokens_threshold=threshold,
        ),
    )


def keep_check(n: int, keep: int, relation: str = "<") -> Check:
    """The message-count guard: fewer messages than messages_to_keep never compress."""
    return check(
        "messages_to_keep",
        "messages vs messages_to_keep",
        False,
        f"{n} messages {relation} messages_to_keep {keep}: no compression",
        messages=n,
        messages_to_keep=keep,
    )


def _dialogue_trigger(n: int, tokens: int, settings: DialogueSettings) -> tuple[bool, str, Check]:
    if settings.messages_threshold is not None and n > settings.messages_threshold:
        return (
            True,
            "messages_threshold_exceeded",
            check(
                "messages_threshold",
                "messages vs messages_threshold",
                True,
                f"{n} messages > messages_threshold {settings.messages_threshold}: compress "
                "(the token test is not reached)",
                messages=n,
                messages_threshold=settings.messages_threshold,
            ),
        )
    if settings.messages_to_keep and n < settings.messages_to_keep:
        return False, "below_messages_to_keep", keep_check(n, settings.messages_to_keep)
    return tokens_check(tokens, n, settings.tokens_threshold)


def _dialogue_findings(n: int, cut: int, hit: bool, targets: list[Any]) -> list[Finding]:
    findings: list[Finding] = []
    if hit and not targets:
        findings.append(
            Finding(
                "noop_after_trigger",
                "warning",
                "the trigger fires but no round qualifies: openJiuwen emits started then noop",
            )
        )
    if cut < -1:
        findings.append(
            Finding(
                "negative_cut",
                "info",
                f"the cut is {cut}: openJiuwen slices all[:{cut}], the first {max(n + cut, 0)} "
                "messages",
                {"compress_idx": cut},
            )
        )
    return findings


def evaluate_dialogue(prep: StandardPrepared, settings: DialogueSettings) -> Outcome:
    """DialogueCompressor's trigger and selection."""
    messages = prep.messages
    n = len(messages)
    tokens = _all_tokens(prep)
    cut = dialogue_cut(messages, settings)
    found = dialogue_targets(messages, cut)
    targets = found or []
    details = {"message_size": n, "tokens": tokens, "compress_idx": cut, "targets": found}
    hit, reason, trigger = _dialogue_trigger(n, tokens, settings)
    checks = [trigger]
    checks.append(
        check(
            "cut",
            "compressible prefix",
            None,
            _cut_sentence(n, cut, settings),
            compress_idx=cut,
        )
    )
    checks.append(
        check(
            "targets",
            "rounds to compress",
            bool(targets),
            f"{len(targets)} target round(s) before the cut"
            if targets
            else "no round before the cut has anything between its user message and its reply",
            targets=len(targets),
        )
    )
    marked = [RegionRange("compress", t[2], t[3] + 1, "summarised rounds") for t in targets]
    notes = {
        i: f"{t[0]}: summarised with its round (user message {t[1]} stays)"
        for t in targets
        for i in range(t[2], t[3] + 1)
    }
    kept_from = cut if cut >= 0 else max(n + cut, 0)
    if kept_from < n:
        marked.append(RegionRange("tail", kept_from, n, "kept (after the cut)"))
    regions = fill_regions(n, marked, "prefix", "kept")
    findings = _dialogue_findings(n, cut, hit, targets)
    verdict = "COMPRESSES" if hit else "DOES NOT COMPRESS"
    if hit and not targets:
        reason, verdict = "no_compressible_rounds", "TRIGGERS, NOTHING TO COMPRESS"
    return Outcome(
        hit=hit,
        reason=reason,
        verdict=verdict,
        details=details,
        total_tokens=tokens,
        threshold=settings.tokens_threshold,
        regions=regions,
        checks=tuple(checks),
        findings=tuple(findings),
        numbers={"compress_idx": cut, "targets": len(targets), "message_size": n},
        effective_keep=settings.messages_to_keep,
        message_notes=notes,
    )


def _cut_sentence(n: int, cut: int, settings: DialogueSettings) -> str:
    parts = [f"cut at {cut} of {n}"]
    if settings.messages_to_keep:
        parts.append(f"messages_to_keep {settings.messages_to_keep}")
    if settings.keep_last_round:
        parts.append("keep_last_round keeps the last final reply")
    return ", ".join(parts)


def _memory_runs(prep: StandardPrepared, min_blocks: int) -> list[list[int]]:
    messages = prep.messages
    runs: list[list[int]] = []
    start: int | None = None
    for i in range(len(messages) + 1):
        block = (
            i < len(messages)
            and messages[i].role == "user"
            and isinstance(messages[i].content, str)
            and messages[i].content.startswith(CR_MARKER)
        )
        if block and start is None:
            start = i
        elif not block and start is not None:
            if i - start >= min_blocks:
                runs.append([start, i - 1, prep.counter.util_count(messages[start:i])])
            start = None
    return runs


def current_round_span(
    messages: Sequence[Message], keep: int
) -> tuple[int | None, tuple[int, int] | None, str]:
    """Last user index, the span `[s, e]` (inclusive) or None, and why."""
    n = len(messages)
    users = [i for i, m in enumerate(messages) if m.role == "user"]
    if not users:
        return None, None, "no user message"
    u = users[-1]
    if u == n - 1:
        return u, None, "the last user message is the newest message"
    if u >= n - keep:
        return u, None, f"the last user message is among the newest {keep} (messages_to_keep)"
    s = u + 1
    e = max(0, n - keep) - 1
    if e >= s:
        rounds = completed_api_rounds(messages[s : e + 1])
        e = s + rounds[-1][1] - 1 if rounds else s - 1
    if e < s:
        return u, None, "no completed API round between the last user message and the kept tail"
    return u, (s, e), f"span [{s}, {e}] after the last user message {u}"


def _current_round_details(
    prep: StandardPrepared, settings: CurrentRoundSettings
) -> tuple[dict[str, Any], tuple[int, int] | None, str]:
    """The reference's details (span key only when a span was looked for), span and why."""
    messages = prep.messages
    n = len(messages)
    keep = settings.messages_to_keep
    user, span, why_span = current_round_span(messages, keep)
    details: dict[str, Any] = {"message_size": n, "tokens": _all_tokens(prep), "last_user_idx": -1}
    if user is not None and not (user == n - 1 or user >= n - keep):
        details["last_user_idx"] = user
        details["span"] = list(span) if span else None
    if span is not None:
        details["span_tokens"] = prep.counter.util_count(messages[span[0] : span[1] + 1])
    details["merge_ranges"] = _memory_runs(prep, settings.summary_merge_min_blocks)
    return details, span, why_span


def _stage_checks(
    settings: CurrentRoundSettings,
    span_facts: tuple[tuple[int, int] | None, str, int | None],
    merges: list[list[int]],
    mergeable: list[list[int]],
) -> list[Check]:
    """The span, min-selected and merge-stage checks."""
    span, why_span, span_tokens = span_facts
    out = [check("span", "span after the last user message", span is not None, why_span)]
    if span_tokens is not None:
        first_stage = span_tokens >= settings.min_selected_tokens_for_compression
        out.append(
            check(
                "min_selected",
                "span tokens vs min_selected_tokens_for_compression",
                first_stage,
                f"span holds {span_tokens} tokens "
                f"{'>=' if first_stage else '<'} min_selected_tokens_for_compression "
                f"{settings.min_selected_tokens_for_compression}",
                span_tokens=span_tokens,
                min_selected_tokens_for_compression=settings.min_selected_tokens_for_compression,
            )
        )
    out.append(
        check(
            "merge",
            "memory-block merge",
            bool(mergeable) if merges else None,
            f"{len(merges)} run(s) of >= {settings.summary_merge_min_blocks} memory blocks, "
            f"{len(mergeable)} over accumulated_summary_token_limit "
            f"{settings.accumulated_summary_token_limit}",
            runs=len(merges),
            mergeable=len(mergeable),
        )
    )
    return out


def evaluate_current_round(prep: StandardPrepared, settings: CurrentRoundSettings) -> Outcome:
    """CurrentRoundCompressor's trigger, span and merge stage."""
    n = len(prep.messages)
    keep = settings.messages_to_keep
    details, span, why_span = _current_round_details(prep, settings)
    tokens = int(details["tokens"])
    span_tokens: int | None = details.get("span_tokens")
    merges: list[list[int]] = details["merge_ranges"]
    if n < keep:
        hit, reason, trigger = False, "below_messages_to_keep", keep_check(n, keep)
    else:
        hit, reason, trigger = tokens_check(tokens, n, settings.tokens_threshold)
    checks = [trigger]
    first_stage = (
        span_tokens is not None and span_tokens >= settings.min_selected_tokens_for_compression
    )
    mergeable = [m for m in merges if m[2] > settings.accumulated_summary_token_limit]
    checks.extend(_stage_checks(settings, (span, why_span, span_tokens), merges, mergeable))
    marked: list[RegionRange] = []
    if span is not None:
        label = "to compress" if first_stage else "span (below min_selected)"
        marked.append(RegionRange("compress", span[0], span[1] + 1, label))
        if span[1] + 1 < n:
            marked.append(RegionRange("tail", span[1] + 1, n, "kept (recent)"))
    for run in mergeable:
        marked.append(RegionRange("summary", run[0], run[1] + 1, "memory blocks to merge"))
    regions = fill_regions(n, marked, "prefix", "kept")
    verdict = "COMPRESSES" if hit else "DOES NOT COMPRESS"
    findings: list[Finding] = []
    if hit and not first_stage and not mergeable:
        reason = "no_compressible_span" if span is None else "target_below_min"
        verdict = "TRIGGERS, NOTHING TO COMPRESS"
        findings.append(
            Finding(
                "noop_after_trigger",
                "warning",
                "the trigger fires but neither stage has work: openJiuwen emits started then noop",
            )
        )
    return Outcome(
        hit=hit,
        reason=reason,
        verdict=verdict,
        details=details,
        total_tokens=tokens,
        threshold=settings.tokens_threshold,
        regions=regions,
        checks=tuple(checks),
        findings=tuple(findings),
        numbers={
            "last_user_idx": details["last_user_idx"],
            "span_tokens": span_tokens,
            "merge_runs": len(merges),
        },
        target_tokens=span_tokens,
        min_target_tokens=settings.min_selected_tokens_for_compression,
        effective_keep=keep,
    )
