"""Flips that hold say what the source says: a flip back to the span a dump records as applied
is offered (openJiuwen kept that very result), and a changed run's summary is priced with the
dump's own summary, not the 400-token placeholder."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

from inspector.core.artifact import Artifact
from inspector.core.flip_check import (
    SUMMARY_TOKENS,
    SourceOutcome,
    holding_flips,
    source_outcome,
    summary_price,
)
from inspector.core.strategy.selection import select
from inspector.core.tokens import TokenCounter
from inspector.sources.loader import load_file
from tests.conftest import REPO

TINYCAL = (
    REPO
    / "sample_dumps/workspace/context/demo/bugfix-tinycal_context/compression_logs"
    / "1795900043252_CurrentRoundCompressor_demo-bugfix-tinycal.json"
)


def _dump() -> Artifact:
    found = [a for a in load_file(str(TINYCAL)) if isinstance(a, Artifact)]
    assert len(found) == 1 and found[0].kind == "dump"
    return found[0]


def test_a_dump_gives_its_summary_and_applied_span() -> None:
    dump = _dump()
    outcome = source_outcome(dump)
    assert outcome.summary is not None and "Immediate Resume Point" in outcome.summary
    assert outcome.applied == (
        "CurrentRoundCompressor",
        {"preserved_prefix": 13, "messages_to_compress": 2, "protected_tail": 2},
    )
    failed = dataclasses.replace(dump, recorded={**dump.recorded.to_dict(), "outcome": "failed"})
    assert source_outcome(failed).applied is None  # only an applied compression counts


def test_the_summary_price_is_the_recorded_summary_counted(
    counters: dict[str, TokenCounter],
) -> None:
    counter = counters["tiktoken_cl100k"]
    summary = _dump().summary
    assert summary_price(summary, counter) == counter.text_tokens(summary or "") < SUMMARY_TOKENS
    assert summary_price(None, counter) == summary_price("", counter) == SUMMARY_TOKENS


def test_the_flip_back_to_the_recorded_compression_holds(
    counters: dict[str, TokenCounter],
) -> None:
    dump = _dump()
    assert dump.snapshot is not None
    selection = select(dump.snapshot, {"trigger_ratio": 0.694})
    strategy = selection.strategy
    prepared = strategy.prepare(dump.snapshot, counters)
    assert not strategy.decide(prepared, selection.settings).hit
    found = list(strategy.flips(prepared, selection.settings))
    assert any(f.param == "trigger_context_ratio" and f.decision.hit for f in found)
    blind = holding_flips(found, dump.snapshot, strategy.key, counters)
    told = holding_flips(found, dump.snapshot, strategy.key, counters, None, source_outcome(dump))
    # by the estimate alone (files read in the span re-injected) the result would be dropped
    assert not [f for f in blind if f.decision.hit]
    back = [f for f in told if f.param == "trigger_context_ratio"]
    assert back and back[0].decision.hit and back[0].value == 0.693
    # a source that recorded nothing gives the estimate's answer
    assert holding_flips(found, dump.snapshot, strategy.key, counters, None, SourceOutcome()) == (
        blind
    )


def test_why_offers_the_flip_back_on_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "inspector", "why", str(TINYCAL), "--trigger-ratio", "0.694"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        env={"CONTEXT_INSPECTOR_NO_RESULT_CACHE": "1", "PATH": "", "COLUMNS": "100"},
    )
    assert done.returncode == 0, done.stderr
    section = done.stdout.partition("Smallest change")[2].partition("Recorded by")[0]
    assert "0.693" in section and "compresses" in section and "no benefit" not in section
