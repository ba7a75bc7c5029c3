"""The pure per-unit indexing function: file paths in, decision-index rows out.

A *unit* is the group of files that link to each other and so must be read together: the
dumps, debug logs and `inspector_snapshots.jsonl` of one openJiuwen `<session>_context`
folder (a debug run links to its dump, a snapshot gives a debug evaluation its context);
any other file is a unit of its own. `units(paths)` groups paths by that rule (by name
only, no I/O); `index_unit(paths)` loads one unit exactly as `inspector why` does, decides
every context under its recorded settings, and returns one `IndexRow` dict per evaluation
(model calls of `llm_request.jsonl` are not evaluations and give no row). It reads the
files and nothing else: no cache is written, no global state is changed (token counters
are made once per process and reused), and it is a module-level function, so a process
pool or Spark can pickle it by reference. Must not import Textual, Rich, render, tui or cli.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from functools import cache
from pathlib import PurePath
from typing import Any

from inspector.core.artifact import Artifact, LoadError
from inspector.core.errors import InspectorError
from inspector.core.strategy.base import Decision
from inspector.core.strategy.selection import select
from inspector.core.tokens import TokenCounter
from inspector.formats.index import IndexRow
from inspector.sources.recording import is_live

#: Folders openJiuwen writes inside a `<session>_context` folder.
_SESSION_SUBFOLDERS = frozenset({"compression_logs", "context_debug"})
#: Files the inspector writes beside those folders (their contexts link by evaluation).
_SESSION_FILES = frozenset({"inspector_snapshots.jsonl"})


def unit_of(path: str) -> str:
    """The unit a file belongs to: its `<session>_context` folder, else the file itself."""
    pure = PurePath(path)
    if pure.parent.name in _SESSION_SUBFOLDERS:
        return str(pure.parent.parent)
    if pure.name in _SESSION_FILES:
        return str(pure.parent)
    return str(pure)


def units(paths: Iterable[str]) -> dict[str, list[str]]:
    """Paths grouped by `unit_of`, each group sorted, the units in sorted order."""
    grouped: dict[str, list[str]] = {}
    for path in paths:
        grouped.setdefault(unit_of(path), []).append(path)
    return {unit: sorted(grouped[unit]) for unit in sorted(grouped)}


@cache
def _counters() -> tuple[dict[str, TokenCounter], str]:
    """Token counters and the counting note, made once per process (they hold no state
    that changes a result)."""
    from inspector.encoding import load_cl100k, make_counters

    return make_counters(), load_cl100k().note


def index_unit(paths: Sequence[str], unit: str | None = None) -> list[dict[str, Any]]:
    """Every evaluation in one unit's files, as `IndexRow` dicts (see the module docstring).

    `unit` names the unit in each row (default: `unit_of` of the first path). Each
    unreadable file, and each context the inspector cannot decide, is one row with `error`.
    """
    from inspector.sources.debugstream import stream_logs, streamable
    from inspector.sources.jsonio import STREAM_MIN_BYTES
    from inspector.sources.loader import load_paths

    if not paths:
        return []
    name = unit if unit is not None else unit_of(paths[0])
    counters, note = _counters()
    mtimes = {path: _mtime(path) for path in paths}
    rows: list[dict[str, Any]] = []
    # a big debug log on its own is read record by record, as `inspector why` reads it
    logs = streamable(list(paths), STREAM_MIN_BYTES)
    items = stream_logs(logs) if logs is not None else load_paths(list(paths), counters=counters)
    for item in items:
        if isinstance(item, LoadError):
            rows.append(_error_row(name, item, mtimes))
        elif item.kind != "llm_request":
            decision, error = _decide(item, counters, note)
            rows.append(artifact_row(name, item, decision, mtimes.get(item.source), error))
    return rows


def _mtime(path: str) -> float | None:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


def _decide(
    artifact: Artifact, counters: Mapping[str, TokenCounter], note: str
) -> tuple[Decision | None, str | None]:
    """The decision under the recorded settings, or the reason there is none."""
    if artifact.snapshot is None:
        return None, None
    try:
        selection = select(artifact.snapshot, {})
        strategy = selection.strategy
        prepared = strategy.prepare(artifact.snapshot, counters, note)
        return strategy.decide(prepared, selection.settings, artifact), None
    except InspectorError as error:
        return None, str(getattr(error, "message", None) or error)


def _date(time: float | None, mtime: float | None) -> str:
    """The partition date: UTC date of the evaluation, else of the file, else `unknown`."""
    for value in (time, mtime):
        if value is not None:
            try:
                return datetime.fromtimestamp(value, UTC).strftime("%Y-%m-%d")
            except (OverflowError, OSError, ValueError):
                continue
    return "unknown"


def _error_row(unit: str, error: LoadError, mtimes: Mapping[str, float | None]) -> dict[str, Any]:
    where = f" ({error.where})" if error.where else ""
    return IndexRow(
        date=_date(None, mtimes.get(error.source)),
        unit=unit,
        source=error.source,
        id=os.path.basename(error.source),
        kind="error",
        evaluated=False,
        error=f"{error.error}{where}",
    ).model_dump()


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def artifact_row(
    unit: str,
    artifact: Artifact,
    decision: Decision | None,
    mtime: float | None,
    error: str | None = None,
) -> dict[str, Any]:
    """The index row of one artifact and its decision (None: the recorded values stand)."""
    recorded = artifact.recorded
    retries = [r for r in recorded.get("retries") or () if isinstance(r, Mapping)]
    numbers: Mapping[str, Any] = decision.numbers if decision is not None else {}
    findings = decision.findings if decision is not None else ()
    reinjected = next(
        (f.numbers.get("reinjected_tokens") for f in findings if f.key == "reinjection_share"),
        None,
    )
    return IndexRow(
        date=_date(artifact.timestamp, mtime),
        unit=unit,
        source=artifact.source,
        id=artifact.id,
        kind="live_window" if is_live(artifact) else artifact.kind,
        session_id=artifact.session_id,
        context_id=artifact.context_id,
        processor=decision.processor if decision else artifact.processor,
        family=decision.family if decision else None,
        strategy=decision.strategy if decision else None,
        release_profile=_str(numbers.get("release_profile")),
        openjiuwen_version=_str(numbers.get("openjiuwen_version")),
        time=artifact.timestamp,
        evaluated=decision is not None,
        hit=decision.hit if decision else _bool(recorded.get("hit")),
        reason=decision.reason if decision else _str(recorded.get("reason")),
        verdict=decision.verdict if decision else None,
        outcome=_str(recorded.get("outcome")),
        recorded_hit=_recorded_hit(recorded),
        recorded_reason=_recorded_reason(recorded),
        total_tokens=decision.total_tokens if decision else _int(recorded.get("total_tokens")),
        threshold=decision.threshold if decision else _int(recorded.get("threshold")),
        context_max=_context_max(decision, recorded),
        target_tokens=decision.target_tokens if decision else _int(recorded.get("target_tokens")),
        min_target_tokens=decision.min_target_tokens
        if decision
        else _int(recorded.get("min_target_tokens")),
        tokens_before=_int(recorded.get("tokens_before")),
        tokens_after=_int(recorded.get("tokens_after")),
        reduction=_int(recorded.get("reduction")),
        reduction_ratio=_float(recorded.get("reduction_ratio")),
        reinjected_tokens=_int(reinjected),
        messages=None if artifact.snapshot is None else len(artifact.snapshot.messages),
        retries=len(retries),
        error_kinds=[str(r.get("error_type")) for r in retries if r.get("error_type")],
        findings=[f.key for f in findings],
        warnings=[f.key for f in findings if f.severity == "warning"],
        exact_counting=decision.exact_counting if decision else None,
        error=error,
    ).model_dump()


def _recorded_check(recorded: Mapping[str, Any]) -> Mapping[str, Any]:
    check = recorded.get("threshold_check")
    return check if isinstance(check, Mapping) else {}


def _recorded_hit(recorded: Mapping[str, Any]) -> bool | None:
    """What the artifact says the trigger did (a dump: it fired)."""
    if "hit" in recorded:
        return _bool(recorded.get("hit"))
    hit = _bool(_recorded_check(recorded).get("hit"))
    if hit is None and recorded.get("outcome") == "compressed":
        return True
    return hit


def _recorded_reason(recorded: Mapping[str, Any]) -> str | None:
    return _str(recorded.get("reason")) or _str(_recorded_check(recorded).get("reason"))


def _context_max(decision: Decision | None, recorded: Mapping[str, Any]) -> int | None:
    if decision is not None:
        value = _int(decision.numbers.get("context_max"))
        if value is not None:
            return value
        settings = decision.settings
        value = _int(getattr(settings, "context_max", None))
        if value is not None:
            return value
    return _int(recorded.get("context_max"))
