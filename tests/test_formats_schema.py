"""`inspector schema NAME`: every reference snapshot and dump validates against the printed
JSON Schema (and the models), and our own `why --json` / `stats --json` output against theirs."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from inspector.formats import DEBUG_RECORD, SCHEMA_NAMES, DumpDocument, StatsLine, WhyLine
from tests.conftest import PARITY_CASES, REFERENCE, REPO, SHARED

jsonschema = pytest.importorskip("jsonschema")  # in the `test` extra: present wherever tests run

STANDARD = SHARED / "reference" / "standard"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inspector", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )


@cache
def _validator(name: str) -> Any:
    done = _run("schema", name)
    assert done.returncode == 0, done.stderr
    schema = json.loads(done.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _snapshots() -> list[tuple[str, Any]]:
    found = [
        (f"parity line {n}", json.loads(line))
        for n, line in enumerate(PARITY_CASES.read_text().splitlines(), 1)
    ]
    found += [(str(p), json.loads(p.read_text())) for p in sorted(REFERENCE.rglob("input.json"))]
    for path in sorted(STANDARD.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            found += [
                (f"{path.name} line {n}", json.loads(line)) for n, line in enumerate(handle, 1)
            ]
    return found


def test_every_reference_snapshot_validates_against_the_printed_schema() -> None:
    snapshots = _snapshots()
    assert len(snapshots) >= 300 + 20 + 465  # parity, scenario inputs, the three gz corpora
    validator = _validator("snapshot")
    failures = [(name, e.message) for name, doc in snapshots for e in validator.iter_errors(doc)]
    assert failures == []


def test_snapshots_we_write_validate_against_the_schema_we_print() -> None:
    done = _run("snapshot", str(REFERENCE))
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(lines) >= 40 and all("error" not in line for line in lines)
    validator = _validator("snapshot")
    assert [e.message for line in lines for e in validator.iter_errors(line)] == []


def test_the_snapshot_schema_refuses_what_the_reader_refuses() -> None:
    validator = _validator("snapshot")
    good = json.loads(PARITY_CASES.read_text().splitlines()[0])
    for bad in (
        {**good, "context_max": "476"},
        {**good, "context_max": True},
        {**good, "token_mode": "bytes"},
        {**good, "processor_family": "odd"},
        {key: value for key, value in good.items() if key != "messages"},
        {**good, "messages": [{"content": "no role"}]},
    ):
        assert not validator.is_valid(bad)


def _dumps() -> list[Path]:
    return sorted(REFERENCE.rglob("*Compressor_*.json"))


def test_every_reference_dump_validates_against_the_model_and_the_schema() -> None:
    dumps = _dumps()
    assert len(dumps) >= 15
    validator = _validator("dump")
    for path in dumps:
        document = json.loads(path.read_text())
        model = DumpDocument.model_validate(document)
        assert model.benefit is not None and model.benefit.tokens_before is not None
        assert list(validator.iter_errors(document)) == [], path


def test_every_reference_debug_record_validates_against_the_union_and_the_schema() -> None:
    validator = _validator("debug")
    records = [
        json.loads(line)
        for path in sorted(REFERENCE.rglob("*.jsonl"))
        for line in path.read_text().splitlines()
        if line.strip()
    ]
    assert len(records) > 30
    for record in records:
        assert DEBUG_RECORD.validate_python(record).event == record["event"]
        assert list(validator.iter_errors(record)) == []


def test_why_and_stats_output_validate_against_their_schemas() -> None:
    why = _run("why", str(REFERENCE), "--json")
    assert why.returncode == 0, why.stderr
    lines = [json.loads(line) for line in why.stdout.splitlines()]
    assert {line["kind"] for line in lines} == {"dump", "debug", "snapshot"}
    validator = _validator("why")
    for line in lines:
        assert list(validator.iter_errors(line)) == []
        assert WhyLine.model_validate_json(json.dumps(line)).kind == line["kind"]
    stats = _run("stats", str(REFERENCE), "--json")
    last = json.loads(stats.stdout.splitlines()[-1])
    assert list(_validator("stats").iter_errors(last)) == []
    assert (
        StatsLine.model_validate_json(stats.stdout.splitlines()[-1]).compressions
        == last["compressions"]
        > 0
    )


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_each_schema_is_a_valid_draft_2020_12_schema(name: str) -> None:
    schema = _validator(name).schema
    assert schema["$schema"].endswith("2020-12/schema") and name in schema["title"]


def test_an_unknown_schema_name_is_a_usage_error() -> None:
    done = _run("schema", "no_such_format")
    assert done.returncode == 2 and "invalid choice" in done.stderr and not done.stdout
