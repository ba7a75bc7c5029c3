"""The context view's key bindings (palette, footer and help are built from them).

Nudges name settings by their short spellings (`trigger_ratio`, `keep_recent`); the screen
resolves them against the current strategy's settings model.
"""

from __future__ import annotations

from textual.binding import Binding, BindingType

CONTEXT_BINDINGS: list[BindingType] = [
    Binding("escape", "back", "Back", tooltip="Back to the browser (or close the search box)"),
    Binding(
        "w",
        "show_tab('why')",
        "Why",
        tooltip="Checks, findings, recorded vs re-evaluated, flips",
    ),
    Binding("t", "show_tab('tune')", "Tune", tooltip="Every tuning control; recorded vs tuned"),
    Binding("d", "show_tab('detail')", "Detail", tooltip="The selected message in full"),
    Binding("s", "sweep", "Sweep", tooltip="Chart a parameter across its range; flips marked"),
    Binding("f", "apply_flip(1)", "Flip", tooltip="Apply the first change that flips the verdict"),
    Binding("slash", "search", "Search", tooltip="Find text in messages and tool calls"),
    Binding(
        "shift+down,J",
        "scroll_side(3)",
        "Scroll tab down",
        show=False,
        tooltip="Scroll the visible tab (Why, Tune, Detail) from the list",
    ),
    Binding(
        "shift+up,K",
        "scroll_side(-3)",
        "Scroll tab up",
        show=False,
        tooltip="Scroll the visible tab up from the list",
    ),
    Binding("n", "next_match", "Next match", show=False),
    Binding("N", "previous_match", "Prev match", show=False),
    Binding(
        "greater_than_sign",
        "next_boundary",
        "Next region",
        show=False,
        tooltip="Jump to the next region start",
    ),
    Binding(
        "less_than_sign",
        "previous_boundary",
        "Prev region",
        show=False,
        tooltip="Jump to the previous region start",
    ),
    Binding(
        "a",
        "toggle_after",
        "Before/after",
        tooltip="Dump: context before (rebuilt) or after compression",
    ),
    Binding(
        "c",
        "toggle_compare",
        "Compare",
        tooltip="Recorded and tuned bars and values side by side",
    ),
    Binding(
        "C",
        "compare_strategies",
        "Strategies",
        tooltip="This context under openJiuwen's compressors and hybrid, side by side",
    ),
    Binding("r", "reset_tuning", "Reset", tooltip="Tuning back to the recorded values"),
    Binding(
        "right_square_bracket",
        "nudge('trigger_ratio', 0.05)",
        "Trigger +",
        show=False,
        tooltip="trigger ratio +0.05",
    ),
    Binding(
        "left_square_bracket",
        "nudge('trigger_ratio', -0.05)",
        "Trigger −",
        show=False,
        tooltip="trigger ratio −0.05",
    ),
    Binding(
        "right_curly_bracket",
        "nudge('min_target_ratio', 0.01)",
        "Min-target +",
        show=False,
        tooltip="min-target ratio +0.01",
    ),
    Binding(
        "left_curly_bracket",
        "nudge('min_target_ratio', -0.01)",
        "Min-target −",
        show=False,
        tooltip="min-target ratio −0.01",
    ),
    Binding(
        "plus,equals_sign",
        "nudge('keep_recent', 1)",
        "Keep-recent +",
        show=False,
        tooltip="keep-recent +1 message",
    ),
    Binding(
        "minus",
        "nudge('keep_recent', -1)",
        "Keep-recent −",
        show=False,
        tooltip="keep-recent −1 message",
    ),
    Binding(
        "b",
        "toggle_boundary",
        "Tool boundary",
        show=False,
        tooltip="Tool-boundary protection on/off (off: what-if)",
    ),
    Binding(
        "p",
        "cycle_processor",
        "Processor",
        show=False,
        tooltip="Next registered processor (its reading of the source)",
    ),
    Binding(
        "m", "cycle_token_mode", "Token counter", show=False, tooltip="tiktoken cl100k / len//4"
    ),
    Binding(
        "y",
        "copy_message",
        "Copy message",
        show=False,
        tooltip="Selected message to the clipboard",
    ),
    Binding(
        "Y",
        "copy_why",
        "Copy why report",
        show=False,
        tooltip="The why report as text to the clipboard",
    ),
    Binding(
        "e",
        "write_report",
        "Report",
        show=False,
        tooltip="Write this context's report (Markdown, HTML, snapshot with pins); says where",
    ),
    Binding(
        "P",
        "toggle_pin",
        "Pin message",
        show=False,
        tooltip="Pin/unpin the selected message: kept verbatim (a what-if; openJiuwen has no pins)",
    ),
    Binding(
        "V",
        "pin_range",
        "Pin range",
        show=False,
        # handled before the key reaches the list, so keys typed right after it go into the
        # prompt (`check_action` turns it off while an input has the focus)
        priority=True,
        tooltip="Pin messages by range (7-9, 12): never compressed (a what-if); empty: no pins",
    ),
    Binding(
        "A",
        "apply_to_all",
        "Apply to all rows",
        show=False,
        tooltip="Start every context of the browser from this tuning (rows re-evaluated)",
    ),
    Binding(
        "x",
        "copy_config('yaml')",
        "Copy config",
        show=False,
        tooltip="The tuning as the processor config (YAML, openJiuwen's field names)",
    ),
    Binding(
        "X",
        "copy_config('json')",
        "Copy config JSON",
        show=False,
        tooltip="The tuning as the processor config (JSON)",
    ),
    Binding(
        "R",
        "rerun",
        "Re-run",
        show=False,
        tooltip="Run the real LLM compaction with this tuning and compare",
    ),
    Binding(
        "z",
        "toggle_side",
        "Layout",
        show=False,
        tooltip="List and panel / list only / panel only",
    ),
    *[Binding(str(k), f"apply_flip({k})", f"Apply flip {k}", show=False) for k in range(1, 10)],
]
