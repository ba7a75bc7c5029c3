"""sample_dumps/: generated deterministically, laid out like openJiuwen, and every dump rebuilds exactly."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from inspector.core.artifact import Artifact, LoadError
from inspector.core.engine import PricedContext
from inspector.core.stats import compute_stats
from inspector.sources.loader import load_paths
from tools import samples

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "sample_dumps"


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory, counters: Any) -> Path:
    out = tmp_path_factory.mktemp("samples")
    samples.generate(out, counters)
    return out


@pytest.fixture(scope="module")
def loaded(generated: Path, counters: Any) -> list[Any]:
    return list(load_paths([generated], counters=counters))


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_committed_samples_are_the_generator_output(generated: Path) -> None:
    assert _files(generated) == _files(COMMITTED)


def test_layout_size_and_coverage(generated: Path, loaded: list[Any]) -> None:
    assert sum(len(b) for b in _files(generated).values()) < 3 * 1024**2
    roots = {
        p.relative_to(generated / "workspace" / "context").parts[0]
        for p in generated.rglob("*.json*")
    }
    assert {"demo", "docs-rewrite_context", "long-refactor-zh_context"} <= roots
    for path in generated.rglob("*.json"):
        assert path.parent.name == "compression_logs" and path.parent.parent.name.endswith(
            "_context"
        )
    assert not [r for r in loaded if isinstance(r, LoadError)]
    records = [
        json.loads(line)
        for p in generated.rglob("context_debug/*.jsonl")
        for line in p.read_text().splitlines()
    ]
    reasons = {r["reason"] for r in records if r["event"] == "threshold_check"}
    assert reasons == {
        "below_threshold",
        "no_compressible_span",
        "target_below_min",
        "reached_threshold",
    }
    retries = {(r["error_type"], r["reason"]) for r in records if r["event"] == "compression_retry"}
    assert {reason for _, reason in retries} == {
        "budget_ratio_shrink",
        "no_smaller_span",
        "retry_budget_exhausted",
        "transient_backoff",
    }
    assert {t for t, _ in retries} == {
        "context_overflow",
        "transient:rate_limit",
        "transient:timeout",
        "transient:server_unstable",
        "transient:unknown",
    }
    processors = {a.processor for a in loaded if isinstance(a, Artifact) and a.kind == "dump"}
    assert processors == {"CurrentRoundCompressor", "DialogueCompressor", "RoundLevelCompressor"}
    outcomes = Counter(a.recorded["outcome"] for a in loaded if isinstance(a, Artifact))
    assert outcomes["failed"] == 2 and outcomes["silent_end"] == 4 and outcomes["compressed"] == 8
    long_dump = next(
        a
        for a in loaded
        if isinstance(a, Artifact) and a.kind == "dump" and a.processor == "DialogueCompressor"
    )
    assert long_dump.snapshot is not None and len(long_dump.snapshot.messages) >= 300
    text = json.dumps(
        [json.loads(p.read_text()) for p in generated.rglob("*.json")], ensure_ascii=False
    )
    assert "重构" in text and "data:image/png;base64,iVBORw0KGgo" in text


def test_every_sample_dump_rebuilds_the_context_it_came_from(
    counters: Any, loaded: list[Any]
) -> None:
    expected: dict[str, tuple[Any, ...]] = {}
    for build in samples.SESSIONS:
        counter = (
            counters["len_div_4"]
            if "len//4" in (build.__doc__ or "")
            else counters["tiktoken_cl100k"]
        )
        session = build(counter)
        for dump, before in zip(session.dumps, session.contexts_before, strict=True):
            expected[f"{session.session_id}@{dump['timestamp']}"] = before
    dumps = [a for a in loaded if isinstance(a, Artifact) and a.kind == "dump"]
    assert len(dumps) == len(expected) == 8
    for artifact in dumps:
        before = expected[f"{artifact.session_id}@{artifact.timestamp}"]
        assert artifact.snapshot is not None
        assert [m.to_dict() for m in artifact.snapshot.messages] == [m.to_dict() for m in before], (
            artifact.id
        )
        check = artifact.recorded["threshold_check"]
        tuning = artifact.snapshot.tuning
        ev = PricedContext.from_snapshot(artifact.snapshot, counters[tuning.token_mode]).evaluate(
            tuning
        )
        assert (ev.total_tokens, ev.threshold, ev.reason, ev.target_tokens) == (
            check["total_tokens"],
            check["threshold"],
            check["reason"],
            check["target_tokens"],
        ), artifact.id
        assert ev.span.counts == artifact.recorded["span_first_built"]


def test_second_compression_keeps_older_stale_records(loaded: list[Any]) -> None:
    bugfix = sorted(
        (
            a
            for a in loaded
            if isinstance(a, Artifact)
            and a.kind == "dump"
            and a.session_id == "demo/bugfix-tinycal"
        ),
        key=lambda a: a.timestamp or 0,
    )
    assert len(bugfix) == 2
    stale = bugfix[1].recorded["stale_usage"]
    assert stale["already_stale"] and stale["confirmed"] is True
    assert bugfix[0].recorded["retries"][0]["reason"] == "budget_ratio_shrink"
    assert bugfix[1].recorded["retries"][0]["error_type"] == "transient:timeout"


def test_stats_over_samples(loaded: list[Any]) -> None:
    stats = compute_stats([a for a in loaded if isinstance(a, Artifact)])
    assert stats["compressions"] == 8
    assert stats["by_processor"]["CurrentRoundCompressor"]["failed"] == 2
    assert stats["not_compressed"]["target_below_min"] == 2
    assert stats["retries_by_error_type"]["context_overflow"]["retry_budget_exhausted"] == 1
    saved = sum(
        a.recorded["reduction"] for a in loaded if isinstance(a, Artifact) and a.kind == "dump"
    )
    assert stats["tokens_saved"] == saved > 0
    assert stats["biggest"][0]["reduction"] == max(c["reduction"] for c in stats["biggest"])
    assert sum(stats["reduction_ratio"]["buckets"].values()) == 8
