"""Write and update the decision index: a hive-partitioned Parquet dataset plus a manifest.

Layout of the output folder::

    DIR/_manifest.json                       units indexed: each file's path, size, mtime, sha256
    DIR/date=YYYY-MM-DD/part-<run>.parquet   rows of one run for one date

A re-run reads the sources again and indexes only the units (`inspector.index.rows`) that
are new or changed: a unit whose files all have the size and mtime the manifest recorded
is skipped without being read; one whose size or mtime changed but whose content hash did
not is skipped too (its manifest entry is refreshed). A changed unit's old rows are removed
from the part files that hold them before its new rows are written, so each evaluation is
in the index once. Units the sources of a run do not reach are left as they are (a source
not given is not a deletion). Part files and the manifest are written to a temporary name
and renamed, so an interrupted run leaves the previous index readable. Nothing is written
into the folders read. Imports pyarrow; must not import Textual, Rich, render, tui or cli.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from inspector.core.errors import InspectorError
from inspector.formats.index import INDEX_VERSION
from inspector.index.arrow import PARTITION, file_schema, rows_to_table
from inspector.index.rows import index_unit, units

MANIFEST = "_manifest.json"

#: A file's fingerprint in the manifest: size, mtime (ns), sha256 of the content.
Fingerprint = tuple[int, int, str]


class IndexError_(InspectorError):
    """The index cannot be written (bad output folder, foreign manifest)."""


@dataclass
class IndexSummary:
    """What one `update_index` run did."""

    files: int = 0
    units: int = 0
    indexed_units: int = 0
    indexed_files: int = 0
    skipped_units: int = 0
    rows_written: int = 0
    rows_removed: int = 0
    errors: int = 0
    seconds: float = 0.0
    parts: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (`inspector index --json`)."""
        return {"kind": "index", **self.__dict__}


def sha256_of(path: str) -> str:
    """The content hash of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def source_files(sources: Iterable[str]) -> list[str]:
    """Absolute paths of the files the sources name (folders scanned as the loader does)."""
    from inspector.sources.loader import expand_source, scan_folder

    found: dict[str, None] = {}
    for source in sources:
        for target in expand_source(source):
            if target.is_dir():
                found.update((os.path.abspath(p), None) for p in scan_folder(target))
            elif target.exists():
                found[os.path.abspath(target)] = None
            else:
                raise IndexError_(f"{target}: no such file or folder")
    return list(found)


def check_out_folder(out: Path, sources: Iterable[str]) -> None:
    """Refuse an output folder inside (or equal to) a source folder: we never write there."""
    resolved = out.resolve()
    for source in sources:
        folder = Path(source).resolve()
        if folder.is_dir() and (resolved == folder or folder in resolved.parents):
            raise IndexError_(f"--out {out} lies inside the source folder {source}")


def _load_manifest(out: Path) -> dict[str, Any]:
    path = out / MANIFEST
    if not path.exists():
        if out.exists() and any(out.iterdir()):
            raise IndexError_(f"{out} is not empty and holds no {MANIFEST}: not an index")
        return {"version": INDEX_VERSION, "units": {}}
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise IndexError_(f"{path}: cannot be read ({error})") from None
    if not isinstance(manifest, dict) or manifest.get("version") != INDEX_VERSION:
        raise IndexError_(f"{path}: written by another index version; index into a new folder")
    return manifest


def _write_atomic(path: Path, content: pa.Table | str) -> None:
    """A Parquet table or a text written to a temporary name, then renamed into place."""
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    if isinstance(content, str):
        temporary.write_text(content, encoding="utf-8")
    else:
        pq.write_table(content, str(temporary))
    os.replace(temporary, path)


def _stats(paths: Sequence[str]) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for path in paths:
        stat = os.stat(path)
        out[path] = (stat.st_size, stat.st_mtime_ns)
    return out


def _unchanged(entry: dict[str, Any] | None, stats: dict[str, tuple[int, int]]) -> bool | None:
    """True: same files, sizes and mtimes; None: same files and sizes, some mtime differs
    (compare hashes); False: changed."""
    if entry is None or set(entry["files"]) != set(stats):
        return False
    same_times = True
    for path, (size, mtime) in stats.items():
        old_size, old_mtime, _ = entry["files"][path]
        if old_size != size:
            return False
        same_times = same_times and old_mtime == mtime
    return True if same_times else None


def _index_job(job: tuple[str, list[str]]) -> tuple[str, list[dict[str, Any]], dict[str, str]]:
    """One unit indexed, with its files' hashes (runs in a pool worker)."""
    unit, paths = job
    return unit, index_unit(paths, unit), {path: sha256_of(path) for path in paths}


