"""The whole-file result cache of `inspector why --json` (inspector.sources.result_cache).

Real files (a sample dump copied into a temp folder), the real CLI entry point in-process,
a temp cache folder. A replay is proved by making the uncached path fail.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

import inspector.cli.why as why_cli
from inspector.cli import main
from inspector.sources import result_cache
from inspector.sources.result_cache import FORMAT, SUBDIR, SUFFIX, evict, plan

SAMPLE = next(Path(__file__).resolve().parents[1].glob("sample_dumps/**/*Compressor*.json"))


@pytest.fixture()
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private cache folder, outside the folder of the dumps."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("CONTEXT_INSPECTOR_CACHE_DIR", str(folder))
    monkeypatch.delenv(result_cache.DISABLE_ENV, raising=False)
    return folder


@pytest.fixture()
def dump(tmp_path: Path) -> Path:
    """A copy of a sample dump in its own folder."""
    target = tmp_path / "dumps" / SAMPLE.name
    target.parent.mkdir()
    shutil.copyfile(SAMPLE, target)
    return target


def _why(capfd: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["why", "--json", *argv])
    out, err = capfd.readouterr()
    return status, out, err


def _entries(cache_dir: Path) -> list[Path]:
    return sorted((cache_dir / SUBDIR).glob(f"*{SUFFIX}"))


def _fail(args: argparse.Namespace) -> int:
    raise AssertionError("the uncached path ran")


def test_reopen_replays_the_stored_output(
    cache_dir: Path, dump: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _why(capfd, str(dump))
    assert first[0] == 0 and json.loads(first[1].splitlines()[0])["kind"]
    assert len(_entries(cache_dir)) == 1
    monkeypatch.setattr(why_cli, "_run", _fail)
    assert _why(capfd, str(dump)) == first


def test_same_size_and_mtime_but_new_content_is_recomputed(
    cache_dir: Path, dump: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _why(capfd, str(dump))
    info = dump.stat()
    text = dump.read_text(encoding="utf-8")
    # the same byte size: the recorded context window changes, so the decision does
    changed = text.replace('"context_max": 4500', '"context_max": 4400', 1)
    assert changed != text and len(changed.encode()) == info.st_size
    dump.write_text(changed, encoding="utf-8")
    os.utime(dump, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert dump.stat().st_size == info.st_size and dump.stat().st_mtime_ns == info.st_mtime_ns
    second = _why(capfd, str(dump))
    monkeypatch.setenv(result_cache.DISABLE_ENV, "1")
    fresh = _why(capfd, str(dump))
    assert second == fresh
    assert second[1] != first[1]
    assert len(_entries(cache_dir)) == 2  # a new key, the old entry untouched


def test_key_changes_with_flags_code_and_counting(
    cache_dir: Path, dump: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def key(**extra: object) -> str:
        args = argparse.Namespace(sources=[str(dump)], json=True, **{"pin": None, **extra})
        found = plan("why", args, cache_dir)
        assert found is not None
        return found.key

    base = key(trigger_ratio=None)
    assert key(trigger_ratio=None) == base
    assert key(trigger_ratio=0.5) != base
    assert key(trigger_ratio=None, pin="1-3") != base
    monkeypatch.setattr(result_cache, "counting_identity", lambda: "len_div_4 only")
    assert key(trigger_ratio=None) != base
    monkeypatch.undo()
    monkeypatch.setattr(result_cache, "code_fingerprint", lambda: "another release")
    assert key(trigger_ratio=None) != base
    monkeypatch.undo()
    from inspector.core.strategy import registry

    monkeypatch.setattr(registry, "STRATEGIES", (*registry.STRATEGIES, "tests.plugins.keep_last:X"))
    assert key(trigger_ratio=None) != base


def test_a_changed_flag_is_not_served_from_another_entry(
    cache_dir: Path, dump: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    plain = _why(capfd, str(dump))
    tuned = _why(capfd, str(dump), "--keep-recent", "1", "--trigger-ratio", "0.05")
    assert len(_entries(cache_dir)) == 2
    assert plain[1] != tuned[1]


@pytest.mark.parametrize(
    "garbage",
    [
        b"\x00\x01not a cache file",
        json.dumps({"format": "someone-else", "key": "x"}).encode() + b"\n",
        None,  # a real entry, truncated
    ],
)
def test_corrupt_or_foreign_entry_is_ignored_with_a_warning(
    cache_dir: Path, dump: Path, capfd: pytest.CaptureFixture[str], garbage: bytes | None
) -> None:
    first = _why(capfd, str(dump))
    [entry] = _entries(cache_dir)
    entry.write_bytes(entry.read_bytes()[:-10] if garbage is None else garbage)
    status, out, err = _why(capfd, str(dump))
    assert (status, out) == first[:2]
    assert "warning: result cache: ignoring" in err and "Traceback" not in err
    # the entry was stored again and is served from now on
    assert _why(capfd, str(dump)) == first


def test_folders_text_reports_and_no_mask_are_not_cached(
    cache_dir: Path, dump: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    _why(capfd, str(dump.parent))
    _why(capfd, "--no-mask", str(dump))
    main(["why", str(dump)])
    capfd.readouterr()
    assert _entries(cache_dir) == []


def test_nothing_is_written_into_the_folder_of_a_source(
    dump: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTEXT_INSPECTOR_CACHE_DIR", str(dump.parent))
    args = argparse.Namespace(sources=[str(dump)], json=True)
    assert plan("why", args) is None
    before = sorted(p.name for p in dump.parent.iterdir())
    _why(capfd, str(dump))
    assert not (dump.parent / SUBDIR).exists()
    assert {"token-counts-v1.sqlite3"} >= set(os.listdir(dump.parent)) - set(before)


def test_clear_deletes_the_stored_results(
    cache_dir: Path, dump: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    _why(capfd, str(dump))
    [entry] = _entries(cache_dir)
    size = entry.stat().st_size
    assert result_cache.clear(cache_dir) == size
    assert _entries(cache_dir) == []


def test_eviction_keeps_the_most_recently_used(tmp_path: Path) -> None:
    folder = tmp_path / SUBDIR
    folder.mkdir()
    for index in range(5):
        entry = folder / f"{index}{SUFFIX}"
        entry.write_bytes(b"x" * 1000)
        os.utime(entry, ns=(index * 10**9, index * 10**9))
    (folder / "other.txt").write_bytes(b"y" * 5000)
    assert evict(folder, 2500) == 3
    assert sorted(p.name for p in folder.iterdir()) == ["3.ciresult", "4.ciresult", "other.txt"]


def test_entry_format_round_trips_text_and_bytes(tmp_path: Path) -> None:
    path = tmp_path / f"k{SUFFIX}"
    events = [
        ("o", "b", b'{"a": 1}\n'),
        ("e", "t", "note: \ud800 x\n".encode("utf-8", "surrogatepass")),
    ]
    result_cache.write_entry(path, "k", 1, events)
    assert path.read_bytes().startswith(b'{"format": "' + FORMAT.encode())
    assert result_cache.read_entry(path, "k") == (1, events)
    assert result_cache.read_entry(path, "other key") is None  # a misnamed file is foreign


def test_only_runs_that_printed_are_stored_and_replayed_with_their_status(
    cache_dir: Path, dump: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = argparse.Namespace(sources=[str(dump)], json=True)
    assert result_cache.cached_run("why", args, lambda a: 0, cache_dir) == 0
    assert _entries(cache_dir) == []

    def prints(_: argparse.Namespace) -> int:
        print('{"kind": "x"}')
        print("note: something", file=sys.stderr)
        return 3

    assert result_cache.cached_run("why", args, prints, cache_dir) == 3
    first = capsys.readouterr()
    assert len(_entries(cache_dir)) == 1
    assert result_cache.cached_run("why", args, _fail, cache_dir) == 3
    again = capsys.readouterr()
    assert (
        (again.out, again.err) == (first.out, first.err) == ('{"kind": "x"}\n', "note: something\n")
    )


def test_output_too_big_to_store_is_passed_on_and_not_kept(
    cache_dir: Path,
    dump: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kept: list[result_cache._Events] = []
    real = result_cache._Events

    def small() -> result_cache._Events:
        kept.append(real(limit=1000))
        return kept[-1]

    monkeypatch.setattr(result_cache, "_Events", small)
    args = argparse.Namespace(sources=[str(dump)], json=True)

    def prints(_: argparse.Namespace) -> int:
        for number in range(100):
            print(json.dumps({"kind": "x", "n": number}))
        return 0

    assert result_cache.cached_run("why", args, prints, cache_dir) == 0
    assert capsys.readouterr().out.count("\n") == 100  # all of it written
    assert kept[0].full and len(kept[0]) == 0  # none of it held once past the limit
    assert _entries(cache_dir) == []  # nor stored (as write_entry refuses such output)


def test_a_streamed_log_is_not_recorded(
    cache_dir: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspector.cli import run_support

    log = next(Path(__file__).resolve().parents[1].glob("sample_dumps/**/context_debug/*.jsonl"))
    status, out, _ = _why(capfd, str(log))
    assert status == 0 and len(_entries(cache_dir)) == 1  # read by the loader: stored
    shutil.rmtree(cache_dir)
    monkeypatch.setattr(why_cli, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(run_support, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(result_cache, "_recording", _fail)
    assert _why(capfd, str(log))[:2] == (0, out)  # streamed: the same lines, nothing recorded
    assert _entries(cache_dir) == []
