"""No noise: over openJiuwen's reference runs and the sample dumps only the pitfalls those
runs really show are raised, each where it happens; and the front ends carry them
(`why --json`, the why report, `stats` by kind)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.core.findings import KINDS
from inspector.formats import StatsLine, WhyLine
from tests.conftest import REFERENCE

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_dumps"


def _why_lines(capsys: pytest.CaptureFixture[str], *sources: Path) -> list[dict[str, object]]:
    assert main(["why", *map(str, sources), "--json"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def _where(source: str) -> str:
    if "openjiuwen/" in source:
        return source.split("openjiuwen/", 1)[1].split("/", 1)[0]
    return source.split("context/", 1)[1].split("_context", 1)[0]


def _fired(lines: list[dict[str, object]]) -> dict[str, set[tuple[str, str]]]:
    """kind -> {(scenario, artifact kind)} for the pitfall kinds of `core.findings`."""
    out: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for line in lines:
        for finding in line["findings"]:  # type: ignore[attr-defined]
            if finding["kind"] in KINDS:
                out[finding["kind"]].add((_where(str(line["source"])), str(line["kind"])))
    return out


#: What the reference runs show (README "Scenarios"): where each pitfall fires, exactly.
REFERENCE_ONLY_IN: dict[str, set[str]] = {
    # the span is one read_file call: the re-injection copies the file back (dropped, no benefit)
    "compaction_grows_context": {"h3_reinjection_defeats_compression"},
    # the overflow shrinks left call_f_05's result in the tail
    "request_without_tool_results": {"f_overflow_413_retry"},
    # the failing offset test is the newest open error when the summary is written
    "summary_lost_active": {"l_multimodal_current_round", "p_dir_resolution"},
}
NEVER_IN_REFERENCE = {
    "reinjected_path_gone",
    "earlier_restore_dropped",
    "usage_baseline_hides_context",  # k's usage totals include the cached prompt
    "list_content_user_turn",  # d2's reminder is a string; l's list turn is a real request
    "window_mismatch",  # fake models, context_max as configured
    "dump_name_session_cut",
    "dump_name_collision",
}


def test_reference_runs_raise_only_what_they_show(capsys: pytest.CaptureFixture[str]) -> None:
    lines = _why_lines(capsys, REFERENCE)
    fired = _fired(lines)
    assert not NEVER_IN_REFERENCE & set(fired), {
        k: fired[k] for k in NEVER_IN_REFERENCE & set(fired)
    }
    for kind, scenarios in REFERENCE_ONLY_IN.items():
        assert {s for s, _ in fired[kind]} == scenarios, (kind, fired[kind])
    # every dump's file name carries "ojw-ref-<scenario>" for the session "ojw-ref/<scenario>"
    dumps = {_where(str(line["source"])) for line in lines if line["kind"] == "dump"}
    assert {s for s, k in fired["dump_name_session_changed"]} == dumps
    # the edit at #14 follows the read at #6 in a's span: both the prediction and the dump say so
    assert {("a_current_round_plain", "snapshot"), ("a_current_round_plain", "dump")} <= fired[
        "stale_reinjected_file"
    ]
    # i and j restore no edited file, h3 reads only: no stale copy there
    assert not {s for s, _ in fired["stale_reinjected_file"]} & {
        "i_dialogue_compressor",
        "j_round_level_compressor",
        "h3_reinjection_defeats_compression",
    }
    for line in lines:
        WhyLine.model_validate_json(json.dumps(line))


def test_sample_dumps_raise_only_what_they_show(capsys: pytest.CaptureFixture[str]) -> None:
    fired = _fired(_why_lines(capsys, SAMPLES))
    assert set(fired) <= {
        "request_without_tool_results",
        "compaction_grows_context",
        "compaction_costs_more_than_it_saves",
        "dump_name_session_changed",
    }, fired
    # the overflow shrink in the bug-fix and incident sessions split a call from its result
    assert {s for s, _ in fired["request_without_tool_results"]} == {
        "demo/bugfix-tinycal",
        "ops-incident-42",
    }
    # docs-rewrite's summary was longer than what it replaced: dropped for no benefit
    assert fired["compaction_grows_context"] == {("docs-rewrite", "debug")}


def test_why_json_findings_have_kind_severity_sentence_fix(
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = REFERENCE / "f_overflow_413_retry"
    lines = _why_lines(capsys, folder)
    dump = next(line for line in lines if line["kind"] == "dump")
    findings = dump["findings"]
    assert isinstance(findings, list) and findings
    for finding in findings:
        assert {"key", "kind", "severity", "sentence", "fix", "numbers"} <= set(finding)
        assert finding["kind"] == finding["key"]
    request = next(f for f in findings if f["kind"] == "request_without_tool_results")
    assert request["severity"] == "problem" and request["fix"]
    assert request["numbers"]["call_ids"] == ["call_f_05"]
    severities = [f["severity"] for f in findings]
    assert severities == sorted(severities, key=["problem", "warning", "info"].index)


def test_why_report_shows_problems_first_with_their_fix(
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = REFERENCE / "f_overflow_413_retry"
    dump = next(folder.glob("*_CurrentRoundCompressor_*.json"))
    assert main(["why", str(dump), str(folder / "CurrentRoundCompressor.jsonl")]) == 0
    out = capsys.readouterr().out
    findings = out[out.index("Findings") :]
    assert findings.index("problem request_without_tool_results") < findings.index("info ")
    assert "fix: keep a tool call and its results on the same side" in " ".join(findings.split())


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            REFERENCE,
            {
                "request_without_tool_results": 1,
                "compaction_grows_context": 2,
                "dump_name_session_changed": 16,
            },
        ),
        (SAMPLES, {"request_without_tool_results": 2, "compaction_grows_context": 1}),
    ],
    ids=["reference", "sample_dumps"],
)
def test_stats_counts_findings_by_kind(
    capsys: pytest.CaptureFixture[str], source: Path, expected: dict[str, int]
) -> None:
    assert main(["stats", str(source), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out.splitlines()[-1])
    StatsLine.model_validate_json(json.dumps(stats))
    for kind, count in expected.items():
        assert stats["findings"][kind] == count, kind
    assert sum(stats["findings_by_severity"].values()) == sum(stats["findings"].values())
    assert stats["finding_severity"]["request_without_tool_results"] == "problem"
    assert not NEVER_IN_REFERENCE & set(stats["findings"])
    assert main(["stats", str(source)]) == 0
    human = capsys.readouterr().out
    assert "Findings by kind" in human and "request_without_tool_results" in human


def test_stats_without_findings_keeps_the_header_level_load(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["stats", str(SAMPLES), "--json", "--no-findings"]) == 0
    stats = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert "findings" not in stats and stats["compressions"] == 8


def test_stats_with_findings_keeps_every_other_number(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["stats", str(REFERENCE), "--json"]) == 0
    full = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert main(["stats", str(REFERENCE), "--json", "--no-findings"]) == 0
    headers = json.loads(capsys.readouterr().out.splitlines()[-1])
    added = {"findings", "findings_by_severity", "finding_severity", "artifacts_with_problems"}
    assert {k: v for k, v in full.items() if k not in added} == headers
