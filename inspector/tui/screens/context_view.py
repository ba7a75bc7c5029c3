"""Small pure helpers of the context view: its verdict line, region lines and the settings
spelled as our older tuning names. Rich only (no Textual), no strategy named.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from inspector.core.artifact import Artifact, recorded_value
from inspector.core.outcome import classify_outcome
from inspector.core.redact import shown_name, shown_text
from inspector.core.strategy.base import Decision
from inspector.render.styles import DEFAULT_PALETTE, Palette


def decision_verdict(
    decision: Decision, recorded: Decision | None = None, styles: Palette = DEFAULT_PALETTE
) -> Text:
    """The verdict (a badge styled `verdict.hit_badge`/`verdict.miss_badge`) with the reason and
    the numbers that decided it."""
    text = Text()
    badge = "verdict.hit_badge" if decision.hit else "verdict.miss_badge"
    text.append(f" {decision.verdict} ", styles(badge))
    text.append(f" {shown_name(decision.reason)}  ", "bold")
    if decision.total_tokens is not None and decision.threshold is not None:
        relation = "≥" if decision.total_tokens >= decision.threshold else "<"
        text.append(f"total {decision.total_tokens:,} {relation} threshold {decision.threshold:,}")
    minimum = decision.numbers.get("min_target_value", decision.min_target_tokens)
    if decision.target_tokens is not None and isinstance(minimum, int):
        relation = "≥" if decision.target_tokens >= minimum else "<"
        text.append(f"  target {decision.target_tokens:,} {relation} min {minimum:,}")
    if decision.reason == "no_compressible_span":
        text.append("  (nothing left between kept prefix and kept tail)", "italic")
    if recorded is not None and (recorded.hit, recorded.reason) != (decision.hit, decision.reason):
        text.append("  (recorded tuning: ", "dim")
        text.append(
            shown_name(recorded.reason), styles("verdict.hit" if recorded.hit else "verdict.miss")
        )
        text.append(")", "dim")
    if decision.summary:
        text.append(f"\n{shown_text(decision.summary)}", "dim")
    return text


#: Outcome kind -> style name of the recorded badge.
_RECORDED_BADGES = {"compressed": "good", "not compressed": "caution", "failed": "bad"}


def source_headline(artifact: Artifact, styles: Palette = DEFAULT_PALETTE) -> Text | None:
    """What the source itself recorded, to lead the verdict line (None for a bare context).

    A silent end, a failure or a recorded outcome is the fact; our re-evaluation goes beside
    it, labelled as such. Recorded token counts are named, so a total that differs from the
    re-evaluated one is never unexplained.
    """
    if artifact.kind in ("snapshot", "messages", "llm_request"):
        return None
    outcome = classify_outcome(artifact)
    if outcome.text == "no context" and outcome.recorded is None:
        return None
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(" RECORDED ", styles(_RECORDED_BADGES.get(outcome.kind, "muted"), "bold reverse"))
    shown = shown_name(outcome.text)
    text.append(f" {shown}", styles(_RECORDED_BADGES.get(outcome.kind, "muted"), "bold"))
    causes = [str(c) for c in artifact.recorded.get("silent_causes") or ()]
    if causes:
        text.append(f"  ({len(causes)} possible causes: Why tab)", "dim")
    before = recorded_value(artifact.recorded, "tokens_before", "total_tokens_before")
    after = recorded_value(artifact.recorded, "tokens_after", "total_tokens_after")
    if isinstance(before, int) and not isinstance(before, bool):
        text.append(f"  recorded tokens {before:,}", "dim")
        if isinstance(after, int) and not isinstance(after, bool):
            text.append(f"→{after:,}", "dim")
    return text


def total_note(artifact: Artifact, decision: Decision, styles: Palette = DEFAULT_PALETTE) -> Text:
    """When the source recorded another "tokens before" than our total: say so, and why."""
    before = recorded_value(artifact.recorded, "tokens_before", "total_tokens_before")
    total = decision.total_tokens
    if not isinstance(before, int) or isinstance(before, bool) or total in (None, before):
        return Text()
    return Text(
        f"  (the source counted {before:,} before: its own count, at its moment)",
        styles("caution"),
    )


def headline(source: Text | None, verdict: Text, styles: Palette = DEFAULT_PALETTE) -> Text:
    """The verdict line: the source's own outcome first, our re-evaluation labelled beside it."""
    if source is None:
        return verdict
    out = source.copy()
    out.append("\n")
    out.append("re-evaluated: ", styles("muted", "italic"))
    out.append_text(verdict)
    return out


def verdict_word(decision: Decision, styles: Palette = DEFAULT_PALETTE) -> Text:
    """The verdict styled `verdict.hit`, or the reason styled `verdict.miss`."""
    if decision.hit:
        return Text(decision.verdict.lower(), styles("verdict.hit"))
    return Text(shown_name(decision.reason), styles("verdict.miss"))


def regions_text(decision: Decision, styles: Palette = DEFAULT_PALETTE) -> Text:
    """Each region, one per line: messages, index range, tokens (runs of one region and label
    added up)."""
    grouped: dict[tuple[str, str], list[Any]] = {}
    for region in decision.regions:  # pinned runs (a prefix by name) get their own line
        grouped.setdefault((region.name, region.label), []).append(region)
    text = Text()
    for (name, _), runs in grouped.items():
        if text:
            text.append("\n")
        count = sum(r.size for r in runs)
        text.append("■ ", styles.region(name))
        text.append(f"{runs[0].label}: ", "bold")
        starts = [r.start for r in runs if r.size]
        ends = [r.end for r in runs if r.size]
        where = f" #{min(starts)}–#{max(ends) - 1}" if starts else ""
        tokens = [r.tokens for r in runs]
        if all(t is not None for t in tokens):
            amount = f", {sum(t or 0 for t in tokens):,} tokens"
        elif decision.message_tokens is not None:
            amount = (
                f", {sum(sum(decision.message_tokens[r.start : r.end]) for r in runs):,} tokens"
            )
        else:
            amount = ""
        text.append(f"{count} msgs{where}{amount}")
    return text


def legend_labels(decision: Decision) -> dict[str, str]:
    """The legend's words for each region, where the strategy's differ from the common
    ones (a standard processor's "kept", "summarised rounds"; pinned runs left out)."""
    from inspector.core.pins import PINNED_LABEL
    from inspector.render.styles import REGION_LABELS

    own = decision.gauge.labels if decision.gauge is not None else {}
    labels: dict[str, str] = {}
    for region in decision.regions:
        if region.name in labels or region.name in own or region.name == "outside":
            continue  # the gauge's own words stand; "outside" is the system part's entry
        if region.label == PINNED_LABEL or not region.size:
            continue
        if region.label != REGION_LABELS.get(region.name, region.name):
            labels[region.name] = region.label
    return labels
