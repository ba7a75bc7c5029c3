"""`inspector [SOURCE ...] [TUNING]`: open the TUI through the app factory.

Flags are checked before Textual is imported, so a bad value is a usage error (exit 2).
`q` quits whatever a worker thread is doing: a thread still busy a moment after the app
closed (reading a huge file, say) does not keep the process alive, and the process ends
without tearing down what the app loaded.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
import time

from inspector.cli.common import check_overrides, default_sources, tuning_overrides


def run_tui(args: argparse.Namespace, end_process: bool = False) -> int:
    """Open the app on the sources (or the defaults) with the tuning flags as starting values;
    its exit status. `end_process` (the console script): end the process once the app has
    closed, without tearing down what it loaded."""
    overrides = tuning_overrides(args)
    check_overrides(overrides)
    sources = list(args.sources) or default_sources()
    from inspector.tui.app import create_app

    app = create_app(sources, overrides)
    app.run()
    code = int(app.return_code or 0)
    _let_threads_finish(grace=1.0)  # a worker thread cannot be interrupted; the user asked to quit
    if not end_process:
        return code
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(ValueError, OSError):
            stream.flush()
    # The app has closed its files (`InspectorApp.on_unmount`: the token cache written and
    # closed); what it loaded is left to the system, not torn down object by object: after
    # a 50,500-file folder the interpreter's final collection and teardown of 6.4 million
    # objects took 11.6 s after `q`.
    os._exit(code)


def _let_threads_finish(grace: float) -> None:
    """Give the threads other than this one up to `grace` seconds in all to end (any still
    running end with the process)."""
    deadline = time.monotonic() + grace
    for thread in threading.enumerate():
        if thread is threading.current_thread() or thread.daemon:
            continue
        thread.join(max(deadline - time.monotonic(), 0))
