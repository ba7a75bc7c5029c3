"""Pins reach every view of the TUI: the Why tab's flips and the strategies view (`C`) are
the ones `inspector why --pin` and `inspector compare --pin` give for the same context.

Driven through the real app (pilot): pin a message with `P`, then compare the screen's
state with the CLI's output on the same file (flips as the `why` table rows, the columns
as `compare --json`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import main
from inspector.core.strategy.base import Flip
from inspector.core.tokens import TokenCounter
from inspector.tui.app import create_app
from inspector.tui.screens.compare_screen import CompareScreen
from inspector.tui.widgets.message_list import MessageList
from tests.test_pins import context
from tests.test_tui_app import open_row, settle


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """The pins context (a task and three long tool pairs, compressing) as a snapshot file."""
    folder = tmp_path / "in"
    folder.mkdir()
    path = folder / "pins.json"
    path.write_text(json.dumps(context().to_dict()), encoding="utf-8")
    return path


def cli_flip_rows(
    path: Path, pins: str | None, capsys: pytest.CaptureFixture[str]
) -> list[tuple[str, ...]]:
    """The rows of `inspector why PATH [--pin PINS]`'s flips table: change, from, to, then."""
    args = ["why", str(path)] + (["--pin", pins] if pins is not None else [])
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(lines) if "Smallest change" in line)
    rows: list[tuple[str, ...]] = []
    for line in lines[start + 2 :]:
        cells = line.strip("│ ").split()
        if len(cells) < 4:
            break
        rows.append((cells[0], cells[1], cells[2], " ".join(cells[3:])))
    return rows


def tui_flip_rows(flips: list[Flip] | None) -> list[tuple[str, ...]]:
    """The same four cells for the flips the Why tab shows."""
    assert flips is not None
    return [
        (
            f.param,
            str(f.current),
            str(f.value),
            f.decision.verdict.lower() if f.decision.hit else f"not: {f.decision.reason}",
        )
        for f in flips
    ]


def cli_columns(
    path: Path, pins: str | None, capsys: pytest.CaptureFixture[str]
) -> list[dict[str, Any]]:
    """`inspector compare PATH --json [--pin PINS]`: the strategy columns."""
    args = ["compare", str(path), "--json"] + (["--pin", pins] if pins is not None else [])
    assert main(args) == 0
    return list(json.loads(capsys.readouterr().out)["strategies"])


async def test_pinned_flips_and_strategies_equal_the_cli(
    source: Path,
    counters: dict[str, TokenCounter],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # the why table's rows on one line each
    plain_rows, pinned_rows = (
        cli_flip_rows(source, None, capsys),
        cli_flip_rows(source, "4", capsys),
    )
    plain_columns = cli_columns(source, None, capsys)
    pinned_columns = cli_columns(source, "4", capsys)
    # the pins change both (else this test would prove nothing)
    assert plain_rows != pinned_rows and plain_columns != pinned_columns
    app = create_app([str(source.parent)], counters=counters)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await open_row(app, pilot, lambda row: row.artifact.id == "pins")
        await settle(app, pilot)
        assert tui_flip_rows(screen.flips) == plain_rows
        screen.query_one(MessageList).move_to(4)
        await pilot.press("P")
        await settle(app, pilot)
        await pilot.pause(0.3)  # the flips search waits for the keys to settle
        await settle(app, pilot)
        assert screen.pins == {4} and screen.flips_dropped == 0
        assert tui_flip_rows(screen.flips) == pinned_rows

        await pilot.press("C")
        await settle(app, pilot)
        compare = app.screen
        assert isinstance(compare, CompareScreen) and compare.comparison is not None
        assert compare.pins == {4}
        assert [o.to_dict() for o in compare.comparison.outcomes] == pinned_columns
        await pilot.press("escape")
        await pilot.pause()

        # unpinned again: back to what the CLI says without pins
        screen.query_one(MessageList).move_to(4)
        await pilot.press("P")
        await settle(app, pilot)
        await pilot.pause(0.3)
        await settle(app, pilot)
        assert screen.pins == frozenset()
        assert tui_flip_rows(screen.flips) == plain_rows
        await pilot.press("C")
        await settle(app, pilot)
        compare = app.screen
        assert isinstance(compare, CompareScreen) and compare.comparison is not None
        assert [o.to_dict() for o in compare.comparison.outcomes] == plain_columns


def test_compare_pin_flag(source: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`compare --pin`: a pinned column keeps the pinned pair verbatim and says so; a bad
    list is a usage error; a snapshot's own pins apply by default."""
    plain = {c["strategy"]: c for c in cli_columns(source, None, capsys)}
    pinned = {c["strategy"]: c for c in cli_columns(source, "4", capsys)}
    current = pinned["current_round"]
    assert current["compressed"] and any("pinned 3-4 kept verbatim" in n for n in current["notes"])
    assert current["kept_verbatim"] >= plain["current_round"]["kept_verbatim"] + 2
    assert current["tokens_after"] > plain["current_round"]["tokens_after"]
    assert main(["compare", str(source), "--pin", "x"]) == 2
    assert "--pin" in capsys.readouterr().err
    saved = source.parent / "saved.json"
    saved.write_text(json.dumps({**context().to_dict(), "pins": [4]}), encoding="utf-8")
    assert main(["compare", str(saved), "--json"]) == 0
    by_default = json.loads(capsys.readouterr().out)["strategies"]
    assert by_default == list(pinned.values())
