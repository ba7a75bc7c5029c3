"""A strategy added with one module and one registry line shows up in `why`, `sweep`, the
CLI flags, the Tune panel and the sweep screen with no front-end change (issue 11)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from inspector.cli import main
from inspector.core.strategy import registry
from inspector.core.tokens import TokenCounter
from inspector.tui.app import InspectorApp, create_app
from inspector.tui.screens.context import ContextScreen
from inspector.tui.screens.sweep import SweepScreen
from inspector.tui.widgets.message_list import MessageList
from tests.conftest import REFERENCE

E_INPUT = REFERENCE / "e_target_below_min" / "input.json"
pytestmark = pytest.mark.skipif(not E_INPUT.exists(), reason="reference folder not available")


@pytest.fixture
def plugin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The registry with one more line."""
    monkeypatch.setattr(
        registry, "STRATEGIES", (*registry.STRATEGIES, "tests.plugins.keep_last:KEEP_LAST")
    )
    registry.all_strategies.cache_clear()
    yield
    registry.all_strategies.cache_clear()


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, Any]]]:
    status = main(list(args))
    out = capsys.readouterr().out
    return status, [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def test_why_and_sweep_offer_the_new_strategy(
    plugin: None, capsys: pytest.CaptureFixture[str]
) -> None:
    status, records = run(capsys, "why", str(E_INPUT), "--processor", "keep_last", "--json")
    assert status == 0 and records[0]["processor"] == "KeepLastCompressor"
    assert records[0]["hit"] is True and records[0]["span"]["protected_tail"] == 3
    status, records = run(
        capsys, "why", str(E_INPUT), "--processor", "KeepLastCompressor", "--max-messages", "20",
        "--json",
    )  # fmt: skip
    assert status == 0 and records[0]["reason"] == "under_limit"
    assert records[0]["settings"] == {"max_messages": 20, "keep_last": 3}
    status, points = run(
        capsys, "sweep", str(E_INPUT), "--processor", "keep_last", "--param", "max_messages",
        "--values", "5,8,9,12", "--json",
    )  # fmt: skip
    assert status == 0 and [p["hit"] for p in points] == [True, True, False, False]
    assert [p["flip"] for p in points] == [False, False, True, False]
    with pytest.raises(SystemExit):
        main(["why", "--help"])
    assert "--max-messages" in capsys.readouterr().out
    assert main(["why", str(E_INPUT), "--processor", "keep_last", "--max-messages", "0"]) == 2
    assert "--max-messages" in capsys.readouterr().err


async def settle(app: InspectorApp, pilot: Pilot[Any]) -> None:
    for _ in range(2):
        await pilot.pause()
        await app.workers.wait_for_complete()
    await pilot.pause(0.1)
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_tune_panel_and_sweep_screen_offer_its_settings(
    plugin: None, counters: dict[str, TokenCounter]
) -> None:
    app = create_app([str(E_INPUT)], {"processor": "keep_last"}, counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, ContextScreen) and screen.strategy.key == "keep_last"
        assert screen.decision is not None and screen.decision.hit
        rows = screen.query_one(MessageList)
        assert rows.region_of(rows.row_count - 1) == "tail" and rows.region_of(0) == "compress"
        await pilot.press("t")
        await settle(app, pilot)
        box = screen.query_one("#field-max_messages", Input)
        box.value = "30"
        await settle(app, pilot)
        assert screen.decision.reason == "under_limit" and rows.region_of(0) == "tail"
        await pilot.press("s")
        await settle(app, pilot)
        sweep = app.screen
        assert isinstance(sweep, SweepScreen) and sweep.params == ["max_messages", "keep_last"]
        assert [p.value for p in sweep.points][:2] == [1, 2]
        sweep.action_move(-len(sweep.points))  # the first value of the range: 1 message
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.screen is screen and screen.settings.max_messages == 1  # type: ignore[attr-defined]
        assert screen.decision.hit


def test_the_registry_without_the_plugin_does_not_know_it() -> None:
    assert "keep_last" not in registry.strategy_keys()
