"""Strategy comparison on the reference scenarios and their dumps, plus the compare command."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from contextlib import redirect_stdout
from functools import lru_cache
from pathlib import Path

import pytest
from rich.console import Console

from inspector.cli import main
from inspector.core.artifact import Artifact
from inspector.core.compare import (
    CompareOptions,
    Comparison,
    artifact_afters,
    compare_strategies,
    count_verbatim,
    entries_for,
    pair_stats,
)
from inspector.core.hybrid import HybridResult
from inspector.core.hybrid_facts import extract_facts, losses_between
from inspector.core.snapshot import snapshot_from_dict
from inspector.core.tokens import TokenCounter
from inspector.render.compare_report import compare_report
from inspector.render.hybrid_report import hybrid_report
from inspector.sources.loader import load_paths
from tests.conftest import REFERENCE, call, load_json, msg, reference_inputs

K_DIR = REFERENCE / "k_long_coding_session"


@lru_cache(maxsize=1)
def reference_dumps() -> tuple[Artifact, ...]:
    """Every dump under the reference folder, loaded by the sources package."""
    found = [a for a in load_paths([REFERENCE]) if isinstance(a, Artifact) and a.kind == "dump"]
    return tuple(sorted(found, key=lambda a: a.source))


def compare(
    snapshot,
    names: list[str],
    counter: TokenCounter,
    counters: dict[str, TokenCounter],
    artifact: Artifact | None = None,
    summary_tokens: int = 400,
) -> Comparison:
    """The strategies by name under the snapshot's recorded settings, through the protocol."""
    afters = artifact_afters(artifact, counter) if artifact is not None else {}
    return compare_strategies(
        snapshot,
        entries_for(snapshot, names, {}),
        counters,
        counter,
        CompareOptions(summary_tokens=summary_tokens, afters=afters),
    )


def exact(counters: dict[str, TokenCounter], mode: str) -> TokenCounter:
    counter = counters[mode]
    if not counter.exact:
        pytest.skip("exact cl100k counting unavailable")
    return counter


# --- small, table-driven ---------------------------------------------------------------------


def test_pairs_kept_folded_split() -> None:
    before = [
        msg("assistant", "", tool_calls=[call("a"), call("b")]),
        msg("tool", "A", tool_call_id="a"),
        msg("tool", "B", tool_call_id="b"),
        msg("assistant", "", tool_calls=[call("c")]),
        msg("tool", "C", tool_call_id="c"),
        msg("assistant", "", tool_calls=[call("late")]),  # no result: not a pair
    ]
    after = [msg("user", "summary"), before[2], before[3], before[4]]
    stats = pair_stats(before, after)
    # a: call and result gone (folded); b: result kept without its call (split); c: kept
    assert (stats.total, stats.kept, stats.folded, stats.split, stats.split_ids) == (
        3,
        1,
        1,
        1,
        ("b",),
    )


def test_verbatim_ignores_metadata_but_not_content() -> None:
    before = [msg("user", "x", metadata={"context_message_id": "1"}), msg("assistant", "y")]
    after = [msg("user", "x", metadata={"stale": True}), msg("assistant", "y!")]
    assert count_verbatim(before, after) == 1


def test_losses_are_facts_present_before_and_absent_after() -> None:
    before = [
        msg("user", "Fix `helper_parse_2` in src/tinycal/parse.py"),
        msg(
            "tool",
            "Traceback (most recent call last):\nValueError: bad offset\nerror=None",
            tool_call_id="t",
        ),
    ]
    facts = extract_facts(before)
    assert set(facts.paths) == {"tinycal/parse.py"}
    assert "helper_parse_2" in facts.identifiers
    assert facts.errors == ("Traceback (most recent call last):", "ValueError: bad offset")
    losses = losses_between(facts, [msg("user", "see tinycal/parse.py; ValueError: bad offset")])
    assert losses.file_paths == () and losses.identifiers == ("helper_parse_2",)
    assert losses.error_messages == ("Traceback (most recent call last):",)


