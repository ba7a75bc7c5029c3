"""Every reference dump rebuilds to its scenario's input.json; records link and re-evaluate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.core.artifact import Artifact, LoadError
from inspector.core.engine import PricedContext
from inspector.sources.loader import Skipped, load_paths
from tests.conftest import REFERENCE

DUMPS = sorted(p for p in REFERENCE.rglob("*Compressor_*.json"))


def _input_for(dump: Path) -> dict[str, Any]:
    for folder in dump.parents:
        candidate = folder / "input.json"
        if candidate.exists():
            return json.loads(candidate.read_text(encoding="utf-8"))
    raise AssertionError(f"no input.json above {dump}")


def _dump_artifact(results: list[Any], dump: Path) -> Artifact:
    found = [
        r for r in results if isinstance(r, Artifact) and r.kind == "dump" and r.source == str(dump)
    ]
    assert len(found) == 1, results
    return found[0]


@pytest.fixture(scope="module")
def reference_all(counters: Any) -> list[Any]:
    """The whole reference folder loaded once (dumps linked to their debug records)."""
    return list(load_paths([REFERENCE], counters=counters))


def test_reference_dumps_exist() -> None:
    assert len(DUMPS) == 16


@pytest.mark.parametrize("dump", DUMPS, ids=lambda p: p.parent.name)
def test_dump_rebuilds_input_exactly(dump: Path, reference_all: list[Any]) -> None:
    expected = _input_for(dump)
    artifact = _dump_artifact(reference_all, dump)
    snap = artifact.snapshot
    assert snap is not None
    assert [m.to_dict() for m in snap.messages] == expected["messages"]
    assert [m.to_dict() for m in snap.system_messages] == expected["system_messages"]
    assert [t.to_dict() for t in snap.tools] == expected["tools"]
    assert snap.tuning.context_max == expected["context_max"]
    assert snap.tuning.token_mode == expected["token_mode"] == artifact.recorded_token_mode
    assert snap.tuning.processor_class == expected["processor"]
    assert snap.tuning.trigger_ratio == expected["config"]["trigger_context_ratio"]


@pytest.mark.parametrize("dump", DUMPS, ids=lambda p: p.parent.name)
def test_rebuilt_context_reproduces_the_recorded_check(
    dump: Path, reference_all: list[Any], counters: Any
) -> None:
    artifact = _dump_artifact(reference_all, dump)
    check = artifact.recorded["threshold_check"]
    assert artifact.snapshot is not None
    tuning = artifact.snapshot.tuning
    priced = PricedContext.from_snapshot(artifact.snapshot, counters[tuning.token_mode])
    ev = priced.evaluate(tuning)
    assert (ev.total_tokens, ev.threshold, ev.reason) == (
        check["total_tokens"],
        check["threshold"],
        check["reason"],
    )
    assert ev.span.counts == artifact.recorded["span_first_built"]
    assert ev.target_tokens == check["target_tokens"]


def test_dump_alone_still_rebuilds_and_says_what_is_assumed(counters: Any) -> None:
    dump = next(p for p in DUMPS if p.parent.name == "k_long_coding_session")
    results = list(load_paths([dump], counters=counters))
    assert len(results) == 1 and isinstance(results[0], Artifact)
    artifact = results[0]
    expected = _input_for(dump)
    assert artifact.snapshot is not None
    assert [m.to_dict() for m in artifact.snapshot.messages] == expected["messages"]
    stale = artifact.recorded["stale_usage"]
    assert stale["assumed"] == "fresh" and stale["confirmed"] is False
    assert "threshold_check" not in artifact.recorded
    assert any("no debug record was linked" in note for note in artifact.recorded["unrecoverable"])


def test_stale_flags_are_what_differs_and_the_check_confirms_fresh(
    reference_all: list[Any],
) -> None:
    """input.json's kept assistant messages carry no stale flag; the dump's do (set by the compression)."""
    dump = next(p for p in DUMPS if p.parent.name == "k_long_coding_session")
    raw = json.loads(dump.read_text(encoding="utf-8"))
    expected = _input_for(dump)
    tail = raw["context_after"]["messages"][-raw["span"]["protected_tail_count"] :]
    dumped_flags = [
        m.get("metadata", {}).get("context_usage_stale") for m in tail if m["role"] == "assistant"
    ]
    input_flags = [
        m.get("metadata", {}).get("context_usage_stale")
        for m in expected["messages"][-len(tail) :]
        if m["role"] == "assistant"
    ]
    assert dumped_flags and all(dumped_flags) and not any(input_flags)
    artifact = _dump_artifact(reference_all, dump)
    stale = artifact.recorded["stale_usage"]
    assert stale == {
        "messages": [1, 87, 89, 93],
        "recorded_total": 23033,
        "total_if_fresh": 23033,
        "assumed": "fresh",
        "confirmed": True,
    }
    assert artifact.after is not None and all(
        m.usage_stale for m in artifact.after if m.usage_metadata
    )


def test_overflow_shrink_links_retries_and_first_span(reference_all: list[Any]) -> None:
    dump = next(p for p in DUMPS if p.parent.name == "f_overflow_413_retry")
    recorded = _dump_artifact(reference_all, dump).recorded
    assert [r["budget_ratio"] for r in recorded["retries"]] == [0.85, 0.65]
    assert recorded["span"] == {
        "preserved_prefix": 3,
        "messages_to_compress": 7,
        "protected_tail": 9,
    }
    assert recorded["span_first_built"] == {
        "preserved_prefix": 3,
        "messages_to_compress": 16,
        "protected_tail": 0,
    }
    assert (
        recorded["target_tokens"] == 3714 and recorded["threshold_check"]["target_tokens"] == 6355
    )
    assert any("shrunk after a context overflow" in n for n in recorded["unrecoverable"])


def test_every_scenario_outcome_matches_the_index(reference_all: list[Any]) -> None:
    index = json.loads((REFERENCE / "index.json").read_text(encoding="utf-8"))
    outcomes: dict[str, str] = {}
    for result in reference_all:
        assert not isinstance(result, LoadError), result
        if (
            result.kind in ("dump", "debug")
            and result.session_id
            and result.session_id.startswith("ojw-ref/")
        ):
            outcomes[result.session_id.split("/", 1)[1]] = result.recorded["outcome"]
    for scenario in index["scenarios"]:
        name = scenario["scenario"]
        if name.startswith("p_"):
            continue
        if scenario["compressed"]:
            assert outcomes[name] == "compressed", name
        elif scenario["threshold_reason"] == "reached_threshold":
            assert outcomes[name] in ("silent_end", "failed"), name
        else:
            assert outcomes[name] == "not_compressed", name
    assert outcomes["f2_overflow_413_exhausted"] == "failed"
    assert outcomes["f3_overflow_no_smaller_span"] == "failed"
    assert outcomes["h2_auth_401"] == "silent_end"


def test_silent_end_lists_what_openjiuwen_does_silently(reference_all: list[Any]) -> None:
    g2 = next(
        r
        for r in reference_all
        if isinstance(r, Artifact) and r.session_id == "ojw-ref/g2_transient_429_exhausted"
    )
    causes = g2.recorded["silent_causes"]
    assert len(causes) == 5 and causes[0].startswith("transient errors")
    h2 = next(
        r
        for r in reference_all
        if isinstance(r, Artifact) and r.session_id == "ojw-ref/h2_auth_401"
    )
    assert h2.recorded["silent_causes"][0].startswith("a non-retryable")
    assert any("no benefit" in c or "not count fewer" in c for c in h2.recorded["silent_causes"])
    assert (
        h2.recorded["threshold_check"]["reason"] == "reached_threshold" and h2.snapshot is not None
    )


def test_harness_files_are_skipped_in_folders_and_refused_by_name(counters: Any) -> None:
    skipped: list[Skipped] = []
    folder = REFERENCE / "a_current_round_plain"
    results = list(load_paths([folder], counters=counters, skipped=skipped))
    assert sorted(Path(s.source).name for s in skipped) == ["http_requests.json", "result.json"]
    assert sorted(r.kind for r in results if isinstance(r, Artifact)) == ["dump", "snapshot"]
    refused = list(load_paths([folder / "result.json"], counters=counters))
    assert len(refused) == 1 and isinstance(refused[0], LoadError)
    assert "not an inspector artifact" in refused[0].error


def test_layouts_and_templates_are_found(counters: Any) -> None:
    p = REFERENCE / "p_dir_resolution"
    results = [
        r
        for r in load_paths(
            [
                p / "p3_env_vars" / "env_dump" / "{session_id}",
                p / "p3_env_vars" / "env_debug" / "{context_id}",
            ],
            counters=counters,
        )
    ]
    kinds = [r.kind for r in results if isinstance(r, Artifact)]
    assert kinds == ["dump"]
    assert results[0].recorded["threshold_check"]["reason"] == "reached_threshold"  # type: ignore[union-attr]
    tree = list(load_paths([p / "p2_workspace_default" / "workspace"], counters=counters))
    assert [r.kind for r in tree if isinstance(r, Artifact)] == ["dump"]


def test_folder_is_newest_first(reference_all: list[Any]) -> None:
    times = [
        r.timestamp for r in reference_all if isinstance(r, Artifact) and r.timestamp is not None
    ]
    assert len(times) >= 28 and times == sorted(times, reverse=True)


def test_debug_runs_get_their_scenario_context_and_reproduce_the_check(
    reference_all: list[Any], counters: Any
) -> None:
    debug = [r for r in reference_all if isinstance(r, Artifact) and r.kind == "debug"]
    with_context = [r for r in debug if r.snapshot is not None]
    assert (
        len(debug) == len(with_context) == 12
    )  # p1's input.json names its session and context too
    for artifact in with_context:
        assert artifact.snapshot is not None
        check = artifact.recorded["threshold_check"]
        tuning = artifact.snapshot.tuning
        ev = PricedContext.from_snapshot(artifact.snapshot, counters[tuning.token_mode]).evaluate(
            tuning
        )
        assert (ev.reason, ev.total_tokens, ev.threshold, ev.target_tokens) == (
            check["reason"],
            check["total_tokens"],
            check["threshold"],
            check.get("target_tokens"),
        ), artifact.id
        assert artifact.extra["context_from"].endswith("input.json")


def test_snapshot_command_exports_each_rebuilt_dump_as_its_input(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from inspector.cli import main

    assert main(["snapshot", *map(str, DUMPS)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == len(DUMPS)
    for line, dump in zip(lines, DUMPS, strict=True):
        expected = _input_for(dump)
        assert line["kind"] == "dump" and line["source"] == str(dump)
        assert (line["messages"], line["system_messages"], line["tools"], line["context_max"]) == (
            expected["messages"],
            expected["system_messages"],
            expected["tools"],
            expected["context_max"],
        )
