"""Fuzz cases built from the real artifacts in the reference folder and sample_dumps/.

A case copies one real file into a fresh folder, mutates it (`mutate.KINDS`), adds an
untouched control file, runs a command on the folder and judges the run (`harness.judge`).
Must not write anywhere but the case folder it is given.
"""

from __future__ import annotations

import random
import shutil
from dataclasses import dataclass
from pathlib import Path

from tests.fuzz.harness import CliRun, Verdict, judge, run_cli, tree_state
from tests.fuzz.mutate import KINDS, mutate_file

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = Path("/work/shared/reference/openjiuwen")
SAMPLES = ROOT / "sample_dumps"
#: Harness files that are none of our formats (a folder scan skips them by design).
_NOT_ARTIFACTS = {"result.json", "http_requests.json", "layout.json", "index.json"}
COMMANDS = (["why", "--json"], ["snapshot"], ["stats", "--json"], ["why"])


def corpus() -> list[Path]:
    """Every real artifact file, small ones first (the case count does not depend on disk order)."""
    found: list[Path] = []
    for base in (REFERENCE, SAMPLES):
        if base.is_dir():
            for path in base.rglob("*"):
                if (
                    path.is_file()
                    and path.suffix in (".json", ".jsonl")
                    and path.name not in _NOT_ARTIFACTS
                    and path.stat().st_size < 400_000
                ):
                    found.append(path)
    return sorted(found, key=lambda p: (p.stat().st_size, str(p)))


CONTROL = REFERENCE / "c_below_threshold" / "input.json"


@dataclass
class Case:
    """One mutated file in a folder with a control beside it."""

    seed: int
    original: Path
    kind: str
    command: list[str]


def make_case(seed: int, files: list[Path]) -> Case:
    """The case a seed stands for."""
    rng = random.Random(seed)
    return Case(seed, rng.choice(files), rng.choice(sorted(KINDS)), rng.choice(COMMANDS))


def run_case(case: Case, folder: Path, control_count: dict[str, int]) -> tuple[Verdict, CliRun]:
    """Build the case's folder, run its command, judge it; the folder must be unchanged after."""
    rng = random.Random(case.seed)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "case" / case.original.name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(mutate_file(case.original, case.kind, rng))
    control = folder / "control" / "input.json"
    control.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CONTROL, control)
    before = tree_state(folder)
    run = run_cli([*case.command, str(folder)])
    if case.command[0] in ("why", "snapshot") and case.command != ["why"]:
        # `snapshot` prints contexts only: a debug log without one is no line, not a skip
        broken = [str(target)] if case.command[0] == "why" else []
        verdict = judge(run, broken, {str(control): control_count[case.command[0]]})
    else:
        verdict = judge(run, json_lines=case.command != ["why"])
    if case.command == ["why"] and b"\x1b" in run.stdout:
        verdict.add("raw escape in the text report")
    if tree_state(folder) != before:
        verdict.add("the folder read was changed")
    return verdict, run


def control_counts(folder: Path) -> dict[str, int]:
    """How many lines the control file gives alone, per JSON command."""
    control = folder / "input.json"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CONTROL, control)
    counts: dict[str, int] = {}
    for command in COMMANDS:
        if command == ["why"]:
            continue
        run = run_cli([*command, str(folder)])
        counts[command[0]] = len(run.lines())
    return counts
