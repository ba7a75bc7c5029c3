"""Issue 16: `stats --no-findings` runs its load with the cyclic collector off.

The header-level load makes and keeps objects fast (records, runs, dump headers, then
100,000 small results over 50,000 files); every collection would walk them again, and a
big folder's listing alone set off three full ones. The collector is on again after.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.synth import write_folder
from inspector.cli import main
from inspector.cli import stats as stats_command
from inspector.core.artifact import Artifact


def test_stats_no_findings_loads_with_the_collector_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = write_folder(tmp_path / "f", dumps=80, sessions=4, messages_per_dump=6)
    enabled_at: list[bool] = []
    real = stats_command.compute_stats

    def watched(artifacts: Iterable[Artifact]) -> Iterator[Artifact]:
        iterator = iter(artifacts)
        while True:
            enabled_at.append(gc.isenabled())  # before each step of the load (the listing too)
            try:
                yield next(iterator)
            except StopIteration:
                return

    def compute(artifacts: Iterable[Artifact], *args: Any) -> dict[str, Any]:
        return real(watched(artifacts), *args)

    monkeypatch.setattr(stats_command, "compute_stats", compute)
    enabled = gc.isenabled()
    gc.enable()
    try:
        assert main(["stats", "--json", "--no-findings", str(folder)]) == 0
        assert gc.isenabled()
    finally:
        if not enabled:
            gc.disable()
    assert len(enabled_at) > 80 and not any(enabled_at)
    stats = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert stats["artifacts"]["dump"] == 80
