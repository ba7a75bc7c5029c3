"""Rows for a folder browser, at once: file names and cheap header fields, newest first.

`load_paths` reads every debug log and peeks at every dump before its first result
(linking needs them all), which takes seconds for thousands of files. A browser can show
`list_entries(paths)` first (one directory walk and one `stat` per file; processor,
session and time come from openJiuwen's dump file names), fill header columns in the
background with `entry_details(row)` (the first 8 KB and the last 512 bytes of one file),
and replace the rows with artifacts when the full load arrives. Nothing here parses a
whole file; nothing is written. Must not import Textual or Rich.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from inspector.sources.dump import DUMP_NAME_RE
from inspector.sources.files import open_regular
from inspector.sources.loader import _folder_identity, _identity, expand_source, scan_folder
from inspector.sources.peek import PEEK_BYTES, dump_header, head_field

EntryKind = Literal["dump", "jsonl", "json"]


@dataclass(frozen=True, slots=True)
class EntryRow:
    """One file a load of the same paths would read, described without parsing it.

    `kind` is a guess from the name: "dump" (openJiuwen's `<ms>_<Processor>_<session>.json`),
    "jsonl" (`.jsonl` / `.ndjson`: debug logs, snapshot corpora) or "json" (anything else;
    the full load decides what it is, or skips it). `timestamp` is the dump's time from
    its name (epoch seconds), else the file's modification time; `session` is the name's
    session part (openJiuwen's safe form). `details` is True once `entry_details` has
    filled `session_id`/`context_id` from the file's own header.
    """

    path: Path
    kind: EntryKind
    timestamp: float | None
    size: int
    processor: str | None = None
    session: str | None = None
    session_id: str | None = None
    context_id: str | None = None
    details: bool = False

    @property
    def name(self) -> str:
        """The file name."""
        return self.path.name


def list_entries(paths: Iterable[str | os.PathLike[str]]) -> list[EntryRow]:
    """Every file `load_paths(paths)` would read, as rows, newest first (no file is opened).

    Folders are scanned as the loader scans them (same templates, suffixes, hidden and
    symlink rules, duplicates dropped); missing paths are left out (the full load
    reports them).
    """
    rows: list[EntryRow] = []
    seen: set[str] = set()
    for raw in paths:
        for target in expand_source(raw):
            base: tuple[str, str] | None = None
            if target.is_dir():
                files = scan_folder(target)
                given = "" if str(target) == "." else str(target).rstrip(os.sep) + os.sep
                base = (given, str(_identity(target)).rstrip(os.sep) + os.sep)
            elif target.exists():
                files = [target]
            else:
                continue
            for file in files:
                key = _folder_identity(file, base) if base else str(_identity(file))
                if key in seen:
                    continue
                seen.add(key)
                try:
                    info = file.stat()
                except OSError:
                    continue
                rows.append(_row(file, info.st_mtime, info.st_size))
    rows.sort(key=lambda r: (r.timestamp is None, -(r.timestamp or 0.0), r.name))
    return rows


def _row(path: Path, mtime: float, size: int) -> EntryRow:
    name = path.name
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
