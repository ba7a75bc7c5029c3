"""The hardening fuzz suite (issue 15): mutated real artifacts and odd filesystems driven
through the CLI show no traceback, no hang, no silent skip of a broken artifact, only valid
UTF-8 JSON Lines, and leave the folders they read byte- and mtime-identical.

The mutation kinds are in `tests.fuzz.mutate` (lone surrogates, huge integers, `[...]`
wrappers, missing keys, deep nesting, type swaps), applied to copies of the real files in the
reference folder and sample_dumps/. `FUZZ_CASES` sets the number of mutation cases (a quick
default here; `make fuzz` runs thousands).
"""

from __future__ import annotations

import atexit
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz import filesystem
from tests.fuzz.cases import COMMANDS, CONTROL, corpus, make_case, run_case
from tests.fuzz.harness import judge, run_cli, tree_state
from tests.fuzz.mutate import KINDS, mutate_file

CASES = int(os.environ.get("FUZZ_CASES", "150"))
WORK = Path(tempfile.mkdtemp(prefix="inspector-harden-fuzz-"))
atexit.register(shutil.rmtree, WORK, True)
FILES = corpus()
_COUNTS: dict[str, int] = {}


def _control_counts() -> dict[str, int]:
    if not _COUNTS:
        folder = WORK / "control"
        folder.mkdir(exist_ok=True)
        shutil.copyfile(CONTROL, folder / "input.json")
        for command in COMMANDS:
            if command != ["why"]:
                _COUNTS[command[0]] = len(run_cli([*command, str(folder)]).lines())
    return _COUNTS


@settings(max_examples=CASES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(min_value=0, max_value=2**32))
def test_mutated_real_files(seed: int) -> None:
    case = make_case(seed, FILES)
    folder = WORK / f"case-{seed}"
    try:
        verdict, _ = run_case(case, folder, _control_counts())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert verdict, f"{case.kind} of {case.original} with {case.command}: {verdict.failures}"


def test_every_kind_on_every_real_file_in_one_folder(tmp_path: Path) -> None:
    """One folder holding a broken copy of many real files at once: each is reported, the
    good control too, in one run that streams them all."""
    rng = random.Random(15)
    broken: list[str] = []
    for index, original in enumerate(FILES[:: max(len(FILES) // 24, 1)]):
        kind = sorted(KINDS)[index % len(KINDS)]
        target = tmp_path / "mix" / f"{index:02d}-{kind}" / original.name
        target.parent.mkdir(parents=True)
        target.write_bytes(mutate_file(original, kind, rng))
        broken.append(str(target))
    control = tmp_path / "mix" / "zz" / "input.json"
    control.parent.mkdir()
    shutil.copyfile(CONTROL, control)
    before = tree_state(tmp_path / "mix")
    run = run_cli(["why", "--json", str(tmp_path / "mix")], 120)
    verdict = judge(run, broken, {str(control): 1})
    assert verdict, verdict.failures
    assert tree_state(tmp_path / "mix") == before


@pytest.mark.parametrize("command", COMMANDS + (["watch", "--once", "--json"],))
def test_odd_filesystem(tmp_path: Path, command: list[str]) -> None:
    broken, good = filesystem.build(tmp_path / "odd")
    before = tree_state(tmp_path / "odd")
    run = run_cli([*command, str(tmp_path / "odd")], 20)
    json_out = command != ["why"]
    assert not run.hung and run.crash is None, run.crash
    if command[0] in ("why", "snapshot") and json_out:
        verdict = judge(run, broken, {source: 1 for source in good})
    else:
        verdict = judge(run, json_lines=json_out)
    assert verdict, verdict.failures
    assert run.code == 1
    for stream in (run.stdout, run.stderr):
        assert b"\x1b" not in stream and b"\x07" not in stream  # names shown escaped
        stream.decode("utf-8")
    assert tree_state(tmp_path / "odd") == before


def test_a_fifo_given_explicitly_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "given.json"
    os.mkfifo(fifo)
    for command in (["why", "--json"], ["snapshot"], ["stats", "--json"]):
        run = run_cli([*command, str(fifo)], 10)
        assert not run.hung and run.crash is None
        assert run.code == 1 and "FIFO" in run.stdout.decode() + run.stderr.decode()


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv to drop root's DAC")
def test_an_unlistable_folder_is_reported(tmp_path: Path) -> None:
    """Run without the capability that lets root read anything, so permissions bite."""
    folder = tmp_path / "perm"
    (folder / "locked").mkdir(parents=True)
    shutil.copyfile(CONTROL, folder / "locked" / "input.json")
    shutil.copyfile(CONTROL, folder / "input.json")
    (folder / "locked").chmod(0)
    try:
        result = subprocess.run(
            [
                "setpriv",
                "--inh-caps=-all",
                "--bounding-set=-dac_override,-dac_read_search",
                sys.executable,
                "-m",
                "inspector",
                "why",
                "--json",
                str(folder),
            ],
            capture_output=True,
            timeout=60,
        )
    finally:
        (folder / "locked").chmod(0o755)
    lines = [line for line in result.stdout.decode().splitlines() if line]
    assert result.returncode == 1, result.stderr
    assert b"Traceback" not in result.stderr
    assert any('"cannot list folder: permission denied"' in line for line in lines), lines
    assert any(str(folder / "input.json") in line and '"kind"' in line for line in lines)
