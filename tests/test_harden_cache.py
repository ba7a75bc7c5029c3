"""The token cache cannot be trusted blindly: tampered counts, another encoder or missing
samples discard it with a notice, and verdicts stay those of a fresh count."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from inspector.sources.cache import DB_NAME
from tests.conftest import REFERENCE
from tests.fuzz.harness import run_cli

SOURCE = REFERENCE / "k_long_coding_session"


def _why() -> tuple[list[object], str]:
    run = run_cli(["why", "--json", "--tokens", "tiktoken_cl100k", str(SOURCE)], 120)
    assert run.crash is None, run.crash
    return run.lines(), run.stderr.decode()


def _db() -> sqlite3.Connection:
    return sqlite3.connect(Path(os.environ["CONTEXT_INSPECTOR_CACHE_DIR"]) / DB_NAME)


def _tamper(statement: str) -> None:
    with _db() as connection:
        connection.execute(statement)


@pytest.fixture
def fresh() -> list[object]:
    lines, err = _why()
    assert "discarded" not in err
    with _db() as connection:
        assert connection.execute("SELECT count(*) FROM pieces").fetchone()[0] > 0
        assert connection.execute("SELECT count(*) FROM samples").fetchone()[0] > 0
    return lines


def test_an_untouched_cache_is_reused_quietly(fresh: list[object]) -> None:
    lines, err = _why()
    assert lines == fresh and "discarded" not in err


@pytest.mark.parametrize(
    ("statement", "why"),
    [
        ("UPDATE pieces SET tokens = 1", "a recounted entry differs"),
        ("UPDATE meta SET value = '7'", "the encoder changed"),
        ("DELETE FROM samples", "no sample left"),
        ("DELETE FROM meta", "no encoder identity"),
    ],
)
def test_a_tampered_cache_is_discarded_with_a_notice(
    fresh: list[object], statement: str, why: str
) -> None:
    _tamper(statement)
    lines, err = _why()
    assert "token cache" in err and "discarded" in err and why in err, err
    assert lines == fresh  # the same verdicts and totals as a fresh count
    again, err = _why()
    assert again == fresh and "discarded" not in err  # rebuilt, trusted again
