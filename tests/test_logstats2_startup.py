"""What a `stats` over streamed debug logs imports (issue 16, start cost): a whole process,
checked in a fresh interpreter, loads the record reader and the tally, never the folder
loader, the strategies, the token counters and their cache, pydantic or the findings; a
log with a record the fast check does not vouch for still gets the model's words (the
record models are imported then); and the same stats as the in-process command."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from inspector.cli import main, run_support
from inspector.sources import debuglog, llm_request
from tests.conftest import REPO, fresh_interpreter_json, loaded_modules

_CHILD = """
import contextlib, io, json, sys
import inspector.cli.run_support as run_support
run_support.STREAM_MIN_BYTES = 0  # any log given alone is streamed, as one of 32 MB is
from inspector.cli import main
out, err = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    status = main(sys.argv[1:])
print(json.dumps({"status": status, "out": out.getvalue(), "err": err.getvalue(),
                  "modules": sorted(sys.modules)}))
"""

#: A streamed `stats` needs none of these (prefixes of module names).
NOT_NEEDED = (
    "pydantic",  # pydantic_core (the parser) is needed, pydantic is not
    "inspector.core.strategy",
    "inspector.core.findings",
    "inspector.core.forked",
    "inspector.core.standard",
    "inspector.core.hybrid",
    "inspector.core.engine",
    "inspector.core.releases",
    "inspector.formats",
    "inspector.encoding",
    "inspector.sources.loader",
    "inspector.sources.cache",
    "inspector.sources.classify",
    "inspector.sources.llm_request",
    "inspector.sources.jiuwenswarm",
    "inspector.render",
    "inspector.tui",
    "multiprocessing",
    "sqlite3",
    "rich",
    "textual",
    "tiktoken",
)

_LOG = REPO / "sample_dumps/workspace/context/ops-incident-42_context/context_debug"
LOG = _LOG / "CurrentRoundCompressor.jsonl"


def _run(tmp_path: Path, *args: str) -> dict[str, object]:
    env = {"CONTEXT_INSPECTOR_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    return fresh_interpreter_json(_CHILD, *args, env=env)


def _in_process(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(run_support, "STREAM_MIN_BYTES", 0)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(args))
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("flags", [["--json"], []])
def test_streamed_stats_loads_only_the_reader_and_the_tally(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: list[str]
) -> None:
    result = _run(tmp_path, "stats", *flags, str(LOG))
    assert result["status"] == 0, result["err"]
    needed = ("inspector.sources.debugstream", "inspector.core.stats", "pydantic_core")
    assert len(loaded_modules(result, needed)) >= 3
    if flags:
        assert loaded_modules(result, NOT_NEEDED) == []
        (line,) = [json.loads(line) for line in str(result["out"]).splitlines()]
        assert line["kind"] == "stats" and line["artifacts"]["debug"] > 0
    else:  # the table needs Rich and its renderer, nothing more
        assert loaded_modules(result, ("rich", "inspector.render.stats_report"))
        table = ("rich", "inspector.render")
        assert loaded_modules(result, tuple(p for p in NOT_NEEDED if p not in table)) == []
    assert (result["status"], result["out"]) == _in_process(monkeypatch, "stats", *flags, str(LOG))[
        :2
    ]


def test_a_record_the_fast_check_does_not_vouch_for_gets_the_models_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "Odd.jsonl"
    good = LOG.read_text(encoding="utf-8").splitlines()[0]
    bad = json.dumps({"event": "threshold_check", "processor": "P", "total_tokens": "9000"})
    log.write_text(f"{good}\n{bad}\n", encoding="utf-8")
    result = _run(tmp_path, "stats", "--json", str(log))
    status, out, err = _in_process(monkeypatch, "stats", "--json", str(log))
    assert (result["status"], result["out"], result["err"]) == (status, out, err)
    assert status == 1 and "total_tokens" in err and "line 2" in err
    assert loaded_modules(result, ("inspector.formats.debug",))  # imported for that record only


def test_a_missing_log_and_a_bad_flag_keep_their_errors(tmp_path: Path) -> None:
    missing = _run(tmp_path, "stats", "--json", str(tmp_path / "gone.jsonl"))
    assert missing["status"] == 1 and "gone.jsonl" in str(missing["err"])
    bad = _run(tmp_path, "stats", "--bogus", str(LOG))
    assert bad["status"] == 2 and "--bogus" in str(bad["err"])


def test_the_llm_request_log_is_told_apart_in_one_way() -> None:
    """`debuglog` (which the streamed reader imports) holds the one definition of the
    `llm_request.jsonl` file and records; `sources.llm_request` (which the loader imports)
    re-exports it rather than keeping a second one."""
    assert llm_request.LLM_REQUEST_FILE is debuglog.LLM_REQUEST_FILE
    assert llm_request.is_llm_request is debuglog.is_llm_request
    told = [
        debuglog.is_llm_request(record)
        for record in (
            {"processor": "llm_request", "event": "pre_call"},
            {"processor": "llm_request", "event": "threshold_check"},
            {"processor": "P", "event": "pre_call"},
            {"event": "pre_call"},
            [],
            None,
        )
    ]
    assert told == [True, False, False, False, False, False]
