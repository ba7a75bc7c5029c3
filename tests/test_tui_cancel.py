"""Issue 17 (9): long work is cancellable for real, not only its screen.

- A count in a worker stops between two messages once cancelled (`tui.count_cancel`); what
  was counted stays; other threads count on undisturbed.
- Esc on the progress of a context's first count stops the count itself.
- A big file read by the browser shows bytes and a percentage; Esc stops loading that
  file (the reader stops at its next chunk), the other files still load.

Each test asserts the state left behind, never a time.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import ProgressBar, Static

from bench.synth import write_big_dump
from inspector.core.artifact import LoadResult
from inspector.core.messages import Message
from inspector.core.tokens import TokenCounter
from inspector.encoding import make_counters
from inspector.sources import jsonstream
from inspector.sources.loader import load_paths
from inspector.tui.app import create_app
from inspector.tui.count_cancel import CountCancelled, cancellable, install_gates
from inspector.tui.screens import browser_loading, progress
from inspector.tui.screens.browser import BrowserScreen
from inspector.tui.screens.browser_loading import LoadCancelled, ReadTracker, progress_text
from inspector.tui.screens.progress import ProgressScreen, counted_share
from tests.test_tui_count_progress import wait_for

ROOT = Path(__file__).resolve().parents[1]
DEMO = next((ROOT / "sample_dumps").rglob("1795900020374_*.json"))


def test_a_cancelled_count_stops_between_messages_and_keeps_what_it_counted() -> None:
    counters = make_counters()
    install_gates(counters)
    counter = counters["len_div_4"]
    messages = [Message(role="user", content=f"message number {n}") for n in range(2000)]
    looks = 0

    def cancelled_after_500() -> bool:
        nonlocal looks
        looks += 1
        return looks > 500

    outcome: list[BaseException | int] = []

    def count() -> None:
        try:
            with cancellable(counters, cancelled_after_500):
                outcome.append(counter.count_messages(messages))
        except CountCancelled as stopped:
            outcome.append(stopped)

    thread = threading.Thread(target=count)
    thread.start()
    thread.join()
    assert isinstance(outcome[0], CountCancelled)
    assert sum(counter.knows(m) for m in messages) == 500  # counted up to the cancel
    # another thread (here: this one) is not affected, and finishes the count
    assert counter.count_messages(messages) == counters["len_div_4"].count_messages(messages)
    assert all(counter.knows(m) for m in messages)


def test_the_gate_forwards_to_the_counters_own_store(tmp_path: Path) -> None:
    from inspector.sources.cache import TokenCache, cached_counters

    cache = TokenCache(tmp_path / "cache")
    counters = cached_counters(cache)
    install_gates(counters)
    install_gates(counters)  # idempotent
    gate = counters["tiktoken_cl100k"].store
    assert gate is not None and gate.inner is cache  # type: ignore[attr-defined]
    assert gate.flush == cache.flush  # type: ignore[attr-defined]
    assert not hasattr(counters["len_div_4"].store, "flush")
    cache.close()


@pytest.fixture
def slow_counters() -> dict[str, TokenCounter]:
    """Real counters whose cl100k encoder takes 1 ms a text (a count takes seconds)."""
    counters = make_counters()
    exact = counters["tiktoken_cl100k"]

    def slow(text: str) -> int:
        time.sleep(0.001)
        return exact.text_tokens(text)

    counters["tiktoken_cl100k"] = TokenCounter("tiktoken_cl100k", slow)
    return counters


async def test_esc_on_the_count_progress_stops_the_count_itself(
    tmp_path: Path, slow_counters: dict[str, TokenCounter], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress, "SHOW_AFTER", 0.01)
    dump = write_big_dump(tmp_path, messages=3000, target_mb=3.0)
    fast = make_counters()  # the browser's load counts with its own counters

    def loader(sources: Iterable[str]) -> Iterator[LoadResult]:
        yield from load_paths(list(sources), counters=fast)

    app = create_app([str(dump)], counters=slow_counters, loader=loader)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ProgressScreen), 60)
        context = app.screen_stack[2]
        messages = context.snapshot.messages
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, BrowserScreen))
        await app.workers.wait_for_complete()
        counter = slow_counters["tiktoken_cl100k"]
        probes = [counter, *counter._derived.values()]
        # the worker ended without counting the rest (it would reach 1.0 if it went on)
        assert counted_share(messages, probes) < 0.9


def test_the_tracker_draws_bytes_and_a_percentage_and_cancels_the_file_in_hand() -> None:
    tracker = ReadTracker()
    assert tracker.cancel() is None  # nothing in hand
    path = Path("/data/1795975303278_CurrentRoundCompressor_bench-big-20000-100.json")
    tracker.hook(path, 12_000_000, 48_000_000)
    shown = progress_text(tracker, tracker.started + 1.0)
    assert shown is not None
    text, reading = shown
    assert reading
    assert "12.0 of 48.0 MB (25%)" in text.plain and "Esc" in text.plain
    assert progress_text(tracker, tracker.started + 0.1) is None  # too soon to show
    tracker.hook(path, 48_000_000, 48_000_000)
    text, reading = progress_text(tracker, tracker.started + 2.0) or (None, None)
    assert reading is False and text is not None and "counting" in text.plain
    assert tracker.cancel() == str(path) and tracker.current_cancelled()
    with pytest.raises(LoadCancelled):
        tracker.hook(path, 48_000_000, 48_000_000)
    tracker.finished(str(path))
    assert tracker.path is None and not tracker.current_cancelled()


def test_the_streaming_reader_reports_each_chunk_to_the_hook(tmp_path: Path) -> None:
    dump = write_big_dump(tmp_path, messages=200, target_mb=1.0)
    seen: list[tuple[Path, int, int]] = []
    token = jsonstream.READ_PROGRESS.set(lambda *call: seen.append(call))
    try:
        value = jsonstream.load_streaming(dump, chunk_bytes=64 * 1024)
    finally:
        jsonstream.READ_PROGRESS.reset(token)
    size = dump.stat().st_size
    assert value == jsonstream.load_streaming(dump)  # the same value with the hook
    assert len(seen) >= size // (64 * 1024)
    assert [done for _, done, _ in seen] == sorted(done for _, done, _ in seen)
    assert seen[-1] == (dump, size, size)
    assert {total for _, _, total in seen} == {size}


async def test_esc_stops_loading_a_big_file_and_the_other_files_still_load(
    tmp_path: Path, counters: dict[str, TokenCounter], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The browser reads a folder of three dumps; the middle one is read by the streaming
    reader in small chunks and held after its first chunk until Esc was pressed."""
    monkeypatch.setattr(browser_loading, "SHOW_AFTER", 0.0)
    monkeypatch.setattr(browser_loading, "LOOK_EVERY", 0.02)
    folder = tmp_path / "in"
    folder.mkdir()
    first = folder / "a" / DEMO.name
    last = folder / "c" / DEMO.name.replace("1795900020374", "1795900020999")
    for copy in (first, last):
        copy.parent.mkdir()
        shutil.copyfile(DEMO, copy)
    (folder / "b").mkdir()
    big = write_big_dump(folder / "b", messages=300, target_mb=1.0)
    reached, release = threading.Event(), threading.Event()

    def loader(sources: Iterable[str]) -> Iterator[LoadResult]:
        files = sorted(
            p for s in sources for p in (Path(s).rglob("*.json") if Path(s).is_dir() else [Path(s)])
        )
        hook: Any = jsonstream.READ_PROGRESS.get()  # the browser's tracker
        for path in files:
            if path == big:

                def held(read: Path, done: int, size: int) -> None:
                    hook(read, done, size)
                    if not reached.is_set():
                        reached.set()
                        release.wait(10)

                token = jsonstream.READ_PROGRESS.set(held)
                try:
                    jsonstream.load_streaming(big, chunk_bytes=32 * 1024)
                finally:
                    jsonstream.READ_PROGRESS.reset(token)
            yield from load_paths([str(path)], counters=counters)

    app = create_app([str(folder)], counters=counters, loader=loader)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, reached.is_set)
        browser = app.screen
        assert isinstance(browser, BrowserScreen)
        status = browser.query_one("#load-status", Static)
        await wait_for(pilot, lambda: "MB (" in str(status.render()))
        line = str(status.render())
        assert f"of {big.stat().st_size / 1e6:,.1f} MB (" in line
        assert "%)" in line and "Esc" in line
        assert browser.query_one("#load-progress", ProgressBar).total == big.stat().st_size
        await pilot.press("escape")
        release.set()
        await app.workers.wait_for_complete()
        await wait_for(pilot, lambda: not browser.reading)
        by_source = {row.source: row for row in browser.rows}
        assert set(by_source) == {str(first), str(big), str(last)}
        assert by_source[str(big)].error is not None
        assert "cancelled" in by_source[str(big)].error.error
        assert by_source[str(first)].artifact is not None  # loaded before: kept
        assert by_source[str(last)].artifact is not None  # after: still loaded


def test_the_load_line_shows_a_file_name_escaped() -> None:
    tracker = ReadTracker()
    tracker.hook(Path("/data/a\x1b]0;owned\x07.json"), 1, 10)
    shown = progress_text(tracker, tracker.started + 1.0)
    assert shown is not None
    plain = shown[0].plain
    assert "\x1b" not in plain and "\x07" not in plain and "\\x1b]0;owned\\x07" in plain
