"""Issue 16, streaming: a big debug log and a dump with one huge message, in bounded memory.

* a JSON Lines debug log of `--mb` MB (default 60; the issue's case is 300): one session,
  threshold checks every second, every tenth one hitting and followed by a span_built and
  a retry; `inspector why --json LOG` and `inspector stats --json LOG` as whole processes,
  against a floor process that reads and parses every line once, keeping nothing;
* a dump whose size is one tool message of `--message-mb` MB (default 40):
  `inspector why --json DUMP` against a floor that parses the file once.

Peak memory is each process's max RSS (wait4 rusage of a fresh child), reported as a ratio
to the file's size (goal <= 2x); time as a ratio to the floor (goal <= 1.5x).

    python -m bench.bench_fleet_stream [--mb 60] [--message-mb 40] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from bench.common import PYTHON, REPO_ROOT, Result

_KEY = {"processor": "CurrentRoundCompressor", "session_id": "big/s1", "context_id": "ctx_big"}
_FLOOR = (
    "import json, sys\n"
    "with open(sys.argv[1], 'rb') as f:\n"
    "    if sys.argv[2] == 'lines':\n"
    "        for line in f:\n"
    "            json.loads(line) if line.strip() else None\n"
    "    else:\n"
    "        json.loads(f.read())\n"
)


def write_log(path: Path, megabytes: float, seed: int = 5) -> Path:
    """A debug log of about `megabytes` MB (reused when present at that size)."""
    target = int(megabytes * 1_000_000)
    if path.exists() and abs(path.stat().st_size - target) < 200_000:
        return path
    rng = random.Random(seed)
    when, number = 1795900000.0, 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        while handle.tell() < target:
            when += 1
            hit = number % 10 == 9
            check = {"timestamp": round(when, 3), "event": "threshold_check", **_KEY, "phase": "get_context_window", "total_tokens": 9000 if hit else rng.randrange(1000, 7000), "context_max": 10000, "threshold": 8000, "hit": hit, "reason": "reached_threshold" if hit else "below_threshold"}  # fmt: skip
            handle.write(json.dumps(check) + "\n")
            if hit:
                span = {"timestamp": round(when + 0.1, 3), "event": "span_built", **_KEY, "preserved_prefix": [], "messages_to_compress": [{"idx": i, "role": "tool", "tokens": 100, "preview": "x" * 120} for i in range(5)], "protected_tail": []}  # fmt: skip
                retry = {"timestamp": round(when + 0.2, 3), "event": "compression_retry", **_KEY, "attempt": 1, "error_type": "transient:timeout", "error_message": "Request timed out.", "retried": True, "reason": "transient_backoff", "delay_seconds": 0.05}  # fmt: skip
                handle.write(json.dumps(span) + "\n" + json.dumps(retry) + "\n")
            number += 1
    return path


def write_big_message_dump(path: Path, megabytes: float) -> Path:
    """A dump whose size is one tool message of `megabytes` MB (bench.synth's shape)."""
    if path.exists() and path.stat().st_size > megabytes * 1_000_000:
        return path
    from bench.synth import ContextMaker, dump_document, write_dump

    messages = ContextMaker(seed=3, tool_output_chars=200, image_every=0).messages(24)
    tool = next(i for i, m in enumerate(messages) if m["role"] == "tool")
    body = "".join(random.Random(9).choice("abcdefghij klmnop\n") for _ in range(1_000_000))
    messages[tool] = {**messages[tool], "content": body * int(megabytes)}
    document = dump_document(messages, "CurrentRoundCompressor", "big/msg", "ctx", 1795900000.0)
    write_dump(path, document)
    return path


def measure(argv: Sequence[str]) -> tuple[float, int, float]:
    """Wall seconds, max RSS (bytes) and CPU seconds of one process, output discarded."""
    code = (
        "import resource, subprocess, sys, time\n"
        "start = time.perf_counter()\n"
        "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(time.perf_counter() - start, usage.ru_maxrss, usage.ru_utime + usage.ru_stime)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(
        [PYTHON, "-c", code, *argv], capture_output=True, text=True, env=env, check=True
    )
    seconds, kib, cpu = done.stdout.split()
    return float(seconds), int(kib) * 1024, float(cpu)


def _pair(label: str, file: Path, argv: list[str], floor_mode: str) -> list[Result]:
    size = file.stat().st_size
    floor, floor_rss, floor_cpu = measure([PYTHON, "-c", _FLOOR, str(file), floor_mode])
    seconds, rss, cpu = measure(argv)
    mb = size / 1e6
    note = "floor parses the file once, keeps nothing"
    return [
        Result(
            "stream",
            f"{label}: wall time ({mb:.0f} MB)",
            seconds,
            "s",
            "<= 1.5x floor",
            seconds <= 1.5 * floor,
            floor=floor,
            note=note,
        ),  # fmt: skip
        Result(
            "stream",
            f"{label}: CPU time ({mb:.0f} MB)",
            cpu,
            "s",
            "<= 1.5x floor",
            cpu <= 1.5 * floor_cpu,
            floor=floor_cpu,
            note=note + "; user + system",
        ),  # fmt: skip
        Result(
            "stream",
            f"{label}: peak memory / file size",
            rss / size,
            "x",
            "<= 2x",
            rss <= 2 * size,
            note=f"max RSS {rss / 1e6:.0f} MB; floor's {floor_rss / 1e6:.0f} MB",
        ),  # fmt: skip
    ]


def run(out: Path, megabytes: float = 60.0, message_mb: float = 40.0) -> list[Result]:
    """Generate (or reuse) the files; time and measure why/stats against the floors."""
    log = write_log(out / f"stream-{megabytes:g}mb" / "CurrentRoundCompressor.jsonl", megabytes)
    cli = [PYTHON, "-m", "inspector"]
    started = time.perf_counter()
    results = _pair("inspector why --json LOG", log, [*cli, "why", "--json", str(log)], "lines")
    results += _pair(
        "inspector stats --json LOG", log, [*cli, "stats", "--json", str(log)], "lines"
    )
    if message_mb > 0:
        dump = write_big_message_dump(
            out
            / f"stream-msg-{message_mb:g}mb"
            / "1795900000000_CurrentRoundCompressor_big-msg.json",
            message_mb,
        )
        results += _pair("inspector why --json DUMP (one huge message)", dump,
                         [*cli, "why", "--json", str(dump)], "whole")  # fmt: skip
    print(f"[stream] {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """Command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=60.0)
    parser.add_argument("--message-mb", type=float, default=40.0)
    parser.add_argument("--out", type=Path, default=None)
    options = parser.parse_args(argv)
    from bench.common import out_dir
    from bench.run_all import print_table

    print_table(run(out_dir(options.out), options.mb, options.message_mb), markdown=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
