"""Timelines made when first read are the ones made at once: a debug artifact's timeline
(now `LazyTimelines`, read through `debug_artifact`'s lazy `extra`) equals that of a dump of
the same session (read at once), names the artifact's own evaluation, and the mapping
equals `session_timelines` on the same runs."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from inspector.core.artifact import Artifact
from inspector.core.session_timelines import LazyTimelines, session_timeline, session_timelines
from inspector.core.timeline import (
    DebugRecord,
    DumpRef,
    EvaluationRun,
    ModelCall,
    group_runs,
    link_runs,
    safe_name,
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


def _check(t: float, session: str | None) -> DebugRecord:
    raw = {
        "event": "threshold_check",
        "timestamp": t,
        "processor": "CurrentRoundCompressor",
        "session_id": session,
        "context_id": "c",
        "reason": "below_threshold",
    }
    return DebugRecord(raw, "log.jsonl", int(t))


def _mixed() -> tuple[list[Any], list[DumpRef], list[ModelCall]]:
    """Runs of three sessions (two ids with one safe() form), a model call, unlinked dumps."""
    records = [_check(100.0 + n, session) for n, session in enumerate(["a/b", "x", "a b", "x"])]
    records.append(_check(110.0, None))
    dumps = [
        DumpRef("d1", "DialogueCompressor", "a/b", "c", 100.5),
        DumpRef("d2", "DialogueCompressor", None, "c", None),
    ]
    runs, _ = link_runs(group_runs(records), dumps, dumps_loaded=True)
    calls = [ModelCall("a-b/c/llm_request#0", "a b", "c", 102.5, sequence=0)]
    return runs, dumps, calls


def _counted(monkeypatch: Any) -> list[Any]:
    """The session of each run made into a timeline entry from now on."""
    made: list[Any] = []
    to_dict = EvaluationRun.to_dict

    def counted(run: EvaluationRun) -> dict[str, Any]:
        made.append(run.session_id)
        return to_dict(run)

    monkeypatch.setattr(EvaluationRun, "to_dict", counted)
    return made


def test_each_session_is_made_alone_and_equals_the_whole(monkeypatch: Any) -> None:
    runs, dumps, calls = _mixed()
    eager = session_timelines(runs, dumps, calls)
    made = _counted(monkeypatch)
    lazy = LazyTimelines(runs, dumps, calls)
    timeline = lazy["a-b"]
    assert sorted(made) == ["a b", "a/b"]  # no other session's run was made into an entry
    assert [(e["kind"], e["timestamp"]) for e in timeline] == [
        ("evaluation", 100.0),
        ("dump", 100.5),
        ("evaluation", 102.0),
        ("llm_request", 102.5),
    ]
    assert timeline[2]["model_call"]["id"] == "a-b/c/llm_request#0"
    assert lazy["a-b"] is timeline  # made once
    # every session, read in another order than it was found, as the whole mapping has it
    for key in reversed(list(eager)):
        assert lazy[key] == eager[key]
    assert list(lazy) == list(eager) == ["a-b", "x", None]
    assert [e["kind"] for e in lazy[None]] == ["dump", "evaluation"]  # no time sorts first
    assert len(made) == len(runs)  # each run made into an entry once, when its session was read
    assert lazy.get("nobody") is None
    assert session_timeline(runs, dumps, "a/b", calls) == eager["a-b"]
    assert session_timeline(runs, dumps, "nobody", calls) == []


def test_without_each_the_first_read_makes_every_session(monkeypatch: Any) -> None:
    """A full load reads every session's timeline: all are made at the first read."""
    runs, dumps, calls = _mixed()
    eager = session_timelines(runs, dumps, calls)
    made = _counted(monkeypatch)
    lazy = LazyTimelines(runs, dumps, calls, each=False)
    assert made == []
    assert lazy["x"] == eager["x"]
    assert len(made) == len(runs)  # every session's runs, at once
    assert dict(lazy) == eager and len(made) == len(runs)
    assert lazy.get("nobody") is None
