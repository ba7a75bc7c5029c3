"""How helper processes are started here: forked when this process runs one thread, else
from the fork server (forking beside another thread may copy a lock that thread holds).
Standard library only, so any layer may ask (the loader's pool, the text report's
helpers)."""

from __future__ import annotations

import multiprocessing
import os
import threading


def helper_start_method() -> str | None:
    """ "fork" or "forkserver" as above; None when this machine has one core or neither."""
    if (os.cpu_count() or 1) < 2:
        return None
    method = "fork" if threading.active_count() == 1 else "forkserver"
    return method if method in multiprocessing.get_all_start_methods() else None
