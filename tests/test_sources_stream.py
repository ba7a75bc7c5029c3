"""Loading streams: records and dump headers are linked first, dump files are read at their turn."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspector.core.artifact import Artifact
from inspector.sources.loader import load_paths
from tests.conftest import REFERENCE

SOURCE = REFERENCE / "a_current_round_plain"
DUMP = next(SOURCE.glob("*Compressor_*.json"))


def _folder(root: Path, copies: int) -> Path:
    raw = json.loads(DUMP.read_text(encoding="utf-8"))
    logs = root / "compression_logs"
    logs.mkdir(parents=True)
    for index in range(copies):
        raw["timestamp"] = 1795975303.0 + index
        name = f"{int(raw['timestamp'] * 1000)}_CurrentRoundCompressor_ojw-ref-a_current_round_plain.json"
        (logs / name).write_text(json.dumps(raw, indent=2), encoding="utf-8")
    debug = root / "context_debug"
    debug.mkdir()
    (debug / "CurrentRoundCompressor.jsonl").write_bytes(
        (SOURCE / "CurrentRoundCompressor.jsonl").read_bytes()
    )
    return root


def test_first_result_comes_before_every_dump_is_read(tmp_path: Path, counters: Any) -> None:
    root = _folder(tmp_path / "f", 30)
    reads: list[int] = []
    stream = load_paths([root], counters=counters, progress=lambda done, total: reads.append(done))
    first = next(stream)
    read_at_first = reads[-1]
    rest = list(stream)
    assert read_at_first <= 2 < reads[-1] == 31
    dumps = [first, *rest]
    assert all(isinstance(a, Artifact) and a.kind == "dump" for a in dumps) and len(dumps) == 30
    times = [a.timestamp for a in dumps if isinstance(a, Artifact)]
    assert times == sorted(times, reverse=True)
    # the one threshold_check (t = 1795975303.05) is linked to the first dump written after it
    linked = [a for a in dumps if isinstance(a, Artifact) and "threshold_check" in a.recorded]
    assert [a.timestamp for a in linked] == [1795975304.0]


def test_compact_one_line_dump_is_still_a_dump(tmp_path: Path, counters: Any) -> None:
    folder = tmp_path / "compact"
    folder.mkdir()
    (folder / "x.json").write_text(
        json.dumps(json.loads(DUMP.read_text(encoding="utf-8"))), encoding="utf-8"
    )
    (result,) = list(load_paths([folder], counters=counters))
    assert isinstance(result, Artifact) and result.kind == "dump" and result.snapshot is not None
