"""`inspector index` on a generated 5,000-file fleet: the README's five DuckDB questions answered
as the generator wrote them, and an incremental re-run that adds only what is new. Run by
`make test-slow` (generating and indexing the fleet takes about a minute on two cores)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.bench_fleet_data import FleetTruth, write_fleet
from inspector.index.questions import QUESTIONS
from inspector.index.writer import update_index
from tests.test_index import _query

pytest.importorskip("duckdb")  # in the `test` extra: present wherever tests run


@pytest.fixture(scope="session")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, FleetTruth]:
    """A generated 5,000-file fleet and its index (both cores)."""
    root = tmp_path_factory.mktemp("fleet")
    truth = write_fleet(root / "workspace", files=5_000)
    summary = update_index([str(root / "workspace")], root / "index", workers=2)
    assert summary.files == 5_000 and summary.errors == 0
    return root, truth


# --- the five questions on a generated 5,000-file fleet, against the generator --------


def test_fleet_index_answers_the_five_questions(fleet: tuple[Path, FleetTruth]) -> None:
    root, truth = fleet
    index = root / "index"
    counts = dict(_query(index, "SELECT kind, count(*) FROM decisions GROUP BY kind"))
    assert counts == {"dump": truth.dumps, "debug": truth.debug_evaluations}
    stalled = _query(index, QUESTIONS["stalled_sessions"][1])
    assert [row[0] for row in stalled] == truth.stalled_sessions
    assert all(row[3] == pytest.approx(0.95) for row in stalled)
    reinjection = _query(index, QUESTIONS["reinjection_cancels"][1])
    assert {row[0]: [row[2], row[3]] for row in reinjection} == truth.reinjection
    assert {row[1] for row in reinjection} == {"0.1.17"}
    retries = _query(index, QUESTIONS["retries_by_error"][1])
    assert {(p, k): n for p, k, n in retries} == truth.retries
    per_day = _query(index, QUESTIONS["reasons_per_day"][1])
    assert {(d.isoformat(), r): n for d, r, n in per_day} == truth.reasons
    top = _query(index, QUESTIONS["top_savers"][1])
    expected = sorted(truth.saved.items(), key=lambda item: (-item[1], item[0]))[:5]
    assert [(row[0], row[2]) for row in top] == expected


def test_fleet_rerun_reads_nothing_and_a_new_dump_reindexes_its_session_only(
    fleet: tuple[Path, FleetTruth],
) -> None:
    root, truth = fleet
    workspace, index = root / "workspace", root / "index"
    again = update_index([str(workspace)], index, workers=2)
    assert (again.indexed_units, again.skipped_units, again.rows_written) == (0, 50, 0)
    logs = workspace / "context" / "fleet" / "s000_context" / "compression_logs"
    newest = sorted(logs.iterdir())[-1]
    copy = logs / newest.name.replace(newest.name[:13], str(int(newest.name[:13]) + 60_000))
    document = json.loads(newest.read_text())
    document["timestamp"] += 60
    copy.write_text(json.dumps(document, indent=2))
    try:
        grown = update_index([str(workspace)], index, workers=2)
        assert (grown.indexed_units, grown.skipped_units) == (1, 49)
        assert grown.rows_written == grown.rows_removed + 1
        total = _query(index, "SELECT count(*) FROM decisions WHERE kind = 'dump'")[0][0]
        assert total == truth.dumps + 1
    finally:
        copy.unlink()
        update_index([str(workspace)], index, workers=2)
