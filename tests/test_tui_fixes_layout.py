"""Layout fixes found by hand in tmux (docs/tui-captures): what a narrow or a wide terminal
shows of titles, ids and notes, asserted on the rendered lines of the widgets."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.widget import Widget
from textual.widgets import DataTable

from inspector.core.tokens import TokenCounter
from inspector.tui.app import create_app
from inspector.tui.screens.context import ContextScreen
from inspector.tui.widgets.why_panel import WhyPanel
from tests.conftest import REFERENCE, SHARED
from tests.test_tui_app import loaded, open_row, settle

pytestmark = pytest.mark.skipif(not REFERENCE.exists(), reason="reference folder not available")

LONG_ID = "h4_model_replies_with_tool_call"
STANDARD = SHARED / "reference" / "standard"


def lines_of(widget: Widget) -> list[str]:
    """The text of each line the widget shows now."""
    return [widget.render_line(y).text for y in range(widget.size.height)]


def is_long_debug_row(row: Any) -> bool:
    """The debug row of the h4 scenario, whose id is 94 characters long."""
    return row.artifact is not None and row.artifact.kind == "debug" and LONG_ID in row.title


@pytest.mark.parametrize("width", [80, 100])
async def test_long_id_title_keeps_the_id_on_one_line(
    width: int, counters: dict[str, TokenCounter]
) -> None:
    """At 80 and 100 columns the title showed only "debug": the long id wrapped out of it."""
    app = create_app([str(REFERENCE)], counters=counters)
    async with app.run_test(size=(width, 24)) as pilot:
        screen = await open_row(app, pilot, is_long_debug_row)
        (title,) = lines_of(screen.query_one("#context-title"))
        assert title.lstrip().startswith("debug")
        assert f"ojw-ref/{LONG_ID}/" in title
        assert title.rstrip().endswith("…")  # cut at the edge, not wrapped away


class WhyOnlyApp(App[None]):
    """A WhyPanel alone, 35 columns wide (its width in the 80x24 context view)."""

    CSS = "WhyPanel { width: 37; }"

    def compose(self) -> ComposeResult:
        """The panel."""
        yield WhyPanel(id="why")


async def test_flip_note_grows_when_its_text_changes_after_layout() -> None:
    """The note's new text is laid out again: a longer note gets all its lines."""
    app = WhyOnlyApp()
    async with app.run_test(size=(60, 30)) as pilot:
        panel = app.query_one(WhyPanel)
        panel.show_flips(None)  # "computing…": one line
        await pilot.pause()
        note = app.query_one("#why-flips-note")
        assert lines_of(note) == ["computing…"]
        panel.show_flips([], dropped=2)
        await pilot.pause()
        shown = " ".join(line.strip() for line in lines_of(note))
        assert shown == (
            "no single change flips the verdict; 2 changes would trigger a compression that"
            " openJiuwen drops for no benefit (the new context would not be smaller)"
        )


async def table_lines(app: Any, pilot: Any) -> tuple[Any, list[str]]:
    """The loaded browser and the lines its table shows (header first)."""
    browser = await loaded(app, pilot)
    await pilot.pause()
    table = browser.query_one("#table", DataTable)
    return browser, [table.render_line(y).text for y in range(table.size.height)]


async def test_standard_snapshot_ids_show_their_case_number(
    tmp_path: Path, counters: dict[str, TokenCounter]
) -> None:
    """Every id read '0.1.19-D…ueCompressor': the processor name took the room of the case."""
    cases = tmp_path / "cases_0119.jsonl"
    with gzip.open(STANDARD / "cases_0119.jsonl.gz", "rb") as packed:
        cases.write_bytes(packed.read())
    app = create_app([str(cases)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        browser, lines = await table_lines(app, pilot)
        shown = lines[1 : len(browser.shown) + 1]
        assert len(shown) >= 30
        for row, line in zip(browser.shown, shown, strict=False):
            number = row.title.rsplit("-", 1)[-1]
            assert number.isdigit() and f"-{number}" in line, (row.title, line)
            assert "Compressor" not in line.split()[-1]
        assert len(set(shown)) > len(shown) // 2


async def test_long_ids_are_whole_when_there_is_room(counters: dict[str, TokenCounter]) -> None:
    """At 200 columns the ids were elided with ~60 columns free."""
    app = create_app([str(REFERENCE)], counters=counters)
    async with app.run_test(size=(200, 60)) as pilot:
        browser, lines = await table_lines(app, pilot)
        start = lines[0].index("id / source")
        ids = [line[start:].strip() for line in lines[1 : len(browser.shown) + 1]]
        assert "ctx_h4_model_replies_with_tool_call#1" in ids
        assert "p_dir_resolution/p3_env_vars" in ids
        assert not [shown for shown in ids if "…" in shown]
        assert max(len(line.rstrip()) for line in lines) < 200


@pytest.mark.parametrize("width", [80, 120])
async def test_rows_of_a_family_of_sessions_stay_apart_when_narrow(
    width: int, counters: dict[str, TokenCounter]
) -> None:
    """At 80 columns the session and id columns were off-screen (p2-p5 looked the same); at
    120 the p3 snapshot read 'p_dir_re…ution'. Now each row says which one it is."""
    app = create_app([str(REFERENCE)], counters=counters)
    async with app.run_test(size=(width, 24 if width == 80 else 40)) as pilot:
        browser, lines = await table_lines(app, pilot)
        assert all(len(line) <= width for line in lines)
        family = [
            (row, line)
            for row, line in zip(browser.shown, lines[1:], strict=False)
            if row.session in {f"ojw-ref/p{n}" for n in range(2, 6)}
        ]
        assert len(family) >= 4
        assert len({line for _, line in family}) == len(family)  # no two rows look the same
        start = lines[0].index("id / source")
        for row, line in family:
            assert row.session[-2:] in line  # "p3" is on the row, in its session or its id
            if row.artifact is not None and row.artifact.kind == "snapshot":
                assert row.session[-2:] in line[start:]  # and in the id itself
        header = lines[0]
        assert "session" in header and "id / source" in header


SAMPLES = Path(__file__).resolve().parents[1] / "sample_dumps"
TINYCAL = (
    SAMPLES
    / "workspace/context/demo/bugfix-tinycal_context/compression_logs"
    / "1795900043252_CurrentRoundCompressor_demo-bugfix-tinycal.json"
)


@pytest.mark.parametrize(
    ("source", "size", "keys", "said"),
    [
        (SAMPLES, (200, 60), ("home", "enter"), "Σ 2,785 ≠ total 2,776 (usage total)"),
        (TINYCAL, (80, 24), (), "Σ 4,427 ≠ total 4,160 (usage total)"),
    ],
)
async def test_bar_legend_keeps_its_explanation(
    source: Path,
    size: tuple[int, int],
    keys: tuple[str, ...],
    said: str,
    counters: dict[str, TokenCounter],
) -> None:
    """At 200 columns the long legend was cut before its explanation; at 80 the short one
    lost "(usage total)". Now the legend fits its width, on a second line if need be."""
    app = create_app([str(source)], counters=counters)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        for key in keys:
            await pilot.press(key)
            await settle(app, pilot)
        assert isinstance(app.screen, ContextScreen)
        lines = [line.rstrip() for line in lines_of(app.screen.query_one("#bar"))]
        assert any(said in line for line in lines), lines
        assert not [line for line in lines if line.endswith("…")]
        assert lines[-1].strip()  # the panel is as tall as what it draws
