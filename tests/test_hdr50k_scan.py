"""A folder's listing (`files.scan_files`, as `loader._target_files` uses it) gives what the
`os.walk` listing with a `file_problem` and a `folder_identity` per file gave: the same
files in the same order, the same identities and the same LoadErrors, though a plainly
regular file is neither stat'ed nor asked whether it is a link."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from inspector.core.artifact import LoadError
from inspector.sources import files
from inspector.sources.files import (
    COMPRESSED_SUFFIXES,
    FOLDER_SUFFIXES,
    file_problem,
    folder_base,
    folder_identity,
    scan_files,
    walk_files,
)
from inspector.sources.loader import _target_files


def _walked(folder: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The listing as it was made with `os.walk` (the reference)."""
    found: list[Path] = []
    problems: list[tuple[Path, str]] = []

    def unlisted(error: OSError) -> None:
        where = Path(error.filename) if error.filename else folder
        problems.append((where, f"cannot list folder: {files.os_problem(error)}"))

    for root, dirs, names in os.walk(folder, onerror=unlisted, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        here = Path(root)
        for name in sorted(names):
            lowered = name.lower()
            if name.startswith("."):
                continue
            if lowered.endswith(FOLDER_SUFFIXES):
                found.append(here / name)
            elif lowered.endswith(COMPRESSED_SUFFIXES) and lowered.rpartition(".")[0].endswith(
                FOLDER_SUFFIXES
            ):
                problems.append((here / name, files._compressed_note(name)))
    return found, problems


def _reference_targets(target: Path) -> tuple[list[tuple[Path, bool, str]], list[LoadError]]:
    """`_target_files` of a folder as it was: every file stat'ed and asked if it is a link."""
    found, unlisted = _walked(target)
    errors = [LoadError(str(folder), why) for folder, why in unlisted]
    base = folder_base(target)
    out: list[tuple[Path, bool, str]] = []
    for file in found:
        problem = file_problem(file)
        if problem is not None:
            errors.append(LoadError(str(file), problem))
        else:
            out.append((file, False, folder_identity(file, base)))
    return out, errors


def _tree(root: Path) -> Path:
    """Regular files, links to files in and out of the folder, a dangling link, a FIFO,
    hidden entries, a linked folder, a compressed copy and nested folders."""
    folder = root / "scan"
    (folder / "b" / "deep").mkdir(parents=True)
    (folder / "a").mkdir()
    (folder / ".hidden").mkdir()
    outside = root / "outside"
    outside.mkdir()
    (outside / "far.json").write_text("{}")
    for name in ("z.json", "a.jsonl", "m.NDJSON", "notes.txt", ".dot.json", "x.jsonl.gz"):
        (folder / name).write_text("{}")
    (folder / "b" / "deep" / "d.json").write_text("{}")
    (folder / "a" / "one.json").write_text("{}")
    (folder / ".hidden" / "h.json").write_text("{}")
    (folder / "alias.json").symlink_to(folder / "z.json")
    (folder / "far.json").symlink_to(outside / "far.json")
    (folder / "gone.json").symlink_to(folder / "missing.json")
    (folder / "linked").symlink_to(outside, target_is_directory=True)
    (folder / "folder.json").mkdir()  # a folder named like a file: walked into, not read
    (folder / "folder.json" / "in.json").write_text("{}")
    if hasattr(os, "mkfifo"):
        os.mkfifo(folder / "pipe.jsonl")
    return folder


def test_a_scanned_folder_lists_as_the_walk_with_a_stat_per_file_did(tmp_path: Path) -> None:
    folder = _tree(tmp_path)
    assert _target_files(folder) == _reference_targets(folder)
    assert walk_files(folder, FOLDER_SUFFIXES) == _walked(folder)
    found, _ = scan_files(folder, FOLDER_SUFFIXES)
    plain = {file.name: flag for file, flag in found}
    assert plain["z.json"] and plain["d.json"] and plain["in.json"]
    # links (to a file in the folder, out of it, to nothing) and the FIFO are looked at
    assert not plain["alias.json"] and not plain["far.json"] and not plain["gone.json"]
    assert not plain.get("pipe.jsonl", False)
    # a link's identity is its target's: the same file given twice is read once
    files_, _ = _target_files(folder)
    identity = {file.name: key for file, _, key in files_}
    assert identity["alias.json"] == identity["z.json"]
    assert identity["far.json"] == str((tmp_path / "outside" / "far.json").resolve())


def test_the_scan_from_the_current_folder_names_files_as_the_walk_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _tree(tmp_path)
    monkeypatch.chdir(folder)
    assert _target_files(Path(".")) == _reference_targets(Path("."))
    monkeypatch.chdir(tmp_path)
    assert _target_files(Path("scan")) == _reference_targets(Path("scan"))


def test_a_folder_whose_files_cannot_be_looked_up_gives_their_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder listable but not searchable (read but no execute permission): its entries
    say regular files, yet every lookup fails; each is a LoadError, as with a stat each.
    (Made by refusing lookups in one folder: permissions do not hold for root.)"""
    folder = _tree(tmp_path)
    shut = str(folder / "b" / "deep")

    def refusing(real: Any) -> Any:
        def lookup(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
            if os.path.dirname(os.fspath(path)) == shut:
                raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
            return real(path, *args, **kwargs)  # type: ignore[no-any-return]

        return lookup

    monkeypatch.setattr(os, "stat", refusing(os.stat))
    monkeypatch.setattr(os, "lstat", refusing(os.lstat))
    listed, errors = _target_files(folder)
    assert (listed, errors) == _reference_targets(folder)
    assert [e.source for e in errors if e.error == "permission denied"] == [
        str(folder / "b" / "deep" / "d.json")
    ]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_in_a_folder_is_one_error_and_never_opened(tmp_path: Path) -> None:
    folder = _tree(tmp_path)
    _, errors = _target_files(folder)
    fifo = [e for e in errors if e.source.endswith("pipe.jsonl")]
    assert len(fifo) == 1 and "FIFO" in fifo[0].error
    assert stat.S_ISFIFO(os.lstat(folder / "pipe.jsonl").st_mode)


def test_a_dangling_link_with_the_longest_name_leaves_its_folder_plain(tmp_path: Path) -> None:
    """The folder's lookup is tried on its longest name: a dangling link there is found
    (`os.lstat`), so the regular files beside it are still plainly regular."""
    folder = tmp_path / "dangling"
    folder.mkdir()
    (folder / "r.json").write_text("{}")
    (folder / "a-much-longer-name-than-any-other.json").symlink_to(folder / "nowhere.json")
    found, _ = scan_files(folder, FOLDER_SUFFIXES)
    assert dict((file.name, plain) for file, plain in found) == {
        "a-much-longer-name-than-any-other.json": False,
        "r.json": True,
    }
    assert _target_files(folder) == _reference_targets(folder)
