"""Issue 8 paths: header-level loads for stats, folder rows at once, the lazy encoder, the
token cache behind the report commands. Behaviour only; timings live in bench/."""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

import inspector.sources.loader as loader_module
from inspector.cli import main
from inspector.core.artifact import Artifact, LoadError
from inspector.core.stats import compute_stats
from inspector.encoding import LazyEncodeLen, load_cl100k, make_counters
from inspector.sources.cache import TokenCache, cached_counters
from inspector.sources.dump_artifact import HEADER_ONLY_NOTE
from inspector.sources.entries import entry_details, list_entries
from inspector.sources.loader import load_paths
from tests.conftest import REFERENCE

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_dumps"


def _summary(results: list[Any]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for item in results:
        if isinstance(item, LoadError):
            out.append(("error", item.source, item.error, item.where))
        else:
            out.append((item.kind, item.source, item.id, item.processor, item.timestamp))
    return out


@pytest.mark.parametrize("source", [REFERENCE, SAMPLES])
def test_header_load_gives_the_same_stats_and_order(source: Path, counters: Any) -> None:
    full = list(load_paths([source], counters=counters))
    headers = list(load_paths([source], counters=counters, contexts=False))
    assert _summary(headers) == _summary(full)
    artifacts = [a for a in full if isinstance(a, Artifact)]
    header_artifacts = [a for a in headers if isinstance(a, Artifact)]
    assert compute_stats(header_artifacts) == compute_stats(artifacts)
    dumps = [a for a in header_artifacts if a.kind == "dump"]
    assert dumps and all(a.snapshot is None and a.extra["header_only"] for a in dumps)
    assert all(a.recorded["unrecoverable"] == [HEADER_ONLY_NOTE] for a in dumps)


def test_header_load_in_a_process_pool_matches_serial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counters: Any
) -> None:
    folder = tmp_path / "many"
    shutil.copytree(SAMPLES, folder)
    serial = _summary(list(load_paths([folder], contexts=False)))
    monkeypatch.setattr(loader_module, "POOL_MIN_FILES", 2)
    started: list[int] = []
    enter = loader_module.ChunkSharing.__enter__

    def spy(self: Any) -> Any:
        entered = enter(self)
        started.append(len(self.processes))
        return entered

    monkeypatch.setattr(loader_module.ChunkSharing, "__enter__", spy)
    skipped: list[Any] = []
    pooled = list(load_paths([folder], contexts=False, skipped=skipped))
    assert _summary(pooled) == serial
    if (os.cpu_count() or 1) > 1 and threading.active_count() == 1:
        assert started and started[0] >= 1  # helper processes really read some files
    full = [a for a in load_paths([folder], counters=counters) if isinstance(a, Artifact)]
    assert compute_stats([a for a in pooled if isinstance(a, Artifact)]) == compute_stats(full)


def test_header_load_reports_unreadable_files(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text('{"processor_type": "CurrentRoundCompressor", "span": ')
    deep = "[" * 300 + "]" * 300
    (tmp_path / "deep.json").write_text(deep)
    results = list(load_paths([tmp_path], contexts=False))
    errors = sorted((Path(e.source).name, e.error) for e in results if isinstance(e, LoadError))
    assert errors[0][0] == "broken.json" and errors[0][1].startswith("not valid JSON")
    assert errors[1][0] == "deep.json" and "nested too deeply" in errors[1][1]


def test_stats_cli_output_is_unchanged_by_the_header_load(
    capsys: pytest.CaptureFixture[str], counters: Any
) -> None:
    assert main(["stats", str(SAMPLES), "--json", "--no-findings"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    got = json.loads(line)
    full = [a for a in load_paths([SAMPLES], counters=counters) if isinstance(a, Artifact)]
    expected = json.loads(json.dumps(compute_stats(full)))
    assert {k: v for k, v in got.items() if k not in ("kind", "sources")} == expected


def test_list_entries_names_every_file_newest_first() -> None:
    rows = list_entries([SAMPLES, SAMPLES / "missing"])
    loaded = {
        str(Path(r.source).resolve())
        for r in load_paths([SAMPLES])
        if isinstance(r, Artifact | LoadError)
    }
    assert loaded <= {str(r.path.resolve()) for r in rows}
    times = [r.timestamp for r in rows]
    assert times == sorted(times, reverse=True)
    dumps = [r for r in rows if r.kind == "dump"]
    assert dumps and all(r.processor and r.session and not r.details for r in dumps)
    filled = entry_details(dumps[0])
    assert filled.details and filled.session_id and filled.context_id
    assert {r.kind for r in rows} >= {"dump", "jsonl"}
    assert list_entries([SAMPLES, SAMPLES]) == rows  # the same file twice is listed once


def test_encoder_is_checked_at_once_and_built_on_first_use() -> None:
    status = load_cl100k()
    assert status.encode_len is not None and status.note.startswith("cl100k_base from")
    assert isinstance(status.encode_len, LazyEncodeLen)
    counters = make_counters()
    assert counters["tiktoken_cl100k"].exact
    assert counters["tiktoken_cl100k"].text_tokens("hello world") == 2
    assert status.encode_len.built


def test_report_commands_reuse_the_token_cache() -> None:
    dump = next(REFERENCE.rglob("*Compressor_*.json"))
    cache = TokenCache()  # conftest points it at a temporary folder, never the user's
    assert cache.directory == Path(os.environ["CONTEXT_INSPECTOR_CACHE_DIR"])
    assert not str(cache.directory).startswith(str(Path.home()))
    assert main(["why", str(dump), "--json"]) == 0
    assert TokenCache().info()["entries"] > 0
    counters = cached_counters(TokenCache())
    counter = counters["tiktoken_cl100k"]
    artifact = next(a for a in load_paths([dump], counters=counters) if isinstance(a, Artifact))
    assert artifact.snapshot is not None
    store = counter.store
    assert isinstance(store, TokenCache)
    before = store.misses
    for message in artifact.snapshot.messages:
        counter.piece_tokens(message)
    assert store.misses == before  # every piece came from the cache the CLI filled
    tools = artifact.snapshot.tools
    if tools:
        assert store.lookup_text is not None
        fresh = make_counters()["tiktoken_cl100k"]
        assert counter.count_tools(tools) == fresh.count_tools(tools)
