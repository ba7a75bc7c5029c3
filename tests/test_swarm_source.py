"""jiuwenswarm's files as a source, on a home folder a real jiuwenswarm 0.2.3 wrote.

`tests/data/jiuwenswarm/home` was exported from a run of the real agent with a scripted
model (`tests/integration/swarm_harness.py export_home`): its config.yaml (DialogueCompressor
`tokens_threshold` 3000, `messages_to_keep` 2), the session's history.jsonl, the checkpoint
SQLite file, and the compression-state lines of its stdout (`stdout.log`). The checks
compare our reading with what the agent itself logged: the processors that ran, how often
each compressed, and the token count of the context it held.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from inspector.core.artifact import Artifact, LoadError
from inspector.sources.jiuwenswarm import find_home, is_swarm_log, read_config
from inspector.sources.jiuwenswarm.records import read_checkpoint, read_log
from inspector.sources.jiuwenswarm.session import held_from_transcript, load_home
from inspector.sources.loader import load_paths

ROOT = Path(__file__).resolve().parents[1]
HOME = ROOT / "tests" / "data" / "jiuwenswarm" / "home"
LOG = HOME / "stdout.log"
SID = "sess_harness_000001"
KEY = "sk-home0123456789abcdefghijklmnop"


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    """A copy of the exported home with a config/.env holding the model name and a key."""
    copy = tmp_path / "home"
    shutil.copytree(HOME, copy)
    (copy / "config" / ".env").write_text(f"API_KEY={KEY}\nMODEL_NAME=scripted-model\n")
    return copy


def _why(*args: str) -> tuple[int, list[dict[str, Any]], str]:
    done = subprocess.run(
        [sys.executable, "-m", "inspector", "why", *args, "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    return done.returncode, [json.loads(x) for x in done.stdout.splitlines()], done.stderr


def _snapshot_of_folder(folder: Path) -> dict[str, tuple[bytes, float]]:
    return {
        str(p): (p.read_bytes(), p.stat().st_mtime)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_the_home_is_recognised_by_content(home: Path, tmp_path: Path) -> None:
    session = home / "agent" / "sessions" / SID
    assert find_home(home) is not None and find_home(home).session_id is None  # type: ignore[union-attr]
    assert find_home(session).session_id == SID  # type: ignore[union-attr]
    assert find_home(session / "history.jsonl").session_id == SID  # type: ignore[union-attr]
    assert find_home(home / "agent" / "sessions").session_id is None  # type: ignore[union-attr]
    other = tmp_path / "other"
    (other / "config").mkdir(parents=True)
    (other / "agent").mkdir()
    (other / "config" / "config.yaml").write_text("name: not jiuwenswarm\n")
    assert find_home(other) is None and find_home(tmp_path) is None
    assert is_swarm_log(home / "stdout.log") and not is_swarm_log(session / "history.jsonl")


def test_config_gives_the_agents_processors_and_thresholds(home: Path) -> None:
    config = read_config(home)
    assert [name for name, _ in config.chain] == [
        "MessageSummaryOffloader",
        "ReasoningToolLoopCompactProcessor",
        "DialogueCompressor",
        "CurrentRoundCompressor",
        "RoundLevelCompressor",
    ]
    dialogue = config.config_of("DialogueCompressor")
    assert dialogue is not None and dialogue["tokens_threshold"] == 3000
    assert dialogue["messages_to_keep"] == 2 and dialogue["model"] == {
        "model_name": "scripted-model"
    }
    assert config.trigger_tokens()["DialogueCompressor"] == 3000
    assert config.trigger_tokens()["RoundLevelCompressor"] == 180000  # 0.9 of the 200,000 default


def test_why_names_the_compressions_the_agent_made(home: Path) -> None:
    before = _snapshot_of_folder(home)
    code, lines, stderr = _why(str(home), str(home / "stdout.log"))
    assert code == 0, stderr
    assert _snapshot_of_folder(home) == before  # nothing written, not even the checkpoint's WAL
    logged = list(read_log(home / "stdout.log"))
    by = {line["processor"]: line for line in lines}
    assert set(by) == {name for name, _ in read_config(home).chain}
    dialogue = by["DialogueCompressor"]
    completed = [op for op in logged if op.processor == "DialogueCompressor" and op.compressed]
    assert completed, "the exported run must contain a compression"
    assert dialogue["recorded"]["compressions"] == len(completed)
    assert dialogue["threshold"] == 3000
    started = sum(op.status == "started" for op in logged if op.processor == "DialogueCompressor")
    assert f"started {started}" in dialogue["recorded"]["states"]
    # the others never triggered: the agent logged nothing for them, and we say why not
    offloader = by["MessageSummaryOffloader"]
    assert offloader["recorded"]["states"] == "none recorded" and offloader["hit"] is False
    assert "never fired" in offloader["recorded"]["why not"]
    assert KEY not in json.dumps(lines) and KEY not in stderr


def test_the_held_context_counts_as_the_agent_counted_it(home: Path) -> None:
    facts = read_checkpoint(home / "agent" / ".checkpoint" / "checkpoint.db")
    stored = facts.contexts[SID]["default_context_id.messages"]
    artifacts = [r for r in load_home(find_home(home)) if isinstance(r, Artifact)]  # type: ignore[arg-type]
    dialogue = next(a for a in artifacts if a.processor == "DialogueCompressor")
    assert dialogue.snapshot is not None and len(dialogue.snapshot.messages) == len(stored)
    assert "checkpoint" in dialogue.recorded["context"]
    # the context the checkpoint stored is what the agent's last logged state left behind,
    # and we count it as the agent did (cl100k, 0.1.16 rules)
    last = [op for op in read_log(home / "stdout.log") if op.status != "started"][-1]
    from inspector.core.strategy.selection import select
    from inspector.encoding import make_counters

    selection = select(dialogue.snapshot, {})
    prepared = selection.strategy.prepare(dialogue.snapshot, make_counters())
    decision = selection.strategy.decide(prepared, selection.settings)
    assert last.after_messages == len(stored)
    assert decision.total_tokens == last.after_tokens


def test_without_the_checkpoint_the_transcript_is_folded_and_says_so(home: Path) -> None:
    (home / "agent" / ".checkpoint" / "checkpoint.db").unlink()
    results = list(load_home(find_home(home), logs=[home / "stdout.log"]))  # type: ignore[arg-type]
    dialogue = next(
        r for r in results if isinstance(r, Artifact) and r.processor == "DialogueCompressor"
    )
    assert "approximated" in dialogue.recorded["context"]
    assert any("folded" in note for note in dialogue.recorded["unrecoverable"])
    assert dialogue.snapshot is not None
    assert any("[DIALOGUE_MEMORY_BLOCK]" in str(m.content) for m in dialogue.snapshot.messages)


def test_folding_follows_the_logged_counts() -> None:
    from inspector.sources.jiuwenswarm.records import RecordedOperation

    transcript = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(8)
    ]
    op = RecordedOperation(
        "op",
        "completed",
        "add_messages",
        "DialogueCompressor",
        before_messages=6,
        after_messages=3,
        before_tokens=600,
        after_tokens=200,
        compact_summary="summary",
    )
    held, notes = held_from_transcript(transcript, [op])
    assert len(held) == 3 + 2  # 6 -> 3 at that point, then the two later messages
    assert held[0]["content"].endswith("summary") and held[1]["content"] == "m4"
    assert len(notes) == 2


def test_a_log_alone_reports_what_it_recorded() -> None:
    results = list(load_paths([str(LOG)]))
    assert results and all(isinstance(r, Artifact) and r.kind == "debug" for r in results)
    dialogue = next(
        r for r in results if isinstance(r, Artifact) and r.processor == "DialogueCompressor"
    )
    assert dialogue.snapshot is None and dialogue.recorded["compressions"] >= 1


def test_bad_files_are_errors_not_tracebacks(home: Path) -> None:
    history = home / "agent" / "sessions" / SID / "history.jsonl"
    lines = history.read_text().splitlines()
    history.write_text("\n".join([lines[0], "{broken", *lines[1:]]) + "\n")
    results = list(load_home(find_home(home)))  # type: ignore[arg-type]
    errors = [r for r in results if isinstance(r, LoadError)]
    assert [e.where for e in errors] == ["line 2"]
    assert sum(isinstance(r, Artifact) for r in results) == 5

    # a checkpoint whose pickle would run a command: read as data, never run
    marker = home / "ran"

    class Evil:
        def __reduce__(self) -> Any:
            return (os.system, (f"touch {marker}",))

    import base64

    db = home / "agent" / ".checkpoint" / "checkpoint.db"
    blob = "__BYTES__:" + base64.b64encode(pickle.dumps({"global_state": Evil()})).decode()
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE kv_store SET value = ? WHERE key LIKE '%blobs'", (blob,))
    results = list(load_home(find_home(home)))  # type: ignore[arg-type]
    assert not marker.exists()
    assert any(isinstance(r, Artifact) for r in results)  # falls back to the transcript

    db.write_bytes(b"not a database at all" * 100)
    code, lines, stderr = _why(str(home))
    assert code == 1 and "Traceback" not in stderr
    assert any("checkpoint" in line.get("source", "") and "error" in line for line in lines)
