"""Timelines made when first read are the ones made at once: a debug artifact's timeline
(now `LazyTimelines`, read through `debug_artifact`'s lazy `extra`) equals that of a dump of
the same session (read at once), names the artifact's own evaluation, and the mapping
equals `session_timelines` on the same runs."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from inspector.core.artifact import Artifact
from inspector.core.timeline import (
    DebugRecord,
    LazyTimelines,
    group_runs,
    link_runs,
    safe_name,
    session_timelines,
)
from inspector.sources.loader import load_paths

ROOT = Path(__file__).resolve().parent.parent


def test_a_debug_artifacts_timeline_is_its_sessions() -> None:
    by_session: dict[str, dict[str, list[Artifact]]] = defaultdict(lambda: defaultdict(list))
    for item in load_paths([ROOT / "sample_dumps"]):
        if isinstance(item, Artifact) and item.kind in ("dump", "debug") and item.session_id:
            by_session[safe_name(item.session_id)][item.kind].append(item)
    both = [kinds for kinds in by_session.values() if kinds["dump"] and kinds["debug"]]
    assert len(both) >= 3
    for kinds in both:
        shown = kinds["dump"][0].extra["timeline"]
        assert shown  # the dump's timeline, made at once
        for artifact in kinds["debug"]:
            timeline = artifact.extra["timeline"]
            assert timeline == shown
            own = [
                e
                for e in timeline
                if e["kind"] == "evaluation"
                and e["index"] == artifact.extra["run_index"]
                and e["processor"] == artifact.processor
                and e["context_id"] == artifact.context_id
            ]
            assert len(own) == 1


def test_lazy_timelines_equal_session_timelines() -> None:
    records: list[Any] = []
    for n in range(12):
        raw = {
            "event": "threshold_check" if n % 3 == 0 else "compression_retry",
            "timestamp": 100.0 + n,
            "processor": "CurrentRoundCompressor",
            "session_id": f"s/{n % 2}",
            "context_id": "c",
            "reason": "reached_threshold",
        }
        records.append(DebugRecord(raw, "log.jsonl", n + 1))
    runs, _ = link_runs(group_runs(records), [], dumps_loaded=False)
    eager = session_timelines(runs, [])
    lazy = LazyTimelines(runs, [])
    assert dict(lazy) == eager
    assert len(lazy) == len(eager) == 2
    assert lazy.get("nobody") is None
