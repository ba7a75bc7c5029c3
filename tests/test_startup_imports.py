"""What a headless command imports (issue 16, start cost): a whole `why --json` or
`stats --json` process on a dump, or `--help`, loads only what it needs, checked in a
fresh interpreter (a module another test imported cannot hide a regression)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO, fresh_interpreter_json, loaded_modules

DUMP = (
    REPO
    / "sample_dumps/workspace/context/ops-incident-42_context/compression_logs"
    / "1796159289784_CurrentRoundCompressor_ops-incident-42.json"
)

_CHILD = """
import contextlib, io, json, sys
from inspector.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        status = main(sys.argv[1:])
    except SystemExit as exit:  # argparse's --help
        status = exit.code
print(json.dumps({"status": status, "out": out.getvalue(), "modules": sorted(sys.modules)}))
"""

#: No headless command on a dump needs these (prefixes of module names).
NEVER = (
    "textual",
    "rich",
    "httpx",
    "websockets",
    "pyarrow",
    "duckdb",
    "inspector.tui",
    "inspector.render",
    "inspector.llm",
    "inspector.index",
    "inspector.sources.live",
    "inspector.sources.connect",
    "inspector.sources.follow",
    "inspector.core.hybrid",  # the hybrid strategy and its engine
    "inspector.core.compare",
    "inspector.core.rerun",
    "inspector.formats.index",
    "inspector.formats.live",
    "inspector.formats.output",
    "inspector.formats.reports",
    "inspector.cli.sweep",
    "inspector.cli.compare",
    "inspector.cli.rerun",
    "inspector.cli.watch",
    "inspector.cli.launch",
)
#: The standard family, which a forked dump does not need either: its strategies,
#: processors and rerun builders (its release constants, `inspector.core.standard.release`,
#: are read by the jiuwenswarm config reader).
STANDARD = ("inspector.core.standard",)
STANDARD_CONSTANTS = ("inspector.core.standard", "inspector.core.standard.release")


def _run(tmp_path: Path, *args: str) -> dict[str, object]:
    env = {"CONTEXT_INSPECTOR_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    return fresh_interpreter_json(_CHILD, *args, env=env)


@pytest.mark.parametrize("command", ["why", "stats"])
def test_a_json_report_on_a_dump_imports_only_what_it_needs(tmp_path: Path, command: str) -> None:
    result = _run(tmp_path, command, "--json", str(DUMP))
    assert result["status"] == 0
    lines = [json.loads(line) for line in str(result["out"]).splitlines()]
    assert lines and "error" not in lines[0]
    assert loaded_modules(result, NEVER) == []
    # what it does need: the one strategy the dump names, and the dump format
    if command == "why":
        assert loaded_modules(result, ("inspector.core.forked.strategy", "inspector.formats.dump"))


def test_why_on_a_forked_dump_does_not_import_the_standard_family(tmp_path: Path) -> None:
    loaded = loaded_modules(_run(tmp_path, "why", "--json", str(DUMP)), STANDARD)
    assert [m for m in loaded if m not in STANDARD_CONSTANTS] == []


def test_help_imports_no_strategy_and_no_pydantic(tmp_path: Path) -> None:
    for args in (["--help"], ["why", "--help"]):
        result = _run(tmp_path, *args)
        assert result["status"] == 0 and "--trigger-ratio" in str(result["out"])
        assert loaded_modules(result, ("pydantic", "inspector.core.strategy.base")) == [], args
        assert loaded_modules(result, ("inspector.core.forked", "inspector.core.standard")) == []
        assert loaded_modules(result, NEVER) == []
