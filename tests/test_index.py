"""`inspector index`: one Parquet row per evaluation, incremental, schema published, and the
README's five DuckDB questions answered on the sample dumps (checked against `why --json`). The generated 5,000-file
fleet is in `slow_tests/test_index_fleet.py` (`make test-slow`)."""

from __future__ import annotations

import json
import pickle
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from inspector.formats.index import IndexRow
from inspector.index.questions import QUESTIONS, VIEW_SQL
from inspector.index.rows import index_unit, unit_of, units
from inspector.index.writer import MANIFEST, update_index
from tests.conftest import REPO

duckdb = pytest.importorskip("duckdb")  # in the `test` extra: present wherever tests run
jsonschema = pytest.importorskip("jsonschema")
SAMPLES = REPO / "sample_dumps"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inspector", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )


def _query(folder: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect()
    con.execute(VIEW_SQL.format(folder=folder))
    return [tuple(row) for row in con.execute(sql).fetchall()]


def _rows(folder: Path) -> list[dict[str, Any]]:
    con = duckdb.connect()
    con.execute(VIEW_SQL.format(folder=folder))
    cursor = con.execute("SELECT * FROM decisions ORDER BY source, id")
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


@pytest.fixture(scope="module")
def sample_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample dumps indexed by the real command."""
    out = tmp_path_factory.mktemp("sample-index") / "index"
    done = _cli("index", str(SAMPLES), "--out", str(out), "--jobs", "1")
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def why_lines() -> list[dict[str, Any]]:
    """`inspector why --json` on the sample dumps, given as an absolute folder."""
    done = _cli("why", str(SAMPLES.resolve()), "--json")
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_one_row_per_evaluation_as_why_reports_it(
    sample_index: Path, why_lines: list[dict[str, Any]]
) -> None:
    rows = {(r["source"], r["id"]): r for r in _rows(sample_index)}
    expected = [line for line in why_lines if line["kind"] != "llm_request"]
    assert len(rows) == len(expected) > 30
    for line in expected:
        row = rows[(line["source"], line["id"])]
        assert row["kind"] == line["kind"]
        assert row["evaluated"] == ("verdict" in line)
        assert (row["hit"], row["reason"], row["verdict"]) == (
            line["hit"],
            line["reason"],
            line.get("verdict"),
        )
        assert (row["total_tokens"], row["threshold"]) == (
            line["total_tokens"],
            line["threshold"],
        )
        assert row["findings"] == [f["key"] for f in line["findings"]]
        assert row["release_profile"] == line.get("release_profile")
        recorded = line["recorded"]
        assert row["outcome"] == recorded.get("outcome")
        assert row["reduction"] == recorded.get("reduction")
        assert row["retries"] == len(recorded.get("retries") or [])
        assert row["error_kinds"] == [r["error_type"] for r in recorded.get("retries") or []]
    assert {r["date"].isoformat() for r in rows.values()} == {
        p.name.split("=", 1)[1] for p in sample_index.iterdir() if p.is_dir()
    }


def test_every_row_validates_against_the_published_schema(sample_index: Path) -> None:
    done = _cli("schema", "index")
    assert done.returncode == 0, done.stderr
    validator = jsonschema.Draft202012Validator(json.loads(done.stdout))
    rows = _rows(sample_index)
    for row in rows:
        row["date"] = row["date"].isoformat()
        assert list(validator.iter_errors(row)) == [], row["id"]
        assert IndexRow.model_validate(row).id == row["id"]
    assert set(rows[0]) == set(IndexRow.model_fields)


def test_the_indexing_function_is_picklable_and_pool_results_equal_serial(
    tmp_path: Path, sample_index: Path
) -> None:
    assert pickle.loads(pickle.dumps(index_unit)) is index_unit
    update_index([str(SAMPLES)], tmp_path / "pooled", workers=2)
    pooled = _rows(tmp_path / "pooled")
    assert pooled == _rows(sample_index)
    # a session's dumps, debug log and snapshots are one unit; any other file its own
    assert unit_of("/w/s_context/compression_logs/1_P_s.json") == "/w/s_context"
    assert unit_of("/w/s_context/inspector_snapshots.jsonl") == "/w/s_context"
    assert unit_of("/w/loose.json") == "/w/loose.json"
    assert list(units(["/b.json", "/w/s_context/context_debug/P.jsonl"])) == [
        "/b.json",
        "/w/s_context",
    ]


def _copy_samples(tmp_path: Path) -> Path:
    source = tmp_path / "src"
    shutil.copytree(SAMPLES / "workspace", source / "workspace")
    return source


def test_a_rerun_adds_only_what_is_new_or_changed(tmp_path: Path) -> None:
    source = _copy_samples(tmp_path)
    out = tmp_path / "index"
    first = update_index([str(source)], out)
    assert first.indexed_units == 5 and first.rows_written == len(_rows(out))
    again = update_index([str(source)], out)
    assert (again.indexed_units, again.rows_written, again.skipped_units) == (0, 0, 5)
    # a new session folder: only it is read
    context = source / "workspace" / "context"
    shutil.copytree(context / "ui-review-images_context", context / "ui-copy_context")
    added = update_index([str(source)], out)
    assert added.indexed_units == 1 and added.skipped_units == 5
    assert (
        added.rows_written
        == Counter(r["unit"] for r in _rows(out))[str(context / "ui-copy_context")]
    )
    assert len(_rows(out)) == first.rows_written + added.rows_written
    # a touched file with the same content: skipped by its hash, manifest refreshed
    log = context / "docs-rewrite_context" / "context_debug" / "CurrentRoundCompressor.jsonl"
    log.touch()
    assert update_index([str(source)], out).indexed_units == 0
    # a debug log that grew by one evaluation: its unit's rows are replaced, not duplicated
    before = len(_rows(out))
    record = json.loads(log.read_text().splitlines()[0])
    record["timestamp"] += 100_000
    with log.open("a") as handle:
        handle.write(json.dumps(record) + "\n")
    grown = update_index([str(source)], out)
    assert grown.indexed_units == 1 and grown.rows_removed > 0
    rows = _rows(out)
    assert len(rows) == before + 1
    assert len({(r["source"], r["id"]) for r in rows}) == len(rows)
    manifest = json.loads((out / MANIFEST).read_text())
    assert str(log) in manifest["units"][str(context / "docs-rewrite_context")]["files"]


def test_an_unreadable_file_is_an_error_row_and_exit_1(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "broken.json").write_text('{"processor_type": "CurrentRoundCompressor", ')
    done = _cli("index", str(folder), "--out", str(tmp_path / "index"), "--json")
    assert done.returncode == 1 and "could not be read" in done.stderr
    assert json.loads(done.stdout)["errors"] == 1
    (row,) = _rows(tmp_path / "index")
    assert row["kind"] == "error" and row["error"] and row["source"].endswith("broken.json")


def test_the_index_is_never_written_inside_a_source_folder(tmp_path: Path) -> None:
    source = _copy_samples(tmp_path)
    done = _cli("index", str(source), "--out", str(source / "idx"))
    assert done.returncode == 2 and "inside the source folder" in done.stderr
    assert not (source / "idx").exists()
    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / "notes.txt").write_text("mine")
    done = _cli("index", str(source), "--out", str(stray))
    assert done.returncode == 2 and "not an index" in done.stderr


def test_the_index_modules_load_neither_textual_nor_rich() -> None:
    code = (
        "import sys, inspector.index.rows, inspector.index.writer, inspector.cli.index; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr


def test_the_readme_shows_each_question_with_its_sql() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for question, sql in QUESTIONS.values():
        assert question in readme and sql in readme


# --- the five questions on the sample dumps, against `why --json` -----------------------


def _sessions(lines: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        if line["kind"] in ("dump", "debug"):
            session = line["id"].split("/")[0] if line["kind"] == "debug" else None
            found.setdefault(session or _dump_session(line), []).append(line)
    return found


def _dump_session(line: dict[str, Any]) -> str:
    return json.loads(Path(line["source"]).read_text())["session_id"]


def test_sample_questions_match_why(sample_index: Path, why_lines: list[dict[str, Any]]) -> None:
    stalled = sorted(
        session
        for session, lines in _sessions(why_lines).items()
        if any(
            line["hit"] and line["total_tokens"] >= 0.9 * line["recorded"]["context_max"]
            for line in lines
        )
        and not any(line["recorded"].get("outcome") == "compressed" for line in lines)
    )
    found = _query(sample_index, QUESTIONS["stalled_sessions"][1])
    assert [row[0] for row in found] == stalled == ["docs-rewrite"]
    dumps = [line for line in why_lines if line["kind"] == "dump"]
    reinjection = _query(sample_index, QUESTIONS["reinjection_cancels"][1])
    assert sum(row[2] for row in reinjection) == len(dumps)
    retries = Counter(
        (line["processor"], retry["error_type"])
        for line in why_lines
        for retry in line["recorded"].get("retries") or []
    )
    assert {(p, k): n for p, k, n in _query(sample_index, QUESTIONS["retries_by_error"][1])} == (
        dict(retries)
    )
    reasons = Counter(
        line["reason"] for line in why_lines if line["kind"] == "debug" and line["hit"] is False
    )
    per_day = _query(sample_index, QUESTIONS["reasons_per_day"][1])
    totals: Counter[str] = Counter()
    for _, reason, count in per_day:
        totals[reason] += count
    assert totals == reasons
    saved: Counter[str] = Counter()
    for line in dumps:
        saved[_dump_session(line)] += line["recorded"]["reduction"]
    top = _query(sample_index, QUESTIONS["top_savers"][1])
    assert [(row[0], row[2]) for row in top] == sorted(saved.items(), key=lambda i: (-i[1], i[0]))[
        :5
    ]


def test_a_big_log_on_its_own_is_indexed_record_by_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import inspector.sources.jsonio as jsonio
    import inspector.sources.loader as loader

    log = str(
        (SAMPLES / "workspace/context/ops-incident-42_context/context_debug").resolve()
        / "CurrentRoundCompressor.jsonl"
    )
    batch = index_unit([log])
    monkeypatch.setattr(jsonio, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(loader, "load_paths", lambda *a, **k: iter(()))  # not used
    streamed = index_unit([log])
    assert streamed == batch and len(batch) == 7
