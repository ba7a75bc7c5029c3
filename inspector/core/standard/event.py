"""The `context.compression_state` "started" state a standard processor's trigger leads to.

Numbers as the engine builds them (spec 7.2): the before metric counts the context messages
only (never the system prompt or tools), `context_max` is the context's model window (not
the processor's), the statistic counts bare texts. Must not import anything outside the
standard library and `inspector.core`.
"""

from __future__ import annotations

from typing import Any

from inspector.core.standard.prepared import StandardPrepared
from inspector.core.standard.structure import dialogue_rounds

ROLES = ("system", "user", "assistant", "tool")


def compact_number(value: int) -> str:
    """`_compact_number`: 1.2k, 3.4m, ".0" dropped."""
    for limit, suffix in ((1_000_000, "m"), (1_000, "k")):
        if abs(value) >= limit:
            text = f"{value / limit:.1f}"
            if text.endswith(".0"):
                text = text[:-2]
            return text + suffix
    return str(value)


def context_percent(tokens: int, context_max: int) -> int:
    """`clamp(round(tokens / context_max * 100), 0, 100)` (half-even rounding)."""
    if context_max <= 0:
        return 0
    return min(max(round(tokens / context_max * 100), 0), 100)


def statistic(prep: StandardPrepared) -> dict[str, int]:
    """Per-role message counts and bare-text tokens of the context messages."""
    counts = dict.fromkeys(ROLES, 0)
    tokens = dict.fromkeys(ROLES, 0)
    for message in prep.messages:
        if message.role not in counts:
            continue
        counts[message.role] += 1
        tokens[message.role] += prep.counter.statistic_tokens(message.content)
    out: dict[str, int] = {
        "total_messages": len(prep.messages),
        "total_tokens": sum(tokens.values()),
        "total_dialogues": len(dialogue_rounds(prep.messages)),
    }
    for role in ROLES:
        out[f"{role}_messages"] = counts[role]
    out["tools"] = 0
    for role in ROLES:
        out[f"{role}_message_tokens"] = tokens[role]
    out["tool_tokens"] = 0
    return out


def started_state(prep: StandardPrepared, model: str | None) -> dict[str, Any]:
    """The started state's numbers: messages, tokens, context_percent, context_max, ..."""
    tokens = prep.counter.event_tokens(prep.messages)
    context_max = prep.facts.event_context_max()
    n = len(prep.messages)
    return {
        "messages": n,
        "tokens": tokens,
        "context_percent": context_percent(tokens, context_max),
        "context_max": context_max,
        "statistic": statistic(prep),
        "summary": f"Compressing {n} messages, ~{compact_number(tokens)} tokens",
        "model": model or "",
    }
