"""Installed like a tool: the wheel, installed into a fresh venv outside the repository, runs
`inspector why` on its bundled samples with exact (cl100k) counting, and `inspector` with no
argument finds them. Run by `make test-wheel` (it builds a wheel and installs its
dependencies from the package registry: about a minute)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run(*command: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(c) for c in command],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env=env,
    )
    assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-3000:])
    return done.stdout


def test_wheel_in_a_fresh_venv_runs_why_on_bundled_samples(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "-q",
        "--no-deps",
        str(REPO),
        "-w",
        wheels,
        cwd=tmp_path,
    )
    (wheel,) = wheels.glob("context_inspector-*.whl")
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    python = venv / "bin" / "python"
    run(python, "-m", "pip", "install", "-q", wheel, cwd=tmp_path)
    away = tmp_path / "elsewhere"
    away.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENJIUWEN_")}
    env["CONTEXT_INSPECTOR_CACHE_DIR"] = str(tmp_path / "cache")
    env["CONTEXT_INSPECTOR_CONFIG_DIR"] = str(tmp_path / "config")
    inspector = venv / "bin" / "inspector"
    assert run(inspector, "--version", cwd=away, env=env).startswith("inspector ")
    # the default sources of the installed package: its bundled copy, not the repository's
    code = (
        "from inspector.cli.common import default_sources; import inspector, pathlib; "
        "s = default_sources(); print(s[0]); "
        "assert pathlib.Path(s[0]).is_relative_to(pathlib.Path(inspector.__file__).parent)"
    )
    samples = Path(run(python, "-c", code, cwd=away, env=env).strip())
    assert samples.name == "samples" and (samples / "README.md").exists()
    shipped = sorted(p.relative_to(samples) for p in samples.rglob("*") if p.is_file())
    source = sorted(
        p.relative_to(REPO / "sample_dumps")
        for p in (REPO / "sample_dumps").rglob("*")
        if p.is_file()
    )
    assert shipped == source
    out = run(inspector, "why", samples, "--json", "--tokens", "tiktoken_cl100k", cwd=away, env=env)
    lines = [json.loads(line) for line in out.splitlines()]
    contexts = [line for line in lines if line.get("verdict") is not None]
    assert len(contexts) >= 10 and not [line for line in lines if "error" in line]
    assert all(line["exact_counting"] for line in contexts)
    # and the same numbers as the repository's own install on the repository's folder
    here = subprocess.run(
        [
            sys.executable,
            "-m",
            "inspector",
            "why",
            str(REPO / "sample_dumps"),
            "--json",
            "--tokens",
            "tiktoken_cl100k",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
    )
    mine = [json.loads(line) for line in here.stdout.splitlines()]
    assert [(m["id"], m["total_tokens"], m["verdict"]) for m in mine] == [
        (t["id"], t["total_tokens"], t["verdict"]) for t in lines
    ]
