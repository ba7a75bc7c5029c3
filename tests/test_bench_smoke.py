"""The benchmark scripts run on tiny inputs (no timing is asserted: that is bench/'s job)."""

from __future__ import annotations

import json
from pathlib import Path

from bench.lazy_dump import read_head
from bench.synth import synthetic_snapshot, write_big_dump, write_folder
from inspector.core.artifact import Artifact
from inspector.core.snapshot import snapshot_from_dict
from inspector.sources.loader import load_file, load_paths

REPO = Path(__file__).resolve().parents[1]


def test_big_dump_generator_makes_a_dump_the_loader_reads(tmp_path: Path) -> None:
    path = write_big_dump(tmp_path, messages=120, target_mb=0.3)
    artifacts = [a for a in load_file(path) if isinstance(a, Artifact)]
    assert artifacts and artifacts[0].kind == "dump"
    snapshot = artifacts[0].snapshot
    assert snapshot is not None and len(snapshot.messages) == 120
    head = read_head(path, rows=10)
    assert head.header["processor_type"] == "CurrentRoundCompressor"
    assert head.header["span"]["protected_tail_count"] == 6
    assert [m.to_dict() for m in head.rows] == [m.to_dict() for m in snapshot.messages[:10]]
    assert len(head.system_messages) == 2


def test_folder_generator_uses_openjiuwens_layout(tmp_path: Path) -> None:
    root = write_folder(tmp_path / "f", dumps=6, sessions=2, messages_per_dump=8)
    dumps = sorted(
        root.glob("context/agent/s*_context/compression_logs/*_*Compressor_agent-s*.json")
    )
    logs = sorted(root.glob("context/agent/s*_context/context_debug/*Compressor.jsonl"))
    assert len(dumps) == 6 and len(logs) == 2
    assert json.loads(dumps[0].read_text(encoding="utf-8"))["session_id"].startswith("agent/s")
    kinds = [a.kind for a in load_paths([root]) if isinstance(a, Artifact)]
    assert kinds.count("dump") == 6


def test_synthetic_snapshot_is_a_valid_snapshot() -> None:
    snapshot = snapshot_from_dict(synthetic_snapshot(300))
    assert len(snapshot.messages) == 300
    assert {m.role for m in snapshot.messages} == {"user", "assistant", "tool"}
