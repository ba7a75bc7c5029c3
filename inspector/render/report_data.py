"""The data of a bug report for one context, as plain JSON values with secrets masked.

One builder for every output (Markdown, HTML, plain text): it takes any strategy's
`Decision` through the one `why --json` builder (`inspector.core.strategy.report.why_json`),
adds the context message by message with token counts, the smallest flips, what the source
recorded, and for a dump the context after compression, then masks everything that looks like
a secret with `inspector.core.redact.mask_secrets`. Pure: no I/O. Must not import Textual,
the sources, llm, tui or cli packages.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from inspector import __version__
from inspector.core.artifact import Artifact
from inspector.core.flip_check import dropped_note
from inspector.core.messages import Message
from inspector.core.pins import KEPT_REGIONS, PinRow
from inspector.core.redact import mask_secrets, mask_text
from inspector.core.strategy.base import Decision, Flip
from inspector.core.strategy.report import why_json
from inspector.core.tokens import TokenCounter

#: Characters of each message shown in a report (the whole text is never exported).
PREVIEW_CHARS = 160


def message_preview(message: Message, limit: int = PREVIEW_CHARS) -> str:
    """One line of a message's text: content (blocks summarised), then its tool calls."""
    if isinstance(message.content, str):
        text = message.content
    else:
        parts = []
        for block in message.content:
            if isinstance(block, Mapping) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif isinstance(block, Mapping):
                parts.append(f"[{block.get('type', 'block')}]")
            else:
                parts.append(str(block))
        text = " ".join(parts)
    calls = [f"{call.name}({call.arguments})" for call in message.tool_calls]
    if calls:
        text = (text + " " if text else "") + "calls " + ", ".join(calls)
    # masked before it is cut: a key cut in half would no longer look like one
    text = mask_text(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def min_target_of(why: Mapping[str, Any]) -> Any:
    """The minimum target the checks compared with (the why report leaves
    `min_target_tokens` empty when the check passed; `min_target_value` holds it)."""
    value = why.get("min_target_tokens")
    return value if value is not None else why.get("min_target_value")


def _message_rows(
    messages: Sequence[Message],
    tokens: Sequence[int] | None,
    decision: Decision | None,
    pinned: frozenset[int] = frozenset(),
) -> list[dict[str, Any]]:
    rows = []
    for index, message in enumerate(messages):
        row: dict[str, Any] = {
            "index": index,
            "role": message.role,
            "tokens": tokens[index] if tokens is not None and index < len(tokens) else None,
            "text": message_preview(message),
        }
        if message.tool_call_id:
            row["tool_call_id"] = message.tool_call_id
        if decision is not None:
            row["region"] = decision.region_of(index)
            row["region_label"] = decision.message_labels.get(index) or decision.region_label(index)
        if index in pinned:
            row["pinned"] = True
        rows.append(row)
    return rows


def _flip_rows(flips: Sequence[Flip]) -> list[dict[str, Any]]:
    return [
        {
            "param": flip.param,
            "from": flip.current,
            "to": flip.value,
            "then": flip.decision.verdict,
            "reason": flip.decision.reason,
            "hit": flip.decision.hit,
            "sentence": flip.sentence,
        }
        for flip in flips
    ]


def _region_rows(why: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Runs of one region (name and label) added up, in the order they first appear."""
    grouped: dict[tuple[str, str], dict[str, Any]] = {}
    for region in why.get("regions") or ():
        entry = grouped.setdefault(
            (region["name"], region["label"]),
            {"name": region["name"], "label": region["label"], "messages": 0, "runs": []},
        )
        size = max(region["end"] - region["start"], 0)
        entry["messages"] += size
        if size:
            entry["runs"].append([region["start"], region["end"]])
        if region.get("tokens") is not None:
            entry["tokens"] = entry.get("tokens", 0) + region["tokens"]
    return list(grouped.values())


def changing_tokens(decision: Decision) -> int | None:
    """Tokens in the regions the strategy changes (compress, offload, fold, summary)."""
    total = 0
    for region in decision.regions:
        if region.name in KEPT_REGIONS:
            continue
        if region.tokens is not None:
            total += region.tokens
        elif decision.message_tokens is not None:
            total += sum(decision.message_tokens[region.start : region.end])
        else:
            return None
    return total


def _pin_rows(rows: Sequence[PinRow]) -> list[dict[str, Any]]:
    return [
        {
            "strategy": row.strategy,
            "processor": row.processor,
            "verdict_before": row.before.verdict,
            "verdict_after": row.after.verdict,
            "reason_after": row.after.reason,
            "total_before": row.before.total_tokens,
            "total_after": row.after.total_tokens,
            "changing_before": changing_tokens(row.before),
            "changing_after": changing_tokens(row.after),
            "lifted": sorted(row.lifted),
            "changed": row.changed,
        }
        for row in rows
    ]


def _after_tokens(
    artifact: Artifact, counter: TokenCounter | None
) -> tuple[Sequence[int] | None, int | None]:
    if artifact.after is None or counter is None:
        return None, None
    from inspector.core.engine import PricedContext

    system = artifact.snapshot.system_messages if artifact.snapshot is not None else ()
    priced = PricedContext(system, artifact.after, (), counter)
    return priced.per_message_tokens, priced.messages_tokens


def build_report(
    artifact: Artifact,
    decision: Decision | None,
    flips: Sequence[Flip] = (),
    counter: TokenCounter | None = None,
    pinned: frozenset[int] = frozenset(),
    pin_rows: Sequence[PinRow] = (),
    flips_dropped: int = 0,
) -> dict[str, Any]:
    """The report of one context as JSON values, secrets masked.

    `counter` prices the dump's context after compression (the decision's token mode);
    `pinned`: message indices the user marked "keep verbatim" (a what-if, see `core.pins`);
    `pin_rows`: every strategy without and with those pins (`core.pins.pins_across_strategies`);
    `flips_dropped`: flips left out because they would not hold (`core.flip_check`).
    """
    why = why_json(artifact, decision)
    messages = artifact.snapshot.messages if artifact.snapshot is not None else ()
    tokens = decision.message_tokens if decision is not None else None
    report: dict[str, Any] = {
        "inspector_version": __version__,
        "why": why,
        "region_rows": _region_rows(why),
        "messages": _message_rows(messages, tokens, decision, pinned),
        "flips": _flip_rows(flips),
        "flips_note": dropped_note(flips_dropped),
        "summary": decision.summary if decision is not None else "",
        "counting_note": decision.counting_note if decision is not None else "",
        "pins": sorted(pinned),
        "pin_rows": _pin_rows(pin_rows),
    }
    if artifact.after is not None:
        after_tokens, after_total = _after_tokens(artifact, counter)
        report["after"] = {
            "messages": _message_rows(artifact.after, after_tokens, None),
            "counted_tokens": after_total,
            "token_mode": counter.mode if counter is not None else None,
            "recorded_before": artifact.recorded.get("tokens_before"),
            "recorded_after": artifact.recorded.get("tokens_after"),
            "messages_before": len(messages),
            "messages_after": len(artifact.after),
        }
    masked = mask_secrets(json.loads(json.dumps(report, default=str)))
    assert isinstance(masked, dict)
    return masked


def scalar_items(mapping: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(key, shown value) of the scalar fields of a mapping (nested values left out)."""
    out = []
    for key, value in mapping.items():
        if isinstance(value, bool):
            out.append((key, "yes" if value else "no"))
        elif isinstance(value, int):
            out.append((key, f"{value:,}"))
        elif isinstance(value, str | float):
            out.append((key, str(value)))
    return out


#: The pins table: its title, the sentence under it and its columns (Markdown and HTML alike).
PIN_TITLE = "Pins across strategies (what-if)"
PIN_INTRO = (
    "Each strategy under its own reading of the source, without and with the pins; "
    "tokens to change = tokens in the regions it compresses, offloads or folds."
)
PIN_HEADER = ("strategy", "without pins", "with pins", "total", "tokens to change", "lifted")


def pin_cells(row: Mapping[str, Any]) -> tuple[str, ...]:
    """One row of the pins table, as text cells in `PIN_HEADER` order."""
    return (
        row["strategy"],
        row["verdict_before"],
        f"{row['verdict_after']} ({row['reason_after']})",
        f"{shown(row['total_before'])} → {shown(row['total_after'])}",
        f"{shown(row['changing_before'])} → {shown(row['changing_after'])}",
        ", ".join(f"#{i}" for i in row["lifted"]) or "none",
    )


def shown(value: Any) -> str:
    """A number with thousands separators, a dash for None, anything else as text."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def runs_text(runs: Sequence[Sequence[int]]) -> str:
    """`#3..#9` for one run, `#3..#9 in 2 runs` for several, a dash for none."""
    if not runs:
        return "—"
    first, last = runs[0][0], max(end for _, end in runs) - 1
    return f"#{first}..#{last}" + (f" in {len(runs)} runs" if len(runs) > 1 else "")


def details_lines(recorded: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """(heading, lines) of what a source recorded beyond scalars: retries, silent causes,
    what cannot be recovered, inferred values."""
    out: list[tuple[str, list[str]]] = []
    retries = [r for r in recorded.get("retries") or () if isinstance(r, Mapping)]
    if retries:
        out.append(
            (
                "retries",
                [
                    f"attempt {r.get('attempt')}: {r.get('error_type')} -> {r.get('reason')}"
                    for r in retries
                ],
            )
        )
    for key, label in (
        ("silent_causes", "known silent causes"),
        ("unrecoverable", "cannot be recovered"),
    ):
        items = [str(item) for item in recorded.get(key) or ()]
        if items:
            out.append((label, items))
    inferred = recorded.get("inferred")
    if isinstance(inferred, Mapping) and inferred:
        out.append(
            (
                "inferred",
                [
                    f"{name} {value.get('value')} (from {value.get('from')})"
                    for name, value in inferred.items()
                    if isinstance(value, Mapping)
                ],
            )
        )
    return out
