"""The on-disk token cache: same counts as without it, safe with corrupt files and entries,
shared by concurrent processes, clearable, never in the real user folder during tests."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.core.engine import PricedContext
from inspector.core.snapshot import snapshot_from_dict
from inspector.core.tokens import TokenCounter
from inspector.sources.cache import (
    CACHE_DIR_ENV,
    DB_NAME,
    TokenCache,
    compute_pieces,
    default_cache_dir,
    piece_key,
    price_snapshot_cached,
)
from tests.conftest import PARITY_CASES, msg


@pytest.fixture(autouse=True)
def _private_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the default cache folder at a temp folder so no test touches the user's."""
    folder = tmp_path / "user-cache"
    monkeypatch.setenv(CACHE_DIR_ENV, str(folder))
    return folder


def _cases(count: int) -> list[dict]:
    lines = PARITY_CASES.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[:count] if line.strip()]


def _fresh(counters: dict[str, TokenCounter], mode: str) -> TokenCounter:
    """A counter with an empty in-memory cache, sharing the loaded encoder."""
    base = counters[mode]
    return TokenCounter(mode, base._encode_len)  # noqa: SLF001 - reuse the encoder, not the memo


def _observed(priced: PricedContext) -> tuple:
    return (
        priced.per_message_tokens,
        priced.per_system_message_tokens,
        priced.messages_tokens,
        priced.tools_tokens,
    )


def test_default_folder_follows_the_environment(_private_cache_dir: Path) -> None:
    assert default_cache_dir() == _private_cache_dir
    assert TokenCache().path == _private_cache_dir / DB_NAME


def test_cached_pricing_matches_uncached_and_hits_on_reopen(
    tmp_path: Path, counters: dict[str, TokenCounter]
) -> None:
    for raw in _cases(12):
        snapshot = snapshot_from_dict(raw)
        mode = snapshot.tuning.token_mode
        expected = _observed(PricedContext.from_snapshot(snapshot, _fresh(counters, mode)))
        with TokenCache(tmp_path / "c") as cache:
            first = price_snapshot_cached(snapshot, _fresh(counters, mode), cache)
        assert _observed(first) == expected
        with TokenCache(tmp_path / "c") as cache:
            again = price_snapshot_cached(snapshot, _fresh(counters, mode), cache)
            assert cache.misses == 0
        assert _observed(again) == expected


def test_keys_cover_role_content_calls_and_mode(counters: dict[str, TokenCounter]) -> None:
    tik, len4 = counters["tiktoken_cl100k"], counters["len_div_4"]
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
    plain = msg("assistant", "hello")
    with_call = msg("assistant", "hello", tool_calls=[call])
    assert piece_key(tik, plain) != piece_key(tik, with_call)
    assert piece_key(len4, plain) == piece_key(len4, with_call)  # len//4 never counts calls
    assert piece_key(tik, plain) != piece_key(len4, plain)
    assert piece_key(tik, plain) != piece_key(tik, msg("user", "hello"))
    assert piece_key(tik, msg("user", [{"type": "text", "text": "1"}])) != piece_key(
        tik, msg("user", '[{"type": "text", "text": "1"}]')
    )
    assert piece_key(tik, msg("user", [{"a": 1}])) != piece_key(tik, msg("user", [{"a": True}]))


def test_corrupt_database_is_set_aside_and_rebuilt(
    tmp_path: Path, counters: dict[str, TokenCounter]
) -> None:
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / DB_NAME).write_bytes(b"this is not a database" * 100)
    snapshot = snapshot_from_dict(_cases(1)[0])
    mode = snapshot.tuning.token_mode
    expected = _observed(PricedContext.from_snapshot(snapshot, _fresh(counters, mode)))
    with TokenCache(folder) as cache:
        assert _observed(price_snapshot_cached(snapshot, _fresh(counters, mode), cache)) == expected
    assert (folder / (DB_NAME + ".corrupt")).exists()
    with TokenCache(folder) as cache:
        price_snapshot_cached(snapshot, _fresh(counters, mode), cache)
        assert cache.misses == 0


def test_corrupt_entries_are_ignored_and_rewritten(
    tmp_path: Path, counters: dict[str, TokenCounter]
) -> None:
    counter = _fresh(counters, "tiktoken_cl100k")
    message = msg("user", "count me")
    key = piece_key(counter, message)
    with TokenCache(tmp_path) as cache:
        cache.get_many([])  # creates the database
    connection = sqlite3.connect(tmp_path / DB_NAME)
    connection.execute("INSERT INTO pieces (key, tokens) VALUES (?, ?)", (key, "garbage"))
    connection.commit()
    connection.close()
    cache = TokenCache(tmp_path)
    counter.store = cache
    assert counter.piece_tokens(message) == counters["tiktoken_cl100k"].piece_tokens(message)
    cache.close()
    with TokenCache(tmp_path) as again:
        assert again.get_many([key]) == {key: counters["tiktoken_cl100k"].piece_tokens(message)}


