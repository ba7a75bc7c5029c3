"""`inspector [SOURCE ...] [TUNING]`: open the TUI through the app factory.

Flags are checked before Textual is imported, so a bad value is a usage error (exit 2).
`q` quits whatever a worker thread is doing: a thread still busy a moment after the app
closed (reading a huge file, say) does not keep the process alive.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
import time

from inspector.cli.common import check_overrides, default_sources, tuning_overrides


def run_tui(args: argparse.Namespace) -> int:
    """Open the app on the sources (or the defaults) with the tuning flags as starting values."""
    overrides = tuning_overrides(args)
    check_overrides(overrides)
    sources = list(args.sources) or default_sources()
    from inspector.tui.app import create_app

    app = create_app(sources, overrides)
    app.run()
    code = int(app.return_code or 0)
    if _busy_threads(grace=1.0):
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(ValueError, OSError):
                stream.flush()
        os._exit(code)  # a worker thread cannot be interrupted; the user asked to quit
    return code


def _busy_threads(grace: float) -> bool:
    """True when threads other than this one are still running after `grace` seconds."""
    deadline = time.monotonic() + grace
    for thread in threading.enumerate():
        if thread is threading.current_thread() or thread.daemon:
            continue
        thread.join(max(deadline - time.monotonic(), 0))
    return any(
        t.is_alive() and not t.daemon and t is not threading.current_thread()
        for t in threading.enumerate()
    )
