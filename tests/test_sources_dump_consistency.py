"""A dump opened on its own never contradicts itself (issue 12): it exists only because the
trigger fired and the region was big enough, so unrecorded ratios are taken in the range the
dump's numbers allow, listed as inferred, and the headline verdict is "compresses"."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from inspector.cli import main
from tests.conftest import REFERENCE

DUMPS = sorted(p for p in REFERENCE.rglob("*Compressor_*.json") if "p_dir" not in str(p))
pytestmark = pytest.mark.skipif(not DUMPS, reason="reference dumps not available")


def why(path: Path, capsys: pytest.CaptureFixture[str]) -> list[dict]:
    assert main(["why", str(path), "--json"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_lone_dumps_say_what_happened(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for dump in DUMPS:
        shutil.copy(dump, tmp_path / dump.name)
    records = [r for r in why(tmp_path, capsys) if r["kind"] == "dump"]
    assert len(records) == len(DUMPS) >= 10
    for record in records:
        assert record["hit"] is True, (record["id"], record["reason"])
        inferred = record["recorded"]["inferred"]
        trigger = inferred["trigger_ratio"]
        assert "not recorded" in trigger["from"]
        # the ratio used lies in the range the dump allows: threshold <= the trigger total
        assert 0 < trigger["value"] <= trigger["max"]
        assert record["threshold"] <= record["total_tokens"]
        assert inferred["min_target_ratio"]["value"] <= inferred["min_target_ratio"]["max"]


def test_a_linked_check_still_gives_the_recorded_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    scenario = REFERENCE / "a_current_round_plain"
    records = [r for r in why(scenario, capsys) if r["kind"] == "dump"]
    assert records and all(r["hit"] for r in records)
    trigger = records[0]["recorded"]["inferred"]["trigger_ratio"]
    assert trigger["from"].startswith("threshold_check.threshold")


def test_a_what_if_on_a_lone_dump_may_disagree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(DUMPS[0], tmp_path / DUMPS[0].name)
    assert main(["why", str(tmp_path), "--json", "--trigger-ratio", "0.99"]) == 0
    record = json.loads(capsys.readouterr().out.splitlines()[0])
    assert record["hit"] is False and record["reason"] == "below_threshold"
