"""Statistics over loaded artifacts: what compressed, how well, and why the rest did not.

Reads only `Artifact.kind`, `processor` and `recorded` (the keys the sources write), so it
works on dumps and debug runs alike; what an artifact's outcome is comes from the one
classifier in `core/outcome.py` (the browser's outcome column uses it too). Pure: no I/O. Must not import outside `inspector.core`.
"""

from __future__ import annotations

import heapq
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from inspector.core.artifact import Artifact, DebugRecorded, DumpRecorded
from inspector.core.checks import SEVERITY_RANK, Finding
from inspector.core.outcome import Outcome, classify_outcome, settled_outcome
from inspector.core.timeline import alone_outcome

#: Upper bounds (exclusive, last inclusive) of the reduction-ratio buckets.
RATIO_BUCKETS: tuple[tuple[str, float, float], ...] = (
    ("0-10%", 0.0, 0.10),
    ("10-25%", 0.10, 0.25),
    ("25-50%", 0.25, 0.50),
    ("50-75%", 0.50, 0.75),
    ("75-90%", 0.75, 0.90),
    ("90-100%", 0.90, 1.0000001),
)
TOP_N = 5


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _ratio(value: Any, before: int | None, reduction: int | None) -> float | None:
    """The reduction ratio recorded (`value`), else worked out from the tokens before and
    the reduction."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if before and reduction is not None:
        return round(reduction / before, 4)
    return None


def _dump_numbers(recorded: Mapping[str, Any]) -> tuple[Any, int | None, int | None, int | None]:
    """A dump's recorded reduction ratio, tokens before and after, and reduction (ints or
    None): a typed record's fields read as they are (what its `get` gives for a number),
    any other mapping's keys."""
    if type(recorded) is DumpRecorded:
        ratio, before = recorded.reduction_ratio, recorded.tokens_before
        after, reduction = recorded.tokens_after, recorded.reduction
    else:
        ratio, before = recorded.get("reduction_ratio"), recorded.get("tokens_before")
        after, reduction = recorded.get("tokens_after"), recorded.get("reduction")
    return ratio, _int(before), _int(after), _int(reduction)


def _retries(recorded: Mapping[str, Any]) -> Iterable[Any]:
    """The recorded retries: a typed record's own tuple (its `get` copies each retry into a
    dict, which `compute_stats` only reads), any other mapping's `retries`."""
    if type(recorded) is DumpRecorded or type(recorded) is DebugRecorded:
        return recorded.retries or ()
    return recorded.get("retries") or ()


def _count_reason(outcome: Outcome, reasons: Counter[str], runs: int = 1) -> None:
    """Count why `runs` debug runs did not compress (runs whose outcome is unknown are not
    counted)."""
    if outcome.recorded == "silent_end":
        reasons["silent_end (reached_threshold, then no record)"] += runs
    elif outcome.recorded is None or outcome.recorded == "unknown":
        return
    elif outcome.kind == "failed":
        why = outcome.reason or "unknown"
        reasons[f"failed ({why})"] += runs
    elif outcome.kind == "not compressed":
        reasons[outcome.reason or "unknown"] += runs


def _count_retries(retries: Iterable[Any], by_type: dict[str, Counter[str]]) -> None:
    """Count the retries (the mappings among them) by error type and reason."""
    for retry in retries:
        if isinstance(retry, Mapping):
            kind = str(retry.get("error_type") or "unknown")
            by_type.setdefault(kind, Counter())[str(retry.get("reason") or "unknown")] += 1


