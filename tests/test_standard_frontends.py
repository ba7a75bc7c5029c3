"""The front ends on standard-family snapshots, with no code of their own for them: the TUI
strategy view (every registered strategy, the generated settings panel, flips) and `sweep`.
The registry gets the standard lines the way the lead adds them."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterator
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable

from inspector.core.standard.strategy import STRATEGY_LINES
from inspector.core.strategy import registry
from inspector.core.tokens import TokenCounter
from inspector.tui.app import InspectorApp, create_app
from inspector.tui.screens.browser import BrowserScreen
from inspector.tui.screens.context import ContextScreen
from inspector.tui.widgets.message_list import MessageList
from tests.test_standard_reference import STANDARD


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The registry with the standard lines added (a no-op once the registry lists them)."""
    missing = tuple(line for line in STRATEGY_LINES if line not in registry.STRATEGIES)
    monkeypatch.setattr(registry, "STRATEGIES", registry.STRATEGIES + missing)
    registry.all_strategies.cache_clear()
    yield
    registry.all_strategies.cache_clear()


@pytest.fixture
def dialogue_case(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A reference DialogueCompressor case (0.1.16) that does not compress, as a snapshot file."""
    with gzip.open(STANDARD / "cases_0116.jsonl.gz", "rt", encoding="utf-8") as handle:
        case = next(
            c
            for c in map(json.loads, handle)
            if c["processor"] == "DialogueCompressor" and not c["expected"]["decision"]
        )
    path = tmp_path / "standard" / "case.json"
    path.parent.mkdir()
    path.write_text(json.dumps(case), encoding="utf-8")
    return path, case


async def settle(app: InspectorApp, pilot: Pilot[Any]) -> None:
    """Let workers finish and their messages land."""
    for _ in range(3):
        await pilot.pause()
        await app.workers.wait_for_complete()
    await pilot.pause()


def _matches_core(screen: ContextScreen, counters: dict[str, TokenCounter]) -> None:
    """The screen's decision and each row's region equal a fresh core decision."""
    assert screen.artifact.snapshot is not None and screen.decision is not None
    strategy = registry.get(screen.strategy.key)
    core = strategy.decide(strategy.prepare(screen.artifact.snapshot, counters), screen.settings)
    got = screen.decision
    assert (got.hit, got.reason, got.total_tokens, got.threshold) == (
        core.hit,
        core.reason,
        core.total_tokens,
        core.threshold,
    )
    assert got.regions == core.regions
    rows = screen.query_one(MessageList)
    for index in range(rows.row_count):
        assert rows.region_of(index) == core.region_of(index)


async def test_context_view_on_a_standard_snapshot(
    registered: None, dialogue_case: tuple[Path, dict[str, Any]], counters: dict[str, TokenCounter]
) -> None:
    """The context view opens a standard snapshot with its own processor, its settings panel
    edits tokens_threshold, and `p` cycles every registered strategy deciding like the core."""
    path, _ = dialogue_case
    app = create_app([str(path.parent)], counters=counters)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(app, pilot)
        browser = app.screen
        assert isinstance(browser, BrowserScreen)
        index = next(i for i, row in enumerate(browser.shown) if row.artifact is not None)
        browser.query_one("#table", DataTable).move_cursor(row=index)
        await pilot.press("enter")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        assert screen.strategy.key == "standard.dialogue"
        assert screen.decision is not None and screen.decision.hit is False
        _matches_core(screen, counters)
        await pilot.press("t")
        await settle(app, pilot)
        panel = screen.query_one("#tuning")
        panel.query_one("#field-tokens_threshold").value = "1"
        await settle(app, pilot)
        assert screen.settings.tokens_threshold == 1  # type: ignore[attr-defined]
        assert screen.decision.hit is True
        _matches_core(screen, counters)
        seen = []
        for _ in registry.all_strategies():
            seen.append(screen.strategy.key)
            _matches_core(screen, counters)
            await pilot.press("p")
            await settle(app, pilot)
        assert set(seen) == set(registry.strategy_keys())


def test_sweep_json_on_a_standard_snapshot(
    registered: None, dialogue_case: tuple[Path, dict[str, Any]]
) -> None:
    """`sweep --param tokens_threshold --json` crosses the library's boundary exactly once."""
    from inspector.cli import main

    path, case = dialogue_case
    tokens = case["expected"]["details"]["tokens"]
    out = io.StringIO()
    values = f"{tokens - 1},{tokens},{tokens + 1}"
    with redirect_stdout(out):
        status = main(
            ["sweep", str(path), "--param", "tokens_threshold", "--values", values, "--json"]
        )
    assert status == 0
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [row["hit"] for row in rows][-3:] == [True, False, False]


def test_family_and_processor_flags_select_a_standard_processor(
    registered: None, dialogue_case: tuple[Path, dict[str, Any]]
) -> None:
    """`--family standard --processor CurrentRoundCompressor` re-evaluates the snapshot with
    that standard processor (its defaults); `why --json` carries the processor's own numbers."""
    from inspector.cli import main

    path, _ = dialogue_case
    out = io.StringIO()
    with redirect_stdout(out):
        status = main(
            [
                "why",
                str(path),
                "--family",
                "standard",
                "--processor",
                "CurrentRoundCompressor",
                "--tokens-threshold",
                "1",
                "--json",
            ]
        )
    assert status == 0
    row = json.loads(out.getvalue().splitlines()[0])
    assert (row["processor"], row["strategy"], row["family"]) == (
        "CurrentRoundCompressor",
        "standard.current_round",
        "standard",
    )
    assert row["hit"] is True and row["settings"]["tokens_threshold"] == 1
    assert row["openjiuwen_release"] == "0.1.16" and row["counter"] == "TiktokenCounter"
    assert {"last_user_idx", "merge_ranges", "tokens"} <= set(row["details"])


def test_a_browser_row_of_a_standard_snapshot_uses_its_own_processor(
    dialogue_case: tuple[Path, dict[str, Any]], counters: dict[str, TokenCounter]
) -> None:
    """The row shows the snapshot's standard processor and its decision, as `why` does."""
    from inspector.sources.loader import load_paths
    from inspector.tui.rows import artifact_row

    path, case = dialogue_case
    (artifact,) = list(load_paths([path]))
    row = artifact_row(0, artifact, {}, counters)  # type: ignore[arg-type]
    assert row.processor == "DialogueCompressor" and row.decision is not None
    assert row.decision.family == "standard"
    assert row.decision.hit is False and row.outcome == f"no: {row.decision.reason}"
    assert row.decision.threshold == case["config"]["tokens_threshold"]
