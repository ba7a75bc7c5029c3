"""A header-level load's files read on every CPU core: chunks of jobs shared between this
process and forked helper processes (`ChunkSharing`), each job one `header_job`.

What crosses between processes is kept to plain values (`packed` / `unpacked`): a helper's
load travels without its path (the parent has it, by the job's index) and with each dump
as a tuple of its fields, since rebuilding a `Path` or a slotted dataclass from a pickle
costs the parent (the process every result waits for) three times as much as a tuple.
Must not import Textual or Rich.
"""

from __future__ import annotations

import gc
import multiprocessing
import queue as queue_module
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import fields
from operator import attrgetter
from pathlib import Path
from typing import Any

from inspector.sources.classify import FileLoad, Skipped, load_one
from inspector.sources.dump import DumpFile, plain_dump
from inspector.sources.fork_server import PRELOAD

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
    _pause()
    try:
        yield
    finally:
        _unpause()


def _pause() -> None:
    global _pauses, _resume
    with _pause_lock:
        if _pauses == 0:
            _resume = gc.isenabled()
            gc.disable()
        _pauses += 1


def _unpause() -> None:
    global _pauses
    with _pause_lock:
        _pauses -= 1
        if _pauses == 0 and _resume:
            gc.enable()


class CollectorHold:
    """A `gc_paused` pause that spans events, not a block: from `hold()` until `release()`
    (each idempotent: a second `hold` or `release` does nothing). The browser holds one from
    its listing until its rows are in and the heap frozen: the UI thread makes each row's
    cells as its batches come, and with the collector on, its full collections walked every
    cell made so far (5.3 s of a 50,500-file folder's 24 s fill)."""

    def __init__(self) -> None:
        self._held = False
        self._lock = threading.Lock()

    @property
    def held(self) -> bool:
        return self._held

    def hold(self) -> None:
        with self._lock:
            if not self._held:
                _pause()
                self._held = True

    def release(self) -> None:
        with self._lock:
            if self._held:
                self._held = False
                _unpause()


def freeze_heap() -> bool:
    """Take every object alive now out of the cyclic collector's scans (`gc.freeze`), when
    this process runs no other thread and has nothing frozen yet; True when it did (then
    `thaw_heap` when done).

    A load holds what it read (records, runs, dump headers: 170,000 objects for 5,000
    dumps) while it makes its results; the first young, middle and full collections after
    the read would walk all of it again (a fifth of the time a header-level load's results
    take; 55 ms of a 5,000-dump full load's 2 s).
    Frozen objects are still freed when their last reference goes; only cycles among them
    wait for `thaw_heap`. Never in a threaded process: the TUI freezes its own heap
    (`tui/app.py`), and unfreezing is global."""
    if threading.active_count() != 1 or gc.get_freeze_count():
        return False
    gc.freeze()
    return True


def thaw_heap() -> None:
    """Undo `freeze_heap`: the frozen objects are scanned again (by the next full collection)."""
    gc.unfreeze()


def _take(lock: Any, counter: Any, chunk: int) -> int:
    """The first job of the next chunk (all processes count on one shared value)."""
    with lock:
        start = int(counter.value)
        counter.value = start + chunk
    return start


def _helper(
    jobs: list[tuple[Path, int, bool, int]], chunk: int, lock: Any, counter: Any, queue: Any
) -> None:
    """In a helper process: read chunks until none are left, then say so (None)."""
    try:
        gc.disable()  # a helper lives only for its chunks (see `gc_paused`)
        while (start := _take(lock, counter, chunk)) < len(jobs):
            part = jobs[start : start + chunk]
            queue.put((start, [packed(header_job(job)) for job in part]))
    finally:
        queue.put(None)
        queue.close()
        queue.join_thread()


def header_job(job: tuple[Path, int, bool, int]) -> FileLoad:
    """Worker: one file read for a header-level load (dumps stripped of their messages)."""
    path, group, explicit, max_file_bytes = job
    skips: list[Skipped] = []
    load = load_one(path, group, explicit, max_file_bytes, skips, header_only=True)
    load.skips = skips
    return load


#: FileLoad fields a helper sends, in their order: every field after path, group and
#: explicit, its first three (the job gives those back).
_SENT_FIELDS = tuple(f.name for f in fields(FileLoad))[3:]
_DUMP_FIELDS = tuple(f.name for f in fields(DumpFile))
#: Each read in one call (a C loop, not a Python one per field: a helper packs 50,000 loads).
_sent_values = attrgetter(*_SENT_FIELDS)
_dump_values = attrgetter(*_DUMP_FIELDS)
_DUMPS_AT = _SENT_FIELDS.index("dumps")


