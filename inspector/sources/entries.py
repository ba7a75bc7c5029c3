"""Rows for a folder browser, at once: file names and cheap header fields, newest first.

`load_paths` reads every debug log and peeks at every dump before its first result
(linking needs them all), which takes seconds for thousands of files. A browser can show
`list_entries(paths)` first (one directory walk and one `stat` per file; processor,
session and time come from openJiuwen's dump file names), fill header columns in the
background with `entry_details(row)` (the first 8 KB and the last 512 bytes of one file),
and replace the rows with artifacts when the full load arrives. Nothing here parses a
whole file; nothing is written. Listing imports no parser (a browser's first rows need
only `inspector.sources.files`). Must not import Textual or Rich.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from inspector.sources.files import (
    DUMP_NAME_RE,
    FOLDER_SUFFIXES,
    expand_source,
    folder_base,
    path_identity,
)

EntryKind = Literal["dump", "jsonl", "json"]


@dataclass(frozen=True, slots=True)
class EntryRow:
    """One file a load of the same paths would read, described without parsing it.

    `kind` is a guess from the name: "dump" (openJiuwen's `<ms>_<Processor>_<session>.json`),
    "jsonl" (`.jsonl` / `.ndjson`: debug logs, snapshot corpora) or "json" (anything else;
    the full load decides what it is, or skips it). `timestamp` is the dump's time from
    its name (epoch seconds), else the file's modification time; `session` is the name's
    session part (openJiuwen's safe form). `details` is True once `entry_details` has
    filled `session_id`/`context_id` from the file's own header. `location` is the path
    as text (`path` makes the `Path` on demand: 50,000 of them would cost a third of the
    listing).
    """

    location: str
    kind: EntryKind
    timestamp: float | None
    size: int
    processor: str | None = None
    session: str | None = None
    session_id: str | None = None
    context_id: str | None = None
    details: bool = False

    @property
    def path(self) -> Path:
        """The file's path."""
        return Path(self.location)

    @property
    def name(self) -> str:
        """The file name."""
        return os.path.basename(self.location)


def list_entries(paths: Iterable[str | os.PathLike[str]]) -> list[EntryRow]:
    """Every file `load_paths(paths)` would read, as rows, newest first (no file is opened).

    Folders are scanned as the loader scans them (same templates, suffixes, hidden and
    symlink rules, duplicates dropped); missing paths are left out (the full load
    reports them). One `scandir` walk and one `stat` per file: ~50,000 files a second.
    """
    rows: list[EntryRow] = []
    seen: set[str] = set()
    for raw in paths:
        for target in expand_source(raw):
            if target.is_dir():
                given, resolved = folder_base(target)
                for text, linked, info in _scan(str(target)):
                    if linked or not text.startswith(given):
                        key = str(path_identity(Path(text)))
                    else:
                        key = resolved + text[len(given) :]
                    if key not in seen:
                        seen.add(key)
                        rows.append(_row(text, info.st_mtime, info.st_size))
                continue
            try:
                info = target.stat()
            except OSError:
                continue
            key = str(path_identity(target))
            if key not in seen:
                seen.add(key)
                rows.append(_row(str(target), info.st_mtime, info.st_size))
    rows.sort(key=_newest_first)
    return rows


def _scan(folder: str) -> Iterator[tuple[str, bool, os.stat_result]]:
    """(path, is a symlink, stat) of each file `walk_files(folder, FOLDER_SUFFIXES)` finds,
    in its order (top-down, names sorted per folder; hidden entries and symlinked folders
    skipped, unlistable folders and vanished files passed over), from `os.scandir`'s types."""
    try:
        with os.scandir(folder) as listing:
            items = sorted(listing, key=lambda e: e.name)
    except OSError:
        return
    here = folder == "."  # paths as `Path(".") / name` prints them: "name", not "./name"
    folders = []
    for item in items:
        name = item.name
        if name.startswith("."):
            continue
        try:
            is_dir = item.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            if not item.is_symlink():
                folders.append(name if here else item.path)
            continue
        if not name.lower().endswith(FOLDER_SUFFIXES):
            continue
        try:
            info = item.stat()
        except OSError:
            continue
        yield (name if here else item.path), item.is_symlink(), info
    for sub in folders:
        yield from _scan(sub)


def _newest_first(row: EntryRow) -> tuple[bool, float, str]:
    return (row.timestamp is None, -(row.timestamp or 0.0), os.path.basename(row.location))


def _row(path: str, mtime: float, size: int) -> EntryRow:
    name = os.path.basename(path)
    match = DUMP_NAME_RE.match(name)
    if match:
        return EntryRow(
            path,
            "dump",
            int(match.group(1)) / 1000,
            size,
            processor=match.group(2),
            session=match.group(3),
        )
    kind: EntryKind = "jsonl" if name.lower().endswith((".jsonl", ".ndjson")) else "json"
    return EntryRow(path, kind, mtime, size)


def entry_details(row: EntryRow) -> EntryRow:
    """The row with header fields read from the file (a dump's first 8 KB and last bytes).

    Processor, session and context come from the dump's own keys when present, the time
    from its trailing `timestamp`; rows of other kinds come back marked done, unchanged.
    Unreadable files keep what the name gave.
    """
    from inspector.sources.files import open_regular
    from inspector.sources.peek import PEEK_BYTES, dump_header, head_field

    if row.kind != "dump":
        return dataclasses.replace(row, details=True)
    try:
        with open_regular(row.path) as handle:
            head = handle.read(min(PEEK_BYTES, 8192))
    except OSError:
        return dataclasses.replace(row, details=True)
    ref = dump_header(row.path, head)
    return dataclasses.replace(
        row,
        timestamp=ref.timestamp if ref.timestamp is not None else row.timestamp,
        processor=ref.processor or row.processor,
        session_id=head_field(head, "session_id"),
        context_id=ref.context_id,
        details=True,
    )
