"""Every benchmark script runs end to end on tiny inputs (`bench/run_all.py --quick`; no timing
is asserted: that is bench/'s job). Run by `make test-slow` (about a minute on two idle
cores, several under load), so `make test` stays within its five minutes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_run_all_quick_prints_every_benchmark(tmp_path: Path) -> None:
    env = {**os.environ, "CONTEXT_INSPECTOR_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "run_all.py"),
            "--quick",
            "--out",
            str(tmp_path / "out"),
            "--markdown",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    table = done.stdout
    for bench in ("parity", "resplit", "bigdump", "folder"):
        assert f"| {bench} |" in table
    assert "0 decisions differ from expected" in table
    assert "counts identical: True" in table
