"""How helper processes are started here: forked when this process runs one thread, else
from the fork server (forking beside another thread may copy a lock that thread holds).
And `spread`: one function over many items on forked helpers, its answers in order.
Standard library only, so any layer may ask (the loader's pool, the text report's
helpers, the evaluations of `why --json` and `stats`)."""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # the pool itself is imported when a spread starts one (13 ms)
    from concurrent.futures import Future, ProcessPoolExecutor

T = TypeVar("T")
R = TypeVar("R")

#: Fewer items than this are worked here: starting and ending helpers costs ~30 ms.
SPREAD_MIN_ITEMS = 64
#: Items a helper works per job (one answer sent back per job).
CHUNK = 16
#: Jobs sent and not yet taken back, per helper, at most.
AHEAD = 4

#: The function and items of the running `spread`, inherited by its forked helpers.
_JOB: tuple[Callable[[Any], Any], Sequence[Any]] | None = None
_in_helper = False
#: (pid, descriptor) of `/proc/self/statm` as `resident_bytes` opened it.
_statm: tuple[int, int] | None = None
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def helper_start_method() -> str | None:
    """ "fork" or "forkserver" as above; None when this machine has one core or neither."""
    if (os.cpu_count() or 1) < 2:
        return None
    method = "fork" if threading.active_count() == 1 else "forkserver"
    return method if method in multiprocessing.get_all_start_methods() else None


