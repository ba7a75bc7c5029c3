"""A threaded load (the TUI's browser) keeps the cyclic collector paused while it takes its
results and freezes what is alive once they are all taken (`pool.frozen_when_done`), so the
collections after its read never walk it: the collector is on again afterwards, nothing is
frozen when the consumer stops early or the load fails, and an outer pause is respected.
The pool tests run in fresh interpreters (the collector and the frozen heap are global to
a process); the TUI test drives the real app. Behaviour only; timings live in bench/."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterable, Iterator
from pathlib import Path

from inspector.core.artifact import LoadResult
from inspector.encoding import make_counters
from inspector.sources.loader import load_paths
from inspector.tui.app import create_app
from inspector.tui.screens.browser import BrowserScreen
from tests.conftest import fresh_interpreter_json
from tests.test_tui_count_progress import wait_for

ROOT = Path(__file__).resolve().parents[1]

_PROBE = """
import gc, json, threading
from pathlib import Path
from inspector.sources.loader import load_paths
from inspector.sources.pool import frozen_when_done, gc_paused

def names(results):
    return [[type(r).__name__, r.source, getattr(r, "id", None)] for r in results]

def load():
    return load_paths([Path("sample_dumps")], on_demand=True)

found = {}

def threaded():  # beside the main thread, as the TUI's load worker reads
    enabled = []
    results = []
    for result in frozen_when_done(load()):
        enabled.append(gc.isenabled())
        results.append(result)
    found["during"] = any(enabled)
    found["after_on"] = gc.isenabled()
    found["frozen"] = gc.get_freeze_count()
    found["same"] = names(results) == names(load())
    found["count"] = len(results)

worker = threading.Thread(target=threaded)
worker.start()
worker.join()
gc.unfreeze()

early = frozen_when_done(load())
next(early)
found["early_off"] = not gc.isenabled()
early.close()
found["early"] = [gc.isenabled(), gc.get_freeze_count()]

def failing():
    yield 1
    raise ValueError("a bug in the load")

try:
    list(frozen_when_done(failing()))
except ValueError:
    found["failed"] = [gc.isenabled(), gc.get_freeze_count()]

with gc_paused():  # an outer pause: still off when the inner results end
    list(frozen_when_done(iter([1, 2])))
    found["outer"] = gc.isenabled()
found["outer_after"] = gc.isenabled()
gc.unfreeze()

gc.disable()  # off before: left off
list(frozen_when_done(iter([1])))
found["was_off"] = gc.isenabled()
print(json.dumps(found))
"""


def test_paused_while_taken_frozen_when_all_are_taken() -> None:
    found = fresh_interpreter_json(_PROBE)
    assert found["count"] > 30
    assert found["during"] is False  # no collection while the results are taken
    assert found["after_on"] is True
    assert found["frozen"] > 10_000  # what the load made, out of the collector's scans
    assert found["same"]  # the results of a load without the pause
    assert found["early_off"] is True
    assert found["early"] == [True, 0]  # stopped early: collector on, nothing frozen
    assert found["failed"] == [True, 0]
    assert found["outer"] is False and found["outer_after"] is True
    assert found["was_off"] is False


def test_the_browser_loads_with_the_collector_paused_then_frozen() -> None:
    enabled: list[bool] = []
    counters = make_counters()

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
    assert on and frozen > 10_000  # on again after the load, what it made frozen
    assert after_exit == 0  # the app unfreezes when it ends
