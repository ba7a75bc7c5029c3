"""Issue 16, streaming: a big debug log and a dump with one huge message, in bounded memory.

* a JSON Lines debug log of `--mb` MB (default 60; the issue's case is 300): one session,
  threshold checks every second, every tenth one hitting and followed by a span_built and
  a retry; `inspector why --json LOG` and `inspector stats --json LOG` as whole processes,
  against a floor process that reads and parses every line once, keeping nothing, and
  (for `why`, informative) a write floor that parses once and writes the same bytes with
  stdlib json (`_WRITE_FLOOR`; the two outputs are checked equal); `stats` also against
  a fast parse floor (informative) that parses every line with pydantic_core's parser,
  which `inspector.sources.jsonio` uses where its answer is certainly the stdlib's;
* a dump whose size is one tool message of `--message-mb` MB (default 40), its totals in
  `--message-mode` (len_div_4, as openJiuwen without a counter, or tiktoken_cl100k):
  `inspector why --json DUMP` against two floors, one that parses the file once and one
  that also counts each text an exact decision needs once in that mode (the bigdump
  precedent); both ratios are reported, and (informative) the fast parse floor's, and what
  the message itself costs: the CPU beyond a run on the same dump with a 1 MB message, over
  the floor's (`_marginal`: the fixed start-up left out).

Each process runs `--repeat` times, floors and inspector taking turns (the machine may be
shared); the best run by CPU time counts, with the 1-minute load average at that run.
Every inspector run starts with an empty token cache (a first open). Every process writes
bytecode (as an installed package has it), whatever PYTHONDONTWRITEBYTECODE says outside:
a process compiling every module it imports costs ~0.4 s of CPU the floors never pay.
Peak memory is each process's max RSS (wait4 rusage of a fresh child), reported as a ratio
to the file's size (goal <= 2x); time as a ratio to the floor (goal <= 1.5x).

    python -m bench.bench_fleet_stream [--mb 60] [--message-mb 40] [--repeat 3]  (0 MB: skipped)
        [--message-mode len_div_4|tiktoken_cl100k] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.common import CACHE_DIR_ENV, PYTHON, REPO_ROOT, Result

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
#: The same floor with pydantic_core's parser (informative: `inspector.sources.jsonio`
#: parses with it where its answer is certainly the stdlib's, so the budget's floor, which
#: parses with stdlib json, is not the least a process can do; this one is).
_FAST_FLOOR = (
    "import sys\n"
    "from pydantic_core import from_json\n"
    "with open(sys.argv[1], 'rb') as f:\n"
    "    if sys.argv[2] == 'lines':\n"
    "        for line in f:\n"
    "            from_json(line, allow_inf_nan=False) if line.strip() else None\n"
    "    else:\n"
    "        from_json(f.read(), allow_inf_nan=False)\n"
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


def write_big_message_dump(path: Path, megabytes: float, token_mode: str = "len_div_4") -> Path:
    """A dump whose size is one tool message of `megabytes` MB (bench.synth's shape), its
    totals counted in `token_mode`."""
    if path.exists() and path.stat().st_size > megabytes * 1_000_000:
        return path
    from bench.synth import ContextMaker, dump_document, write_dump

    messages = ContextMaker(seed=3, tool_output_chars=200, image_every=0).messages(24)
    tool = next(i for i, m in enumerate(messages) if m["role"] == "tool")
    body = "".join(random.Random(9).choice("abcdefghij klmnop\n") for _ in range(1_000_000))
    messages[tool] = {**messages[tool], "content": body * int(megabytes)}
    document = dump_document(
        messages, "CurrentRoundCompressor", "big/msg", "ctx", 1795900000.0, token_mode=token_mode
    )
    write_dump(path, document)
    return path


#: The second log floor: parse every line once and write the bytes `inspector why --json
#: LOG` writes, built directly for this log's three events with stdlib json (no checks, no
#: masking, no objects but the line's dicts; one encoder made once, as the inspector's):
#: how close the inspector is to the least a Python process writing the contract's output
#: can do. `run` checks the bytes are equal.
_WRITE_FLOOR = (
    "import json, sys\n"
    "from inspector.core.timeline import SILENT_CAUSES\n"
    "ORDER = ['dump_not_loaded', 'non_retryable', 'transient_exhausted', 'empty_reply', 'no_benefit']\n"
    "NULLS = ('hit', 'reason', 'total_tokens', 'threshold', 'target_tokens', 'min_target_tokens', 'effective_keep')\n"
    "SPAN = ('preserved_prefix', 'messages_to_compress', 'protected_tail')\n"
    "source, out, dumps = sys.argv[1], sys.stdout.buffer, json.JSONEncoder(ensure_ascii=False).encode\n"
    "def line(run):\n"
    "    check, span, retries, index, number = run\n"
    "    reason = check.get('reason')\n"
    "    if reason != 'reached_threshold':\n"
    "        outcome, causes = 'not_compressed', []\n"
    "    elif retries and retries[-1].get('retried') is False:\n"
    "        outcome, causes = 'failed', []\n"
    "    else:\n"
    "        order = list(ORDER)\n"
    "        if sum(str(r.get('error_type') or '').startswith('transient') for r in retries) >= 2:\n"
    "            order.remove('transient_exhausted'); order.insert(1, 'transient_exhausted')\n"
    "        outcome, causes = 'silent_end', [SILENT_CAUSES[name] for name in order]\n"
    "    head = {'source': source, 'id': f\"{check['session_id']}/{check['context_id']}/{check['processor']}#{index}\",\n"
    "            'kind': 'debug', 'processor': check['processor']}\n"
    "    head.update(dict.fromkeys(NULLS))\n"
    "    head.update(span=None, checks=[], findings=[], recorded={\n"
    "        'threshold_check': check, 'reason': reason, 'hit': check.get('hit'),\n"
    "        'total_tokens': check.get('total_tokens'), 'threshold': check.get('threshold'),\n"
    "        'context_max': check.get('context_max'), 'target_tokens': check.get('target_tokens'),\n"
    "        'min_target_tokens': check.get('min_target_tokens'), 'retries': retries,\n"
    "        'outcome': outcome, 'span': None if span is None else {k: len(span.get(k) or []) for k in SPAN},\n"
    "        'silent_causes': causes, 'other_events': [], 'line': number})\n"
    "    out.write((dumps(head) + '\\n').encode('utf-8'))\n"
    "run, index = None, 0\n"
    "with open(source, 'rb') as f:\n"
    "    for number, raw in enumerate(f, start=1):\n"
    "        record = json.loads(raw)\n"
    "        event = record['event']\n"
    "        if event == 'threshold_check':\n"
    "            if run is not None:\n"
    "                line(run)\n"
    "            index += 1\n"
    "            run = (record, None, [], index, number)\n"
    "        elif event == 'span_built':\n"
    "            run = (run[0], record, run[2], run[3], run[4])\n"
    "        else:\n"
    "            run[2].append(record)\n"
    "if run is not None:\n"
    "    line(run)\n"
)


def _same_output(first: list[str], second: list[str]) -> bool:
    """True when both commands write the same bytes (each process's output hashed)."""
    import hashlib

    digests = []
    for argv in (first, second):
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "CONTEXT_INSPECTOR_NO_RESULT_CACHE": "1"}
        digest = hashlib.sha256()
        with subprocess.Popen(argv, stdout=subprocess.PIPE, env=env) as process:
            assert process.stdout is not None
            for block in iter(lambda: process.stdout.read(1 << 20), b""):  # type: ignore[union-attr]
                digest.update(block)
        digests.append(digest.hexdigest())
    return digests[0] == digests[1]


#: The dump floor that also counts: parse, then count each text an exact decision needs
#: once (`bench.workers.bigdump._floor_texts`, the bigdump precedent), in the dump's mode.
_COUNT_FLOOR = (
    "import json, sys\n"
    "from pathlib import Path\n"
    "from bench.workers.bigdump import _floor_texts\n"
    "document = json.loads(Path(sys.argv[1]).read_bytes())\n"
    "texts = _floor_texts(document)\n"
    "if sys.argv[2] == 'tiktoken_cl100k':\n"
    "    from bench.workers.parity_floor import load_encoder\n"
    "    encode = load_encoder().encode_ordinary\n"
    "    print(sum(len(encode(text)) for text in texts))\n"
    "else:\n"
    "    print(sum(len(text) // 4 for text in texts))\n"
)


def measure(argv: Sequence[str], cache: Path | None = None) -> tuple[float, int, float]:
    """Wall seconds, max RSS (bytes) and CPU seconds of one process, output discarded;
    `cache`: an empty token cache folder for it (a first open)."""
    code = (
        "import resource, subprocess, sys, time\n"
        "start = time.perf_counter()\n"
        "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(time.perf_counter() - start, usage.ru_maxrss, usage.ru_utime + usage.ru_stime)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "PYTHONDONTWRITEBYTECODE": ""}
    if cache is not None:
        shutil.rmtree(cache, ignore_errors=True)
        cache.mkdir(parents=True)
        env[CACHE_DIR_ENV] = str(cache)
    done = subprocess.run(
        [PYTHON, "-c", code, *argv], capture_output=True, text=True, env=env, check=True
    )
    seconds, kib, cpu = done.stdout.split()
    return float(seconds), int(kib) * 1024, float(cpu)


@dataclass
class _Best:
    """The best (least disturbed) of N runs of one process, and the load when it ran."""

    seconds: float = float("inf")
    rss: int = 0
    cpu: float = float("inf")
    load: float = 0.0

    def take(self, run: tuple[float, int, float]) -> None:
        """Keep the better of this run and the best so far."""
        seconds, rss, cpu = run
        if cpu < self.cpu:
            self.cpu, self.load = cpu, os.getloadavg()[0]
        self.seconds = min(self.seconds, seconds)
        self.rss = rss if not self.rss else min(self.rss, rss)


def _interleaved(runs: dict[str, list[str]], repeat: int, cache: Path) -> dict[str, _Best]:
    """Each process `repeat` times, floors and inspector taking turns; best CPU of each (a
    run whose label ends in "inspector" gets an empty token cache: a first open)."""
    best = {name: _Best() for name in runs}
    for _ in range(max(repeat, 1)):
        for name, argv in runs.items():
            best[name].take(measure(argv, cache if name.endswith("inspector") else None))
    return best


def _pair(
    label: str, file: Path, argv: list[str], floors: dict[str, list[str]], repeat: int, cache: Path
) -> list[Result]:
    """Time, CPU and peak memory of `argv` beside each floor (the first is the parse floor)."""
    size, mb = file.stat().st_size, file.stat().st_size / 1e6
    best = _interleaved({**floors, "inspector": argv}, repeat, cache)
    ours = best["inspector"]
    results = []
    for number, (floor_name, floor) in enumerate((n, best[n]) for n in floors):
        note = f"{floor_name}; best of {repeat} by CPU, interleaved; load {floor.load:.1f} / {ours.load:.1f} (floor / ours)"
        if floor_name.startswith("fast parse floor"):
            results.append(Result("stream", f"{label}: CPU time vs fast parse floor", ours.cpu, "s",
                                  "(info)", True, floor=floor.cpu, note=note + "; user + system"))  # fmt: skip
            continue
        if number == 0:
            results.append(
                Result(
                    "stream",
                    f"{label}: wall time ({mb:.0f} MB)",
                    ours.seconds,
                    "s",
                    "<= 1.5x floor",
                    ours.seconds <= 1.5 * floor.seconds,
                    floor=floor.seconds,
                    note=note,
                )  # fmt: skip
            )
        results.append(
            Result(
                "stream",
                f"{label}: CPU time vs {floor_name.split(':')[0]}",
                ours.cpu,
                "s",
                "<= 1.5x floor",
                ours.cpu <= 1.5 * floor.cpu,
                floor=floor.cpu,
                note=note + "; user + system",
            )  # fmt: skip
        )
    floor_rss = ", ".join(f"{n.split(':')[0]} {best[n].rss / 1e6:.0f} MB" for n in floors)
    results.append(
        Result(
            "stream",
            f"{label}: peak memory / file size",
            ours.rss / size,
            "x",
            "<= 2x",
            ours.rss <= 2 * size,
            note=f"max RSS {ours.rss / 1e6:.0f} MB; {floor_rss}",
        )  # fmt: skip
    )
    return results


def _marginal(big: Path, small: Path, cli: list[str], repeat: int, cache: Path) -> Result:
    """What the huge message itself costs: the CPU `why --json` spends on `big` beyond what
    it spends on `small` (the same dump with a 1 MB message), over what the parse floor
    spends beyond its own run on `small`. A whole process also pays a fixed start-up (its
    imports) that the floor, which imports only json, does not: this ratio leaves it out, so
    it says how the cost grows with the message (informative; the budget is the row above)."""
    runs = {
        f"{which} {role}": (
            [*cli, "why", "--json", str(path)]
            if role == "inspector"
            else [PYTHON, "-c", _FLOOR, str(path), "whole"]
        )
        for which, path in (("big", big), ("small", small))
        for role in ("floor", "inspector")
    }
    best = _interleaved(runs, repeat, cache)
    ours = best["big inspector"].cpu - best["small inspector"].cpu
    floor = best["big floor"].cpu - best["small floor"].cpu
    mb = (big.stat().st_size - small.stat().st_size) / 1e6
    return Result(
        "stream",
        f"inspector why --json DUMP: CPU of the message's extra {mb:.0f} MB vs the floor's",
        ours,
        "s",
        "(info)",
        True,
        floor=floor,
        note=(
            f"best of {repeat} by CPU, interleaved: ours {best['big inspector'].cpu:.2f} - "
            f"{best['small inspector'].cpu:.2f} s (the start-up and the rest of the dump), "
            f"floor {best['big floor'].cpu:.2f} - {best['small floor'].cpu:.2f} s"
        ),
    )


def _log_rows(
    out: Path, megabytes: float, cli: list[str], repeat: int, cache: Path
) -> list[Result]:
    """`why --json` and `stats --json` of a generated log of `megabytes` MB, beside their floors."""
    log = write_log(out / f"stream-{megabytes:g}mb" / "CurrentRoundCompressor.jsonl", megabytes)
    lines_floor = {"parse floor: reads and parses every line once": [PYTHON, "-c", _FLOOR, str(log), "lines"]}  # fmt: skip
    fast_floor = {"fast parse floor: the same with pydantic_core.from_json": [PYTHON, "-c", _FAST_FLOOR, str(log), "lines"]}  # fmt: skip
    why_log = [*cli, "why", "--json", str(log)]
    write_floor = [PYTHON, "-c", _WRITE_FLOOR, str(log)]
    same = _same_output(why_log, write_floor)
    floors = {**lines_floor, f"write floor: parses once and writes the same bytes with stdlib json (bytes equal: {same})": write_floor}  # fmt: skip
    results = _pair("inspector why --json LOG", log, why_log, floors, repeat, cache)
    results += _pair("inspector stats --json LOG", log, [*cli, "stats", "--json", str(log)],
                     {**lines_floor, **fast_floor}, repeat, cache)  # fmt: skip
    return results


def run(
    out: Path,
    megabytes: float = 60.0,
    message_mb: float = 40.0,
    repeat: int = 3,
    message_mode: str = "len_div_4",
) -> list[Result]:
    """Generate (or reuse) the files; time and measure why/stats against the floors."""
    cli = [PYTHON, "-m", "inspector"]
    cache = out / "stream-token-cache"
    started = time.perf_counter()
    results = _log_rows(out, megabytes, cli, repeat, cache) if megabytes > 0 else []
    if message_mb > 0:
        name = f"stream-msg-{message_mb:g}mb" + ("" if message_mode == "len_div_4" else "-cl100k")
        dump = write_big_message_dump(
            out / name / "1795900000000_CurrentRoundCompressor_big-msg.json",
            message_mb,
            message_mode,
        )
        floors = {
            "parse floor: parses the file once": [PYTHON, "-c", _FLOOR, str(dump), "whole"],
            "fast parse floor: the same with pydantic_core.from_json": [
                PYTHON, "-c", _FAST_FLOOR, str(dump), "whole",
            ],
            f"count floor: parses + counts each needed text once ({message_mode})": [
                PYTHON, "-c", _COUNT_FLOOR, str(dump), message_mode,
            ],
        }  # fmt: skip
        results += _pair(f"inspector why --json DUMP (one huge message, {message_mode})", dump,
                         [*cli, "why", "--json", str(dump)], floors, repeat, cache)  # fmt: skip
        small = write_big_message_dump(
            out / f"{name}-small" / "1795900000000_CurrentRoundCompressor_big-msg.json",
            1,
            message_mode,
        )
        results.append(_marginal(dump, small, cli, repeat, cache))
    print(f"[stream] {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """Command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=60.0)
    parser.add_argument("--message-mb", type=float, default=40.0)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each process (best CPU)")
    parser.add_argument(
        "--message-mode", choices=("len_div_4", "tiktoken_cl100k"), default="len_div_4"
    )
    options = parser.parse_args(argv)
    from bench.common import out_dir
    from bench.run_all import print_table

    results = run(
        out_dir(options.out), options.mb, options.message_mb, options.repeat, options.message_mode
    )
    print_table(results, markdown=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
