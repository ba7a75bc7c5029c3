"""Issue 2, benchmark (a): decide every case of a case file, whole process, against a floor.

The floor is a process that only parses the file and tokenizes each needed text once
(bench/workers/parity_floor.py). The inspector's process (bench/workers/parity_decide.py)
starts Python, imports the core, parses, counts and decides every case. Both are timed
wall-clock, interleaved, best of N. Goal: at most 1.5x the floor (openJiuwen needs ~4x).
The decisions printed by the worker are checked against the file's `expected` block when
it has one, so a fast wrong answer cannot pass. `inspector why --json` on the same file is
timed too, for information: it adds the loader's checks and the full diagnosis.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bench.common import PYTHON, REPO_ROOT, Result, interleaved_best

SHARED = REPO_ROOT.parent / "shared"
if not SHARED.exists():
    SHARED = Path("/work/shared")
DEFAULT_CASES = SHARED / "reference" / "parity" / "cases.jsonl"
WORKERS = Path(__file__).resolve().parent / "workers"
GOAL_RATIO = 1.5


def _check(cases: Path, stdout: str) -> int:
    """How many decisions disagree with the case file's expected hit/reason/total/span."""
    expected = {}
    for line in cases.read_text(encoding="utf-8").splitlines():
        if line.strip():
            raw = json.loads(line)
            if "expected" in raw:
                expected[raw["id"]] = raw["expected"]
    wrong = 0
    for line in stdout.splitlines():
        got = json.loads(line)
        want = expected.get(got["id"])
        if want and any(got[k] != want[k] for k in ("hit", "reason", "total_tokens", "span")):
            wrong += 1
    return wrong


def run(cases: Path | None = None, repeats: int = 5) -> list[Result]:
    """Time floor and inspector on `cases`; one Result with the ratio."""
    path = Path(cases or DEFAULT_CASES)
    if not path.exists():
        return [
            Result(
                "parity",
                "decide cases",
                0.0,
                "s",
                f"<= {GOAL_RATIO}x floor",
                False,
                note=f"{path} not found",
            )
        ]
    best = interleaved_best(
        {
            "floor": [PYTHON, str(WORKERS / "parity_floor.py"), str(path)],
            "inspector": [PYTHON, str(WORKERS / "parity_decide.py"), str(path)],
            "why": [PYTHON, "-m", "inspector", "why", "--json", str(path)],
        },
        repeats,
    )
    wrong = _check(path, best["inspector"].stdout)
    floor, ours = best["floor"].seconds, best["inspector"].seconds
    cases_count = sum(1 for _ in best["inspector"].stdout.splitlines())
    return [
        Result(
            "parity",
            f"decide {cases_count} cases ({path.name}), whole process",
            ours,
            "s",
            f"<= {GOAL_RATIO}x floor",
            ours <= GOAL_RATIO * floor and wrong == 0,
            floor=floor,
            note=f"floor parses + tokenizes once; best of {repeats}; {wrong} decisions differ from expected",
        ),
        Result(
            "parity",
            "inspector why --json on the same file, whole process",
            best["why"].seconds,
            "s",
            "(info)",
            True,
            floor=floor,
            note="the real CLI: loader checks, full diagnosis (checks, findings) and JSON output",
        ),
    ]


if __name__ == "__main__":
    from bench.run_all import print_table

    print_table(run(Path(sys.argv[1]) if len(sys.argv) > 1 else None))
