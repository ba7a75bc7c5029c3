"""Layer rules hold: `lint-imports` keeps every import-linter contract in pyproject.toml.

The contracts (core pure, formats over core only, sources/llm headless, render Rich-only,
cli importing the TUI only in `cli.launch`, no cycles between siblings) fail this test with
lint-imports' own report, which names each forbidden import chain and its line.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _lint_imports() -> Path:
    """The lint-imports script of the interpreter running the tests (import-linter is a test extra)."""
    script = Path(sys.executable).parent / "lint-imports"
    assert script.exists(), "import-linter is not installed: pip install -e '.[test]'"
    return script


def test_every_layer_has_a_contract() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    sources = {m for c in contracts for m in c.get("source_modules", [])}
    assert {"inspector.core", "inspector.sources", "inspector.llm", "inspector.render"} <= sources
    assert "inspector.cli" in sources
    assert any(c["type"] == "acyclic_siblings" for c in contracts)


def test_lint_imports_keeps_every_contract() -> None:
    done = subprocess.run(
        [str(_lint_imports()), "--no-cache"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout
