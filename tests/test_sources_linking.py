"""Debug-log evaluations get their context from a snapshot naming them (session, context, time).

Covers the rule in `inspector.sources.loader`: the sample folder's
`inspector_snapshots.jsonl` files give every debug artifact its context, re-evaluating it
reproduces what the log recorded, and a snapshot's `timestamp` picks its evaluation among
several of the same processor, session and context.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import main
from inspector.core.artifact import Artifact, LoadError
from inspector.core.engine import ContextEngine
from inspector.core.tokens import TokenCounter
from inspector.sources.loader import EVALUATION_TOLERANCE_SECONDS, load_paths
from tools import samples

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "sample_dumps"
DOCS = COMMITTED / "workspace" / "context" / "docs-rewrite_context"
DOCS_LOG = DOCS / "context_debug" / "CurrentRoundCompressor.jsonl"
DOCS_SNAPSHOTS = DOCS / samples.SNAPSHOTS_FILE


@pytest.fixture(scope="module")
def committed(counters: dict[str, TokenCounter]) -> list[Any]:
    """The committed sample folder, loaded once."""
    return list(load_paths([COMMITTED], counters=counters))


def _artifacts(results: list[Any], kind: str | None = None) -> list[Artifact]:
    return [r for r in results if isinstance(r, Artifact) and (kind is None or r.kind == kind)]


def _snapshot_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _check_numbers(artifact: Artifact, counters: dict[str, TokenCounter]) -> None:
    """Re-evaluating the artifact's context under its tuning gives the logged check."""
    assert artifact.snapshot is not None, artifact.id
    tuning = artifact.snapshot.tuning
    ev = ContextEngine(artifact.snapshot, counters).evaluate(tuning)
    check = artifact.recorded["threshold_check"]
    assert (ev.reason, ev.total_tokens, ev.threshold, ev.hit) == (
        check["reason"],
        check["total_tokens"],
        check["threshold"],
        check["hit"],
    ), artifact.id
    assert tuning.context_max == check["context_max"], artifact.id
    if "target_tokens" in check:
        assert ev.target_tokens == check["target_tokens"], artifact.id
    if "min_target_tokens" in check:
        assert ev.min_target_tokens == check["min_target_tokens"], artifact.id
    if artifact.recorded["span"] is not None:
        assert ev.span.counts == artifact.recorded["span"], artifact.id


def test_every_sample_debug_artifact_has_its_context_and_reproduces_the_log(
    committed: list[Any], counters: dict[str, TokenCounter]
) -> None:
    assert not [r for r in committed if isinstance(r, LoadError)]
    debug = _artifacts(committed, "debug")
    assert len(debug) == 29
    outcomes = {a.recorded["outcome"] for a in debug}
    assert outcomes == {"not_compressed", "silent_end", "failed"}
    reasons = {a.recorded["reason"] for a in debug}
    assert reasons == {
        "below_threshold",
        "no_compressible_span",
        "target_below_min",
        "reached_threshold",
    }
    for artifact in debug:
        assert artifact.extra["context_link"] == "evaluation", artifact.id
        assert artifact.extra["context_from"].endswith(samples.SNAPSHOTS_FILE)
        assert artifact.extra["context_snapshot_id"] == artifact.id
        _check_numbers(artifact, counters)
    # linked snapshots are shown through their debug artifact, not a second time
    assert _artifacts(committed, "snapshot") == []
    assert len(_artifacts(committed)) == 29 + 8


def test_sample_snapshots_are_the_generator_contexts(counters: dict[str, TokenCounter]) -> None:
    for build in samples.SESSIONS:
        counter = (
            counters["len_div_4"]
            if "len//4" in (build.__doc__ or "")
            else counters["tiktoken_cl100k"]
        )
        session = build(counter)
        not_dumped = [o for o in session.outcomes if not o.startswith("compressed")]
        assert len(session.snapshots) == len(not_dumped) > 0, session.session_id
        checks = {r["timestamp"] for r in session.records if r["event"] == "threshold_check"}
        for snapshot in session.snapshots:
            assert snapshot["timestamp"] in checks
            assert (snapshot["session_id"], snapshot["context_id"]) == (
                session.session_id,
                session.context_id,
            )
        path = (
            COMMITTED
            / "workspace"
            / "context"
            / f"{session.session_id}_context"
            / samples.SNAPSHOTS_FILE
        )
        assert _snapshot_lines(path) == session.snapshots


def test_why_json_for_sample_debug_artifacts_has_decision_fields(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["why", str(COMMITTED), "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    debug = [line for line in lines if line["kind"] == "debug"]
    assert len(debug) == 29
    for line in debug:
        for key in ("hit", "reason", "total_tokens", "threshold", "span", "checks"):
            assert line[key] is not None, (line["id"], key)
        recorded = line["recorded"]
        assert (line["reason"], line["total_tokens"], line["threshold"]) == (
            recorded["reason"],
            recorded["total_tokens"],
            recorded["threshold"],
        ), line["id"]


def test_snapshot_command_exports_debug_contexts_as_the_sample_files(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["snapshot", str(COMMITTED)]) == 0
    exported = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    on_disk = {
        line["id"]: line
        for path in COMMITTED.rglob(samples.SNAPSHOTS_FILE)
        for line in _snapshot_lines(path)
    }
    debug = [line for line in exported if line["kind"] == "debug"]
    assert len(debug) == len(on_disk) == 29
    for line in debug:
        # the export adds the release the files told (the sample files do not record it)
        assert line.get("openjiuwen_version") in (None, "0.1.17", "0.1.18")
        skip = ("source", "kind", "openjiuwen_version")
        stripped = {k: v for k, v in line.items() if k not in skip}
        assert stripped == on_disk[line["id"]]
    dumps = [line for line in exported if line["kind"] == "dump"]
    assert dumps and all(isinstance(line["timestamp"], float) for line in dumps)


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text(
        "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8"
    )
    return path


def test_timestamp_picks_the_right_evaluation_among_several(
    tmp_path: Path, counters: dict[str, TokenCounter]
) -> None:
    snapshots = _snapshot_lines(DOCS_SNAPSHOTS)
    assert len(snapshots) == 5
    # ids that do not give the answer away, in reverse order, in a separate folder
    shuffled = [dict(s, id=f"exported-{n}") for n, s in enumerate(reversed(snapshots))]
    folder = tmp_path / "exports"
    folder.mkdir()
    snaps = _write(folder / "contexts.jsonl", shuffled)
    results = list(load_paths([DOCS_LOG, snaps], counters=counters))
    debug = _artifacts(results, "debug")
    assert len(debug) == 5 and _artifacts(results, "snapshot") == []
    by_time = {s["timestamp"]: s for s in shuffled}
    lengths = set()
    for artifact in debug:
        assert artifact.snapshot is not None
        expected = by_time[artifact.recorded["threshold_check"]["timestamp"]]
        assert artifact.snapshot.id == expected["id"]
        assert len(artifact.snapshot.messages) == len(expected["messages"])
        lengths.add(len(artifact.snapshot.messages))
        _check_numbers(artifact, counters)
    assert len(lengths) == 5  # five different contexts, each with its own check


def test_timestamp_linking_edge_cases(tmp_path: Path, counters: dict[str, TokenCounter]) -> None:
    snapshots = _snapshot_lines(DOCS_SNAPSHOTS)
    first, second, third = snapshots[0], snapshots[1], snapshots[2]
    near = EVALUATION_TOLERANCE_SECONDS / 2
    lines = [
        # a time rounded to the millisecond still names its check
        dict(first, id="rounded", timestamp=round(first["timestamp"] + near, 6)),
        # two snapshots for one check: neither is used
        dict(second, id="twin-a"),
        dict(second, id="twin-b"),
        # a time no check has: a plain snapshot
        dict(third, id="elsewhere", timestamp=third["timestamp"] + 60),
    ]
    snaps = _write(tmp_path / "contexts.jsonl", lines)
    results = list(load_paths([DOCS_LOG, snaps], counters=counters))
    by_index = {a.extra["run_index"]: a for a in _artifacts(results, "debug")}
    assert by_index[1].snapshot is not None and by_index[1].snapshot.id == "rounded"
    assert by_index[1].extra["context_link"] == "evaluation"
    assert by_index[2].snapshot is None and by_index[3].snapshot is None
    left = sorted(a.id for a in _artifacts(results, "snapshot"))
    assert left == ["elsewhere", "twin-a", "twin-b"]


def test_without_timestamp_only_a_single_evaluation_links(
    tmp_path: Path, counters: dict[str, TokenCounter]
) -> None:
    first = _snapshot_lines(DOCS_SNAPSHOTS)[0]
    untimed = {k: v for k, v in first.items() if k != "timestamp"}
    snaps = _write(tmp_path / "contexts.jsonl", [dict(untimed, id="untimed")])
    # the log holds five checks for this key: an untimed snapshot names none of them
    results = list(load_paths([DOCS_LOG, snaps], counters=counters))
    assert all(a.snapshot is None for a in _artifacts(results, "debug"))
    assert [a.id for a in _artifacts(results, "snapshot")] == ["untimed"]
    # a log holding just the first check: the session rule links it, the snapshot stays
    one = _write(tmp_path / "one.jsonl", [json.loads(DOCS_LOG.read_text().splitlines()[0])])
    results = list(load_paths([one, snaps], counters=counters))
    (debug,) = _artifacts(results, "debug")
    assert debug.snapshot is not None and debug.extra["context_link"] == "session"
    assert [a.id for a in _artifacts(results, "snapshot")] == ["untimed"]
    _check_numbers(debug, counters)


def test_following_the_samples_shows_each_linked_context_once() -> None:
    from inspector.sources.follow import FileFollower

    follower = FileFollower([COMMITTED], settle=0)
    artifacts = [e.artifact for e in follower.poll() if hasattr(e, "artifact")]
    kinds = sorted(a.kind for a in artifacts)
    assert kinds.count("debug") == 29 and kinds.count("dump") == 8 and len(kinds) == 37
    assert all(a.snapshot is not None for a in artifacts)
    assert follower.poll() == []
