"""The typed-record fast paths of `classify_outcome` and `compute_stats` against the
general reads they skip: every artifact's outcome and the whole stats object (key order
included) equal those of the same artifacts with `recorded` copied into a plain dict (which
takes the general path), on real folders (sample dumps, the reference corpus, tests/data,
a generated folder with failed and silent runs) and on generated records. Behaviour only;
timings live in bench/."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.synth import write_folder
from inspector.core.artifact import Artifact, DebugRecorded, DumpRecorded
from inspector.core.outcome import DUMP_NOT_LOADED, classify_outcome
from inspector.core.stats import compute_stats
from inspector.sources.loader import load_paths
from tests.conftest import REFERENCE

REPO = Path(__file__).resolve().parents[1]


def _plain(artifact: Artifact) -> Artifact:
    """The artifact with `recorded` as a plain dict: the general path of both readers."""
    return dataclasses.replace(artifact, recorded=dict(artifact.recorded))


def _artifacts(paths: Iterable[Path], contexts: bool) -> list[Artifact]:
    return [r for r in load_paths(paths, contexts=contexts) if isinstance(r, Artifact)]


def _sources(tmp_path: Path) -> list[list[Path]]:
    generated = write_folder(
        tmp_path / "generated", dumps=60, sessions=4, messages_per_dump=6, tool_output_chars=40
    )
    data = sorted(p for p in (REPO / "tests" / "data").iterdir() if p.name != "tui")
    # logs given alone: their silent runs' first cause is that the dump was not loaded
    logs = sorted((REPO / "sample_dumps").rglob("*.jsonl"))
    return [[REPO / "sample_dumps"], [REFERENCE], data, [generated], *([log] for log in logs)]


def _same_everywhere(artifacts: list[Artifact]) -> None:
    plain = [_plain(a) for a in artifacts]
    for artifact, copy in zip(artifacts, plain, strict=True):
        assert classify_outcome(artifact) == classify_outcome(copy), artifact.id
    assert json.dumps(compute_stats(artifacts)) == json.dumps(compute_stats(plain))


@pytest.mark.parametrize("contexts", [False, True])
def test_real_folders_read_alike(tmp_path: Path, contexts: bool) -> None:
    kinds: set[str] = set()
    for paths in _sources(tmp_path):
        artifacts = _artifacts(paths, contexts)
        typed = [a for a in artifacts if type(a.recorded) in (DumpRecorded, DebugRecorded)]
        kinds |= {a.kind for a in typed} | {classify_outcome(a).kind for a in typed}
        _same_everywhere(artifacts)
    assert {"dump", "debug", "compressed", "not compressed", "failed", "unknown"} <= kinds


_WORDS = st.sampled_from(
    [
        "compressed",
        "not_compressed",
        "silent_end",
        "failed",
        "error",
        "Compress_x",
        "dump",
        "applied",
        "unknown",
        "odd",
        "",
    ]
)
_REASONS = st.one_of(
    st.none(), st.sampled_from(["below_threshold", "reached_threshold", ""]), st.just(5)
)
_RETRY = st.fixed_dictionaries(
    {"error_type": st.sampled_from(["timeout", "overflow"])},
    optional={"reason": _REASONS, "retried": st.booleans()},
)
_CAUSES = st.lists(st.sampled_from([DUMP_NOT_LOADED, "other cause"]), max_size=2).map(tuple)


@st.composite
def _debug_artifact(draw: Any) -> Artifact:
    check = draw(st.one_of(st.none(), st.fixed_dictionaries({}, optional={"reason": _REASONS})))
    recorded = DebugRecorded(
        threshold_check=check,
        reason=draw(_REASONS),
        outcome=draw(st.one_of(st.none(), _WORDS)),
        retries=tuple(draw(st.lists(_RETRY, max_size=3))),
        silent_causes=draw(_CAUSES),
    )
    return Artifact("log.jsonl", "run", "debug", None, recorded, processor=draw(_WORDS))


@st.composite
def _dump_artifact(draw: Any) -> Artifact:
    numbers = st.one_of(st.none(), st.integers(-5, 5000), st.booleans())
    recorded = DumpRecorded(
        outcome=draw(st.one_of(st.none(), _WORDS)),  # type: ignore[arg-type]
        tokens_before=draw(numbers),
        tokens_after=draw(numbers),
        reduction=draw(numbers),
        reduction_ratio=draw(st.one_of(st.none(), st.floats(0, 1), st.integers(0, 1))),
        retries=tuple(draw(st.lists(_RETRY, max_size=2))),
    )
    return Artifact("d.json", draw(st.sampled_from(["a", "b"])), "dump", None, recorded)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_debug_artifact(), _dump_artifact()), max_size=12))
def test_generated_records_read_alike(artifacts: list[Artifact]) -> None:
    plain = [_plain(a) for a in artifacts]
    for artifact, copy in zip(artifacts, plain, strict=True):
        assert classify_outcome(artifact) == classify_outcome(copy)
        assert classify_outcome(artifact) == classify_outcome(artifact)  # cached alike
    assert json.dumps(compute_stats(artifacts)) == json.dumps(compute_stats(plain))
