"""Issue 16 (2) in the browser: rows from each file's recorded fields, a dump's context
rebuilt from its file when the row is opened (`load_paths(on_demand=True)`, the app's
default loader), driven through the real app.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Static

from bench.synth import write_folder
from inspector.core.artifact import Artifact, LoadError
from inspector.core.tokens import TokenCounter
from inspector.sources import loader
from inspector.sources.loader import load_paths
from inspector.tui.app import create_app
from inspector.tui.rows import BrowserRow, artifact_row, error_row
from inspector.tui.screens import browser_open
from inspector.tui.screens.browser import BrowserScreen
from inspector.tui.screens.context import ContextScreen
from tests.test_tui_app import settle

SAMPLES = Path(__file__).resolve().parents[1] / "sample_dumps"


def _cells(row: BrowserRow) -> tuple[Any, ...]:
    return (
        row.source,
        row.title,
        row.time,
        row.processor,
        row.session,
        row.outcome,
        row.before,
        row.after,
        row.reduction,
        row.retries,
    )


def _full_rows(source: Path, counters: dict[str, TokenCounter]) -> dict[str, Any]:
    """The rows a full load gives, and its results, by (source, title)."""
    found: dict[str, Any] = {}
    for item in load_paths([source], counters=counters):
        row = (
            artifact_row(0, item, {}, counters)
            if isinstance(item, Artifact)
            else error_row(0, item)
        )
        found.setdefault(row.source + "|" + row.title, []).append((_cells(row), item))
    return found


async def _browser(app: Any, pilot: Any) -> BrowserScreen:
    await settle(app, pilot)
    screen = app.screen
    assert isinstance(screen, BrowserScreen) and not screen.reading
    return screen


async def _open(app: Any, pilot: Any, screen: BrowserScreen, row: BrowserRow) -> None:
    index = next(i for i, shown in enumerate(screen.shown) if shown is row)
    screen.query_one("#table", DataTable).move_cursor(row=index)
    await pilot.press("enter")
    await settle(app, pilot)


async def test_rows_are_a_full_loads_and_a_dump_is_rebuilt_once_when_opened(
    counters: dict[str, TokenCounter], monkeypatch: pytest.MonkeyPatch
) -> None:
    rebuilt: list[str] = []
    real = loader._Streamer._whole

    def counted(self: Any, path: Path, ident: str) -> Any:
        rebuilt.append(ident)
        return real(self, path, ident)

    monkeypatch.setattr(loader._Streamer, "_whole", counted)
    full = _full_rows(SAMPLES, counters)
    app = create_app([str(SAMPLES)], counters=counters)
    async with app.run_test(size=(200, 50)) as pilot:
        screen = await _browser(app, pilot)
        shown = {}
        for row in screen.rows:
            shown.setdefault(row.source + "|" + row.title, []).append(_cells(row))
        assert shown == {key: [cells for cells, _ in rows] for key, rows in full.items()}
        dumps = [r for r in screen.rows if r.artifact is not None and r.artifact.whole]
        assert len(dumps) >= 5 and all(r.artifact and r.artifact.snapshot is None for r in dumps)
        assert rebuilt == []
        dump = dumps[2]
        await _open(app, pilot, screen, dump)
        context = app.screen
        assert isinstance(context, ContextScreen)
        (_, want), *_ = full[dump.source + "|" + dump.title]
        assert context.artifact == want and context.artifact.snapshot is not None
        assert len(rebuilt) == 1
        await pilot.press("escape")
        await settle(app, pilot)
        kept = next(r for r in screen.rows if r.key == dump.key)
        assert kept.artifact == want and kept.artifact is not None and kept.artifact.whole is None
        await _open(app, pilot, screen, kept)  # opened again: not read again
        assert isinstance(app.screen, ContextScreen) and len(rebuilt) == 1


async def test_a_dump_that_no_longer_rebuilds_becomes_an_error_row(
    tmp_path: Path, counters: dict[str, TokenCounter]
) -> None:
    folder = write_folder(tmp_path / "f", dumps=12, sessions=2, messages_per_dump=6)
    app = create_app([str(folder)], counters=counters)
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        screen = await _browser(app, pilot)
        row = next(r for r in screen.shown if r.artifact is not None and r.artifact.whole)
        data = json.loads(Path(row.source).read_text())
        nested: Any = "x"
        for _ in range(230):
            nested = [nested]
        data["context_after"]["messages"][0]["content"] = nested
        Path(row.source).write_text(json.dumps(data))
        await _open(app, pilot, screen, row)
        assert app.screen is screen, "an unreadable dump opens nothing"
        now = next(r for r in screen.shown if r.key == row.key)
        assert now.error is not None and now.outcome.startswith("error:")
        assert "nested too deeply" in now.outcome
        index = screen.shown.index(now)
        line = screen.query_one("#table", DataTable).render_line(index + 1).text
        assert "error:" in line
        assert any("nested too deeply" in n.message for n in app._notifications)


async def test_a_big_dump_is_rebuilt_in_a_worker_then_opened(
    tmp_path: Path, counters: dict[str, TokenCounter], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(browser_open, "IN_WORKER_BYTES", 1)
    folder = write_folder(tmp_path / "f", dumps=6, sessions=1, messages_per_dump=6)
    workers: list[str] = []
    real = browser_open.BrowserOpening.make_whole

    def noted(self: Any, row: BrowserRow, tracker: Any) -> Any:
        workers.append(row.source)
        return real(self, row, tracker)

    monkeypatch.setattr(browser_open.BrowserOpening, "make_whole", noted)
    app = create_app([str(folder)], counters=counters)
    async with app.run_test(size=(200, 50)) as pilot:
        screen = await _browser(app, pilot)
        row = next(r for r in screen.shown if r.artifact is not None and r.artifact.whole)
        await _open(app, pilot, screen, row)
        context = app.screen
        assert workers == [row.source]
        assert isinstance(context, ContextScreen) and context.artifact.snapshot is not None
        assert context.artifact.source == row.source


async def test_esc_stops_a_big_dumps_rebuild_and_enter_starts_it_again(
    tmp_path: Path, counters: dict[str, TokenCounter], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(browser_open, "IN_WORKER_BYTES", 1)
    folder = write_folder(tmp_path / "f", dumps=3, sessions=1, messages_per_dump=6, seed=31)
    started, go_on = threading.Event(), threading.Event()
    real = browser_open.whole_row

    def held(row: BrowserRow) -> BrowserRow:  # the real rebuild, once the test says so
        started.set()
        go_on.wait(10)
        return real(row)

    monkeypatch.setattr(browser_open, "whole_row", held)
    app = create_app([str(folder)], counters=counters)
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        screen = await _browser(app, pilot)
        row = next(r for r in screen.shown if r.artifact is not None and r.artifact.whole)
        screen.query_one("#table", DataTable).move_cursor(row=screen.shown.index(row))
        await pilot.press("enter")
        assert started.wait(10)
        await pilot.pause(0.3)
        line = screen.query_one("#rebuild-line")
        status = str(screen.query_one("#rebuild-status", Static).render())
        assert line.display and "rebuilding" in status and "Esc: stop" in status, status
        await pilot.press("enter")  # no second rebuild of the same row
        await pilot.press("escape")
        go_on.set()  # the rebuild goes on, sees the stop at its first count, and ends
        await settle(app, pilot)
        await pilot.pause(0.2)
        assert app.screen is screen and not line.display
        now = next(r for r in screen.shown if r.key == row.key)
        assert now.artifact is not None and now.artifact.whole is not None, "still header-level"
        said = [n.message for n in app._notifications]
        assert any("still rebuilding" in m for m in said)
        assert any("stopped rebuilding" in m for m in said)
        monkeypatch.setattr(browser_open, "whole_row", real)
        await _open(app, pilot, screen, now)
        for _ in range(50):
            if isinstance(app.screen, ContextScreen):
                break
            await pilot.pause(0.1)
        context = app.screen
        assert isinstance(context, ContextScreen) and context.artifact.snapshot is not None


def test_a_rebuild_stops_when_esc_or_the_app_cancels_its_worker() -> None:
    row = error_row(0, LoadError("x.json", "placeholder"))
    rebuild = browser_open.Rebuilding(row, 10_000_000)
    rebuild.hook(Path("x.json"), 10, 100)  # running: the read goes on
    assert not rebuild.current_cancelled() and rebuild.done == 10

    class _Worker:
        is_cancelled = False

    rebuild.worker = worker = _Worker()
    assert not rebuild.current_cancelled()
    worker.is_cancelled = True  # the app quitting cancels its workers, then waits for them
    assert rebuild.current_cancelled()
    with pytest.raises(browser_open.LoadCancelled):
        rebuild.hook(Path("x.json"), 20, 100)
    other = browser_open.Rebuilding(row, 10_000_000)
    other.stopped = True  # Esc
    assert other.current_cancelled()