def test_openjiuwen_tool_output_repr_is_read_as_values() -> None:
    text = "success=True data={'stdout': 'ok\\nFAILED tests/t.py::x - AssertionError', 'exit_code': 1} error=None"
    facts = extract_facts([msg("tool", text, tool_call_id="t")])
    assert facts.errors == ("FAILED tests/t.py::x - AssertionError",)
    assert "exit_code" not in facts.identifiers  # dict keys are structure, not facts


# --- reference scenarios --------------------------------------------------------------------------


@pytest.mark.parametrize("path", reference_inputs(), ids=lambda p: p.parent.name)
def test_every_reference_context_compares(path, counters) -> None:
    raw = load_json(path)
    snapshot = snapshot_from_dict(raw)
    counter = counters[snapshot.tuning.token_mode]
    comparison = compare(
        snapshot, ["current_round", "dialogue", "round_level", "hybrid"], counter, counters
    )
    assert [o.strategy for o in comparison.outcomes] == [
        "current_round",
        "dialogue",
        "round_level",
        "hybrid",
    ]
    if counter.exact and "library_analysis_before" in raw:
        assert comparison.tokens_before == raw["library_analysis_before"]["messages_only_tokens"]
    for outcome in comparison.outcomes:
        assert (
            outcome.kept_verbatim + outcome.truncated + outcome.removed == outcome.messages_before
        )
        assert outcome.pairs.split == 0  # tool boundary on; hybrid keeps pairs by construction
        if isinstance(outcome.native, HybridResult):
            assert outcome.llm_calls == (1 if outcome.native.stopped_at == 3 else 0)
        else:
            paid = outcome.compressed or outcome.reason == "no_benefit_rollback"
            assert outcome.llm_calls == (1 if paid else 0)
        if not outcome.compressed:
            assert outcome.tokens_after == outcome.tokens_before and outcome.losses.counts == {
                "file_paths": 0,
                "identifiers": 0,
                "error_messages": 0,
            }
    json.dumps(comparison.to_dict())


def test_dump_after_is_the_truth(counters) -> None:
    dumps = reference_dumps()
    assert len(dumps) >= 10
    for artifact in dumps:
        assert artifact.snapshot is not None and artifact.after is not None
        counter = exact(counters, artifact.snapshot.tuning.token_mode)
        comparison = compare(
            artifact.snapshot, [artifact.processor or ""], counter, counters, artifact
        )
        (outcome,) = comparison.outcomes
        assert outcome.after_source == "dump" and not outcome.losses_at_risk
        assert outcome.tokens_after == artifact.recorded["tokens_after"], artifact.source
        assert outcome.tokens_before == artifact.recorded["tokens_before"], artifact.source


def test_openjiuwen_estimate_matches_the_dump_but_for_the_summary(counters) -> None:
    """Without overflow shrinks, the estimate is the real after-context with the summary priced at N."""
    for artifact in reference_dumps():
        if artifact.recorded.get("retries"):
            continue  # an overflow shrink changed the span: the estimate cannot know it
        snapshot = artifact.snapshot
        assert snapshot is not None
        counter = exact(counters, snapshot.tuning.token_mode)
        estimate = compare(snapshot, [artifact.processor or ""], counter, counters).outcomes[0]
        summary = load_json(Path(artifact.source))["compression_response"]["extracted_summary"]
        expected = artifact.recorded["tokens_after"] - counter.text_tokens(summary) + 400
        assert abs(estimate.tokens_after - expected) <= 25, artifact.source
        assert estimate.messages_after == artifact.recorded["messages_after"]


