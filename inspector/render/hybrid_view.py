"""Short per-message and per-decision texts of a HybridCompressor replay for the TUI context view.

The one outcome -> style mapping stays `hybrid_report.OUTCOME_STYLES`; this module turns a
`MessageOutcome` into a row label, a detail paragraph, and a decision into a context bar.
Must not import Textual.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from rich.text import Text

from inspector.core.hybrid import HybridResult, MessageOutcome
from inspector.render.context_bar import BarParts
from inspector.render.hybrid_report import OUTCOME_STYLES
from inspector.render.styles import STATUS_MARKS

#: Legend labels of the hybrid bar (the openJiuwen region slots hold the pipeline's parts).
HYBRID_BAR_LABELS: dict[str, str] = {
    "outside": "system+tools",
    "prefix": "kept before window",
    "compress": "summary",
    "tail": "recent turns",
}
_PROTECTION_TEXT: dict[str, str] = {
    "system_prompt": "the system prompt",
    "latest_user_task": "the latest user task",
    "in_flight": "a tool call still in flight",
    "recent_turn": "one of the last preserve_recent_turns turns",
}
_SHORT_PROTECTION: dict[str, str] = {
    "system_prompt": "system",
    "latest_user_task": "task",
    "in_flight": "in flight",
    "recent_turn": "recent",
}
#: Level-1 branch names as short as a list row needs them.
_SHORT_BRANCH: dict[str, str] = {"file_read": "file", "head_tail": "head+tail"}
_BRANCH_TEXT: dict[str, str] = {
    "json": "JSON: head and the last characters, structure kept closed",
    "list": "a long list of short lines: first and last lines kept",
    "file_read": "file content from a read_file-like tool: head only",
    "head_tail": "default: head and tail kept with an omission marker",
}


def outcome_label(outcome: MessageOutcome) -> str:
    """A row's short label: `cut json -1,234`, `cut file -12.3k`, `folded, cut json`, `kept recent`."""
    branch = _SHORT_BRANCH.get(outcome.truncation.branch, outcome.truncation.branch)
    if outcome.outcome == "truncated":
        removed = outcome.truncation.chars_removed
        amount = f"{removed:,}" if removed < 10_000 else f"{removed / 1000:.1f}k"
        return f"cut {branch} -{amount}"
    if outcome.outcome in ("folded", "summarized") and outcome.truncation.cut:
        return f"{outcome.outcome}, cut {branch}"
    if outcome.outcome == "kept" and outcome.protected_by is not None:
        return f"kept {_SHORT_PROTECTION.get(outcome.protected_by, outcome.protected_by)}"
    return outcome.outcome


def outcome_style(outcome: MessageOutcome) -> str:
    """The style of an outcome (the one mapping in `hybrid_report`)."""
    return OUTCOME_STYLES[outcome.outcome]


def outcome_sentence(outcome: MessageOutcome, result: HybridResult) -> Text:
    """What the pipeline did to one message, in words (for the detail pane)."""
    text = Text()
    text.append(f" {outcome.outcome} ", outcome_style(outcome) + " reverse")
    text.append(f"  turn {outcome.turn}")
    text.append(
        f"  estimate {outcome.estimate_before:,}"
        + (f" → {outcome.estimate_after_level_1:,} after level 1" if outcome.truncation.cut else "")
        + " tokens (chars/4)\n",
        "dim",
    )
    if outcome.truncation.cut:
        cut = outcome.truncation
        text.append("Level 1 cut this tool output by shape: ")
        text.append(_BRANCH_TEXT.get(cut.branch, cut.branch), "bold")
        text.append(
            f"; {cut.chars_before:,} → {cut.chars_after:,} characters "
            f"({cut.chars_removed:,} removed, cap {result.config.max_tool_output_length:,}).\n"
        )
    if outcome.outcome == "folded":
        text.append(
            "Level 2 folded this message into the rule summary (counts, tools, files, errors).\n"
        )
    elif outcome.outcome == "summarized":
        text.append(
            "Level 3 replaced this message with the LLM summary (Task / Progress / State / Key Data"
            + (", priced, not run here" if result.summary_source == "placeholder" else "")
            + ").\n"
        )
    elif outcome.protected_by is not None:
        text.append(
            f"Never compressed: {_PROTECTION_TEXT.get(outcome.protected_by, outcome.protected_by)}.\n"
        )
    elif result.stopped_at < 2:
        text.append(
            f"Stays verbatim: the pipeline stopped at level {result.stopped_at} ({result.reason}).\n"
        )
    else:
        text.append("Stays verbatim.\n")
    return text


def hybrid_verdict_word(result: HybridResult) -> Text:
    """A short verdict for the tuning table: where the pipeline stopped."""
    style = "red" if result.reason == "still_above_threshold" else "green"
    return Text(f"level {result.stopped_at}: {result.reason}", style)


def hybrid_bar_parts(result: HybridResult, after_level_1: Sequence[int], fixed: int) -> BarParts:
    """The context after the pipeline as a bar: system+tools, kept middle, summary, recent turns.

    `after_level_1` are the per-message estimates after level 1 and `fixed` the estimate of
    the system prompt and tools (`HybridContext.estimates`); all numbers are estimates.
    """
    folded = set(result.folded)
    start = result.recent_start
    before_window = sum(e for i, e in enumerate(after_level_1[:start]) if i not in folded)
    recent = sum(after_level_1[start:])
    summary = max(result.estimate_after - fixed - before_window - recent, 0)
    return BarParts(
        outside=fixed,
        prefix=before_window,
        compress=summary,
        tail=recent,
        total=result.estimate_after,
        threshold=result.threshold,
        min_target=0,
        context_max=result.config.max_context_tokens,
        hit=result.hit,
        reason=result.reason,
    )


def hybrid_checks_table(result: HybridResult) -> Table:
    """The pipeline's checks (estimator, each level's water level, alignment) with marks and sentences."""
    table = Table(box=None, show_header=False, pad_edge=False, expand=False)
    table.add_column(width=1)
    table.add_column()
    for check in result.checks():
        mark, style = STATUS_MARKS[check.status]
        skipped = check.status == "skip"
        body = Text.assemble(
            (check.title, "dim" if skipped else "bold"),
            "\n",
            (check.sentence, "dim" if skipped else ""),
        )
        table.add_row(Text(mark, style=style), body)
    return table


def hybrid_summary_line(result: HybridResult) -> Text:
    """Second verdict line: the water level before and after, and what each level did."""
    cut = sum(1 for t in result.rows.truncations if t.cut)  # no outcome objects: 20k rows
    text = Text(
        f"estimate {result.estimate_before:,} → {result.estimate_after:,} "
        f"(threshold {result.threshold:,})  ·  {cut} cut (level 1)  ·  "
        f"{len(result.folded)} {'summarized' if result.stopped_at == 3 else 'folded'}  ·  "
        f"{result.llm_calls} LLM call{'s' if result.llm_calls != 1 else ''}",
        "dim",
    )
    return text
