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
from textual.widgets import Input

from inspector.core.artifact import Artifact
from inspector.core.standard.strategy import STRATEGY_LINES
from inspector.core.strategy import registry
from inspector.core.tokens import TokenCounter
from inspector.sources.loader import load_paths
from inspector.tui.app import InspectorApp, create_app
from inspector.tui.screens.strategy_screen import StrategyScreen
from inspector.tui.widgets.settings_panel import SettingsPanel
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
    path = tmp_path / "case.json"
    path.write_text(json.dumps(case), encoding="utf-8")
    return path, case


async def settle(app: InspectorApp, pilot: Pilot[Any]) -> None:
    """Let workers finish and their messages land."""
    for _ in range(3):
        await pilot.pause()
        await app.workers.wait_for_complete()
    await pilot.pause()


async def test_strategy_view_on_a_standard_snapshot(
    registered: None, dialogue_case: tuple[Path, dict[str, Any]], counters: dict[str, TokenCounter]
) -> None:
    """The view opens on the snapshot's own processor, edits a setting, and cycles through
    every registered strategy deciding like the core."""
    path, case = dialogue_case
    artifact = next(
        a for a in load_paths([str(path)], counters=counters) if isinstance(a, Artifact)
    )
    app = create_app([str(path)], counters=counters)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(app, pilot)
        app.push_screen(StrategyScreen(artifact, counters))
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, StrategyScreen)
        assert screen.strategy.key == "standard.dialogue"
        assert screen.decision is not None and screen.decision.hit is False
        panel = screen.query_one(SettingsPanel)
        assert "tokens_threshold" in panel.fields and "keep_last_round" in panel.fields
        await pilot.press("t")
        await settle(app, pilot)
        box = screen.query_one("#field-tokens_threshold", Input)
        box.value = "1"
        await settle(app, pilot)
        assert screen.settings.tokens_threshold == 1  # type: ignore[attr-defined]
        assert screen.decision.hit is True
        seen = []
        for _ in registry.all_strategies():
            seen.append(screen.strategy.key)
            strategy = registry.get(screen.strategy.key)
            core = strategy.decide(strategy.prepare(screen.snapshot, counters), screen.settings)
            assert (screen.decision.hit, screen.decision.reason) == (core.hit, core.reason)
            await pilot.press("p")
            await settle(app, pilot)
        assert seen[0] == "standard.dialogue" and set(seen) == set(registry.keys())


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
