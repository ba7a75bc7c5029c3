"""Issue 17: the facts of a big context (`core.hybrid_facts`) and the summary-loss re-check.

    python bench/bench_facts.py                       # generates the 20,000-message dump
    python bench/bench_facts.py --dump FILE.json      # a dump you have (read, never written)
    python bench/bench_facts.py --messages 400 --mb 2 # tiny, seconds

CPU time (`time.process_time`), best of `--repeats`, each against floors measured in the
same run on the same messages:

* `extract_facts` cold (the line memo emptied) and warm, against one `str.find` pass over
  every text the messages hold (content, text blocks, tool-call arguments): the least any
  scan of them costs. Goal: cold <= 2 s at 20,000 messages.
* the same against the straightforward whole-text scans (`tests/facts_reference.py`, the
  implementation before the line memo) on the first `--old` messages (they take a minute
  on all 20,000): the speed-up, and that both found the same facts.
* `losses_between` with every message kept and with the last quarter kept, against the
  same `str.find` floor.
* the summary-loss re-check (`summary_losses`, every kind, scans memoised) with a new
  summary, as a tuning key runs it, on the same region and on a region moved by one
  message. Goal <= 100 ms at 20,000 messages.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench`, `inspector`, `tests` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import Result, out_dir
from inspector.core import hybrid_facts, summary_loss
from inspector.core.messages import Message


def _cpu(
    step: Callable[[], object], repeats: int, before: Callable[[], None] = lambda: None
) -> float:
    """Best CPU seconds of `step` over `repeats` runs (`before` runs untimed ahead of each)."""
    best = float("inf")
    for _ in range(repeats):
        before()
        start = time.process_time()
        step()
        best = min(best, time.process_time() - start)
    return best


def _raw_texts(messages: Sequence[Message]) -> list[str]:
    texts: list[str] = []
    for message in messages:
        content = message.content
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [
                b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)
            ]
        texts += [call.arguments for call in message.tool_calls]
    return texts


def _find_floor(texts: Sequence[str]) -> Callable[[], object]:
    return lambda: [text.find("\x00") for text in texts]


def _clear_memo() -> None:
    hybrid_facts._MEMO.facts.clear()
    hybrid_facts._MEMO.chars = 0


def load_messages(dump: Path) -> tuple[Message, ...]:
    """The system and context messages of a compression dump, as the loader rebuilds them."""
    from inspector.sources.dump import parse_dump, rebuild_context
    from inspector.sources.jsonio import read_json_file

    read = read_json_file(dump)
    if read.problem is not None:
        raise SystemExit(f"cannot read {dump}: {read.problem}")
    rebuilt = rebuild_context(parse_dump(read.documents[0][1], str(dump)))
    if rebuilt.messages is None:
        raise SystemExit(f"{dump}: no context messages to rebuild")
    return rebuilt.system_messages + rebuilt.messages


def _old_results(messages: Sequence[Message], old: int, repeats: int) -> list[Result]:
    from tests import facts_reference

    part = messages[:old]
    old_s = _cpu(lambda: facts_reference.extract_facts(part), 1)
    new_s = _cpu(lambda: hybrid_facts.extract_facts(part), repeats, _clear_memo)
    same = hybrid_facts.extract_facts(part) == facts_reference.extract_facts(part)
    return [
        Result(
            "facts",
            f"extract_facts cold, first {len(part):,} messages, vs the whole-text scans",
            new_s,
            "s",
            "same facts, faster",
            same and new_s < old_s,
            floor=old_s,
            note="same facts" if same else "FACTS DIFFER",
        )
    ]


def run(messages: Sequence[Message], repeats: int = 3, old: int = 1_000) -> list[Result]:
    """Every measurement on these messages."""
    count = f"{len(messages):,} messages"
    floor = _cpu(_find_floor(_raw_texts(messages)), repeats)
    cold = _cpu(lambda: hybrid_facts.extract_facts(messages), repeats, _clear_memo)
    warm = _cpu(lambda: hybrid_facts.extract_facts(messages), repeats)
    facts = hybrid_facts.extract_facts(messages)
    tail = messages[len(messages) * 3 // 4 :]
    kept = _cpu(lambda: hybrid_facts.losses_between(facts, messages), repeats)
    quarter = _cpu(lambda: hybrid_facts.losses_between(facts, tail), repeats)
    summary_loss.summary_losses(messages, "", 0, (), summary_loss.ALL_KINDS)  # the scans, once
    summaries = iter(f"summary {n}: src/tinycal/parse.py AssertionError" for n in range(99))
    recheck = _cpu(
        lambda: summary_loss.summary_losses(
            messages, next(summaries), 0, (), summary_loss.ALL_KINDS
        ),
        repeats,
    )
    shifts = iter(range(1, 99))
    moved = _cpu(
        lambda: summary_loss.summary_losses(
            messages[next(shifts) :], "summary", 0, (), summary_loss.ALL_KINDS
        ),
        repeats,
    )
    note = f"{facts.counts}"
    results = [
        Result(
            "facts", f"extract_facts cold, {count}", cold, "s", "<= 2 s", cold <= 2.0, floor, note
        ),
        Result("facts", f"extract_facts warm (line memo), {count}", warm, "s", "", True, floor),
        Result("facts", f"losses_between, every message kept, {count}", kept, "s", "", True, floor),
        Result("facts", "losses_between, the last quarter kept", quarter, "s", "", True, floor),
        Result(
            "facts",
            f"summary-loss re-check (new summary), {count}",
            recheck * 1000,
            "ms",
            "<= 100 ms",
            recheck <= 0.1,
            note="the same region as the key before",
        ),
        Result(
            "facts",
            "summary-loss re-check, the region moved by one message",
            moved * 1000,
            "ms",
            "<= 100 ms",
            moved <= 0.1,
        ),
    ]
    if old:
        results += _old_results(messages, old, repeats)
    return results


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the options, load or generate the dump, print the table."""
    from bench.run_all import print_table
    from bench.synth import write_big_dump

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dump", type=Path, help="a compression dump (default: generated)")
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--mb", type=float, default=100.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--old", type=int, default=1_000, help="messages for the old scans (0: none)"
    )
    parser.add_argument("--out", help="folder for the generated dump (default bench/out)")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    dump = args.dump or write_big_dump(out_dir(args.out), messages=args.messages, target_mb=args.mb)
    print_table(run(load_messages(dump), args.repeats, args.old), args.markdown)


if __name__ == "__main__":
    main()