def test_store_hook_saves_and_finds(tmp_path: Path, counters: dict[str, TokenCounter]) -> None:
    message = msg("tool", "some output " * 50, tool_call_id="c1")
    writer = _fresh(counters, "tiktoken_cl100k")
    writer.store = TokenCache(tmp_path)
    value = writer.piece_tokens(message)
    writer.store.close()  # type: ignore[union-attr]
    reader = TokenCounter("tiktoken_cl100k", lambda text: 1 / 0)  # would fail if it tokenized
    reader._encode_len = counters["tiktoken_cl100k"]._encode_len  # noqa: SLF001 - same identity
    cache = TokenCache(tmp_path)
    reader.store = cache
    assert reader.piece_tokens(message) == value
    assert cache.hits == 1


def _writer(folder: str, start: int) -> None:
    cache = TokenCache(folder)
    for index in range(start, start + 300):
        cache.put_many([(index.to_bytes(16, "big"), index)])
        if index % 50 == 0:
            cache.flush()
            cache.get_many([index.to_bytes(16, "big")])
    cache.close()


def test_concurrent_processes_share_one_cache(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=_writer, args=(str(tmp_path), start)) for start in (0, 200, 400)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    with TokenCache(tmp_path) as cache:
        found = cache.get_many(i.to_bytes(16, "big") for i in range(700))
    assert found == {i.to_bytes(16, "big"): i for i in range(700)}


def test_parallel_counting_equals_serial(counters: dict[str, TokenCounter]) -> None:
    snapshot = snapshot_from_dict(
        next(
            c
            for c in _cases(40)
            if c["token_mode"] == "tiktoken_cl100k" and len(c["messages"]) > 20
        )
    )
    counter = counters["tiktoken_cl100k"]
    serial = [counter.compute_piece(m) for m in snapshot.messages]
    assert compute_pieces(counter, snapshot.messages, workers=2) == serial


def test_clear_and_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], _private_cache_dir: Path
) -> None:
    with TokenCache() as cache:
        cache.put_many([(b"k" * 16, 7)])
    results = _private_cache_dir / "results"
    results.mkdir()
    (results / "a.ciresult").write_bytes(b"x" * 100)  # the clear deletes stored results too
    assert main(["cache", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["entries"] == 1 and info["path"].startswith(str(_private_cache_dir))
    assert info["results"] == {"path": str(results), "entries": 1, "bytes": 100}
    assert main(["cache", "clear", "--json"]) == 0
    cleared = json.loads(capsys.readouterr().out)
    assert cleared["result_bytes_freed"] == 100 and cleared["bytes_freed"] > 100
    assert not list(_private_cache_dir.glob(DB_NAME + "*")) and not list(results.iterdir())
    assert main(["cache", "info", "--dir", str(tmp_path / "elsewhere"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["entries"] == 0
    assert not (tmp_path / "elsewhere" / DB_NAME).exists()  # info never creates a cache


def test_parallel_counting_with_threads_alive_uses_fresh_interpreters(
    counters: dict[str, TokenCounter],
) -> None:
    """With another thread running (as in the TUI) forking is unsafe; results stay identical."""
    import threading

    snapshot = snapshot_from_dict(
        next(
            c
            for c in _cases(40)
            if c["token_mode"] == "tiktoken_cl100k" and len(c["messages"]) > 20
        )
    )
    counter = counters["tiktoken_cl100k"]
    serial = [counter.compute_piece(m) for m in snapshot.messages]
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        assert compute_pieces(counter, snapshot.messages, workers=2) == serial
    finally:
        stop.set()
        other.join()


def test_cached_counters_store_through_the_loader_path(
    tmp_path: Path, counters: dict[str, TokenCounter]
) -> None:
    from inspector.sources.cache import cached_counters

    snapshot = snapshot_from_dict(
        next(c for c in _cases(40) if c["token_mode"] == "tiktoken_cl100k")
    )
    expected = _observed(PricedContext.from_snapshot(snapshot, _fresh(counters, "tiktoken_cl100k")))
    cache = TokenCache(tmp_path)
    first = cached_counters(cache)
    assert first["len_div_4"].store is None
    assert _observed(PricedContext.from_snapshot(snapshot, first["tiktoken_cl100k"])) == expected
    cache.close()
    again_cache = TokenCache(tmp_path)
    again = cached_counters(again_cache)
    assert _observed(PricedContext.from_snapshot(snapshot, again["tiktoken_cl100k"])) == expected
    assert again_cache.misses == 0 and again_cache.hits > 0


def test_unwritable_folder_disables_the_cache_without_failing(
    tmp_path: Path, counters: dict[str, TokenCounter]
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    cache = TokenCache(blocker / "cache")
    snapshot = snapshot_from_dict(_cases(1)[0])
    mode = snapshot.tuning.token_mode
    expected = _observed(PricedContext.from_snapshot(snapshot, _fresh(counters, mode)))
    assert _observed(price_snapshot_cached(snapshot, _fresh(counters, mode), cache)) == expected
    assert cache.disabled_reason is not None
    assert blocker.read_text().startswith("a file")
