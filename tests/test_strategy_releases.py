"""The release profiles through the strategy protocol and the CLI: `why --json` on the corpora
the real releases computed agrees on every decision field, the release and its evidence are
reported, `--openjiuwen` overrides, and what was assumed is never called exact."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import main
from inspector.core.snapshot import snapshot_from_dict
from inspector.core.strategy.selection import select
from inspector.encoding import make_counters

DATA = Path(__file__).parent / "data" / "parity"
CORPORA = {
    "0.1.17.post2": DATA / "openjiuwen-0.1.17.post2.jsonl.gz",
    "0.1.19.post2": DATA / "openjiuwen-0.1.19.post2.jsonl.gz",
}
FIELDS = ("hit", "reason", "total_tokens", "threshold", "target_tokens", "min_target_tokens")


def cases(release: str) -> list[dict[str, Any]]:
    """The corpus the real release computed."""
    with gzip.open(CORPORA[release], "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def why_json(path: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> list[dict[str, Any]]:
    """`inspector why PATH --json FLAGS` in process."""
    assert main(["why", str(path), "--json", *flags]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def disagreements(records: list[dict[str, Any]], expected: list[dict[str, Any]]) -> list[str]:
    """Ids whose decision fields differ from the library's."""
    out = []
    for record, case in zip(records, expected, strict=True):
        want = case["expected"]
        if any(record[key] != want[key] for key in FIELDS) or record["span"] != want["span"]:
            out.append(case["id"])
    return out


@pytest.mark.parametrize("release", sorted(CORPORA))
def test_why_agrees_with_the_release_on_every_field(
    release: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = cases(release)
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(json.dumps(c) for c in expected), encoding="utf-8")
    records = why_json(path, capsys)
    assert len(records) == len(expected) >= 600
    assert disagreements(records, expected) == []
    assert {r["openjiuwen_version"] for r in records} == {release}
    assert all("recorded in the file" in r["version_evidence"] for r in records)
    assert all(r["exact_counting"] for r in records)


def test_without_the_release_the_flag_decides_and_the_report_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = cases("0.1.19.post2")
    # keep the counter, drop the release: only usage records could still tell it
    stripped = [{k: v for k, v in c.items() if k != "openjiuwen_version"} for c in expected]
    path = tmp_path / "stripped.jsonl"
    path.write_text("\n".join(json.dumps(c) for c in stripped), encoding="utf-8")
    told = why_json(path, capsys, "--openjiuwen", "0.1.19.post2")
    assert disagreements(told, expected) == []
    assert {r["version_evidence"] for r in told} == {"set by the user"}
    wrong = why_json(path, capsys, "--openjiuwen", "0.1.17")
    # 0.1.17 has no StringLengthCounter: under its rules many decisions change
    assert len(disagreements(wrong, expected)) > len(expected) // 10
    assert all(r["openjiuwen_version"] == "0.1.17" for r in wrong)


def test_nothing_tells_the_release_newest_assumed_and_not_exact() -> None:
    raw = cases("0.1.19.post2")[0]
    for key in ("openjiuwen_version", "token_mode", "engine_config"):
        raw.pop(key, None)
    for message in raw["messages"]:
        message.pop("usage_metadata", None)
    snapshot = snapshot_from_dict(raw)
    selection = select(snapshot, {})
    assert {"openjiuwen_version", "token_mode"} <= selection.assumed
    strategy = selection.strategy
    decision = strategy.decide(strategy.prepare(snapshot, make_counters()), selection.settings)
    assert decision.numbers["openjiuwen_version"] == "0.1.19.post2"
    assert "assuming the newest" in decision.numbers["version_evidence"]
    assert not decision.exact_counting
    assert "assuming" in decision.counting_note


def test_a_recorded_no_counter_mode_means_0_1_17() -> None:
    raw = cases("0.1.17.post2")[0]
    raw.pop("openjiuwen_version", None)
    raw["token_mode"] = "len_div_4"
    for message in raw["messages"]:
        message.pop("usage_metadata", None)
    selection = select(snapshot_from_dict(raw), {})
    assert selection.settings.openjiuwen_version.startswith("0.1.17")  # type: ignore[attr-defined]
    assert "openjiuwen_version" not in selection.assumed


def test_bad_release_flag_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["why", "x.json", "--family", "forked", "--openjiuwen", "0.1.16"]) == 2
    assert "--openjiuwen: '0.1.16' is not allowed" in capsys.readouterr().err
    assert main(["why", "x.json", "--openjiuwen", "abc"]) == 2
    assert "--openjiuwen: 'abc' is not allowed" in capsys.readouterr().err


def test_a_release_only_the_standard_family_has_passes_the_flag_check(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """0.1.16 has no forked compressors but is a standard release: with `--family standard`
    (or no family, since the files may be standard snapshots) the flag is not refused."""
    for family in (["--family", "standard"], []):
        assert main(["why", "x.json", *family, "--openjiuwen", "0.1.16"]) == 1
        err = capsys.readouterr().err
        assert "no such file" in err and "--openjiuwen" not in err
