"""Whole-process workers of the folder benchmark; each prints one JSON line.

python bench/workers/folder.py floor FOLDER         # read + parse every file, nothing else
python bench/workers/folder.py rows FOLDER          # browser rows: names + first-screen headers
python bench/workers/folder.py headers FOLDER       # header keys of every dump (background fill)
python bench/workers/folder.py entries FOLDER       # inspector.sources.entries: rows + 50 details
python bench/workers/folder.py loader-first FOLDER  # first 50 results of load_paths
python bench/workers/folder.py loader-all FOLDER    # every result of load_paths (the full load)
python bench/workers/folder.py loader-demand FOLDER # the browser's on-demand load, then 50 opens
python bench/workers/folder.py tui-fill FOLDER      # the TUI (headless) until every row is filled
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

START = time.perf_counter()


def floor(folder: str) -> dict[str, int]:
    """Read and parse every .json / .jsonl file under `folder`."""
    files = documents = 0
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in names:
            if name.startswith("."):
                continue
            path = os.path.join(root, name)
            if name.endswith(".json"):
                with open(path, "rb") as handle:
                    json.loads(handle.read())
                documents += 1
            elif name.endswith(".jsonl"):
                with open(path, "rb") as handle:
                    documents += sum(
                        1 for line in handle if line.strip() and json.loads(line) is not None
                    )
            else:
                continue
            files += 1
    return {"files": files, "documents": documents}


def rows(folder: str, headers_for: int | None) -> dict[str, int]:
    """The browser's rows: every file found, dumps named by time/processor/session; header
    keys read lazily for the first `headers_for` dumps (None: all)."""
    from bench.lazy_dump import read_head
    from inspector.sources.dump import _DUMP_NAME_RE  # the loader's own file-name rule
    from inspector.sources.loader import scan_folder

    found = scan_folder(Path(folder))
    table = []
    for path in found:
        match = _DUMP_NAME_RE.match(path.name)
        table.append(
            (int(match.group(1)) if match else 0, match.group(2) if match else "debug log", path)
        )
    table.sort(key=lambda row: row[0], reverse=True)  # newest first, as the loader orders them
    dumps = [row for row in table if row[0]]
    wanted = dumps if headers_for is None else dumps[:headers_for]
    headers = [read_head(path, rows=0).header for _, _, path in wanted]
    return {"files": len(found), "rows": len(table), "headers": len(headers)}


def entries(folder: str, details_for: int = 50) -> dict[str, int]:
    """The product's rows: `list_entries` (names + stat), header details of the first screen."""
    from inspector.sources.entries import entry_details, list_entries

    rows = list_entries([folder])
    filled = [entry_details(row) for row in rows[:details_for]]
    return {"rows": len(rows), "details": sum(1 for row in filled if row.details)}


def first_artifacts(folder: str, count: int | None = 50) -> dict[str, int]:
    """Today's loader: time until `load_paths` has yielded the first `count` results (None:
    all of them, the browser's full load, with the token cache as the TUI uses it)."""
    from inspector.sources.cache import TokenCache, cached_counters
    from inspector.sources.loader import load_paths

    cache = TokenCache()
    got = 0
    for _ in load_paths([folder], counters=cached_counters(cache)):
        got += 1
        if count is not None and got >= count:
            break
    cache.close()
    return {"rows": got}


def on_demand(folder: str, opens: int = 50) -> dict[str, float]:
    """The browser's load: every result of `load_paths(on_demand=True)` with the token
    cache, read in a thread beside this one as the TUI's load worker reads (helpers from a
    fork server, not forked, the server started first, as the app's factory starts it for
    a folder; the collector paused through the load, as the browser holds it,
    `BrowserLoading.hold_collector`, and what is alive frozen at its end, as the app
    freezes it), then `opens` dumps made whole one by one (what Enter on a row costs;
    spread over the folder), their mean in ms."""
    import threading

    from inspector.sources.fork_server import warm_fork_server

    # as `tui.app.create_app` does for a folder; the app's load starts later still (after
    # its first screen), so its helpers find the server at least as ready as these do
    warm_fork_server()

    from inspector.core.artifact import Artifact
    from inspector.sources.cache import TokenCache, cached_counters
    from inspector.sources.loader import load_paths
    from inspector.sources.pool import gc_paused

    cache = TokenCache()
    counters = cached_counters(cache)
    results: list[object] = []

    def read() -> None:
        with gc_paused():
            results.extend(load_paths([folder], counters=counters, on_demand=True))
            gc.freeze()

    reader = threading.Thread(target=read)
    reader.start()
    reader.join()
    loaded = time.perf_counter() - START
    dumps = [r for r in results if isinstance(r, Artifact) and r.whole is not None]
    chosen = dumps[:: max(1, len(dumps) // opens)][:opens]
    started = time.perf_counter()
    made = [item.whole() for item in chosen if item.whole is not None]
    opened = (time.perf_counter() - started) / max(len(made), 1)
    cache.close()
    return {"rows": len(results), "loaded": loaded, "opens": len(made), "open_ms": opened * 1e3}


#: The tick of the fill's watching loop, which runs in the app's event loop.
TICK = 0.02


def stalls(late: list[float]) -> dict[str, float]:
    """The longest time the app's event loop kept a 20 ms tick waiting (a key pressed then
    waited as long), the 99th percentile of those delays and their sum."""
    ordered = sorted(late) or [0.0]
    return {
        "stall_max": round(ordered[-1], 3),
        "stall_p99": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 3),
        "stalled": round(sum(ordered), 2),
    }


def tui_fill(folder: str, limit: float = 900.0) -> dict[str, Any]:
    """The app on `folder`, headless (`App.run_test`, 120x40), until the browser's load is
    done and every row is filled (the rows a person sees fill in, with the token cache),
    with how long the app's event loop stalled meanwhile (`stalls`): how long a key pressed
    during the fill may wait."""
    import asyncio

    from inspector.tui.app import create_app
    from inspector.tui.screens.browser import BrowserScreen

    async def fill() -> dict[str, Any]:
        app = create_app([folder])
        late: list[float] = []  # how late each 20 ms tick of this loop woke: the UI's stalls
        async with app.run_test(size=(120, 40)):
            while time.perf_counter() - START < limit:
                asked = time.perf_counter()
                await asyncio.sleep(TICK)
                late.append(time.perf_counter() - asked - TICK)
                screen = app.screen
                if isinstance(screen, BrowserScreen) and not screen.reading and screen.rows:
                    pending = sum(1 for row in screen.shown if row.outcome_kind == "pending")
                    return {"rows": len(screen.rows), "pending": pending, **stalls(late)}
        raise SystemExit(f"the browser was still loading after {limit:.0f} s")

    return asyncio.run(fill())


def main(argv: list[str]) -> None:
    """Dispatch on the mode and print the result with the elapsed time."""
    mode, folder = argv[0], argv[1]
    if mode == "floor":
        result = floor(folder)
    elif mode == "rows":
        result = rows(folder, 50)
    elif mode == "loader-first":
        result = first_artifacts(folder)
    elif mode == "loader-all":
        result = first_artifacts(folder, None)
    elif mode == "headers":
        result = rows(folder, None)
    elif mode == "entries":
        result = entries(folder)
    elif mode == "loader-demand":
        result = on_demand(folder)
    elif mode == "tui-fill":
        result = tui_fill(folder)
    else:
        raise SystemExit(f"unknown mode {mode}")
    print(json.dumps({**result, "seconds": time.perf_counter() - START}))


if __name__ == "__main__":
    main(sys.argv[1:])
