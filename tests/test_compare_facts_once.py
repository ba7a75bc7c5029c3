"""The strategies view (`C`) reads the context's facts (paths, identifiers, error lines) once
for all its columns, not once per strategy, and Esc stops that read itself: on a
20,000-message dump it was four reads of every message, and a core stayed busy after Esc."""

from __future__ import annotations

import pytest

import inspector.core.hybrid_facts as hybrid_facts
import inspector.tui.screens.progress as progress
from inspector.core.hybrid_facts import FactsStopped, extract_facts
from inspector.core.tokens import TokenCounter
from inspector.tui.app import create_app
from inspector.tui.screens.compare_screen import CompareScreen
from tests.test_tui_hybrid import SCENARIO, open_dump, settle


def test_extract_facts_reports_and_stops_between_messages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import json

    from inspector.core.snapshot import snapshot_from_dict
    from tests.conftest import REFERENCE

    snapshot = snapshot_from_dict(
        json.loads((REFERENCE / "k_long_coding_session" / "input.json").read_text())
    )
    messages = snapshot.messages
    monkeypatch.setattr(hybrid_facts, "CHECK_EVERY", 5)
    seen: list[int] = []
    whole = extract_facts(messages, lambda: False, seen.append)
    assert whole == extract_facts(messages)  # asking and reporting change nothing
    assert seen == list(range(5, len(messages), 5))
    asked: list[int] = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) >= 2

    with pytest.raises(FactsStopped):
        extract_facts(messages, stop, None)
    assert len(asked) == 2 and len(messages) > 10


async def test_the_strategies_view_reads_the_facts_once(
    counters: dict[str, TokenCounter], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    real = progress.extract_facts

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(progress, "extract_facts", counting)
    monkeypatch.setattr("inspector.core.compare.extract_facts", counting)
    app = create_app([str(SCENARIO)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_dump(app, pilot)
        await pilot.press("C")
        await settle(app, pilot)
        compare = app.screen
        assert isinstance(compare, CompareScreen) and compare.comparison is not None
        assert len(compare.comparison.outcomes) >= 3
        assert len(calls) == 1
