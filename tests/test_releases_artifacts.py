"""Detection on the dumps and debug logs the real releases wrote (scripted scenarios).

`tests/data/parity/artifacts/<release>/<scenario>/` hold what each openJiuwen release
wrote for the scenarios of `parity_live/scenarios.py` (`python -m parity_live scenarios`:
ContextEngine, one CurrentRoundCompressor, a fake OpenAI-compatible server on 127.0.0.1,
`max_retries=0`). Every file set that carries a release fact must be detected as its
release's profile, each file on its own too; a log with only a `threshold_check` carries
none, and then the newest profile is assumed and said to be.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.core.releases import NEWEST_PROFILE, RELEASES, collect_evidence, detect_release
from tests.conftest import REFERENCE

ARTIFACTS = Path(__file__).parent / "data" / "parity" / "artifacts"
FOLDERS = sorted(p for p in ARTIFACTS.glob("*/*") if p.is_dir())
HARNESS_FILES = {"result.json", "http_statuses.json"}


def _library_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name not in HARNESS_FILES)


def _objects(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return [json.loads(text)]


def _events(folder: Path) -> set[str]:
    return {
        record.get("event", "")
        for path in _library_files(folder)
        if path.suffix == ".jsonl"
        for record in _objects(path)
    }


def test_every_release_ran_every_scenario() -> None:
    releases = {p.parent.name for p in FOLDERS}
    assert releases == set(RELEASES)
    scenarios = {p.name for p in FOLDERS}
    assert len(FOLDERS) == len(releases) * len(scenarios) >= 7 * 6


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_detection_of_what_the_release_wrote(folder: Path) -> None:
    release = folder.parent.name
    files = _library_files(folder)
    objects = [o for path in files for o in _objects(path)]
    found = detect_release(collect_evidence(objects, [p.name for p in files]))
    if _events(folder) == {"threshold_check"} and len(files) == 1:
        assert (found.profile, found.source) == (NEWEST_PROFILE, "assumed")
        assert "assuming the newest" in found.evidence
        return
    assert found.profile is RELEASES[release], found.evidence
    assert found.source == "artifact"
    assert not found.evidence.startswith("conflicting")


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_file_alone_never_names_the_wrong_profile(folder: Path) -> None:
    release = folder.parent.name
    for path in _library_files(folder):
        found = detect_release(collect_evidence(_objects(path), [path.name]))
        assert found.profile is RELEASES[release] or found.source == "assumed", (
            path.name,
            found.evidence,
        )
        if path.suffix == ".json":  # a dump always tells: its usage details and records
            assert found.source == "artifact" and "usage" in found.evidence


def test_the_engine_default_counter_differs_between_profiles() -> None:
    """Same context, engine defaults: 0.1.18+ (StringLengthCounter) compresses, 0.1.17 (len//4) does not."""
    for release, profile in RELEASES.items():
        folder = ARTIFACTS / release / "compress_engine_default"
        dumps = [p for p in _library_files(folder) if p.suffix == ".json"]
        assert bool(dumps) == (profile.name == "0.1.18"), release


REFERENCE_FILES = sorted(
    p
    for p in REFERENCE.rglob("*")
    if p.is_file() and (p.suffix == ".jsonl" or (p.suffix == ".json" and p.name[:1].isdigit()))
)


def test_reference_files_found() -> None:
    assert len(REFERENCE_FILES) >= 40


@pytest.mark.parametrize("path", REFERENCE_FILES, ids=lambda p: f"{p.parent.name}/{p.name[:30]}")
def test_reference_files_of_0_1_17_are_never_taken_for_a_newer_release(path: Path) -> None:
    """The reference artifacts were written with 0.1.17's rules (source commit 4f2c29c3,
    whose retry messages already name the SDK class): every file that tells, tells 0.1.17."""
    from inspector.core.releases import PROFILE_0_1_17

    found = detect_release(collect_evidence(_objects(path), [path.name]))
    if found.source == "assumed":
        assert {r.get("event") for r in _objects(path)} == {"threshold_check"}
    else:
        assert found.profile is PROFILE_0_1_17, found.evidence
