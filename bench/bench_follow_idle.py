"""Issue 17 (6): the CPU an idle follower costs on a followed folder of 5,000 dumps.

Measures, in one process, CPU seconds (all threads, `time.process_time`) per wall second
while nothing changes:

* `poll`: a `FileFollower` primed on the folder, then `poll()` every 0.5 s as the browser's
  timer calls it, with OS notifications (watchfiles) when available, and with polling
  forced (`notify=False`, the behaviour before notifications);
* `tui`: the whole app (headless pilot) on the folder after its load finished (`--tui`),
  with notifications and with them switched off.

Then one file is written and the time until a poll reports it is shown (notifications must
not make changes slower to appear). Run: `.venv/bin/python -m bench.bench_follow_idle [--tui]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

from bench.synth import write_folder
from inspector.sources.follow import FileFollower

INTERVAL = 0.5


def _idle_cpu(follower: FileFollower, seconds: float) -> float:
    """CPU share of one core while polling an unchanged folder every INTERVAL."""
    cpu, wall = time.process_time(), time.monotonic()
    while time.monotonic() - wall < seconds:
        follower.poll()
        time.sleep(INTERVAL)
    return (time.process_time() - cpu) / (time.monotonic() - wall)


def _change_latency(follower: FileFollower, folder: Path) -> float:
    """Seconds from writing a new snapshot to the poll that reports it."""
    target = folder / f"zz-new-{time.time_ns()}.json"
    raw = {"id": target.stem, "context_max": 1000, "messages": [{"role": "user", "content": "x"}]}
    started = time.monotonic()
    target.write_text(json.dumps(raw), encoding="utf-8")
    try:
        while time.monotonic() - started < 30:
            if any(getattr(e, "artifact", None) is not None for e in follower.poll()):
                return time.monotonic() - started
            time.sleep(INTERVAL / 5)
        return float("inf")
    finally:
        target.unlink(missing_ok=True)


def measure_poll(folder: Path, seconds: float, notify: bool) -> tuple[float, float, int]:
    """(idle CPU share, change latency, files) of a follower."""
    follower = FileFollower([folder], settle=0.0, include_existing=False, notify=notify)
    follower.prime()
    try:
        idle = _idle_cpu(follower, seconds)
        latency = _change_latency(follower, folder)
        return idle, latency, follower.file_count
    finally:
        follower.close()


async def _tui_idle(folder: Path, seconds: float, polling: bool) -> float:
    from inspector.sources import follow
    from inspector.tui.app import create_app

    if polling:  # the behaviour before notifications: every tick stats every file
        follow.ChangeWatcher.start = classmethod(lambda cls, paths: None)  # type: ignore[assignment]

    app = create_app([str(folder)])
    async with app.run_test(size=(120, 40)) as pilot:
        # the load starts once the listed names are drawn: wait until the screen says it ended
        deadline = time.monotonic() + 600
        while getattr(app.screen, "reading", True) and time.monotonic() < deadline:
            await pilot.pause(0.1)
            await app.workers.wait_for_complete()
        await pilot.pause(2.0)
        cpu, wall = time.process_time(), time.monotonic()
        await asyncio.sleep(seconds)
        return (time.process_time() - cpu) / (time.monotonic() - wall)


def run(out: Path, seconds: float = 15.0, tui: bool = False) -> list[str]:
    """Idle CPU with notifications and with polling forced, on the 5,000-dump folder."""
    folder = write_folder(out / "folder-5000-50", dumps=5_000, sessions=50)
    results = []
    for notify in (True, False):
        idle, latency, files = measure_poll(folder, seconds, notify)
        name = "notifications" if notify else "polling"
        results.append(
            f"follow idle ({name}): {idle * 100:.2f} % of a core on {files:,} files; "
            f"a new file shown after {latency:.2f} s"
        )
    if tui:
        for polling in (False, True):
            share = asyncio.run(_tui_idle(folder, seconds, polling))
            how = "polling" if polling else "notifications"
            results.append(f"TUI idle, following ({how}): {share * 100:.2f} % of a core")
    return results


def main() -> None:
    """Print the measures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "out"))
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--tui", action="store_true")
    args = parser.parse_args()
    for line in run(Path(args.out), args.seconds, args.tui):
        print(line)


if __name__ == "__main__":
    main()
