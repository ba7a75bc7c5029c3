"""A compressed copy of a log or dump in a folder (`cases.jsonl.gz`) is named as not read, in
the CLI and in the browser, instead of a folder that silently shows nothing."""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
from pathlib import Path

from inspector.core.tokens import TokenCounter
from inspector.tui.app import create_app
from tests.conftest import REFERENCE, REPO
from tests.test_tui_app import loaded

LOG = REFERENCE / "f_overflow_413_retry" / "CurrentRoundCompressor.jsonl"


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "old.jsonl.gz").write_bytes(gzip.compress(LOG.read_bytes()))
    (folder / "notes.txt.gz").write_bytes(gzip.compress(b"not ours"))  # not a log: not named
    return folder


def test_why_names_the_compressed_file_and_exits_1(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    shutil.copy(LOG, folder / LOG.name)
    done = subprocess.run(
        [sys.executable, "-m", "inspector", "why", str(folder), "--json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert done.returncode == 1
    assert "old.jsonl.gz: compressed file, not read" in done.stderr
    assert "notes.txt.gz" not in done.stderr + done.stdout
    assert done.stdout.count('"kind": "debug"') >= 1  # the plain log beside it is read


async def test_the_browser_shows_a_row_for_it(
    tmp_path: Path, counters: dict[str, TokenCounter]
) -> None:
    app = create_app([str(_folder(tmp_path))], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        browser = await loaded(app, pilot)
        errors = [row for row in browser.rows if row.error is not None]
        assert len(errors) == 1 and "compressed file, not read" in str(errors[0].error)
        assert "old.jsonl.gz" in errors[0].title
