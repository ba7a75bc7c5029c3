"""The browser keeps the cyclic collector paused from its listing until its rows are in
(`BrowserLoading.hold_collector`, a `pool.CollectorHold`), then the app freezes what is
alive: the collections during a big folder's load walked every row and cell made so far.
The collector is on again after the load, and after a screen that goes mid-load; a hold
counts with other pauses (`gc_paused`). The pool test runs in a fresh interpreter (the
collector is global to a process); the TUI tests drive the real app. Behaviour only;
timings live in bench/."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from inspector.core.artifact import LoadResult
from inspector.encoding import make_counters
from inspector.sources.loader import load_paths
from inspector.tui.app import create_app
from inspector.tui.screens.browser import BrowserScreen
from tests.conftest import fresh_interpreter_json
from tests.test_tui_count_progress import wait_for

ROOT = Path(__file__).resolve().parents[1]

_PROBE = """
import gc, json
from inspector.sources.pool import CollectorHold, gc_paused

found = {}
hold = CollectorHold()
hold.hold()
hold.hold()  # idempotent
found["held"] = [gc.isenabled(), hold.held]
with gc_paused():
    hold.release()
    found["held_inner"] = gc.isenabled()  # the block's pause still counts
found["released"] = [gc.isenabled(), hold.held]
hold.release()  # idempotent: no second resume
found["released_twice"] = gc.isenabled()
with gc_paused():
    hold.release()
    found["no_extra_release"] = gc.isenabled()
gc.disable()  # off before the first pause: left off
hold.hold()
hold.release()
found["was_off"] = gc.isenabled()
print(json.dumps(found))
"""


def test_a_hold_pauses_until_released_and_counts_with_other_pauses() -> None:
    found = fresh_interpreter_json(_PROBE)
    assert found["held"] == [False, True]
    assert found["held_inner"] is False
    assert found["released"] == [True, False]
    assert found["released_twice"] is True
    assert found["no_extra_release"] is False  # a released hold ends no other pause
    assert found["was_off"] is False


def test_the_browser_loads_with_the_collector_paused_then_frozen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    enabled: list[bool] = []
    on_ui: list[bool] = []  # in the UI thread's handlers of the listing and the rows
    counters = make_counters()
    for name in ("on_browser_screen_entries_listed", "on_browser_screen_rows_loaded"):
        handler = getattr(BrowserScreen, name)

        def spied(self: BrowserScreen, message: Any, handler: Any = handler) -> None:
            on_ui.append(gc.isenabled())
            handler(self, message)

        monkeypatch.setattr(BrowserScreen, name, spied)

    def loader(sources: Iterable[str]) -> Iterator[LoadResult]:
        for result in load_paths(list(sources), counters=counters, on_demand=True):
            enabled.append(gc.isenabled())
            yield result

    async def run() -> tuple[bool, int, int]:
        app = create_app([str(ROOT / "sample_dumps")], counters=counters, loader=loader)
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, BrowserScreen))
            browser = app.screen
            assert isinstance(browser, BrowserScreen)
            await wait_for(pilot, lambda: not browser.reading and bool(browser.rows))
            on, frozen = gc.isenabled(), gc.get_freeze_count()
        return on, frozen, gc.get_freeze_count()

    on, frozen, after_exit = asyncio.run(run())
    assert len(enabled) > 30 and not any(enabled)  # every result taken while paused
    assert len(on_ui) >= 2 and not any(on_ui)  # the rows' cells made while paused too
    assert on and frozen > 10_000  # on again after the load, what it made frozen
    assert after_exit == 0  # the app unfreezes when it ends


def test_a_browser_closed_during_its_load_ends_the_pause(tmp_path: Path) -> None:
    """The app quits while the load waits: the collector is on again, nothing frozen."""
    started = threading.Event()
    release = threading.Event()

    def loader(sources: Iterable[str]) -> Iterator[LoadResult]:
        started.set()
        release.wait(20)
        yield from ()

    async def run() -> tuple[bool, bool]:
        app = create_app([str(ROOT / "sample_dumps")], loader=loader)
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, started.is_set)
            during = gc.isenabled()
            await pilot.press("q")
        release.set()
        return during, gc.isenabled()

    during, after = asyncio.run(run())
    assert during is False  # the load in hand holds the pause
    assert after is True  # the screen went: its pause with it, the load still in hand
    assert gc.get_freeze_count() == 0