def test_overflow_shrink_dump_shows_a_split_pair(counters) -> None:
    (artifact,) = [a for a in reference_dumps() if "f_overflow_413_retry" in a.source]
    assert artifact.snapshot is not None and artifact.after is not None
    counter = counters[artifact.snapshot.tuning.token_mode]
    comparison = compare(
        artifact.snapshot, ["current_round", "hybrid"], counter, counters, artifact
    )
    dump, hybrid = comparison.outcomes
    assert dump.pairs.split >= 1 and hybrid.pairs.split == 0


def test_long_coding_session_side_by_side(counters) -> None:
    (artifact,) = [a for a in reference_dumps() if "k_long_coding_session" in a.source]
    assert artifact.snapshot is not None and artifact.after is not None
    counter = exact(counters, "tiktoken_cl100k")
    comparison = compare(
        artifact.snapshot, ["current_round", "hybrid"], counter, counters, artifact
    )
    current, hybrid = comparison.outcomes
    assert (current.tokens_before, current.tokens_after, current.messages_after) == (
        22351,
        4377,
        12,
    )
    assert (current.kept_verbatim, current.llm_calls) == (10, 1)
    assert (current.pairs.kept, current.pairs.folded, current.pairs.split) == (4, 46, 0)
    assert "/workspace/tinycal/src/tinycal/calendar.py" in current.losses.file_paths
    # the hybrid's chars/4 estimate stays under the threshold: only level 1 cuts the file reads
    assert isinstance(hybrid.native, HybridResult) and hybrid.native.reason == "below_threshold"
    assert (hybrid.llm_calls, hybrid.messages_after, hybrid.truncated) == (0, 94, 14)
    assert hybrid.losses.counts["file_paths"] == 0 and hybrid.losses.counts["error_messages"] == 0
    assert hybrid.tokens_after < hybrid.tokens_before
    assert any(f.key == "estimator_undercounts" for f in hybrid.findings)


# --- rendering and the command ------------------------------------------------------------------


def test_reports_render(counters) -> None:
    snapshot = snapshot_from_dict(load_json(K_DIR / "input.json"))
    comparison = compare(
        snapshot, ["current_round", "hybrid"], counters[snapshot.tuning.token_mode], counters
    )
    console = Console(record=True, width=140)
    console.print(compare_report(comparison, "k"))
    hybrid = comparison.outcomes[1].native
    assert isinstance(hybrid, HybridResult)
    console.print(hybrid_report(hybrid, "replay"))
    text = console.export_text()
    for needle in (
        "CurrentRoundCompressor",
        "HybridCompressor",
        "tool pairs kept/folded/split",
        "file_read",
    ):
        assert needle in text


