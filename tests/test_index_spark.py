"""The Spark recipe (`inspector.index.spark`) in local mode writes the same rows, in the same
hive layout, as `inspector index`: DuckDB reads both alike and answers the questions alike.

Slow (a JVM starts) and needs the `spark` extra, so it runs in its own target, `make
test-spark` (which sets INSPECTOR_TEST_SPARK=1); the default suite skips this module."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

if os.environ.get("INSPECTOR_TEST_SPARK") != "1":
    pytest.skip("the Spark recipe runs in `make test-spark`", allow_module_level=True)

pyspark = pytest.importorskip("pyspark", reason="make test-spark installs the spark extra")
duckdb = pytest.importorskip("duckdb")

from bench.bench_fleet_data import write_fleet  # noqa: E402
from inspector.index.questions import QUESTIONS, VIEW_SQL  # noqa: E402
from inspector.index.spark import index_with_spark  # noqa: E402
from inspector.index.writer import update_index  # noqa: E402
from tests.conftest import REPO  # noqa: E402


def _rows(folder: Path, sql: str = "SELECT * FROM decisions ORDER BY source, id") -> list[Any]:
    con = duckdb.connect()
    con.execute(VIEW_SQL.format(folder=folder))
    return [tuple(row) for row in con.execute(sql).fetchall()]


@pytest.fixture(scope="module")
def spark() -> Any:
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("inspector-index-test")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def test_spark_writes_the_rows_inspector_index_writes(spark: Any, tmp_path: Path) -> None:
    workspace = tmp_path / "fleet"
    write_fleet(workspace, files=300, sessions=6)
    sources = [str(REPO / "sample_dumps"), str(workspace)]
    ours, theirs = tmp_path / "ours", tmp_path / "spark"
    summary = update_index(sources, ours, workers=1)
    units = index_with_spark(spark, sources, str(theirs))
    assert units == summary.units == 5 + 6
    assert (theirs / "_SUCCESS").exists()
    dates = sorted(p.name for p in theirs.iterdir() if p.name.startswith("date="))
    assert dates == sorted(p.name for p in ours.iterdir() if p.name.startswith("date="))
    expected = _rows(ours)
    assert len(expected) == summary.rows_written > 600
    assert _rows(theirs) == expected
    for _, sql in QUESTIONS.values():
        assert _rows(theirs, sql) == _rows(ours, sql)
