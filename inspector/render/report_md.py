"""A report (see `report_data.build_report`) as Markdown: plain text, no box drawing.

The same text is what the TUI copies as "the why report" (`Y`). Pure string building: must
not import Textual, Rich, the sources, llm, tui or cli packages.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from inspector.render.report_data import (
    PIN_HEADER,
    PIN_INTRO,
    PIN_TITLE,
    details_lines,
    min_target_of,
    pin_cells,
    runs_text,
    scalar_items,
    shown,
)

_STATUS_MARKS = {"pass": "✓", "fail": "✗", "skip": "·", "warn": "!", "info": "i"}


def cell(value: Any) -> str:
    """A Markdown table cell: pipes escaped, on one line."""
    return " ".join(shown(value).split()).replace("|", "\\|")


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return lines


def _numbers(why: Mapping[str, Any]) -> list[str]:
    keys = (
        ("total tokens", "total_tokens"),
        ("threshold", "threshold"),
        ("target tokens", "target_tokens"),
        ("minimum target", "min_target_tokens"),
        ("effective keep", "effective_keep"),
    )
    values = {**why, "min_target_tokens": min_target_of(why)}
    return _table(["number", "value"], [(label, values.get(key)) for label, key in keys])


def _messages(rows: Sequence[Mapping[str, Any]], with_region: bool) -> list[str]:
    header = ["#", "role", "tokens"] + (["region"] if with_region else []) + ["text"]
    body = []
    for row in rows:
        region = str(row.get("region_label", ""))
        if row.get("pinned"):
            region += " (pinned)"
        body.append(
            [row["index"], row["role"], row.get("tokens")]
            + ([region] if with_region else [])
            + [row.get("text", "")]
        )
    return _table(header, body)


def _decision_sections(report: Mapping[str, Any]) -> list[str]:
    why = report["why"]
    lines = [f"**{why['verdict']}** (reason `{why['reason']}`)", ""]
    if report.get("summary"):
        lines += [str(report["summary"]), ""]
    settings = why.get("settings") or {}
    lines += [
        f"Processor {why.get('processor')} (strategy `{why.get('strategy')}`, "
        f"family {why.get('family')}); settings: "
        + ", ".join(f"{k} {shown(v)}" for k, v in settings.items()),
        "",
    ]
    if not why.get("exact_counting", True) and report.get("counting_note"):
        lines += [f"> ⚠ {report['counting_note']}", ""]
    if report.get("pins"):
        lines += [
            "> What-if: messages "
            + ", ".join(f"#{i}" for i in report["pins"])
            + " pinned (kept verbatim); openJiuwen has no pins.",
            "",
        ]
    lines += _numbers(why) + ["", "## Regions", ""]
    lines += _table(
        ["region", "messages", "indices", "tokens"],
        [
            (r["label"], r["messages"], runs_text(r["runs"]), r.get("tokens"))
            for r in report["region_rows"]
        ],
    )
    lines += ["", "## Checks", ""]
    for check in why.get("checks") or ():
        mark = _STATUS_MARKS.get(check["status"], "-")
        lines.append(f"- {mark} **{check['title']}**: {check['sentence']}")
    lines += ["", "## Findings", ""]
    findings = why.get("findings") or []
    lines += [f"- {f['severity']}: {f['sentence']}" for f in findings] or ["none"]
    lines += ["", "## Smallest change that flips the verdict", ""]
    flips = report.get("flips") or []
    if flips:
        lines += _table(
            ["change", "from", "to", "then"],
            [(f["param"], f["from"], f["to"], f["then"]) for f in flips],
        )
    else:
        lines.append("no single change flips the verdict")
    if report.get("flips_note"):
        lines += ["", str(report["flips_note"])]
    return lines


def _pin_section(report: Mapping[str, Any]) -> list[str]:
    rows = report.get("pin_rows") or []
    if not rows:
        return []
    lines = ["", f"## {PIN_TITLE}", "", PIN_INTRO, ""]
    return lines + _table(PIN_HEADER, [pin_cells(r) for r in rows])


def _recorded_sections(report: Mapping[str, Any]) -> list[str]:
    recorded = report["why"].get("recorded") or {}
    scalars = scalar_items(recorded)
    details = details_lines(recorded)
    if not scalars and not details:
        return []
    lines = ["", "## Recorded by the source", ""]
    if scalars:
        lines += _table(["field", "value"], scalars)
    for heading, items in details:
        lines += ["", f"{heading}:"] + [f"- {item}" for item in items]
    return lines


def context_markdown(report: Mapping[str, Any], level: int = 1) -> str:
    """One context's report as Markdown (`level`: the heading level of its title)."""
    why = report["why"]
    hashes = "#" * level
    lines = [f"{hashes} {why['kind']} {why['id']}", "", f"Source: `{why['source']}`", ""]
    if why.get("verdict") is None:
        lines.append("No context available: showing what the source recorded.")
    else:
        lines += _decision_sections(report) + _pin_section(report)
    lines += _recorded_sections(report)
    if report["messages"]:
        lines += ["", "## Messages", ""] + _messages(report["messages"], True)
    after = report.get("after")
    if after is not None:
        lines += [
            "",
            "## Before and after compression",
            "",
            *_table(
                ["", "messages", "tokens (recorded)", "tokens (counted)"],
                [
                    (
                        "before",
                        after["messages_before"],
                        after["recorded_before"],
                        why.get("total_tokens"),
                    ),
                    (
                        "after",
                        after["messages_after"],
                        after["recorded_after"],
                        after["counted_tokens"],
                    ),
                ],
            ),
            "",
            "### The context after compression",
            "",
            *_messages(after["messages"], False),
        ]
    text = "\n".join(lines) + "\n"
    # sections are written at level 2 and 3 for a level-1 title: shift them in one pass
    return re.sub(r"\n(#{2,3}) ", lambda m: "\n" + "#" * (len(m.group(1)) + level - 1) + " ", text)


def report_markdown(reports: Sequence[Mapping[str, Any]]) -> str:
    """A document of one or more context reports."""
    if len(reports) == 1:
        return context_markdown(reports[0]) + _footer(reports[0])
    head = f"# Context Inspector report ({len(reports)} contexts)\n\n"
    body = "\n".join(context_markdown(r, level=2) for r in reports)
    return head + body + (_footer(reports[0]) if reports else "")


def _footer(report: Mapping[str, Any]) -> str:
    return (
        f"\n---\nContext Inspector {report['inspector_version']}; "
        "values that look like secrets are masked (***).\n"
    )