def run_main(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        status = main(list(args))
    return status, out.getvalue()


def test_compare_command_json_on_the_long_session() -> None:
    status, out = run_main("compare", str(K_DIR), "--processors", "current_round,hybrid", "--json")
    assert status == 0
    records = [json.loads(line) for line in out.splitlines() if line.strip()]
    kinds = sorted(r["kind"] for r in records if "strategies" in r)
    assert kinds == ["dump", "snapshot"]
    for record in records:
        if "strategies" not in record:
            continue
        assert [s["strategy"] for s in record["strategies"]] == ["current_round", "hybrid"]
        sources = [s["after_source"] for s in record["strategies"]]
        assert sources == (
            ["dump", "replay"] if record["kind"] == "dump" else ["estimate", "replay"]
        )


def test_compare_command_hybrid_flags(capsys) -> None:
    status, out = run_main(
        "compare",
        str(K_DIR / "input.json"),
        "--processors",
        "hybrid",
        "--json",
        "--context-max",
        "12000",
        "--preserve-recent-turns",
        "3",
        "--context-window",
        "16000",
        "--reserved-output",
        "2000",
    )
    assert status == 0
    (record,) = [json.loads(line) for line in out.splitlines()]
    hybrid = record["strategies"][0]
    assert hybrid["hybrid"]["config"]["preserve_recent_turns"] == 3
    assert hybrid["hybrid"]["stopped_at"] >= 2 and hybrid["removed"] > 0
    assert any(f["key"] == "budget_window_mismatch" for f in hybrid["findings"])


@pytest.mark.parametrize(
    "args",
    [
        ["--processors", "nope"],
        ["--processor", "hybrid"],
        ["--processors", "hybrid", "--preserve-recent-turns", "-1"],
    ],
)
def test_compare_command_usage_errors(args: list[str], capsys) -> None:
    status = main(["compare", str(K_DIR / "input.json"), *args])
    assert status == 2
    assert "Traceback" not in capsys.readouterr().err


def test_core_stays_pure_and_compare_never_loads_textual() -> None:
    """The strategy core imports no Rich/Textual/httpx; the compare command no Textual/httpx."""
    code = (
        "import sys\n"
        "import inspector.core.compare, inspector.core.hybrid\n"
        "assert not {'rich', 'textual', 'httpx'} & set(sys.modules), 'core imported a front-end module'\n"
        "import io, contextlib\nfrom inspector.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['compare', {str(K_DIR / 'input.json')!r}, '--json'])\n"
        "assert not {'textual', 'httpx'} & set(sys.modules), 'compare imported textual or httpx'\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr


def test_compare_runs_hybrid_level_3_through_the_llm_client() -> None:
    """With --base-url the level-3 summary is real: one request, the prompt and the middle sent."""
    from tests.servers.fake_openai import FakeOpenAI, Reply

    summary = "## Task\nFix the offset.\n## Progress\nEdited parse.py.\n## State\nTests pass.\n## Key Data\nsrc/tinycal/parse.py"
    with FakeOpenAI([Reply(content=summary)]) as server:
        status, out = run_main(
            "compare", str(K_DIR / "input.json"), "--processors", "hybrid", "--json",
            "--context-max", "1900", "--preserve-recent-turns", "3",
            "--base-url", server.base_url, "--model", "m", "--no-key",
        )  # fmt: skip
        requests = list(server.requests)
    assert status == 0
    (record,) = [json.loads(line) for line in out.splitlines()]
    hybrid = record["strategies"][0]
    assert hybrid["hybrid"]["summary_source"] == "llm" and hybrid["llm_calls"] == 1
    assert hybrid["reason"] == "compressed_at_level_3" and not hybrid["losses_at_risk"]
    (request,) = requests
    system, user = request.body["messages"]
    assert "Task" in system["content"] and "400 words" in system["content"]
    assert "[0] user: Quick question before we start" in user["content"]


def test_compare_level_3_failure_falls_back(capsys) -> None:
    from tests.servers.fake_openai import FakeOpenAI, Reply

    with FakeOpenAI([Reply(status=500, error={"message": "boom"})]) as server:
        status, out = run_main(
            "compare", str(K_DIR / "input.json"), "--processors", "hybrid", "--json",
            "--context-max", "1900", "--preserve-recent-turns", "3",
            "--base-url", server.base_url, "--model", "m", "--no-key",
        )  # fmt: skip
    assert status == 0
    hybrid = json.loads(out.splitlines()[0])["strategies"][0]
    assert hybrid["hybrid"]["summary_source"] == "fallback" and hybrid["hybrid"]["level3_error"]
    assert any(f["key"] == "llm_summary_failed" for f in hybrid["findings"])


def test_estimate_models_the_no_benefit_rollback(counters) -> None:
    """h3: the re-injected file makes the result bigger; openJiuwen dropped it, and so does the estimate."""
    snapshot = snapshot_from_dict(
        load_json(REFERENCE / "h3_reinjection_defeats_compression" / "input.json")
    )
    counter = counters[snapshot.tuning.token_mode]
    (current,) = compare(snapshot, ["current_round"], counter, counters).outcomes
    assert (current.compressed, current.reason, current.llm_calls) == (
        False,
        "no_benefit_rollback",
        1,
    )
    assert (
        current.tokens_after == current.tokens_before and current.losses.counts["file_paths"] == 0
    )
