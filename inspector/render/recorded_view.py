"""What a source recorded, beside our re-evaluation; and the recorded timeline. Pure Rich.

Recorded fields are read tolerantly (sources name them per artifact kind); anything not
recognised still shows in the generic key/value listing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from inspector.core.artifact import Artifact, recorded_value
from inspector.core.checks import by_severity
from inspector.core.findings import COMPACTION_KINDS
from inspector.core.redact import shown_name, shown_text
from inspector.core.strategy.base import Decision
from inspector.render.plain import PlainTable
from inspector.render.styles import DEFAULT_PALETTE, Palette

#: (label, recorded keys tried in order (dotted paths), attribute of our evaluation or None)
COMPARED_FIELDS: tuple[tuple[str, tuple[str, ...], str | None], ...] = (
    ("reason", ("reason", "last_reason", "threshold_check.reason"), "reason"),
    ("hit", ("hit", "threshold_check.hit"), "hit"),
    ("total tokens", ("total_tokens", "threshold_check.total_tokens"), "total_tokens"),
    ("threshold", ("threshold", "threshold_check.threshold"), "threshold"),
    (
        "target tokens",
        ("target_tokens", "threshold_check.target_tokens", "trigger.target_tokens"),
        "span_target_tokens",
    ),
    (
        "preserved prefix",
        (
            "span.preserved_prefix_count",
            "preserved_prefix_count",
            "span.preserved_prefix",
            "preserved_prefix",
        ),
        "prefix",
    ),
    (
        "to compress",
        (
            "span.messages_to_compress_count",
            "messages_to_compress_count",
            "span.messages_to_compress",
            "messages_to_compress",
        ),
        "compress",
    ),
    (
        "protected tail",
        (
            "span.protected_tail_count",
            "protected_tail_count",
            "span.protected_tail",
            "protected_tail",
        ),
        "tail",
    ),
    ("tokens before", ("tokens_before", "total_tokens_before", "benefit.tokens_before"), None),
    ("tokens after", ("tokens_after", "total_tokens_after", "benefit.tokens_after"), None),
    ("reduction", ("reduction_ratio", "benefit.reduction_ratio"), None),
    ("retries", ("retries", "retry_count"), None),
    ("outcome", ("outcome", "final_outcome"), None),
)


def lookup(recorded: Mapping[str, Any], *names: str) -> Any:
    """The first present value among dotted `names` (see `core.artifact.recorded_value`)."""
    return recorded_value(recorded, *names)


def _show(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        return f"{len(value)}"
    return shown_name(str(value))


_SPAN_KEYS = {
    "prefix": "preserved_prefix",
    "compress": "messages_to_compress",
    "tail": "protected_tail",
}


def _ours(decision: Decision, attribute: str) -> Any:
    if attribute in _SPAN_KEYS:
        return decision.span.get(_SPAN_KEYS[attribute])
    return getattr(decision, attribute, None)


def recorded_vs_ours(
    artifact: Artifact, evaluation: Decision | None, styles: Palette = DEFAULT_PALETTE
) -> PlainTable:
    """Recorded numbers in one column, our re-evaluation in the next; differences marked."""
    table = PlainTable(box=None, pad_edge=False, header_style="bold", show_edge=False)
    table.add_column("")
    table.add_column("recorded", justify="right")
    table.add_column("re-evaluated", justify="right")
    for label, keys, attribute in COMPARED_FIELDS:
        recorded = lookup(artifact.recorded, *keys)
        ours = _ours(evaluation, attribute) if evaluation is not None and attribute else None
        if recorded is None and ours is None:
            continue
        differs = recorded is not None and ours is not None and _show(recorded) != _show(ours)
        table.add_row(
            label,
            Text(_show(recorded), styles("changed") if differs else ""),
            Text(_show(ours), styles("changed", "bold") if differs else ""),
        )
    if evaluation is not None and artifact.after is not None:
        caption = compaction_findings_text(evaluation, styles)
        if caption is not None:
            table.caption = caption
            table.caption_justify = "left"
    return table


def compaction_findings_text(decision: Decision, styles: Palette = DEFAULT_PALETTE) -> Text | None:
    """What the recorded compaction did wrong (its before/after findings), problems first."""
    found = [f for f in by_severity(decision.findings) if f.key in COMPACTION_KINDS]
    if not found:
        return None
    text = Text("what this compaction did\n", style="bold")
    for finding in found:
        severity = finding.severity if finding.severity in ("problem", "warning") else "info"
        text.append(f"{severity} ", styles(f"severity.{severity}"))
        text.append(f"{finding.key}: ", "dim")
        text.append(shown_text(finding.sentence) + "\n")
    text.rstrip()
    return text


def _timeline_entries(artifact: Artifact) -> Sequence[Any]:
    for holder in (artifact.extra, artifact.recorded):
        for key in ("timeline", "records", "events"):
            value = holder.get(key) if isinstance(holder, Mapping) else None
            if isinstance(value, list | tuple) and value:
                return value
    return ()


def _entry_lines(entry: Any, styles: Palette, current: Any = None) -> list[Text]:
    """A timeline entry: the evaluation line, its retries, then its outcome (▶ marks `current`)."""
    if not isinstance(entry, Mapping):
        return [Text(_show(entry))]
    event = _show(entry.get("kind") or entry.get("event") or entry.get("type") or "record")
    head = Text()
    if current is not None and entry.get("index") == current:
        head.append("▶ ", styles("mark.now"))
    if entry.get("index") is not None:
        head.append(f"#{entry['index']} ", "bold")
    head.append(event, "bold")
    reason = entry.get("reason")
    if reason:
        head.append(f" {_show(reason)}", styles("verdict.hit" if entry.get("hit") else "caution"))
    for key, label in (
        ("total_tokens", "total"),
        ("threshold", "threshold"),
        ("target_tokens", "target"),
        ("min_target_tokens", "min"),
    ):
        value = entry.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            head.append(f"  {label} {_show(value)}")
    span = entry.get("span")
    if isinstance(span, Mapping):
        counts = "/".join(
            _show(span.get(k))
            for k in ("preserved_prefix", "messages_to_compress", "protected_tail")
        )
        head.append(f"  span {counts}", "dim")
    lines = [head]
    retries = entry.get("retries")
    if isinstance(retries, list):
        for retry in retries:
            if not isinstance(retry, Mapping):
                continue
            line = Text("   retry ", "dim")
            line.append(
                f"{_show(retry.get('attempt'))} {_show(retry.get('error_type', ''))}", styles("bad")
            )
            line.append(f" → {_show(retry.get('reason', ''))}")
            for key in ("budget_ratio", "delay_seconds"):
                if retry.get(key) is not None:
                    line.append(f" {key} {_show(retry[key])}", "dim")
            lines.append(line)
    outcome = entry.get("outcome")
    if outcome:
        line = Text("   outcome ", "dim")
        line.append(
            _show(outcome),
            styles("good")
            if outcome == "compressed"
            else styles("bad")
            if outcome in ("failed", "silent_end")
            else "",
        )
        if entry.get("dump"):
            line.append(f"  dump {_show(entry['dump'])}", "dim")
        lines.append(line)
    causes = entry.get("silent_causes")
    if isinstance(causes, list) and causes:
        lines.append(Text("   no record says why; openJiuwen ends silently on:", "dim"))
        lines += [Text(f"     · {_show(cause)}", "dim") for cause in causes]
    return lines


def timeline_renderable(artifact: Artifact, styles: Palette = DEFAULT_PALETTE) -> RenderableType:
    """The recorded timeline (debug records, retries, dump) in order, or a note that there is none."""
    entries = _timeline_entries(artifact)
    if not entries:
        return Text("no recorded timeline for this artifact", "dim")
    current = artifact.extra.get("run_index") if isinstance(artifact.extra, Mapping) else None
    return Group(*(line for entry in entries for line in _entry_lines(entry, styles, current)))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def recorded_answer(artifact: Artifact, styles: Palette = DEFAULT_PALETTE) -> Text | None:
    """For a record without its context: why it did not compress and what would, from the numbers.

    Uses only the recorded threshold_check (total, threshold, context_max, target, minimum); the
    ratios named are the largest/smallest values that flip the recorded comparison.
    """
    recorded = artifact.recorded
    reason = lookup(recorded, "reason", "threshold_check.reason")
    if not isinstance(reason, str):
        return None
    total = _number(lookup(recorded, "total_tokens", "threshold_check.total_tokens"))
    threshold = _number(lookup(recorded, "threshold", "threshold_check.threshold"))
    context_max = _number(lookup(recorded, "context_max", "threshold_check.context_max"))
    target = _number(lookup(recorded, "target_tokens", "threshold_check.target_tokens"))
    minimum = _number(lookup(recorded, "min_target_tokens", "threshold_check.min_target_tokens"))
    text = Text()
    text.append("recorded: ", "bold")
    text.append(
        _show(reason), styles("verdict.hit" if reason == "reached_threshold" else "verdict.miss")
    )
    if reason == "below_threshold" and total is not None and threshold is not None:
        text.append(f"  total {total:,.0f} < threshold {threshold:,.0f}")
        if context_max:
            text.append(
                f"\nwould trigger with trigger_ratio ≤ {total / context_max:.3f}"
                f" (or context_max ≤ {int(total / (threshold / context_max)):,})",
                styles("note"),
            )
    elif reason == "target_below_min" and target is not None and minimum is not None:
        text.append(f"  target {target:,.0f} < min {minimum:,.0f}")
        if context_max:
            text.append(
                f"\nwould compress with min_target_ratio ≤ {target / context_max:.4f}",
                styles("note"),
            )
    elif reason == "no_compressible_span":
        text.append("  nothing between the kept prefix and the kept tail")
        text.append(
            "\nneeds a smaller keep-recent or another processor: open a dump of this session",
            styles("note"),
        )
    elif reason == "reached_threshold":
        outcome = lookup(recorded, "outcome")
        text.append(f"  then {outcome or 'unknown outcome'} (see the timeline)")
    text.append("\nthis record has no context: regions and exact what-ifs need the messages", "dim")
    return text
