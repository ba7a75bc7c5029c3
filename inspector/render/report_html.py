"""A report (see `report_data.build_report`) as one self-contained HTML page.

Inline CSS only (`report.css`, the page's one place for colours): no script, no image, no link, no font and no address of any kind, and a
Content-Security-Policy of `default-src 'none'` so a browser fetches nothing even if a loaded
message holds markup (every text is escaped). Sections carry ids (`verdict`, `regions`,
`checks`, `findings`, `flips`, `pins`, `recorded`, `messages`, `after`) for tests and links within
the page. Pure string building: must not import Textual, Rich, the sources, llm, tui or cli.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from html import escape
from importlib import resources
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

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; form-action 'none'"


@functools.cache
def report_css() -> str:
    """The page's stylesheet (`report.css` beside this module, shipped as package data)."""
    return (resources.files("inspector.render") / "report.css").read_text(encoding="utf-8")


_MARKS = {"pass": "✓", "fail": "✗", "skip": "·"}


def _e(value: Any) -> str:
    return escape(shown(value), quote=True)


def _table(
    header: Sequence[str],
    rows: Sequence[Sequence[Any]],
    numeric: Sequence[int] = (),
    classes: Sequence[str] | None = None,
) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = []
    for number, row in enumerate(rows):
        cells = "".join(
            f'<td class="num">{_e(v)}</td>' if i in numeric else f"<td>{_e(v)}</td>"
            for i, v in enumerate(row)
        )
        css = f' class="{classes[number]}"' if classes and classes[number] else ""
        body.append(f"<tr{css}>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _messages(rows: Sequence[Mapping[str, Any]], with_region: bool) -> str:
    head = "<th>#</th><th>role</th><th>tokens</th>" + ("<th>region</th>" if with_region else "")
    body = []
    for row in rows:
        region = ""
        if with_region:
            label = _e(row.get("region_label", ""))
            if row.get("pinned"):
                label += " <strong>(pinned)</strong>"
            region = f'<td class="region-{escape(str(row.get("region", "outside")))}">{label}</td>'
        css = ' class="pinned"' if row.get("pinned") else ""
        body.append(
            f'<tr{css} id="m{row["index"]}"><td class="num">{row["index"]}</td>'
            f'<td>{_e(row["role"])}</td><td class="num">{_e(row.get("tokens"))}</td>{region}'
            f'<td class="text mono">{_e(row.get("text", ""))}</td></tr>'
        )
    return (
        f"<table><thead><tr>{head}<th>text</th></tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def _decision(report: Mapping[str, Any]) -> list[str]:
    why = report["why"]
    css = "hit" if why.get("hit") else "miss"
    out = [
        f'<section id="verdict"><div class="verdict {css}">{_e(why["verdict"])}</div> '
        f"<span>reason <code>{_e(why['reason'])}</code></span>"
    ]
    if report.get("summary"):
        out.append(f'<p class="dim">{_e(report["summary"])}</p>')
    settings = ", ".join(f"{k} {shown(v)}" for k, v in (why.get("settings") or {}).items())
    out.append(
        f"<p>Processor <strong>{_e(why.get('processor'))}</strong> (strategy "
        f"<code>{_e(why.get('strategy'))}</code>, family {_e(why.get('family'))}); "
        f'<span class="dim">settings: {escape(settings)}</span></p>'
    )
    if not why.get("exact_counting", True) and report.get("counting_note"):
        out.append(f'<p class="note">⚠ {_e(report["counting_note"])}</p>')
    if report.get("pins"):
        pins = ", ".join(f"#{i}" for i in report["pins"])
        out.append(
            f'<p class="whatif">What-if: messages {escape(pins)} pinned (kept verbatim); '
            "openJiuwen has no pins.</p>"
        )
    numbers = [
        ("total tokens", why.get("total_tokens")),
        ("threshold", why.get("threshold")),
        ("target tokens", why.get("target_tokens")),
        ("minimum target", min_target_of(why)),
        ("effective keep", why.get("effective_keep")),
    ]
    out.append(_table(["number", "value"], numbers, numeric=(1,)) + "</section>")
    regions = report["region_rows"]
    out.append(
        '<section id="regions"><h2>Regions</h2>'
        + _table(
            ["region", "messages", "indices", "tokens"],
            [(r["label"], r["messages"], runs_text(r["runs"]), r.get("tokens")) for r in regions],
            numeric=(1, 3),
            classes=[f"region-{escape(r['name'])}" for r in regions],
        )
        + "</section>"
    )
    checks = "".join(
        f'<li><span class="status-{escape(c["status"])}">{_MARKS.get(c["status"], "!")}</span> '
        f"<strong>{_e(c['title'])}</strong>: {_e(c['sentence'])}</li>"
        for c in why.get("checks") or ()
    )
    out.append(f'<section id="checks"><h2>Checks</h2><ul>{checks}</ul></section>')
    findings = "".join(
        f'<li><span class="severity-{escape(f["severity"])}">{_e(f["severity"])}</span>: '
        f"{_e(f['sentence'])}</li>"
        for f in why.get("findings") or ()
    )
    out.append(
        '<section id="findings"><h2>Findings</h2>'
        + (f"<ul>{findings}</ul>" if findings else '<p class="dim">none</p>')
        + "</section>"
    )
    flips = report.get("flips") or []
    table = (
        _table(
            ["change", "from", "to", "then"],
            [(f["param"], f["from"], f["to"], f["then"]) for f in flips],
        )
        if flips
        else '<p class="dim">no single change flips the verdict</p>'
    )
    if report.get("flips_note"):
        table += f'<p class="dim">{escape(str(report["flips_note"]))}</p>'
    out.append(
        f'<section id="flips"><h2>Smallest change that flips the verdict</h2>{table}</section>'
    )
    return out


def _pins(report: Mapping[str, Any]) -> list[str]:
    rows = report.get("pin_rows") or []
    if not rows:
        return []
    table = _table(
        list(PIN_HEADER),
        [pin_cells(r) for r in rows],
        classes=["pinned" if r["changed"] else "" for r in rows],
    )
    return [
        f'<section id="pins"><h2>{escape(PIN_TITLE)}</h2>'
        f'<p class="dim">{escape(PIN_INTRO)}</p>{table}</section>'
    ]


def _recorded(report: Mapping[str, Any]) -> list[str]:
    recorded = report["why"].get("recorded") or {}
    scalars, details = scalar_items(recorded), details_lines(recorded)
    if not scalars and not details:
        return []
    parts = ['<section id="recorded"><h2>Recorded by the source</h2>']
    if scalars:
        parts.append(_table(["field", "value"], scalars))
    for heading, items in details:
        parts.append(
            f"<h3>{escape(heading)}</h3><ul>"
            + "".join(f"<li>{escape(i)}</li>" for i in items)
            + "</ul>"
        )
    return parts + ["</section>"]


def _after(report: Mapping[str, Any]) -> list[str]:
    after = report.get("after")
    if after is None:
        return []
    why = report["why"]
    rows = [
        ("before", after["messages_before"], after["recorded_before"], why.get("total_tokens")),
        ("after", after["messages_after"], after["recorded_after"], after["counted_tokens"]),
    ]
    return [
        '<section id="after"><h2>Before and after compression</h2>',
        _table(["", "messages", "tokens (recorded)", "tokens (counted)"], rows, numeric=(1, 2, 3)),
        "<h3>The context after compression</h3>",
        _messages(after["messages"], False),
        "</section>",
    ]


def context_html(report: Mapping[str, Any], anchor: str = "") -> str:
    """One context's report as an `<article>` (`anchor` prefixes its ids, for pages of several)."""
    why = report["why"]
    parts = [
        f'<article class="context"><h1>{_e(why["kind"])} {_e(why["id"])}</h1>',
        f'<p class="dim">source <code>{_e(why["source"])}</code></p>',
    ]
    if why.get("verdict") is None:
        parts.append('<p id="verdict">No context available: showing what the source recorded.</p>')
    else:
        parts += _decision(report) + _pins(report)
    parts += _recorded(report)
    if report["messages"]:
        parts.append(
            '<section id="messages"><h2>Messages</h2>'
            + _messages(report["messages"], True)
            + "</section>"
        )
    parts += _after(report)
    html = "\n".join(parts) + "</article>"
    return html.replace(' id="', f' id="{anchor}') if anchor else html


def report_html(reports: Sequence[Mapping[str, Any]]) -> str:
    """A whole page of one or more context reports."""
    title = (
        f"{reports[0]['why']['kind']} {reports[0]['why']['id']}"
        if len(reports) == 1
        else f"{len(reports)} contexts"
    )
    version = reports[0]["inspector_version"] if reports else ""
    body = "\n".join(
        context_html(r, "" if len(reports) == 1 else f"c{n}-") for n, r in enumerate(reports)
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Context Inspector: {escape(title)}</title><style>{report_css()}</style></head>"
        f"<body>\n{body}\n<footer>Context Inspector {escape(str(version))}; values that look "
        "like secrets are masked (***).</footer></body></html>\n"
    )
