"""Findings about the numbers the trigger trusts: usage records and the window size.

A usage baseline whose `total_tokens` leaves the cached prompt out makes the context look
far smaller than it is; a `context_max` that disagrees with the model's real window makes
the compressor fire too early, or never before the model overflows.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

from collections.abc import Mapping

from inspector.core.checks import Finding
from inspector.core.findings.base import FindingInput, as_int, cached_tokens, n

#: Context windows of well-known model families (longest matching prefix of the lower-cased
#: model name wins). Only families whose window is stable across their versions.
KNOWN_WINDOWS: tuple[tuple[str, int], ...] = (
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-3.5-turbo", 16_385),
    ("gpt-5", 400_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("claude-3", 200_000),
    ("claude-sonnet-4", 200_000),
    ("claude-opus-4", 200_000),
    ("gemini-1.5-pro", 2_097_152),
    ("gemini-1.5-flash", 1_048_576),
    ("gemini-2.0-flash", 1_048_576),
    ("gemini-2.5", 1_048_576),
)


def known_window(model: str) -> int | None:
    """The known context window of a model name, or None."""
    name = model.lower().rsplit("/", 1)[-1]
    best: tuple[int, int] | None = None
    for prefix, window in KNOWN_WINDOWS:
        if name.startswith(prefix) and (best is None or len(prefix) > best[0]):
            best = (len(prefix), window)
    return best[1] if best else None


def usage_baseline_hides_context(inp: FindingInput) -> list[Finding]:
    """The usage baseline's total_tokens leaves out a large cached prompt."""
    if inp.usage_index is None or inp.usage_total is None or inp.counted_total is None:
        return []
    snapshot = inp.snapshot
    if snapshot is None:
        return []
    system = len(snapshot.system_messages)
    if not 0 <= inp.usage_index < system + len(snapshot.messages):
        return []
    message = (
        snapshot.system_messages[inp.usage_index]
        if inp.usage_index < system
        else snapshot.messages[inp.usage_index - system]
    )
    cached = cached_tokens(message.usage_metadata or {})
    counted = inp.counted_total
    total = inp.usage_total
    if not cached or counted <= 0 or total >= counted * 0.75:
        return []
    share = cached / max(cached + total, 1)
    hides = (
        inp.threshold is not None
        and inp.total_tokens is not None
        and inp.total_tokens < inp.threshold <= counted
    )
    index = inp.usage_index - len(snapshot.system_messages)
    sentence = (
        f"the usage record of message #{index} says total_tokens {n(total)} while "
        f"{n(cached)} prompt tokens were served from the cache ({share:.0%} of the prompt): the "
        f"trigger total {n(inp.total_tokens or 0)} is far below the {n(counted)} the tokenizer "
        "counts"
    )
    if hides:
        sentence += (
            f", so the threshold {n(inp.threshold or 0)} is never reached although the context "
            "is past it: the agent thinks it has room it does not have"
        )
    return [
        Finding(
            "usage_baseline_hides_context",
            "problem" if hides else "warning",
            sentence,
            {
                "message_index": index,
                "usage_total_tokens": total,
                "cache_tokens": cached,
                "cached_share": round(share, 4),
                "trigger_total": inp.total_tokens,
                "counted_total": counted,
            },
            fix="make the provider's total include cached prompt tokens (or count with the "
            "tokenizer: drop usage_metadata from the messages the compressor sees)",
        )
    ]


def _models(inp: FindingInput) -> list[tuple[str, str]]:
    """(model name, where it was read) from the artifact, the engine config and usage records."""
    found: list[tuple[str, str]] = []
    recorded = inp.recorded
    if isinstance(recorded.get("model"), str) and recorded.get("event") is not None:
        found.append((recorded["model"], "the llm_request record"))
    snapshot = inp.snapshot
    if snapshot is not None:
        name = snapshot.engine_config.get("model_name")
        if isinstance(name, str) and name:
            found.append((name, "the engine config's model_name"))
        model = inp.facts.usage_model
        if model is not None:
            found.append((model[0], f"the usage record of message #{model[1]}"))
    return [(m, w) for m, w in found if m]


def _configured_window(inp: FindingInput, model: str) -> int | None:
    snapshot = inp.snapshot
    table = snapshot.engine_config.get("model_context_window_tokens") if snapshot else None
    if isinstance(table, Mapping):
        value = as_int(table.get(model))
        if value:
            return value
    return None


def window_mismatch(inp: FindingInput) -> list[Finding]:
    """context_max against the model's window: the name's known window, llm_request, usage."""
    context_max = inp.context_max
    if not context_max or context_max <= 0:
        return []
    out: list[Finding] = []
    for model, where in _models(inp):
        window = _configured_window(inp, model) or known_window(model)
        if window is None or window == context_max:
            continue
        out.extend(_against_window(inp, context_max, model, where, window))
        break
    recorded = inp.recorded
    logged = as_int(recorded.get("context_window_tokens")) if recorded.get("event") else None
    if logged and logged != context_max:
        out.append(
            Finding(
                "window_mismatch",
                "warning",
                f"the llm_request record says the agent's window was {n(logged)} tokens while the "
                f"compressor is evaluated with context_max {n(context_max)}",
                {"context_max": context_max, "logged_window": logged},
                fix=f"use the same window for both: context_max {n(logged)}",
            )
        )
    largest = inp.facts.largest_prompt
    if largest is not None and largest[1] > context_max:
        out.append(
            Finding(
                "window_mismatch",
                "info",
                f"the model accepted {n(largest[1])} prompt tokens at message #{largest[0]}, above "
                f"context_max {n(context_max)}: its real window is larger, so compression fires "
                "earlier than the model needs",
                {
                    "context_max": context_max,
                    "usage_prompt_tokens": largest[1],
                    "message_index": largest[0],
                },
                fix="raise context_max towards the model's real window (or keep it to save cost on purpose)",
            )
        )
    return out


def _against_window(
    inp: FindingInput, context_max: int, model: str, where: str, window: int
) -> list[Finding]:
    numbers = {"context_max": context_max, "model": model, "model_window": window}
    threshold = inp.threshold
    if context_max > window:
        never = threshold is not None and threshold >= window
        tail = (
            f": the threshold {n(threshold or 0)} is beyond the window, so it never compresses "
            "before the model overflows"
            if never
            else ": the minimum target and overflow shrinks are computed on a window the model does not have"
        )
        return [
            Finding(
                "window_mismatch",
                "problem" if never else "warning",
                f"context_max {n(context_max)} is above the {n(window)}-token window of {model} "
                f"(from {where}){tail}",
                {**numbers, "threshold": threshold},
                fix=f"set context_max to {n(window)} (the model's window)",
            )
        ]
    if context_max * 2 <= window:
        return [
            Finding(
                "window_mismatch",
                "info",
                f"context_max {n(context_max)} is {context_max / window:.0%} of the {n(window)}-token "
                f"window of {model} (from {where}): it compresses long before the model needs it",
                numbers,
                fix=f"raise context_max towards {n(window)} unless the smaller window is on purpose",
            )
        ]
    return []
