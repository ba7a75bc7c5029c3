"""A fleet-sized folder for the decision index, fast to write, with its answers known.

`write_fleet(root, files=5_000)` writes openJiuwen's workspace layout
(`context/<session>_context/{compression_logs,context_debug}/`) from a few dump templates
built with `bench.synth` (counted by the core, so the loader infers their token mode), each
written many times with its session, context and time changed: a 5,000-file folder takes
a few seconds. `FleetTruth` records, from the generator's own choices, what the README's
DuckDB questions must answer, so tests check the index against facts it did not compute.

Sessions: every tenth session is *stalled*: its debug log only, with evaluations that hit
95 % of the window and fail after three context_overflow retries (no dump). The others
have one debug log and many dumps; every dump's run has a below-threshold check before it
and a reached-threshold check that links to it; every fifth dump's run has a
transient:timeout retry; every seventh dump re-injects a `<recovered_context>` message
larger than what the compression saved. Generated files go to a temp folder or bench/out/.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.synth import PROCESSORS, ContextMaker, count_tokens, dump_document, safe

#: Day 0 of the generated fleet (2026-11-28 UTC) and the spacing of sessions and dumps.
_EPOCH = 1795900000.0
_SESSION_SECONDS = 7_200.0
_DUMP_SECONDS = 60.0
#: Where each processor's window starts in the conversation: a window whose protected tail
#: leaves a span to compress (its dump is one the processor would have written).
#: Placeholders written once per template, replaced per dump (a few seconds for 5,000 files).
_SESSION, _CONTEXT, _TIME = "@session@", "@context@", 1234567.5
_WINDOWS = {"CurrentRoundCompressor": 3, "DialogueCompressor": 12, "RoundLevelCompressor": 24}


@dataclass
class FleetTruth:
    """What the generator wrote: the answers the index must give."""

    files: int = 0
    dumps: int = 0
    debug_evaluations: int = 0
    stalled_sessions: list[str] = field(default_factory=list)
    #: processor -> (dumps, dumps whose re-injection is at least their saving)
    reinjection: dict[str, list[int]] = field(default_factory=dict)
    #: (processor, error kind) -> retries
    retries: dict[tuple[str, str], int] = field(default_factory=dict)
    #: (date, reason) -> debug evaluations that did not compress
    reasons: dict[tuple[str, str], int] = field(default_factory=dict)
    #: session -> tokens saved by its dumps
    saved: dict[str, int] = field(default_factory=dict)


def _templates(seed: int) -> dict[tuple[str, bool], dict[str, Any]]:
    """One dump per processor, plain and with a large re-injected message, consistent totals."""
    maker = ContextMaker(seed=seed, tool_output_chars=300, image_every=0)
    pool = maker.messages(64)
    found: dict[tuple[str, bool], dict[str, Any]] = {}
    for processor in PROCESSORS:
        window = pool[_WINDOWS[processor] : _WINDOWS[processor] + 16]
        for reinject in (False, True):
            document = dump_document(window, processor, "s", "c", _EPOCH, tail=3)
            after = document["context_after"]["messages"]
            if reinject:
                body = "\n".join(f"src/mod_{i}.py: def f_{i}(x): return x * {i}" for i in range(60))
                after.insert(1, {"role": "user", "content": f"<recovered_context>\n{body}\n</recovered_context>", "metadata": {}})  # fmt: skip
            before = document["trigger"]["total_tokens_before"]
            tokens_after = count_tokens(after, "len_div_4")
            document["context_after"]["total_tokens_after"] = tokens_after
            context_max = int(before / 0.85)
            document["trigger"]["context_max"] = context_max
            document["trigger"]["target_tokens"] = max(before - tokens_after, 1)
            reduction = before - tokens_after
            document["benefit"] = {
                "tokens_before": before,
                "tokens_after": tokens_after,
                "reduction": reduction,
                "reduction_ratio": round(reduction / before, 4),
            }
            found[(processor, reinject)] = document
    return found


def _record(event: str, when: float, key: dict[str, str], **values: Any) -> str:
    return json.dumps({"timestamp": round(when, 3), "event": event, **key, **values})


def _day(when: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%d")


def _stalled(base: Path, key: dict[str, str], start: float, truth: FleetTruth) -> None:
    """A session that hit 95 % three times and never compressed (overflow retries, no dump)."""
    context_max = 20_000
    lines = []
    for run in range(3):
        when = start + run * 600
        lines.append(_record("threshold_check", when, key, phase="get_context_window", total_tokens=19_000, context_max=context_max, threshold=16_000, hit=True, reason="reached_threshold", target_tokens=15_000))  # fmt: skip
        for attempt in range(1, 4):
            lines.append(_record("compression_retry", when + attempt, key, attempt=attempt, error_type="context_overflow", error_message="Error code: 413 - context_length_exceeded", retried=attempt < 3, reason="budget_ratio_shrink" if attempt < 3 else "retry_budget_exhausted"))  # fmt: skip
            processor = key["processor"]
            truth.retries[(processor, "context_overflow")] = (
                truth.retries.get((processor, "context_overflow"), 0) + 1
            )
        truth.debug_evaluations += 1
    _write_log(base, key["processor"], lines)
    truth.stalled_sessions.append(key["session_id"])


def _write_log(base: Path, processor: str, lines: list[str]) -> None:
    path = base / "context_debug" / f"{processor}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _busy(
    base: Path,
    key: dict[str, str],
    start: float,
    dumps: int,
    templates: dict[tuple[str, bool], dict[str, Any]],
    truth: FleetTruth,
) -> None:
    """A session with `dumps` dumps, each with a check below the threshold before its run."""
    processor, session = key["processor"], key["session_id"]
    lines: list[str] = []
    counts = truth.reinjection.setdefault(processor, [0, 0])
    texts = {
        reinject: json.dumps(
            {**document, "session_id": _SESSION, "context_id": _CONTEXT, "timestamp": _TIME},
            ensure_ascii=False,
            indent=2,
        )
        for (name, reinject), document in templates.items()
        if name == processor
    }
    folder = base / "compression_logs"
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(dumps):
        reinject = number % 7 == 0
        document = templates[(processor, reinject)]
        trigger = document["trigger"]
        when = start + number * _DUMP_SECONDS
        lines.append(_record("threshold_check", when - 30, key, phase="get_context_window", total_tokens=trigger["context_max"] // 2, context_max=trigger["context_max"], threshold=int(trigger["context_max"] * 0.8), hit=False, reason="below_threshold"))  # fmt: skip
        day = _day(when - 30)
        truth.reasons[(day, "below_threshold")] = truth.reasons.get((day, "below_threshold"), 0) + 1
        truth.debug_evaluations += 1
        lines.append(_record("threshold_check", when - 2, key, phase="get_context_window", total_tokens=trigger["total_tokens_before"], context_max=trigger["context_max"], threshold=int(trigger["context_max"] * 0.8), hit=True, reason="reached_threshold", target_tokens=trigger["target_tokens"]))  # fmt: skip
        if number % 5 == 0:
            lines.append(_record("compression_retry", when - 1, key, attempt=1, error_type="transient:timeout", error_message="Request timed out.", retried=True, reason="transient_backoff", delay_seconds=0.05))  # fmt: skip
            truth.retries[(processor, "transient:timeout")] = (
                truth.retries.get((processor, "transient:timeout"), 0) + 1
            )
        text = (
            texts[reinject]
            .replace(json.dumps(_SESSION), json.dumps(session))
            .replace(json.dumps(_CONTEXT), json.dumps(key["context_id"]))
            .replace(json.dumps(_TIME), json.dumps(when))
        )
        (folder / f"{int(when * 1000)}_{processor}_{safe(session)}.json").write_text(
            text, encoding="utf-8"
        )
        counts[0] += 1
        counts[1] += 1 if reinject else 0
        truth.saved[session] = truth.saved.get(session, 0) + document["benefit"]["reduction"]
        truth.dumps += 1
    _write_log(base, processor, lines)


def write_fleet(root: Path, files: int = 5_000, sessions: int = 50, seed: int = 11) -> FleetTruth:
    """Write `files` files over `sessions` sessions under `root/context/` (see the module)."""
    templates = _templates(seed)
    truth = FleetTruth()
    stalled = [i for i in range(sessions) if i % 10 == 9]
    busy = [i for i in range(sessions) if i % 10 != 9]
    # each busy session: one log and its dumps; each stalled session: one log
    dump_files = files - sessions
    for order, index in enumerate(busy):
        processor = PROCESSORS[index % len(PROCESSORS)]
        session = f"fleet/s{index:03d}"
        key = {"processor": processor, "session_id": session, "context_id": f"ctx_{index}"}
        base = root / "context" / f"{session}_context"
        start = _EPOCH + index * _SESSION_SECONDS
        share = dump_files // len(busy) + (1 if order < dump_files % len(busy) else 0)
        _busy(base, key, start, share, templates, truth)
    for index in stalled:
        processor = PROCESSORS[index % len(PROCESSORS)]
        session = f"fleet/s{index:03d}"
        key = {"processor": processor, "session_id": session, "context_id": f"ctx_{index}"}
        _stalled(
            root / "context" / f"{session}_context", key, _EPOCH + index * _SESSION_SECONDS, truth
        )
    truth.files = files
    return truth
