"""Run the CLI in this process on a folder and judge what it printed.

`run_cli` calls `inspector.cli.main` with stdout and stderr captured as bytes (stdout strict
ASCII-incapable? no: a strict UTF-8 stream, so text that is not valid UTF-8 fails loudly) and a
SIGALRM deadline, so a hang (a FIFO opened for reading) ends the case as a failure instead of
the test run. `Verdict` names what went wrong: a traceback (any exception out of `main`, or
"Traceback" on stderr), a hang, an exit status other than 0/1, a line that is not UTF-8 JSON,
a broken file neither loaded nor reported (a silent skip), a good file no longer reported.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import signal
import sys
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.cli import main


class Hang(Exception):
    """The command ran past its deadline."""


@dataclass
class CliRun:
    """What one command did."""

    code: int | None
    stdout: bytes
    stderr: bytes
    crash: str | None = None
    hung: bool = False

    def lines(self) -> list[Any]:
        """stdout as JSON Lines (raises on a line that is not UTF-8 JSON)."""
        text = self.stdout.decode("utf-8")
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def _alarm(signum: int, frame: Any) -> None:
    raise Hang()


def run_cli(argv: list[str], deadline: float = 30.0) -> CliRun:
    """`inspector ARGV` in this process, with stdout/stderr captured and a deadline."""
    out, err = io.BytesIO(), io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", errors="strict", write_through=True)
    stderr = io.TextIOWrapper(err, encoding="utf-8", errors="strict", write_through=True)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, deadline)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = stdout, stderr
    run = CliRun(None, b"", b"")
    try:
        run.code = main(argv)
    except Hang:
        run.hung = True
    except BaseException:  # noqa: BLE001 - any escape is the failure being looked for
        run.crash = traceback.format_exc()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        sys.stdout, sys.stderr = saved
        with contextlib.suppress(ValueError):
            stdout.flush()
            stderr.flush()
        run.stdout, run.stderr = out.getvalue(), err.getvalue()
    return run


def tree_state(folder: Path) -> dict[str, tuple[str, int, int]]:
    """Every entry under `folder`: (sha256 or link target, mtime_ns, mode), never following links."""
    state: dict[str, tuple[str, int, int]] = {}
    for root, dirs, files in os.walk(folder, followlinks=False):
        for name in [*dirs, *files]:
            path = os.path.join(root, name)
            info = os.lstat(path)
            digest = ""
            if os.path.islink(path):
                digest = "link:" + os.readlink(path)
            elif os.path.isfile(path) and os.access(path, os.R_OK):
                with open(path, "rb") as handle:
                    digest = hashlib.sha256(handle.read()).hexdigest()
            state[path] = (digest, info.st_mtime_ns, info.st_mode)
    return state


@dataclass
class Verdict:
    """The failures found in one run (empty: the run held every promise)."""

    failures: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        """Record one failure."""
        self.failures.append(text)

    def __bool__(self) -> bool:
        return not self.failures


def judge(
    run: CliRun,
    broken: Sequence[str] = (),
    good: dict[str, int] | None = None,
    json_lines: bool = True,
) -> Verdict:
    """Check the promises: no traceback or hang, exit 0/1, UTF-8 JSON Lines, each `broken`
    source reported (loaded or an error), each `good` source still reported as often."""
    verdict = Verdict()
    if run.hung:
        verdict.add("hang")
        return verdict
    if run.crash or b"Traceback" in run.stderr:
        verdict.add("traceback: " + (run.crash or run.stderr.decode("utf-8", "replace"))[-1500:])
        return verdict
    if run.code not in (0, 1):
        verdict.add(f"exit {run.code}: {run.stderr[-400:]!r}")
    if not json_lines:
        try:
            run.stdout.decode("utf-8")
        except UnicodeDecodeError as error:
            verdict.add(f"output not UTF-8: {error}")
        return verdict
    try:
        lines = run.lines()
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        verdict.add(f"not UTF-8 JSON Lines: {error}")
        return verdict
    sources: dict[str, int] = {}
    for line in lines:
        if isinstance(line, dict) and isinstance(line.get("source"), str):
            sources[line["source"]] = sources.get(line["source"], 0) + 1
    for source in broken:
        if source not in sources:
            verdict.add(f"silent skip of {source!r}: {run.stderr[-300:]!r}")
    for source, count in (good or {}).items():
        if sources.get(source, 0) != count:
            verdict.add(f"good file {source!r} reported {sources.get(source, 0)}x, not {count}x")
    if any(line.get("error") is not None for line in lines if isinstance(line, dict)):
        if run.code != 1:
            verdict.add(f"an error line but exit {run.code}")
        for line in lines:
            if isinstance(line, dict) and "error" in line:
                if not {"error", "source", "where"} <= set(line):
                    verdict.add(f"error line without error/source/where: {line}")
    return verdict


@contextlib.contextmanager
def private_cache(folder: Path) -> Iterator[None]:
    """The token cache in `folder` for the duration (never the user's)."""
    old = os.environ.get("CONTEXT_INSPECTOR_CACHE_DIR")
    os.environ["CONTEXT_INSPECTOR_CACHE_DIR"] = str(folder)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("CONTEXT_INSPECTOR_CACHE_DIR", None)
        else:
            os.environ["CONTEXT_INSPECTOR_CACHE_DIR"] = old