def compute_stats(artifacts: Iterable[Artifact], errors: int = 0) -> dict[str, Any]:
    """Counts, distributions and extremes over dumps and debug runs (snapshots are counted only)."""
    by_processor: dict[str, Counter[str]] = {}
    kinds: dict[str, int] = {}
    reasons: Counter[str] = Counter()
    retries_by_type: dict[str, Counter[str]] = {}
    ratios: list[float] = []
    buckets: Counter[str] = Counter()
    # each compression as a tuple in `_COMPRESSION_KEYS` order: only the few shown become dicts
    compressions: list[tuple[Any, ...]] = []
    saved = before_sum = after_sum = 0
    for artifact in artifacts:
        kind = artifact.kind
        kinds[kind] = kinds.get(kind, 0) + 1
        if kind != "dump" and kind != "debug":
            continue
        recorded = artifact.recorded
        outcome = classify_outcome(artifact)
        processor = artifact.processor or "unknown"
        counts = by_processor.get(processor)
        if counts is None:
            counts = by_processor[processor] = Counter()
        counts[outcome.recorded or "unknown"] += 1
        retries = _retries(recorded)
        if retries:
            _count_retries(retries, retries_by_type)
        if kind == "debug":
            _count_reason(outcome, reasons)
            continue
        ratio_value, before, after, reduction = _dump_numbers(recorded)
        ratio = _ratio(ratio_value, before, reduction)
        if reduction is None and before is not None and after is not None:
            reduction = max(before - after, 0)
        if reduction is not None:
            saved += reduction
        before_sum += before or 0
        after_sum += after or 0
        if ratio is not None:
            ratios.append(ratio)
            for label, low, high in RATIO_BUCKETS:
                if low <= ratio < high:
                    buckets[label] += 1
                    break
        compressions.append(
            (
                artifact.id,
                artifact.source,
                processor,
                artifact.session_id,
                before,
                after,
                reduction,
                ratio,
            )
        )
    # (sorted(...)[:TOP_N], as `heapq.nsmallest` is: stable, the same few in the same order)
    known = [c for c in compressions if c[6] is not None]
    rated = [c for c in compressions if c[7] is not None]
    biggest = heapq.nsmallest(TOP_N, known, key=lambda c: -c[6])
    least = heapq.nsmallest(TOP_N, rated, key=lambda c: (c[7], c[6] or 0))
    return {
        "artifacts": kinds,
        "errors": errors,
        "by_processor": {p: dict(c) for p, c in sorted(by_processor.items())},
        "compressions": len(compressions),
        "tokens_before": before_sum,
        "tokens_after": after_sum,
        "tokens_saved": saved,
        "reduction_ratio": _ratio_summary(ratios, buckets),
        "not_compressed": dict(reasons.most_common()),
        "retries_by_error_type": {k: dict(v) for k, v in sorted(retries_by_type.items())},
        "biggest": [dict(zip(_COMPRESSION_KEYS, c, strict=True)) for c in biggest],
        "least_effective": [dict(zip(_COMPRESSION_KEYS, c, strict=True)) for c in least],
    }


def _ratio_summary(ratios: list[float], buckets: Counter[str]) -> dict[str, Any]:
    """The reduction ratios' count, extremes, median, mean and buckets."""
    return {
        "count": len(ratios),
        "min": min(ratios) if ratios else None,
        "median": round(statistics.median(ratios), 4) if ratios else None,
        "mean": round(statistics.fmean(ratios), 4) if ratios else None,
        "max": max(ratios) if ratios else None,
        "buckets": {label: buckets.get(label, 0) for label, _, _ in RATIO_BUCKETS},
    }


#: The keys of a compression in `biggest` and `least_effective`, in their order.
_COMPRESSION_KEYS = (
    "id",
    "source",
    "processor",
    "session_id",
    "tokens_before",
    "tokens_after",
    "reduction",
    "reduction_ratio",
)


def count_findings(found: Iterable[Sequence[Finding]]) -> dict[str, Any]:
    """Findings counted by kind (with the kind's most serious severity) over many artifacts.

    `found` holds one sequence of findings per artifact; the result has `findings`
    (kind -> count, most frequent first), `findings_by_severity`, `finding_severity`
    (kind -> its most serious severity seen) and `artifacts_with_problems`."""
    kinds: Counter[str] = Counter()
    severities: Counter[str] = Counter()
    worst: dict[str, str] = {}
    with_problems = 0
    for findings in found:
        problem = False
        for finding in findings:
            kinds[finding.key] += 1
            severities[finding.severity] += 1
            held = worst.get(finding.key)
            if held is None or SEVERITY_RANK.get(finding.severity, 3) < SEVERITY_RANK.get(held, 3):
                worst[finding.key] = finding.severity
            problem = problem or finding.severity == "problem"
        with_problems += problem
    ordered = sorted(
        kinds.items(), key=lambda item: (SEVERITY_RANK.get(worst[item[0]], 3), -item[1], item[0])
    )
    return {
        "findings": dict(ordered),
        "findings_by_severity": {s: severities.get(s, 0) for s in ("problem", "warning", "info")},
        "finding_severity": {kind: worst[kind] for kind, _ in ordered},
        "artifacts_with_problems": with_problems,
    }