def _run_jobs(jobs: list[tuple[str, list[str]]], workers: int) -> Iterator[Any]:
    """The jobs' results, on `workers` processes (forked) when more than one pays."""
    if workers <= 1 or len(jobs) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        yield from map(_index_job, jobs)
        return
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        yield from pool.map(_index_job, jobs, chunksize=max(1, min(16, len(jobs) // (workers * 4))))


def _remove_units(out: Path, parts: set[str], gone: set[str]) -> int:
    """Drop the rows of units `gone` from the part files `parts`; the number removed."""
    removed = 0
    for part in sorted(parts):
        path = out / part
        if not path.exists():
            continue
        table = pq.read_table(path, schema=file_schema())
        keep = pc.invert(pc.is_in(table["unit"], value_set=pa.array(sorted(gone))))
        kept = table.filter(keep)
        removed += table.num_rows - kept.num_rows
        if kept.num_rows == 0:
            path.unlink()
        elif kept.num_rows != table.num_rows:
            _write_atomic(path, kept)
    return removed


def _write_rows(out: Path, rows: list[dict[str, Any]], run: str) -> dict[str, str]:
    """The rows as one part file per date; row unit -> part path, per date."""
    by_date: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_date.setdefault(row[PARTITION], []).append(row)
    written: dict[str, str] = {}
    for date, members in sorted(by_date.items()):
        folder = out / f"{PARTITION}={date}"
        folder.mkdir(parents=True, exist_ok=True)
        part = f"{PARTITION}={date}/part-{run}.parquet"
        table = rows_to_table(members)
        _write_atomic(out / part, table)
        written[date] = part
    return written


def update_index(
    sources: Sequence[str],
    out: Path,
    workers: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> IndexSummary:
    """Index what is new or changed under `sources` into `out` (see the module docstring)."""
    started = time.perf_counter()
    check_out_folder(out, sources)
    manifest = _load_manifest(out)
    known: dict[str, Any] = manifest["units"]
    summary = IndexSummary()
    files = source_files(sources)
    summary.files = len(files)
    grouped = units(files)
    summary.units = len(grouped)
    dirty: list[tuple[str, list[str]]] = []
    for unit, paths in grouped.items():
        stats = _stats(paths)
        state = _unchanged(known.get(unit), stats)
        if state is None and all(known[unit]["files"][p][2] == sha256_of(p) for p in paths):
            known[unit]["files"] = {p: [*stats[p], known[unit]["files"][p][2]] for p in paths}
            state = True
        if state:
            summary.skipped_units += 1
        else:
            dirty.append((unit, paths))
    out.mkdir(parents=True, exist_ok=True)
    stale = {unit for unit, _ in dirty if unit in known}
    stale_parts = {part for unit in stale for part in known[unit]["parts"]}
    summary.rows_removed = _remove_units(out, stale_parts, stale)
    run = time.strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]
    rows: list[dict[str, Any]] = []
    fresh: dict[str, dict[str, Any]] = {}
    for done, (unit, unit_rows, hashes) in enumerate(_run_jobs(dirty, workers), 1):
        stats = _stats(list(hashes))
        fresh[unit] = {
            "files": {p: [*stats[p], digest] for p, digest in hashes.items()},
            "dates": sorted({row[PARTITION] for row in unit_rows}),
        }
        rows.extend(unit_rows)
        summary.indexed_files += len(hashes)
        if progress is not None:
            progress(done, len(dirty))
    written = _write_rows(out, rows, run)
    for unit, entry in fresh.items():
        known[unit] = {"files": entry["files"], "parts": [written[d] for d in entry["dates"]]}
    summary.indexed_units = len(fresh)
    summary.rows_written = len(rows)
    summary.errors = sum(1 for row in rows if row["kind"] == "error")
    summary.parts = sorted(written.values())
    text = json.dumps(manifest, ensure_ascii=False, sort_keys=True)
    _write_atomic(out / MANIFEST, text)
    summary.seconds = round(time.perf_counter() - started, 3)
    return summary
