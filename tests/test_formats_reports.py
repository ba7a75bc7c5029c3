"""`compare --json`, `sweep --json` and `rerun --json` validate against the schemas
`inspector schema compare|sweep|rerun` prints, and against the models (the CLI contract)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from inspector.formats import CompareLine, RerunLine, SweepLine
from tests.conftest import REFERENCE
from tests.servers.fake_openai import FakeOpenAI, Reply
from tests.test_formats_schema import _run, _validator
from tests.test_standard_reference import STANDARD

RERUN = Path(__file__).parent / "data" / "rerun" / "0.1.17" / "compress_tiktoken"


def _lines(*args: str) -> list[dict[str, Any]]:
    done = _run(*args)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def test_compare_output_validates_for_every_family(tmp_path: Path) -> None:
    with gzip.open(STANDARD / "cases_0119.jsonl.gz", "rt", encoding="utf-8") as handle:
        case = json.loads(handle.readline())
    standard = tmp_path / "standard.json"
    standard.write_text(json.dumps(case), encoding="utf-8")
    lines = _lines("compare", str(REFERENCE / "k_long_coding_session"), str(standard), "--json")
    columns = [c["strategy"] for line in lines for c in line["strategies"]]
    assert {"current_round", "hybrid", "standard.dialogue"} <= set(columns)
    assert {c["after_source"] for line in lines for c in line["strategies"]} == {
        "dump",
        "estimate",
        "replay",
    }
    validator = _validator("compare")
    for line in lines:
        assert list(validator.iter_errors(line)) == []
        assert len(CompareLine.model_validate_json(json.dumps(line)).strategies) == len(
            line["strategies"]
        )
    # a column without its required key is refused by both
    broken = json.loads(json.dumps(lines[0]))
    del broken["strategies"][0]["tokens_after"]
    assert list(validator.iter_errors(broken))
    with pytest.raises(ValueError):
        CompareLine.model_validate(broken)


def test_sweep_output_validates() -> None:
    points = _lines(
        "sweep", str(REFERENCE / "e_target_below_min" / "input.json"), "--param",
        "trigger_context_ratio", "--json",
    )  # fmt: skip
    assert len(points) > 3 and any(p["flip"] for p in points)
    validator = _validator("sweep")
    for point in points:
        assert list(validator.iter_errors(point)) == []
        assert SweepLine.model_validate_json(json.dumps(point)).param == "trigger_context_ratio"


def test_rerun_output_validates(tmp_path: Path) -> None:
    scenario = json.loads((RERUN / "scenario.json").read_text())
    dump = next(p for p in RERUN.glob("*_*.json") if p.name[0].isdigit())
    with FakeOpenAI([Reply(**r) for r in scenario["replies"]]) as server:
        (line,) = _lines(
            "rerun", str(dump), "--base-url", server.base_url, "--model", "m", "--no-key",
            "--out", str(tmp_path / "out"), "--json",
        )  # fmt: skip
    assert line["outcome"] == "applied"
    assert list(_validator("rerun").iter_errors(line)) == []
    assert RerunLine.model_validate_json(json.dumps(line)).outcome == "applied"
