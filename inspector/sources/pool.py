"""A header-level load's files read on every CPU core: chunks of jobs shared between this
process and forked helper processes (`ChunkSharing`), each job one `header_job`.
Must not import Textual or Rich.
"""

from __future__ import annotations

import gc
import multiprocessing
import queue as queue_module
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from inspector.sources.classify import FileLoad, Skipped, load_one

#: A header-level load (`contexts=False`) reads files in a process pool from this many files.
POOL_MIN_FILES = 64


_pause_lock = threading.Lock()
_pauses = 0
_resume = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block (nested and threaded uses counted:
    it is turned back on when the last block ends, if it was on before the first).

    A load builds objects that all stay alive; each young collection would walk those
    made since the last one, and a third of a big folder's read went to that. Freed
    memory is the same: only reference cycles wait, until the collector runs again."""
    global _pauses, _resume
    with _pause_lock:
        if _pauses == 0:
            _resume = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0 and _resume:
                gc.enable()


def header_job(job: tuple[Path, int, bool, int]) -> FileLoad:
    """Worker: one file read for a header-level load (dumps stripped of their messages)."""
    path, group, explicit, max_file_bytes = job
    skips: list[Skipped] = []
    load = load_one(path, group, explicit, max_file_bytes, skips, header_only=True)
    load.skips = skips
    return load


class ChunkSharing:
    """Header jobs shared in chunks between this process and forked helper processes.

    Helpers start on entry (forked: they inherit the jobs, nothing is pickled but their
    results) and take chunks from a shared counter; `results()` then takes chunks in this
    process too and yields every load, its own and the helpers'. Best-effort: a helper
    that cannot start or dies is ignored, and the caller reads what is missing itself.
    """

    def __init__(self, jobs: list[tuple[Path, int, bool, int]], helpers: int) -> None:
        self.jobs = jobs
        self.helpers = helpers if jobs else 0
        self.chunk = max(1, len(jobs) // 64)
        self.processes: list[Any] = []

    def __enter__(self) -> ChunkSharing:
        if not self.helpers:
            return self
        context = multiprocessing.get_context("fork")
        try:
            self.lock = context.Lock()
            self.next = context.RawValue("q", 0)
            self.queue = context.Queue()
            for _ in range(self.helpers):
                process = context.Process(target=self._helper, daemon=True)
                process.start()
                self.processes.append(process)
        except (OSError, RuntimeError):
            self.helpers = 0
        return self

    def _take(self) -> int:
        with self.lock:
            start = int(self.next.value)
            self.next.value = start + self.chunk
        return start

    def _helper(self) -> None:
        """In a helper process: read chunks until none are left, then say so (None)."""
        try:
            gc.disable()  # a helper lives only for its chunks (see `gc_paused`)
            while (start := self._take()) < len(self.jobs):
                self.queue.put([header_job(job) for job in self.jobs[start : start + self.chunk]])
        finally:
            self.queue.put(None)
            self.queue.close()
            self.queue.join_thread()

    def results(self) -> Iterator[FileLoad]:
        """Take chunks here until none are left, then collect what the helpers read."""
        if not self.processes:
            return
        while (start := self._take()) < len(self.jobs):
            for job in self.jobs[start : start + self.chunk]:
                yield header_job(job)
        done = 0
        while done < len(self.processes):
            try:
                batch = self.queue.get(timeout=0.2)
            except queue_module.Empty:
                if not any(process.is_alive() for process in self.processes):
                    return
                continue
            if batch is None:
                done += 1
            else:
                yield from batch

    def __exit__(self, *exc_info: object) -> None:
        for process in self.processes:
            process.join(timeout=1.0)
            if process.is_alive():
                process.terminate()
