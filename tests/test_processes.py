"""Helper processes are forked only from a process running one thread, else started from
the fork server; none on one core (`inspector.processes`, which the loader's pool and the
text report's helpers both ask). Run in a fresh interpreter: pytest's own threads count."""

from __future__ import annotations

import multiprocessing
import os

import pytest

from tests.conftest import fresh_interpreter_json

_PROBE = """
import json, threading
from inspector.processes import helper_start_method

alone = helper_start_method()
stop = threading.Event()
thread = threading.Thread(target=stop.wait)
thread.start()
beside = helper_start_method()
stop.set()
thread.join()
print(json.dumps({"alone": alone, "beside": beside}))
"""


@pytest.mark.skipif(
    (os.cpu_count() or 1) < 2
    or not {"fork", "forkserver"} <= set(multiprocessing.get_all_start_methods()),
    reason="needs a second core and both start methods",
)
def test_forked_alone_and_from_the_fork_server_beside_a_thread() -> None:
    assert fresh_interpreter_json(_PROBE) == {"alone": "fork", "beside": "forkserver"}


def test_none_on_one_core(monkeypatch: pytest.MonkeyPatch) -> None:
    from inspector import processes

    monkeypatch.setattr(processes.os, "cpu_count", lambda: 1)
    assert processes.helper_start_method() is None