def packed(load: FileLoad) -> tuple[Any, ...]:
    """A helper's load as plain values: its fields after path, group and explicit, each
    dump as the tuple of its own fields (see the module docstring)."""
    values = list(_sent_values(load))
    values[_DUMPS_AT] = [_dump_values(dump) for dump in load.dumps]
    return tuple(values)


def unpacked(values: tuple[Any, ...], job: tuple[Path, int, bool, int]) -> FileLoad:
    """The FileLoad `packed` gave `values` for, read by `job` (fields in their order)."""
    sent = list(values)
    sent[_DUMPS_AT] = [plain_dump(*dump) for dump in sent[_DUMPS_AT]]
    return FileLoad(job[0], job[1], job[2], *sent)


class ChunkSharing:
    """Header jobs shared in chunks between this process and helper processes.

    Helpers start on entry and take chunks from a shared counter; `results()` then takes
    chunks in this process too and yields every load with its job's index, its own and the
    helpers'. A helper is forked from this process (it inherits the jobs, nothing is
    pickled but its results, `packed`) when no other thread runs here; else (the browser's
    load, beside the UI thread: forking a threaded process may copy a lock another thread
    holds) from a fresh single-threaded server process (`forkserver`, started once per
    process, the loading modules imported there), which is sent the jobs. Best-effort: a
    helper that cannot start or dies is ignored, and the caller reads what is missing itself.
    """

    def __init__(
        self, jobs: list[tuple[Path, int, bool, int]], helpers: int, method: str = "fork"
    ) -> None:
        self.jobs = jobs
        self.helpers = helpers if jobs else 0
        self.method = method
        self.chunk = max(1, len(jobs) // 64)
        self.processes: list[Any] = []
        #: Helpers that said they are done (a None in the queue).
        self.finished = 0
        #: Starts the fork server's helpers while this process reads (None: forked here).
        self._starter: threading.Thread | None = None

    def __enter__(self) -> ChunkSharing:
        if not self.helpers:
            return self
        context = multiprocessing.get_context(self.method)
        if self.method == "forkserver":
            context.set_forkserver_preload(list(PRELOAD))
        try:
            self.lock = context.Lock()
            self.next = context.RawValue("q", 0)
            self.queue = context.Queue()
        except (OSError, RuntimeError, ValueError):
            self.helpers = 0
            return self
        if self.method == "fork":
            self._start(context)
        else:  # the server's start (~0.25 s) overlaps this process's own reading
            self._starter = threading.Thread(target=self._start, args=(context,), daemon=True)
            self._starter.start()
        return self

    def _start(self, context: Any) -> None:
        """Start the helpers (those that start: one that cannot is left out)."""
        shared = (self.jobs, self.chunk, self.lock, self.next, self.queue)
        try:
            for _ in range(self.helpers):
                process = context.Process(target=_helper, args=shared, daemon=True)
                process.start()
                self.processes.append(process)
        except (OSError, RuntimeError, ValueError):
            if self._starter is None and not self.processes:
                self.helpers = 0

    def _take(self) -> int:
        return _take(self.lock, self.next, self.chunk)

    def results(self) -> Iterator[tuple[int, FileLoad]]:
        """(job index, load): chunks taken here until none are left, and between them what
        the helpers have sent so far (unpacked while they still read, not all at the end,
        when they wait for nothing), then the rest of what they read."""
        if not self.helpers:
            return
        while (start := self._take()) < len(self.jobs):
            for index in range(start, min(start + self.chunk, len(self.jobs))):
                yield index, header_job(self.jobs[index])
            yield from self._queued()
        if self._starter is not None:
            self._starter.join()  # every helper that took a chunk is then in `processes`
        while self.finished < len(self.processes):
            try:
                batch = self.queue.get(timeout=0.2)
            except queue_module.Empty:
                if not any(process.is_alive() for process in self.processes):
                    return
                continue
            yield from self._unpacked(batch)

    def _queued(self) -> Iterator[tuple[int, FileLoad]]:
        """The loads of the batches already queued (none waited for)."""
        while self.finished < len(self.processes):
            try:
                batch = self.queue.get_nowait()
            except queue_module.Empty:
                return
            yield from self._unpacked(batch)

    def _unpacked(self, batch: tuple[int, list[Any]] | None) -> Iterator[tuple[int, FileLoad]]:
        """A helper's batch as (job index, load); None: that helper is done."""
        if batch is None:
            self.finished += 1
            return
        start, loads = batch
        for index, values in enumerate(loads, start):
            yield index, unpacked(values, self.jobs[index])

    def __exit__(self, *exc_info: object) -> None:
        if self._starter is not None:
            self._starter.join()
        for process in self.processes:
            process.join(timeout=1.0)
            if process.is_alive():
                process.terminate()
