"""`processes.spread`: one function over many items on forked helpers, the answers in
order and equal to working them here; an item that raises raises here, after the answers
before it; a helper that dies, or an answer that cannot travel, is worked here; no helper
for a few items, one job, beside a thread or inside a helper; a helper counts alone
(`cache.compute_pieces`), and its token cache writes through a connection of its own.
Each case runs in a fresh interpreter: pytest's own threads would make `spread` work
everything here (`helper_start_method`)."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, fresh_interpreter_json

pytestmark = pytest.mark.skipif(
    (os.cpu_count() or 1) < 2 or "fork" not in multiprocessing.get_all_start_methods(),
    reason="needs a second core and the fork start method",
)

_COMMON = """
import json, os, sys, threading
from inspector import processes
from inspector.processes import in_helper, spread

PARENT = os.getpid()

def answer(item):
    return item * item, os.getpid(), in_helper()

def report(answers):
    print(json.dumps({
        "values": [a[0] for a in answers],
        "helpers": sorted({a[1] for a in answers if a[1] != PARENT}),
        "here": sum(a[1] == PARENT for a in answers),
        "marked": all(a[2] == (a[1] != PARENT) for a in answers),
    }))
"""


def _run(body: str, *args: str) -> dict[str, Any]:
    return fresh_interpreter_json(_COMMON + body, *args)


@pytest.mark.parametrize("jobs", [2, 3, 64])
def test_answers_come_in_order_from_this_process_and_the_helpers(jobs: int) -> None:
    got = _run(f"report(list(spread(answer, range(500), {jobs})))")
    assert got["values"] == [n * n for n in range(500)]
    processes = min(jobs, os.cpu_count() or 1)  # never more than the cores
    assert len(got["helpers"]) == processes - 1  # every helper worked
    # and this process every `processes`-th job of 16 items (500 items: 32 jobs, the last of 4)
    assert got["here"] == 16 * len(range(0, 31, processes))
    assert got["marked"]  # `in_helper` is True in the helpers only


def test_no_more_helpers_than_jobs_to_take() -> None:
    got = _run(
        "import multiprocessing\n"
        "processes.os.cpu_count = lambda: 16\n"
        "seen = []\n"
        "for item in spread(answer, range(70), 16):\n"
        "    seen.append(item)\n"
        "    started = len(multiprocessing.active_children())\n"
        "report(seen)\n"
    )
    # 70 items are 5 jobs of 16: this process and 4 helpers, not 15
    assert len(got["helpers"]) <= 4
    assert got["values"] == [n * n for n in range(70)]


def _run_bounded(code: str, seconds: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _COMMON + code],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=seconds,
    )


def test_a_fork_that_fails_leaves_the_work_done_here_and_no_helper_waiting() -> None:
    done = _run_bounded(
        "import multiprocessing.popen_fork as popen_fork\n"
        "processes.os.cpu_count = lambda: 8\n"
        "forks = []\n"
        "real_fork = os.fork\n"
        "def failing_fork():\n"
        "    forks.append(1)\n"
        "    if len(forks) > 1:\n"
        "        raise BlockingIOError(11, 'Resource temporarily unavailable')\n"
        "    return real_fork()\n"
        "popen_fork.os.fork = failing_fork\n"
        "report(list(spread(answer, range(400), 4)))\n"
    )
    assert done.returncode == 0, done.stderr  # and it ended: nothing waited for a helper
    got = json.loads(done.stdout)
    assert got["values"] == [n * n for n in range(400)]
    assert got["here"] == 400  # the one helper that started took no job before it ended


def _state(pid: int) -> str | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    return next(line.split()[1] for line in status.splitlines() if line.startswith("State:"))


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_helpers_end_when_their_parent_is_killed(tmp_path: Path) -> None:
    marks = tmp_path / "helpers"
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _COMMON + "import time\n"
            "def slow(item):\n"
            "    if in_helper():\n"
            "        with open(sys.argv[1], 'a') as out:\n"
            "            out.write(f'{os.getpid()}\\n')\n"
            "    time.sleep(0.05)\n"
            "    return item\n"
            "list(spread(slow, range(2000), 2))\n",
            str(marks),
        ],
        cwd=REPO,
    )
    try:
        deadline = time.monotonic() + 30
        while not (marks.exists() and marks.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        helper = int(marks.read_text().split()[0])
        parent.kill()
        parent.wait(10)
        deadline = time.monotonic() + 10
        while _state(helper) not in (None, "Z") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _state(helper) in (None, "Z")  # gone (or a zombie its new parent may reap)
    finally:
        parent.kill()


@pytest.mark.parametrize(
    ("call", "why"),
    [
        ("spread(answer, range(processes.SPREAD_MIN_ITEMS - 1), 2)", "few items"),
        ("spread(answer, range(500), 1)", "one job"),
        ("spread(answer, range(500), 0)", "no job"),
    ],
)
def test_no_helper_for_few_items_or_one_job(call: str, why: str) -> None:
    got = _run(f"report(list({call}))")
    assert got["helpers"] == [], why
    assert got["values"] == [n * n for n in range(len(got["values"]))]


def test_no_helper_beside_a_thread() -> None:
    got = _run(
        "stop = threading.Event()\n"
        "thread = threading.Thread(target=stop.wait)\n"
        "thread.start()\n"
        "try:\n"
        "    report(list(spread(answer, range(200), 2)))\n"
        "finally:\n"
        "    stop.set()\n"
        "    thread.join()\n"
    )
    assert got["helpers"] == []
    assert got["here"] == 200


def test_no_nested_helpers() -> None:
    got = _run(
        "def inner(item):\n"
        "    pids = {a[1] for a in spread(answer, range(100), 2)}\n"
        "    return in_helper(), pids == {os.getpid()}\n"
        "print(json.dumps({'seen': sorted(set(spread(inner, range(80), 2)))}))\n"
    )
    # each inner spread worked alone, in the process (helper or not) of its outer item
    assert got == {"seen": [[False, True], [True, True]]}


def test_an_item_that_raises_raises_here_after_the_answers_before_it() -> None:
    got = _run(
        "def failing(item):\n"
        "    if item == 150:\n"
        '        raise ValueError(f\'item {item} in {"a helper" if in_helper() else "here"}\')\n'
        "    return answer(item)\n"
        "seen = []\n"
        "try:\n"
        "    for got in spread(failing, range(400), 2):\n"
        "        seen.append(got)\n"
        "except ValueError as error:\n"
        "    print(json.dumps({'seen': [s[0] for s in seen], 'error': str(error)}))\n"
    )
    assert got["seen"] == [n * n for n in range(150)]
    assert got["error"] == "item 150 in here"  # raised by the parent's own work of it


def test_a_helper_that_dies_leaves_its_work_done_here() -> None:
    got = _run(
        "def deadly(item):\n"
        "    if item == 90 and in_helper():  # the second job of a helper\n"
        "        os._exit(3)\n"
        "    return answer(item)\n"
        "report(list(spread(deadly, range(400), 2)))\n"
    )
    assert got["values"] == [n * n for n in range(400)]
    assert got["here"] > 200  # its own half, and the jobs from the death on


def test_an_answer_that_cannot_travel_is_worked_here() -> None:
    got = _run(
        "def lock_for(item):\n"
        "    value = answer(item)\n"
        "    return (value, threading.Lock()) if item == 20 else (value, None)\n"
        "answers = list(spread(lock_for, range(300), 2))\n"
        "report([a[0] for a in answers])\n"
    )
    assert got["values"] == [n * n for n in range(300)]
    # its own half (300 items: 19 jobs, the last of 12), and the helper's job holding the lock
    assert got["here"] == 16 * 9 + 12 + 16
    assert len(got["helpers"]) == 1


def test_the_collectors_freeze_is_undone_and_anothers_kept() -> None:
    got = _run(
        "import gc\n"
        "seen = []\n"
        "def frozen(item):\n"
        "    return gc.get_freeze_count() > 0\n"
        "during = any(spread(frozen, range(100), 2))\n"
        "after = gc.get_freeze_count()\n"
        "gc.freeze()\n"
        "theirs = gc.get_freeze_count()\n"
        "list(spread(answer, range(100), 2))\n"
        "print(json.dumps({'during': during, 'after': after, 'kept': gc.get_freeze_count() >= theirs > 0}))\n"
    )
    assert got == {"during": True, "after": 0, "kept": True}


def test_setup_runs_in_each_helper_first() -> None:
    got = _run(
        "mark = ['parent']\n"
        "def setup():\n"
        "    mark[0] = f'set up in {os.getpid()}'\n"
        "def marked(item):\n"
        "    return in_helper(), mark[0] == f'set up in {os.getpid()}'\n"
        "seen = set(spread(marked, range(200), 2, setup))\n"
        "print(json.dumps({'seen': sorted(seen), 'parent': mark[0]}))\n"
    )
    # set up in the helper, before its first item; not here
    assert got == {"seen": [[False, False], [True, True]], "parent": "parent"}


def test_a_helper_counts_in_its_own_process(monkeypatch: pytest.MonkeyPatch) -> None:
    from inspector import processes
    from inspector.core.messages import Message
    from inspector.core.tokens import TokenCounter
    from inspector.sources import cache

    pools: list[int] = []

    def no_pool(*args: Any) -> list[int]:
        pools.append(args[-1])
        return []

    monkeypatch.setattr(cache, "_fork_pool", no_pool)
    counter = TokenCounter("len_div_4")
    messages = [Message(role="user", content="word " * 40_000) for _ in range(8)]
    alone = [counter.compute_piece(m) for m in messages]
    monkeypatch.setattr(processes, "_in_helper", True)
    assert cache.compute_pieces(counter, messages) == alone
    assert cache.compute_pieces(counter, messages, workers=2) == alone
    assert pools == []  # no pool asked for, even when two workers were


def test_helpers_write_counts_to_the_cache_through_their_own_connection(tmp_path: Path) -> None:
    got = _run(
        "from inspector.sources.cache import TokenCache\n"
        "store = TokenCache(sys.argv[1])\n"
        "store.put_many([(b'parent', 1)])\n"
        "store.flush()\n"
        "first = store._connection\n"
        "def put(item):\n"
        "    store.put_many([(b'key %d' % item, item)])\n"
        "    store.flush()\n"
        "    return in_helper(), store._connection is first, store._connection is None\n"
        "seen = sorted(set(spread(put, range(200), 2, store.after_fork)))\n"
        "found = store.get_many([b'key %d' % n for n in range(200)] + [b'parent'])\n"
        "print(json.dumps({'seen': seen, 'found': len(found), 'same': store._connection is first}))\n",
        str(tmp_path / "cache"),
    )
    # the helper wrote through a connection of its own, this process through its first one
    assert got == {"seen": [[False, True, False], [True, False, False]], "found": 201, "same": True}


def _meminfo(tmp_path: Path, text: str) -> str:
    path = tmp_path / "meminfo"
    path.write_text(text)
    return str(path)


def test_the_free_memory_bounds_the_jobs(tmp_path: Path) -> None:
    from inspector.processes import jobs_memory_holds

    with open("/proc/self/statm", encoding="ascii") as source:
        resident = int(source.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    kib = resident // 1024
    # room for three and a half copies of this process (a quarter of the free memory left):
    # three helpers
    three = _meminfo(tmp_path, f"MemTotal: 99 kB\nMemAvailable: {kib * 14 // 3} kB\n")
    assert jobs_memory_holds(8, three) == 3
    assert jobs_memory_holds(2, three) == 2
    # less than one copy: one job, everything worked here
    assert jobs_memory_holds(4, _meminfo(tmp_path, f"MemAvailable: {kib // 2} kB\n")) == 1
    # the kernel does not say: as asked
    assert jobs_memory_holds(4, str(tmp_path / "missing")) == 4
    assert jobs_memory_holds(4, _meminfo(tmp_path, "MemFree: 10 kB\n")) == 4
    assert jobs_memory_holds(4, _meminfo(tmp_path, "MemAvailable: lots\n")) == 4


def test_the_resident_size_is_this_processs_own() -> None:
    got = _run(
        "from inspector.processes import resident_bytes\n"
        "before = resident_bytes()\n"
        "held = bytearray(200 * 1024 * 1024)\n"
        "held[::4096] = b'x' * len(held[::4096])  # touched: resident\n"
        "after = resident_bytes()\n"
        "read, write = os.pipe()\n"
        "child = os.fork()\n"
        "if child == 0:\n"
        "    resident_bytes()\n"
        "    os.write(write, str(processes._statm[0] == os.getpid()).encode())\n"
        "    os._exit(0)\n"
        "os.waitpid(child, 0)\n"
        "mine = os.read(read, 16).decode()\n"
        "print(json.dumps({'grew': after - before, 'child': mine}))\n"
    )
    assert got["grew"] >= 190 * 1024 * 1024
    assert got["child"] == "True"  # a fork reads its own file, not its parent's
