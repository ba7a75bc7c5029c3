"""The findings in every strategy family and on every screen that shows a decision: the
standard family and the hybrid get the ones that apply to them; the TUI's Why tab lists
problems first with their fix; the before/after view names what the compaction did."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from inspector.core.artifact import Artifact, DumpRecorded
from inspector.core.checks import Finding, by_severity
from inspector.core.findings import FindingInput, run_findings
from inspector.core.snapshot import snapshot_from_dict
from inspector.core.strategy import registry
from inspector.core.tokens import TokenCounter
from inspector.render.verdict import render_to_text
from inspector.render.why_report import findings_table
from inspector.tui.app import create_app
from inspector.tui.screens.context import ContextScreen
from tests.conftest import REFERENCE, call


def _context(model: str, context_max: int) -> dict[str, Any]:
    args = json.dumps({"file_path": "/w/a.py"})
    return {
        "context_max": context_max,
        "engine_config": {"model_name": model},
        "messages": [
            {"role": "user", "content": "Read a.py and tell me what it does."},
            {"role": "assistant", "content": "", "tool_calls": [call("r1", "read_file", args)]},
            {"role": "tool", "content": "x = 1\n" * 50, "tool_call_id": "r1"},
            {"role": "assistant", "content": "It sets x."},
        ],
    }


@pytest.mark.parametrize(
    "key", ["hybrid", "standard.dialogue", "standard.micro_compact", "dialogue"]
)
def test_every_family_names_a_window_mismatch(counters: dict[str, TokenCounter], key: str) -> None:
    strategy = registry.get(key)
    raw = _context("gpt-4o", 200_000)
    raw["processor_family"] = "forked" if strategy.family == "forked" else "standard"
    snapshot = snapshot_from_dict(raw)
    prepared = strategy.prepare(snapshot, counters)
    settings = strategy.recorded_settings(snapshot)
    if key == "hybrid":
        settings = settings.with_(context_window=200_000)
    found = [f for f in strategy.decide(prepared, settings).findings if f.key == "window_mismatch"]
    assert found and "128,000-token window of gpt-4o" in found[0].sentence
    snapshot = snapshot_from_dict({**raw, "engine_config": {"model_name": "fake-model"}})
    prepared = strategy.prepare(snapshot, counters)
    assert not [
        f
        for f in strategy.decide(prepared, strategy.recorded_settings(snapshot)).findings
        if f.key == "window_mismatch"
    ]


def test_a_recorded_growth_is_named_without_a_context() -> None:
    artifact = Artifact(
        source="run.jsonl",
        id="run",
        kind="dump",
        snapshot=None,
        recorded=DumpRecorded(tokens_before=2591, tokens_after=2624),
    )
    found = run_findings(FindingInput(snapshot=None, artifact=artifact, family="standard"))
    assert [f.key for f in found] == ["compaction_grows_context"]
    assert (
        "2,624" in found[0].sentence
        and "2,591" in found[0].sentence
        and "by 33" in found[0].sentence
    )


def test_findings_table_puts_problems_first_with_kind_and_fix() -> None:
    findings = [
        Finding("routine", "info", "an info first in the list"),
        Finding("bad_thing", "problem", "a problem second", fix="do the other thing"),
        Finding("risky", "warning", "a warning last"),
    ]
    text = render_to_text(findings_table(findings), width=200)
    assert (
        text.index("problem bad_thing") < text.index("warning risky") < text.index("info routine")
    )
    assert "fix: do the other thing" in text
    assert [f.key for f in by_severity(findings)] == ["bad_thing", "risky", "routine"]


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    """Scenario a (a dump and its debug log) in a folder of its own."""
    folder = tmp_path / "a"
    shutil.copytree(REFERENCE / "a_current_round_plain", folder)
    for extra in ("http_requests.json", "result.json", "input.json"):
        (folder / extra).unlink()
    return folder


async def test_why_tab_and_before_after_view_show_the_compaction_findings(
    scenario: Path, counters: dict[str, TokenCounter]
) -> None:
    app = create_app([str(scenario)], counters=counters)
    async with app.run_test(size=(140, 50)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        browser = app.screen
        index = next(
            i
            for i, row in enumerate(browser.shown)  # type: ignore[attr-defined]
            if row.artifact is not None and row.artifact.kind == "dump"
        )
        browser.query_one("#table").move_cursor(row=index)
        await pilot.press("enter")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ContextScreen) and screen.decision is not None
        body = render_to_text(screen.query_one("#why-body").content, width=200)  # type: ignore[attr-defined]
        assert "problem stale_reinjected_file" in body and "fix: re-read the file" in body
        assert body.index("problem stale_reinjected_file") < body.index("info ")
        recorded = render_to_text(screen.query_one("#why-recorded").content, width=200)  # type: ignore[attr-defined]
        assert "what this compaction did" in recorded
        assert "stale_reinjected_file" in recorded and "reinjection_cancels_saving" in recorded