def jobs_memory_holds(jobs: int, meminfo: str = "/proc/meminfo") -> int:
    """At most `jobs`, as many as the free memory holds of helpers that may each copy all
    of this process's memory (a helper touching an object writes its reference count, and
    so copies its page: measured 0.9x the parent's resident size for one that works every
    item), leaving a quarter of it free; at least 1. Where the kernel does not say how much
    memory is free (no `/proc/meminfo`): `jobs`."""
    resident = resident_bytes()
    try:
        with open(meminfo, encoding="ascii") as source:
            fields = dict(line.split(":", 1) for line in source if ":" in line)
        free = int(fields["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError, IndexError):
        return jobs
    if resident is None:
        return jobs
    return max(1, min(jobs, int(free * 0.75) // max(resident, 1)))


def resident_bytes() -> int | None:
    """This process's resident memory (Linux `/proc/self/statm`, kept open: 0.8 us a read
    against 6 us opened each time), or None."""
    global _statm
    try:
        if _statm is None or _statm[0] != os.getpid():  # (a fork's is its parent's)
            _statm = (os.getpid(), os.open("/proc/self/statm", os.O_RDONLY))
        return int(os.pread(_statm[1], 64, 0).split()[1]) * _PAGE
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def in_helper() -> bool:
    """True in a helper `spread` forked (it starts no helpers of its own)."""
    return _in_helper


def _start_helper(parent: int, setup: Callable[[], None] | None) -> None:
    """A helper's start: Ctrl-C left to the parent, and an end of its own when the parent
    ends first (killed, it would never read the answers: the helper would wait forever)."""
    global _in_helper
    _in_helper = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _end_with(parent)
    if setup is not None:
        setup()


def _end_with(parent: int) -> None:
    """Be killed when the process `parent` ends (Linux: `PR_SET_PDEATHSIG`; elsewhere a
    helper whose parent was killed ends when its pipe does, or waits)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # it ended before the call: nobody will read the answers
        os._exit(1)


def _work_chunk(bounds: tuple[int, int]) -> list[tuple[bool, Any]]:
    """In a helper: (True, answer) per item of the job, or (False, None) where the function
    raised (the parent works that item again, so the error is raised there, as its own)."""
    assert _JOB is not None
    work, items = _JOB
    answers: list[tuple[bool, Any]] = []
    for index in range(*bounds):
        try:
            answers.append((True, work(items[index])))
        except Exception:  # noqa: BLE001 - worked again in the parent, which raises it
            answers.append((False, None))
    return answers


def spread(
    work: Callable[[T], R],
    items: Sequence[T],
    jobs: int,
    setup: Callable[[], None] | None = None,
) -> Iterator[R]:
    """`work(item)` for each item, in order, worked by this process and helper processes
    forked from it, `jobs` in all but never more than the cores nor the jobs of `CHUNK`
    items to take (they inherit `work` and `items`: nothing is pickled but the answers;
    this process works every n-th job in its turn, between what the consumer does).

    The helpers run `setup` first, and never start helpers of their own (`in_helper`).
    Everything is worked here, in turn, with fewer than `SPREAD_MIN_ITEMS` items, fewer
    than 2 jobs, in a helper, or when forking is unsafe or unavailable
    (`helper_start_method`). An item whose work raises in a helper is worked again here, so
    its exception is raised here after the answers before it, as worked here alone; a job
    whose helper died, or whose answer could not be sent, is worked here, and after a
    helper's death everything left. The cyclic collector's objects are frozen while helpers
    run, so that collections in them do not copy every page of this process."""
    global _JOB
    # never more processes than cores, nor helpers than the jobs they would take
    helpers = min(jobs, os.cpu_count() or 1, -(-len(items) // CHUNK)) - 1
    if (
        helpers < 1
        or len(items) < SPREAD_MIN_ITEMS
        or _in_helper
        or _JOB is not None  # a spread inside a spread's consumer: no nesting of helpers
        or helper_start_method() != "fork"
    ):
        yield from map(work, items)
        return
    from concurrent.futures import ProcessPoolExecutor

    _JOB = (work, items)
    thawed = gc.get_freeze_count() == 0  # (what another froze stays frozen after)
    if thawed:
        gc.freeze()
    pool: ProcessPoolExecutor | None = None
    try:
        try:
            pool = ProcessPoolExecutor(
                helpers,
                mp_context=multiprocessing.get_context("fork"),
                initializer=_start_helper,
                initargs=(os.getpid(), setup),
            )
        except (OSError, ValueError):
            pool = None
        yield from _in_order(work, items, pool, helpers + 1)
    finally:
        _JOB = None
        if pool is not None:
            _end_pool(pool)
        if thawed:
            gc.unfreeze()


def _end_pool(pool: ProcessPoolExecutor) -> None:
    """Shut the helpers down; those a failed start left waiting for work (their pool has no
    manager to tell them to stop) are ended here, or exiting would wait for them."""
    started = dict(getattr(pool, "_processes", None) or {})  # the executor's own record
    pool.shutdown(wait=True, cancel_futures=True)
    for process in started.values():
        if process.is_alive():
            process.terminate()
            process.join()


def _in_order(
    work: Callable[[T], R], items: Sequence[T], pool: ProcessPoolExecutor | None, jobs: int
) -> Iterator[R]:
    """The answers of `spread`, job by job: every `jobs`-th job is worked here, in its
    turn, the others by the helpers (at most `AHEAD` each sent ahead), or here when their
    helper could not answer."""
    from concurrent.futures.process import BrokenProcessPool

    chunks = [(start, min(start + CHUNK, len(items))) for start in range(0, len(items), CHUNK)]
    sent: dict[int, Future[list[tuple[bool, Any]]]] = {}
    unsent = 0  # the first chunk not yet sent nor passed over
    for number, (start, end) in enumerate(chunks):
        while pool is not None and unsent < len(chunks) and len(sent) < AHEAD * (jobs - 1):
            if unsent % jobs:  # not this process's own
                try:  # the first sends start the helpers: a fork may fail (no room)
                    sent[unsent] = pool.submit(_work_chunk, chunks[unsent])
                except (BrokenProcessPool, RuntimeError, OSError):
                    pool = None
                    sent.clear()
                    break
            unsent += 1
        future = sent.pop(number, None)
        answers: list[tuple[bool, Any]] = [(False, None)] * (end - start)
        if future is not None:
            try:
                answers = future.result()
            except BrokenProcessPool:  # a helper died: everything left is worked here
                pool = None
                sent.clear()
            except Exception:  # noqa: BLE001 - an answer that could not travel: worked here
                pass
        for index, (done, answer) in zip(range(start, end), answers, strict=True):
            yield answer if done else work(items[index])
