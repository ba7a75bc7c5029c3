"""Findings that read real dump files: what the recorded compaction did, and dump names.

The dumps are openJiuwen's own (the reference runs), read as is or copied into a temporary
folder with one field changed (a session id, a summary) to build the situation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.core.artifact import Artifact
from inspector.core.checks import Finding
from inspector.core.findings import folder_findings
from inspector.core.strategy.selection import select
from inspector.core.tokens import TokenCounter
from inspector.sources.loader import load_paths
from tests.conftest import REFERENCE, REPO

A_DUMP = next((REFERENCE / "a_current_round_plain").glob("*_CurrentRoundCompressor_*.json"))
L_DUMP = next((REFERENCE / "l_multimodal_current_round").glob("*_CurrentRoundCompressor_*.json"))
F_DUMP = next((REFERENCE / "f_overflow_413_retry").glob("*_CurrentRoundCompressor_*.json"))


def _dumps(paths: list[Path], counters: dict[str, TokenCounter]) -> list[Artifact]:
    loaded = list(load_paths([str(p) for p in paths], counters=counters))
    return [a for a in loaded if isinstance(a, Artifact) and a.kind == "dump"]


def _decide(artifact: Artifact, counters: dict[str, TokenCounter]) -> list[Finding]:
    assert artifact.snapshot is not None
    selection = select(artifact.snapshot, {})
    strategy = selection.strategy
    prepared = strategy.prepare(artifact.snapshot, counters)
    return list(strategy.decide(prepared, selection.settings, artifact).findings)


def _of(found: list[Finding], kind: str) -> list[Finding]:
    return [f for f in found if f.key == kind]


def _copy(source: Path, folder: Path, name: str, **changes: Any) -> Path:
    document = json.loads(source.read_text(encoding="utf-8"))
    document.update(changes)
    path = folder / name
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    return path


def test_recorded_compaction_findings_on_a_real_dump(counters: dict[str, TokenCounter]) -> None:
    found = _decide(_dumps([A_DUMP.parent], counters)[0], counters)
    stale = _of(found, "stale_reinjected_file")
    assert len(stale) == 1
    assert "/workspace/tinycal/src/tinycal/parse.py as read at #6 (call 'call_a_03')" in (
        stale[0].sentence
    )
    assert "edit_file at #14 (call 'call_a_08'" in stale[0].sentence
    assert "still holds the text the edit replaced" in stale[0].sentence
    cancels = _of(found, "reinjection_cancels_saving")
    assert cancels and cancels[0].numbers["net_saving"] == 1413
    # the failing test at #13 was run again at #17 and passed: not an open error
    assert not _of(found, "summary_lost_active")
    assert [f.severity for f in found] == sorted(
        (f.severity for f in found), key=["problem", "warning", "info"].index
    )


def test_summary_that_lost_the_open_error(counters: dict[str, TokenCounter]) -> None:
    lost = _of(_decide(_dumps([L_DUMP.parent], counters)[0], counters), "summary_lost_active")
    assert len(lost) == 1 and lost[0].severity == "warning"
    assert "the last error 'AssertionError: assert datetime.timedelta" in lost[0].sentence
    assert "(#12)" in lost[0].sentence and lost[0].fix


def test_summary_that_keeps_the_error_is_not_flagged(
    tmp_path: Path, counters: dict[str, TokenCounter]
) -> None:
    (tmp_path / "as_is").mkdir()
    as_is = _copy(L_DUMP, tmp_path / "as_is", L_DUMP.name)
    assert _of(_decide(_dumps([as_is], counters)[0], counters), "summary_lost_active")
    document = json.loads(L_DUMP.read_text(encoding="utf-8"))
    summary = "AssertionError: assert datetime.timedelta(days=-1, seconds=68400) still fails"
    for message in document["context_after"]["messages"]:
        if str(message["content"]).startswith("<memory_block_current>"):
            head, _, rest = message["content"].partition("<summary>\n")
            _, _, tail = rest.partition("\n</summary>")
            message["content"] = f"{head}<summary>\n{summary}\n</summary>{tail}"
    path = tmp_path / L_DUMP.name
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    assert not _of(_decide(_dumps([path], counters)[0], counters), "summary_lost_active")


def test_request_after_an_overflow_shrink_names_attempt_and_calls(
    counters: dict[str, TokenCounter],
) -> None:
    found = _of(
        _decide(_dumps([F_DUMP.parent], counters)[0], counters), "request_without_tool_results"
    )
    assert len(found) == 1 and found[0].severity == "problem"
    assert found[0].sentence.startswith("attempt 3 (after 2 overflow shrink(s)) ends at #9")
    assert "'call_f_05'" in found[0].sentence and "#10 (protected tail)" in found[0].sentence


@pytest.mark.parametrize(
    ("session_id", "kind", "fact"),
    [
        (
            "ojw-ref/a_current_round_plain",
            "dump_name_session_changed",
            "'ojw-ref-a_current_round_plain'",
        ),
        ("team:" + "x" * 100, "dump_name_session_cut", "cut to 80 characters"),
        ("plain-session_1.2", None, ""),
    ],
)
def test_dump_name_that_loses_the_session(
    tmp_path: Path,
    counters: dict[str, TokenCounter],
    session_id: str,
    kind: str | None,
    fact: str,
) -> None:
    from inspector.core.compaction import safe_name

    name = f"1795975303278_CurrentRoundCompressor_{safe_name(session_id)}.json"
    path = _copy(A_DUMP, tmp_path, name, session_id=session_id)
    found = [
        f for f in _decide(_dumps([path], counters)[0], counters) if f.key.startswith("dump_name")
    ]
    if kind is None:
        assert not found
        return
    assert [f.key for f in found] == [kind] and fact in found[0].sentence
    assert name in found[0].sentence


def test_two_sessions_that_share_a_dump_name_collide(
    tmp_path: Path, counters: dict[str, TokenCounter]
) -> None:
    _copy(
        A_DUMP,
        tmp_path,
        "1795975303278_CurrentRoundCompressor_team-a-1.json",
        session_id="team/a:1",
    )
    _copy(
        A_DUMP,
        tmp_path,
        "1795975303999_CurrentRoundCompressor_team-a-1.json",
        session_id="team a?1",
    )
    _copy(A_DUMP, tmp_path, "1795975304000_CurrentRoundCompressor_team-b.json", session_id="team-b")
    pairs = folder_findings(_dumps([tmp_path], counters))
    assert len(pairs) == 2 and {a.session_id for a, _ in pairs} == {"team/a:1", "team a?1"}
    finding = pairs[0][1]
    assert finding.key == "dump_name_collision" and finding.severity == "problem"
    assert "*_team-a-1.json" in finding.sentence and "'team a?1', 'team/a:1'" in finding.sentence


def test_one_session_many_dumps_is_no_collision(
    tmp_path: Path, counters: dict[str, TokenCounter]
) -> None:
    for stamp in ("1795975303278", "1795975303999"):
        _copy(A_DUMP, tmp_path, f"{stamp}_CurrentRoundCompressor_team-a.json", session_id="team/a")
    assert folder_findings(_dumps([tmp_path], counters)) == []


def test_a_dump_whose_span_does_not_fit_its_context_gives_no_traceback(tmp_path: Path) -> None:
    """Found by `make fuzz`: a dump without the messages it sent (so the rebuilt context is
    shorter than its recorded span) is still reported, and its findings never index past
    the context."""
    import subprocess
    import sys

    source = next(
        REPO.glob("sample_dumps/workspace/context/ui-review-images_context/compression_logs/*.json")
    )
    raw = json.loads(source.read_text(encoding="utf-8"))
    del raw["compression_request"]["messages_sent_to_model"]
    path = tmp_path / source.name
    path.write_text(json.dumps(raw), encoding="utf-8")
    for command in (["stats", "--json"], ["why", "--json"]):
        done = subprocess.run(
            [sys.executable, "-m", "inspector", *command, str(path)],
            capture_output=True, text=True, timeout=120, cwd=REPO,
        )  # fmt: skip
        assert "Traceback" not in done.stderr and done.returncode in (0, 1), done.stderr
        assert done.stdout.strip()
