"""Issue 17 (1): the TUI's latency, driven by Textual's pilot, against a trivial Textual app.

Every figure is a ratio to (or sits beside) a floor measured in the same run. Key timings
are the UI thread's CPU time (`time.thread_time`), which a busy shared machine does not
inflate; the wall time of the same keys is in the note beside it:

- tuning key to settled screen: a key that changes a setting (`]`, `[`, `+`, `-`) until the
  screen has handled every message it caused and painted its frame, against a trivial app
  whose key updates one Static (goal <= 4x at 419 messages, <= 6x at 20,000);
- opening a context: from pushing the context screen until its message list and verdict are
  painted (warm token counts, as on a second open; goal <= 0.5 s at 419, <= 1 s at 20,000);
- browser filter key: one character typed into the filter box of a 5,000-row browser until
  the table is repainted (goal <= 50 ms).

Keys are sent straight to the driver (not `pilot.press`, which sleeps 20 ms per key) and the
screen is driven frame by frame until it is quiet, so the numbers are the app's own work.
Nothing here asserts on time: these are measurements.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from textual import events
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Static

from bench.common import Result
from bench.synth import synthetic_snapshot

BENCH = "tui"
#: Main-thread CPU seconds of every timed key (what the app itself spent, whatever the load).
CPU_SAMPLES: list[float] = []
#: Main-thread CPU seconds of each timed open (the counting worker's thread not included).
OPEN_CPU: list[float] = []
#: Keys that change a setting on the context view (each pair returns to where it started).
TUNING_KEYS = ("right_square_bracket", "left_square_bracket", "plus", "minus")


class TrivialApp(App[None]):
    """The floor: one Static that a key rewrites."""

    BINDINGS = [(key, "bump", "bump") for key in TUNING_KEYS]

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def compose(self) -> ComposeResult:
        """One line of text."""
        yield Static("0", id="n")

    def action_bump(self) -> None:
        """Change the text."""
        self.count += 1
        self.query_one("#n", Static).update(str(self.count))


def _key_event(key: str) -> events.Key:
    names = {
        "right_square_bracket": "]",
        "left_square_bracket": "[",
        "plus": "+",
        "minus": "-",
        "numbersign": "#",
    }
    return events.Key(key, names.get(key, key if len(key) == 1 else None))


async def settle(app: App[Any], pilot: Pilot[Any], done: Callable[[], bool] | None = None) -> None:
    """Run the event loop until no node has a queued message, nothing is left to paint (each
    frame painted at once, not on the screen's timer) and `done` holds.

    Only queues are looked at (no callback per widget, as `pilot._wait_for_screen` posts), so
    the harness costs the same for a screen of 3 widgets and one of 300.
    """
    quiet = 0
    for _ in range(100_000):
        await asyncio.sleep(0)
        screen = app.screen
        nodes = [app, *screen.walk_children(with_self=True)]
        if any(not node._message_queue.empty() for node in nodes):
            quiet = 0
            continue
        if screen._dirty_widgets or screen._layout_required or screen._repaint_required:
            screen._on_timer_update()
            quiet = 0
            continue
        quiet += 1
        if quiet >= 3 and (done is None or done()):
            return


async def time_key(
    app: App[Any], pilot: Pilot[Any], key: str, done: Callable[[], bool] | None = None
) -> float:
    """Seconds from sending `key` to a settled, painted screen."""
    assert app._driver is not None
    start, cpu = time.perf_counter(), time.thread_time()
    event = _key_event(key)
    event.set_sender(app)
    app._driver.send_message(event)
    await settle(app, pilot, done)
    CPU_SAMPLES.append(time.thread_time() - cpu)
    return time.perf_counter() - start


async def trivial_key_seconds(rounds: int) -> list[float]:
    """The floor: the trivial app's key to settled screen, `rounds` x each tuning key."""
    app = TrivialApp()
    samples: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        for _ in range(rounds):
            for key in TUNING_KEYS:
                samples.append(await time_key(app, pilot, key))
    return samples


def write_context(folder: Path, messages: int) -> Path:
    """A snapshot file of `messages` messages (bench/synth), reused when there."""
    path = folder / f"tui-context-{messages}.json"
    if not path.exists():
        path.write_text(json.dumps(synthetic_snapshot(messages)), encoding="utf-8")
    return path


@dataclasses.dataclass
class Opened:
    """One timed open: the first frame that shows the list and the verdict, and the side
    tab filled after it (seconds from the push; `cpu`: the UI thread's CPU seconds)."""

    wall: float = 0.0
    cpu: float = 0.0
    side_wall: float = 0.0
    side_cpu: float = 0.0


def watch_first_paint(screen: Any, start: float, cpu: float, opened: Opened) -> None:
    """Record in `opened` when `screen` first paints a frame with its decision drawn."""
    paint = screen._compositor_refresh

    def painted() -> None:
        paint()
        if not opened.wall and getattr(screen, "decision", None) is not None:
            opened.wall, opened.cpu = time.perf_counter() - start, time.thread_time() - cpu

    screen._compositor_refresh = painted


#: Timed opens of each context (the median is reported).
OPENS = 5
FIELDS = ("wall", "cpu", "side_wall", "side_cpu")


async def timed_open(app: App[Any], pilot: Pilot[Any], screen: Any) -> Opened:
    """Push `screen` (a ContextScreen on counted messages) and time its open."""
    opened = Opened()
    start, cpu = time.perf_counter(), time.thread_time()
    watch_first_paint(screen, start, cpu, opened)
    app.push_screen(screen)
    await settle(app, pilot, lambda: _decided(app) and bool(opened.wall))
    await _until(app, pilot, lambda: not screen.side_pending and bool(screen._side_keys))
    await settle(app, pilot)
    opened.side_wall, opened.side_cpu = time.perf_counter() - start, time.thread_time() - cpu
    await app.workers.wait_for_complete()
    return opened


async def context_seconds(path: Path, rounds: int) -> tuple[Opened, list[float], float]:
    """(the timed open, tuning key seconds, flips seconds) on the context in `path`.

    The context is opened once to count it (as the token cache would have it), closed and
    opened again `OPENS` times: each of those opens is timed to its first frame with the
    list and the verdict painted, the side tab (drawn after that frame) apart; medians.
    """
    from inspector.encoding import make_counters
    from inspector.tui.app import create_app
    from inspector.tui.screens.context import ContextScreen

    counters = make_counters()
    app = create_app([str(path)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        await _until(app, pilot, lambda: _decided(app))
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        await app.workers.wait_for_complete()
        row = screen.row
        times: list[Opened] = []
        for _ in range(OPENS):
            app.pop_screen()
            await settle(app, pilot)
            times.append(await timed_open(app, pilot, ContextScreen(row, counters, {})))
        OPEN_CPU.append(statistics.median(t.cpu for t in times))
        opened = Opened(*(statistics.median(getattr(t, f) for t in times) for f in FIELDS))
        await app.workers.wait_for_complete()
        await settle(app, pilot)
        samples: list[float] = []
        follow: list[float] = []
        for _ in range(rounds):
            for key in TUNING_KEYS:
                samples.append(await time_key(app, pilot, key))
                # then, untimed as a key: the side tab and the flips catch up
                started = time.perf_counter()
                await _until(app, pilot, lambda: _followed(app))
                await settle(app, pilot)
                follow.append(time.perf_counter() - started)
    return opened, samples, statistics.median(follow)


def _decided(app: App[Any]) -> bool:
    from inspector.tui.screens.context import ContextScreen

    screen = app.screen
    return isinstance(screen, ContextScreen) and screen.decision is not None


def _followed(app: App[Any]) -> bool:
    """The flips are found and the side tab drawn after the last change."""
    from inspector.tui.screens.context import ContextScreen

    screen = app.screen
    return (
        isinstance(screen, ContextScreen)
        and screen.flips is not None
        and screen.decision_complete
        and not screen.side_pending
    )


async def _until(app: App[Any], pilot: Pilot[Any], done: Callable[[], bool]) -> None:
    for _ in range(30000):
        if done():
            return
        await asyncio.sleep(0.002)
    raise TimeoutError("the context view never showed a decision")


def browser_rows(path: Path, rows: int) -> Callable[[Iterable[str]], list[Any]]:
    """A loader giving `rows` copies of the small context in `path`, each with its own id."""
    from inspector.sources.loader import load_file

    base = [item for item in load_file(path) if not hasattr(item, "error")][0]

    def loader(sources: Iterable[str]) -> list[Any]:
        return [
            dataclasses.replace(base, id=f"bench-context-{i:05d}", source=f"{path}#{i}")
            for i in range(rows)
        ]

    return loader


#: Filter keys that keep every row ("1", "12": every source path has them) ...
SAME_ROWS_KEYS = ("1", "2", "backspace", "backspace")
#: ... and keys that change the rows shown (rows whose source ends in #4..., #49...).
NARROWING_KEYS = ("numbersign", "4", "9", "backspace", "backspace", "backspace")


async def filter_key_seconds(
    path: Path, rows: int, rounds: int, keys: Sequence[str] = SAME_ROWS_KEYS
) -> list[float]:
    """Seconds per character typed into the filter of a browser of `rows` rows."""
    from inspector.encoding import make_counters
    from inspector.tui.app import create_app
    from inspector.tui.screens.browser import BrowserScreen

    counters = make_counters()
    app = create_app([str(path.parent)], counters=counters, loader=browser_rows(path, rows))
    samples: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await _until(app, pilot, lambda: isinstance(app.screen, BrowserScreen))
        # the load starts once the listed names are drawn: wait until the screen says it ended
        await _until(app, pilot, lambda: not getattr(app.screen, "reading", True))
        await app.workers.wait_for_complete()
        await settle(app, pilot)
        browser = app.screen
        assert isinstance(browser, BrowserScreen)
        browser.action_focus_filter()
        await settle(app, pilot)
        for _ in range(rounds):
            for key in keys:
                samples.append(await time_key(app, pilot, key))
    return samples


def run(
    out: Path, sizes: Sequence[int] = (419, 20_000), browser: int = 5_000, rounds: int = 5
) -> list[Result]:
    """Every TUI measure, each beside the trivial app's floor of the same run."""
    return asyncio.run(_run(out, sizes, browser, rounds))


async def _run(out: Path, sizes: Sequence[int], browser: int, rounds: int) -> list[Result]:
    results: list[Result] = []
    CPU_SAMPLES.clear()
    wall_floor = statistics.median(await trivial_key_seconds(rounds * 2)) * 1000
    floor = statistics.median(CPU_SAMPLES) * 1000
    for index, size in enumerate(sizes):
        path = write_context(out, size)
        CPU_SAMPLES.clear()
        opened, keys, follow = await context_seconds(path, rounds)
        key_ms = statistics.median(CPU_SAMPLES) * 1000
        wall_ms = statistics.median(keys) * 1000
        limit = 4.0 if index == 0 else 6.0
        open_goal = 0.5 if index == 0 else 1.0
        results += [
            Result(
                BENCH,
                f"tuning key to settled screen, {size:,} msgs (UI thread CPU)",
                key_ms,
                "ms",
                f"<= {limit:g}x trivial app",
                key_ms <= limit * floor,
                floor=floor,
                note=f"median of {len(keys)} keys; wall {wall_ms:.1f} ms vs trivial "
                f"{wall_floor:.1f} ms ({wall_ms / wall_floor:.1f}x); why tab and flips "
                f"follow in {follow * 1000:.0f} ms",
            ),
            Result(
                BENCH,
                f"open a context, {size:,} msgs (UI thread CPU)",
                opened.cpu,
                "s",
                f"<= {open_goal:g} s",
                opened.cpu <= open_goal,
                note=f"median of {OPENS} opens to the first frame with the list and the "
                f"verdict (warm counts); wall "
                f"{opened.wall:.2f} s; the side tab follows: filled at {opened.side_cpu:.2f} s "
                f"UI CPU, {opened.side_wall:.2f} s wall; load {os.getloadavg()[0]:.1f}",
            ),
        ]
    path = write_context(out, 12)
    for typed_keys, what in ((SAME_ROWS_KEYS, "same rows"), (NARROWING_KEYS, "rows change")):
        CPU_SAMPLES.clear()
        typed = await filter_key_seconds(path, browser, rounds, typed_keys)
        filter_ms = statistics.median(typed) * 1000
        cpu_ms = statistics.median(CPU_SAMPLES) * 1000
        results.append(
            Result(
                BENCH,
                f"browser filter key, {browser:,} rows ({what})",
                filter_ms,
                "ms",
                "<= 50 ms",
                filter_ms <= 50.0,
                note=f"median of {len(typed)} keys ({' '.join(typed_keys)}), wall; slowest "
                f"{max(typed) * 1000:.1f} ms; UI thread CPU {cpu_ms:.1f} ms",
            )
        )
    return results


# --- the same keys in a real terminal (tmux) --------------------------------------------------

TRIVIAL_COMMAND = "{python} -c 'from bench.bench_tui import TrivialApp; TrivialApp().run()'"


def tmux_key_ms(
    command: str, keys: Sequence[str], rounds: int, session: str = "bench-tui"
) -> tuple[list[float], list[float]]:
    """(first frame, settled) milliseconds of each key sent to `command` running in a
    120x40 tmux pane: the time from `send-keys` until the pane first shows a change, and
    until its last change before it stays the same for 0.3 s (the side tab included).

    The pane is read with `capture-pane` (a few ms per read, the same for every app), so
    figures are wall clock at that resolution; compare apps measured in the same run.
    """
    import subprocess

    def tmux(*args: str) -> str:
        return subprocess.run(["tmux", *args], capture_output=True, text=True).stdout

    def capture() -> str:
        return tmux("capture-pane", "-p", "-e", "-t", session)

    tmux("kill-session", "-t", session)
    tmux(
        "new-session", "-d", "-s", session, "-x", "120", "-y", "40", "-c", str(Path.cwd()), command
    )
    last, stable_since = "", time.perf_counter()
    while time.perf_counter() - stable_since < 1.5:  # started and idle
        screen = capture()
        if screen != last or not screen.strip():
            last, stable_since = screen, time.perf_counter()
        time.sleep(0.02)
    first: list[float] = []
    settled: list[float] = []
    try:
        for _ in range(rounds):
            for key in keys:
                before = capture()
                start = time.perf_counter()
                tmux("send-keys", "-t", session, key)
                seen, changed_at, first_at = before, start, None
                while time.perf_counter() - changed_at < (0.3 if first_at else 3.0):
                    screen = capture()
                    if screen != seen:
                        seen, changed_at = screen, time.perf_counter()
                        first_at = first_at or changed_at
                if first_at is not None:  # else the key changed nothing on screen
                    first.append((first_at - start) * 1000)
                    settled.append((changed_at - start) * 1000)
    finally:
        tmux("kill-session", "-t", session)
    return first, settled


def tmux_report(context: Path, rounds: int = 10) -> str:
    """The inspector's `]`/`[` on `context` beside the trivial app, both in tmux, one run."""
    import sys

    python = sys.executable
    inspector = str(Path(python).with_name("inspector"))
    keys = ("]", "[")
    lines = []
    for name, command in (
        ("trivial app", TRIVIAL_COMMAND.format(python=python)),
        ("inspector", f"{inspector} {context}"),
        ("trivial app", TRIVIAL_COMMAND.format(python=python)),
    ):
        first, settled = tmux_key_ms(command, keys, rounds)
        lines.append(
            f"{name}: first frame median {statistics.median(first):.0f} ms (best "
            f"{min(first):.0f}), settled median {statistics.median(settled):.0f} ms "
            f"(best {min(settled):.0f}), {len(first)} keys"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    from bench.common import out_dir

    quick = "--quick" in sys.argv
    if "--tmux" in sys.argv:
        print(tmux_report(write_context(out_dir(), 419)))
        raise SystemExit(0)
    for line in run(
        out_dir(), sizes=(419, 2_000) if quick else (419, 20_000), browser=500 if quick else 5_000
    ):
        print(line)