class DebugRunTally:
    """`compute_stats` over debug runs alone, fed one run's processor, outcome and retries
    at a time (a streamed debug log: no artifact is built for `stats`). `stats()` equals
    `compute_stats` of the runs' debug artifacts (`tests/test_logs_stats_fast.py`).

    Runs are counted by what decides their place in the stats (processor and outcome, or
    processor and check reason for a run without retries, whose outcome that reason
    decides): one dict increment a run; `stats()` adds each count where `compute_stats`
    adds each run, in the order the counts were first seen, which is the order the runs
    first added each processor's outcome and each reason (the same dicts, key for key).
    Retries are counted as they come."""

    def __init__(self) -> None:
        #: Runs counted per key: (processor, Outcome), or (processor, check reason).
        self._runs: dict[tuple[str | None, Outcome | str | None], int] = {}
        #: Each key's processor name and outcome, set when the key is first seen.
        self._settled: dict[tuple[str | None, Outcome | str | None], tuple[str, Outcome]] = {}
        self.retries_by_type: dict[str, Counter[str]] = {}
        #: The outcome of a run without retries, by its check's reason (`add_alone`).
        self._alone: dict[str | None, Outcome] = {}

    @property
    def count(self) -> int:
        """How many runs were counted."""
        return sum(self._runs.values())

    def add_alone(
        self,
        processor: str | None,
        check: Mapping[str, Any] | None,
        retries: Sequence[Mapping[str, Any]],
    ) -> None:
        """Count the run of a log given alone with this check and these retries, as `add`
        counts its settled run (`timeline.alone_run`), without making the run.

        Without retries, the outcome depends on the check's reason alone (all
        `alone_outcome` and `settled_outcome` read of a check): it is worked out once per
        reason, and the run is counted under (processor, reason) (most runs of a log)."""
        if not retries:
            reason = check.get("reason") if check is not None else None
            if reason is None or type(reason) is str:
                key = (processor, reason)
                runs = self._runs.get(key)
                if runs is not None:
                    self._runs[key] = runs + 1
                    return
                outcome = self._alone.get(reason)
                if outcome is None:
                    word, causes = alone_outcome(check, retries)
                    outcome = self._alone[reason] = settled_outcome(word, check, causes, retries)
                self._first(key, outcome)
                return
        word, causes = alone_outcome(check, retries)
        self.add(processor, settled_outcome(word, check, causes, retries), retries)

    def add(
        self, processor: str | None, outcome: Outcome, retries: Iterable[Mapping[str, Any]]
    ) -> None:
        """Count one run, as `compute_stats` counts its debug artifact."""
        key = (processor, outcome)
        runs = self._runs.get(key)
        if runs is None:
            self._first(key, outcome)
        else:
            self._runs[key] = runs + 1
        for retry in retries:
            if type(retry) is dict or isinstance(retry, Mapping):
                kind = str(retry.get("error_type") or "unknown")
                by_reason = self.retries_by_type.get(kind)
                if by_reason is None:
                    by_reason = self.retries_by_type[kind] = Counter()
                by_reason[str(retry.get("reason") or "unknown")] += 1

    def _first(self, key: tuple[str | None, Outcome | str | None], outcome: Outcome) -> None:
        """Count the first run of a key."""
        self._runs[key] = 1
        self._settled[key] = (key[0] or "unknown", outcome)

    def stats(self, errors: int = 0) -> dict[str, Any]:
        """The `compute_stats` object for the runs counted."""
        by_processor: dict[str, Counter[str]] = {}
        reasons: Counter[str] = Counter()
        for key, runs in self._runs.items():
            name, outcome = self._settled[key]
            by_processor.setdefault(name, Counter())[outcome.recorded or "unknown"] += runs
            _count_reason(outcome, reasons, runs)
        count = self.count
        out = compute_stats((), errors)
        out["artifacts"] = {"debug": count} if count else {}
        out["by_processor"] = {p: dict(c) for p, c in sorted(by_processor.items())}
        out["not_compressed"] = dict(reasons.most_common())
        out["retries_by_error_type"] = {k: dict(v) for k, v in sorted(self.retries_by_type.items())}
        return out
