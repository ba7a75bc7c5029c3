"""The fork server that a load beside other threads takes its helper processes from
(`pool.ChunkSharing`: forking a threaded process may copy a lock another thread holds), and
its early start. Imports nothing of the inspector, so it can be started before the loading
modules are imported. Must not import Textual or Rich.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from contextlib import suppress

#: What the server imports before it forks a helper (the header-level reader's module).
PRELOAD = ("inspector.sources.pool",)

_lock = threading.Lock()
_warmed = False


def can_serve() -> bool:
    """A second core to use and the forkserver start method."""
    return (os.cpu_count() or 1) > 1 and "forkserver" in multiprocessing.get_all_start_methods()


def warm_fork_server() -> None:
    """Start the fork server now, once per process, when it can serve: it is a fresh
    interpreter that imports `PRELOAD` (135-170 ms before a first helper could start; 27 ms
    from a running one), so a load that needs helpers later finds it ready. Returns at once,
    the server starting beside (30 MB, 0.1 CPU-s; it ends with this process). A server that
    cannot start is the helpers' to find out (`ChunkSharing` reads their files here then).

    Called by the TUI's app factory when a source is a folder, and by a header-level load
    beside other threads once its walk has found `POOL_MIN_FILES` files."""
    global _warmed
    with _lock:
        if _warmed:
            return
        _warmed = True
    if not can_serve():
        return
    from multiprocessing import forkserver

    multiprocessing.get_context("forkserver").set_forkserver_preload(list(PRELOAD))
    with suppress(OSError, RuntimeError, ValueError):
        forkserver.ensure_running()
