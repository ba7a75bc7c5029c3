"""`q` in the real `inspector` command ends the process without tearing down what the app
loaded (`cli.launch.run_tui` ends it with `os._exit` once the app has closed): nothing is
lost on the way out. Driven in a pseudo-terminal as a person runs it: the folder loaded,
a dump opened (its context rebuilt and counted), Esc, `q`; the exit status is 0, the
terminal was given back (the alternate screen left) and the token counts made are in the
token cache on disk. Behaviour only; the quit's time lives in bench/README.md."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import shutil
import sqlite3
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


class Terminal:
    """A child process on a pseudo-terminal of 120x40, its output kept."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=REPO, close_fds=True
        )
        os.close(slave)
        self.output = b""

    def read_until(self, wanted: bytes, seconds: float = 60.0) -> None:
        """Read the output until it holds `wanted` (fails at the deadline or the child's end)."""
        deadline = time.monotonic() + seconds
        while wanted not in self.output:
            assert time.monotonic() < deadline, f"{wanted!r} never shown"
            if not self._read(0.2):
                assert self.proc.poll() is None, f"ended before {wanted!r} was shown"

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return False
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # the child closed the terminal
            return False
        self.output += chunk
        return bool(chunk)

    def send(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def wait(self, seconds: float = 60.0) -> int:
        """The exit status, the output read to the end."""
        deadline = time.monotonic() + seconds
        while self.proc.poll() is None:
            assert time.monotonic() < deadline, "the process did not end"
            self._read(0.1)
        while self._read(0.05):
            pass
        os.close(self.master)
        return self.proc.returncode


@pytest.mark.skipif(sys.platform != "linux", reason="a Linux pseudo-terminal")
def test_q_ends_the_process_and_keeps_the_counts(tmp_path: Path) -> None:
    folder = tmp_path / "dumps"
    shutil.copytree(REPO / "sample_dumps", folder)
    cache = tmp_path / "cache"
    env = {
        **os.environ,
        "TERM": "xterm-256color",
        "CONTEXT_INSPECTOR_CACHE_DIR": str(cache),
        "CONTEXT_INSPECTOR_CONFIG_DIR": str(tmp_path / "config"),
        "CONTEXT_INSPECTOR_NO_RESULT_CACHE": "1",
    }
    term = Terminal([sys.executable, "-m", "inspector", str(folder)], env)
    try:
        term.read_until(b"compressed")  # rows loaded (placeholders say "reading")
        time.sleep(1.0)
        term.send(b"\r")  # open the newest row: its context rebuilt and counted
        term.read_until(b"re-evaluated")
        term.send(b"\x1b")
        time.sleep(0.5)
        term.send(b"q")
        code = term.wait()
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    assert code == 0
    assert term.output.rfind(b"\x1b[?1049l") > term.output.rfind(b"\x1b[?1049h")  # screen back
    with sqlite3.connect(cache / "token-counts-v1.sqlite3") as db:
        (pieces,) = db.execute("SELECT count(*) FROM pieces").fetchone()
    assert pieces > 0  # the rebuild's counts were written before the process ended
