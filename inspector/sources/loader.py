"""Read files and folders into artifacts; every unreadable file becomes one LoadError.

What a file is, is decided by its content: a compression dump, debug-log records (JSON
Lines), a snapshot (our interchange format, or a scenario `input.json`), or a message list
(openJiuwen, OpenAI chat or Anthropic messages; an array, an object with `messages`, or
JSON Lines). Debug records from every source are joined with every dump (by processor,
session, context and time) before anything is yielded, so a dump folder and a debug folder
given separately still link.

A debug-log evaluation that did not end in a dump gets a context from a loaded snapshot
(a `kind="snapshot"` artifact) by one of two rules, the first that applies:

1. **By evaluation.** A snapshot whose `processor`, `session_id` and `context_id` equal the
   run's and whose `timestamp` (epoch seconds) lies within `EVALUATION_TOLERANCE_SECONDS`
   of the run's `threshold_check` timestamp belongs to that one evaluation (the nearest
   check, when two are that close; none if they are equally near). This is what `inspector
   snapshot` writes for a debug artifact, and what `sample_dumps/` holds in
   `<session>_context/inspector_snapshots.jsonl`. Such a snapshot is then shown only as
   the debug artifact's context, not as an artifact of its own. Times, not ordinals, name
   the evaluation: an ordinal shifts when a log is rotated or only part of it is loaded.
2. **By session.** A snapshot without `timestamp` naming the same processor, session and
   context (a scenario's `input.json`) is the context when it is the only such snapshot
   and the logs hold exactly one evaluation for that key. It stays an artifact of its own.

Two snapshots claiming the same evaluation link neither; a snapshot naming a time no
check has stays a plain snapshot artifact.

Folders are searched recursively for `*.json`, `*.jsonl` and `*.ndjson` (hidden entries
skipped, symlinked folders not followed); their artifacts come newest first. JSON that is
none of the formats (a harness's `result.json`, `http_requests.json`, `index.json`) is
skipped quietly inside a folder but is an error when named explicitly; JSON that carries a
key only our formats use (`messages`, `processor_type`, ...) but does not parse as one is an
error everywhere. A path holding
`{session_id}` or `{context_id}` (as openJiuwen's configured folders do) matches every
folder in their place. Nothing is ever written. Must not import Textual or Rich.

Results stream: debug logs and the (few) other files are read first; dump files are only
peeked at (their first keys and their file name or last bytes give processor, session,
context and time), so records and dumps are linked before anything is yielded, and each
dump is then read in full only when its turn comes, newest first.
"""

from __future__ import annotations

import glob
import json
import multiprocessing
import os
import queue as queue_module
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.core.artifact import Artifact, LoadError, LoadResult
from inspector.core.errors import InspectorError
from inspector.core.snapshot import looks_like_snapshot, snapshot_from_dict
from inspector.core.timeline import (
    DebugRecord,
    DumpRef,
    EvaluationRun,
    RunKey,
    group_runs,
    link_runs,
    safe_name,
    session_timelines,
)
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import Tuning
from inspector.sources.debuglog import check_debug_record, debug_artifact, looks_like_debug_record
from inspector.sources.dump import (
    DUMP_NAME_RE,
    DumpFile,
    dump_artifact,
    dump_header_artifact,
    kept_message_ids,
    looks_like_dump,
    parse_dump,
    strip_dump,
)
from inspector.sources.formats import (
    looks_like_message_container,
    looks_like_message_list,
    read_message_list,
)
from inspector.sources.jsonio import (
    MAX_DOCUMENT_BYTES,
    MAX_FILE_BYTES,
    ReadProblem,
    read_json_file,
    summarize_problems,
)

#: Start of the error text for a shape no check anticipated (tests assert it never occurs).
UNEXPECTED = "unexpected structure"

#: File name endings a folder scan reads (explicit file arguments are read whatever their name).
FOLDER_SUFFIXES = (".json", ".jsonl", ".ndjson")

#: A header-level load (`contexts=False`) reads files in a process pool from this many files.
POOL_MIN_FILES = 64

#: How far (seconds) a snapshot's `timestamp` may lie from the threshold_check it names:
#: room for a time rounded to the millisecond, far less than between two checks of a context.
EVALUATION_TOLERANCE_SECONDS = 0.001


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file a folder scan passed over, and why (not an error)."""

    source: str
    reason: str


@dataclass(slots=True)
class _FileLoad:
    """What one file held, before linking."""

    path: Path
    group: int
    explicit: bool
    mtime: float
    artifacts: list[Artifact] = field(default_factory=list)
    dumps: list[DumpFile] = field(default_factory=list)
    records: list[DebugRecord] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)
    #: Header-level loads: messages in each dump's context_after (the lists are dropped).
    after_counts: dict[str, int | None] = field(default_factory=dict)
    #: Files passed over, when read in a worker process (the caller's list is not shared).
    skips: list[Skipped] = field(default_factory=list)


def expand_source(path: str | os.PathLike[str]) -> list[Path]:
    """A source path, with `{session_id}` / `{context_id}` turned into wildcards."""
    text = os.fspath(path)
    if "{session_id}" in text or "{context_id}" in text:
        pattern = glob.escape(text).replace("{session_id}", "*").replace("{context_id}", "*")
        # glob.escape leaves braces alone, so the placeholders are still there to replace
        return sorted(Path(p) for p in glob.glob(pattern))
    return [Path(text)]


def scan_folder(folder: Path) -> list[Path]:
    """Candidate files under `folder`, recursively; hidden entries and symlinked folders skipped."""
    found: list[Path] = []
    for root, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.startswith(".") and name.lower().endswith(FOLDER_SUFFIXES):
                found.append(Path(root) / name)
    return found


def load_paths(
    paths: Iterable[str | os.PathLike[str]],
    *,
    counters: Mapping[str, TokenCounter] | None = None,
    skipped: list[Skipped] | None = None,
    max_file_bytes: int = MAX_FILE_BYTES,
    progress: Callable[[int, int], None] | None = None,
    contexts: bool = True,
) -> Iterator[LoadResult]:
    """Every artifact and load error found under `paths`, in input order (folders newest first).

    `counters` are the token counters used to infer a dump's token mode (made on first
    need when not given); `skipped` collects files a folder scan passed over; `progress`
    is called with (files read, files to read).

    `contexts=False` is a header-level load for readers of `Artifact.recorded` only
    (`inspector stats`): dumps become `dump_header_artifact`s (no context rebuilt, no
    token counting, so no counters are made, and message lists are not walked for
    nesting depth), every file is read once, before anything is yielded, with both CPU
    cores (a forked process pool) when there are many files and no other thread runs.
    Files, order, linking, debug runs and read errors are as in a full load; only errors
    inside a dump's message lists (which a full load reports when rebuilding) go unseen.
    """
    plan: list[tuple[int, Path, bool]] = []
    missing: list[tuple[int, LoadError]] = []
    seen: set[str] = set()
    groups = 0
    for group, raw in enumerate(paths):
        groups = group + 1
        expanded = expand_source(raw)
        if not expanded:
            missing.append((group, LoadError(os.fspath(raw), "no folder matches this template")))
        for target in expanded:
            base: tuple[str, str] | None = None
            if target.is_dir():
                files = [(f, False) for f in scan_folder(target)]
                given = "" if str(target) == "." else str(target).rstrip(os.sep) + os.sep
                base = (given, str(_identity(target)).rstrip(os.sep) + os.sep)
            elif target.exists():
                files = [(target, True)]
            else:
                missing.append((group, LoadError(str(target), "no such file or folder")))
                continue
            for file, explicit in files:
                key = _folder_identity(file, base) if base else str(_identity(file))
                if key in seen:
                    continue
                seen.add(key)
                plan.append((group, file, explicit))
    yield from _Streamer(
        plan, missing, groups, counters, skipped, max_file_bytes, progress, contexts
    ).run()


def _identity(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path.absolute()


def _folder_identity(file: Path, base: tuple[str, str]) -> str:
    """`_identity` of a file `scan_folder` found, without resolving every path component:
    the scan does not enter symlinked folders, so only the file itself may be a link.
    `base` is the scanned folder as given and resolved, each ending in a separator ("" for ".")."""
    given, resolved = base
    text = str(file)
    if not text.startswith(given) or os.path.islink(text):
        return str(_identity(file))
    return resolved + text[len(given) :]


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def load_file(path: Path, counters: Mapping[str, TokenCounter] | None = None) -> list[LoadResult]:
    """The artifacts of one file on its own (no cross-file linking), or its LoadError."""
    return list(load_paths([path], counters=counters))


def _walk_for_depth(document: Any) -> bool:
    """Header-level loads walk a document for nesting depth unless it is a dump or a debug
    record: only their fixed, shallow keys are read then, so the C parser's own limit
    (Python's recursion limit) is guard enough."""
    return not (looks_like_dump(document) or looks_like_debug_record(document))


def _load_file(
    path: Path,
    group: int,
    explicit: bool,
    max_file_bytes: int,
    skipped: list[Skipped] | None,
    header_only: bool = False,
) -> _FileLoad:
    load = _read_file(path, group, explicit, max_file_bytes, skipped, header_only)
    if header_only:
        for index, dump in enumerate(load.dumps):
            load.dumps[index], load.after_counts[dump.id] = strip_dump(dump)
    return load


def _header_job(job: tuple[Path, int, bool, int]) -> _FileLoad:
    """Worker: one file read for a header-level load (dumps stripped of their messages)."""
    path, group, explicit, max_file_bytes = job
    skips: list[Skipped] = []
    load = _load_file(path, group, explicit, max_file_bytes, skips, header_only=True)
    load.skips = skips
    return load


class _ChunkSharing:
    """Header jobs shared in chunks between this process and forked helper processes.

    Helpers start on entry (forked: they inherit the jobs, nothing is pickled but their
    results) and take chunks from a shared counter; `results()` then takes chunks in this
    process too and yields every load, its own and the helpers'. Best-effort: a helper
    that cannot start or dies is ignored, and the caller reads what is missing itself.
    """

    def __init__(self, jobs: list[tuple[Path, int, bool, int]], helpers: int) -> None:
        self.jobs = jobs
        self.helpers = helpers if jobs else 0
        self.chunk = max(1, len(jobs) // 64)
        self.processes: list[Any] = []

    def __enter__(self) -> _ChunkSharing:
        if not self.helpers:
            return self
        context = multiprocessing.get_context("fork")
        try:
            self.lock = context.Lock()
            self.next = context.RawValue("q", 0)
            self.queue = context.Queue()
            for _ in range(self.helpers):
                process = context.Process(target=self._helper, daemon=True)
                process.start()
                self.processes.append(process)
        except (OSError, RuntimeError):
            self.helpers = 0
        return self

    def _take(self) -> int:
        with self.lock:
            start = int(self.next.value)
            self.next.value = start + self.chunk
        return start

    def _helper(self) -> None:
        """In a helper process: read chunks until none are left, then say so (None)."""
        try:
            while (start := self._take()) < len(self.jobs):
                self.queue.put([_header_job(job) for job in self.jobs[start : start + self.chunk]])
        finally:
            self.queue.put(None)
            self.queue.close()
            self.queue.join_thread()

    def results(self) -> Iterator[_FileLoad]:
        """Take chunks here until none are left, then collect what the helpers read."""
        if not self.processes:
            return
        while (start := self._take()) < len(self.jobs):
            for job in self.jobs[start : start + self.chunk]:
                yield _header_job(job)
        done = 0
        while done < len(self.processes):
            try:
                batch = self.queue.get(timeout=0.2)
            except queue_module.Empty:
                if not any(process.is_alive() for process in self.processes):
                    return
                continue
            if batch is None:
                done += 1
            else:
                yield from batch

    def __exit__(self, *exc_info: object) -> None:
        for process in self.processes:
            process.join(timeout=1.0)
            if process.is_alive():
                process.terminate()


def _read_file(
    path: Path,
    group: int,
    explicit: bool,
    max_file_bytes: int,
    skipped: list[Skipped] | None,
    header_only: bool,
) -> _FileLoad:
    source = str(path)
    load = _FileLoad(path, group, explicit, _mtime(path))
    result = read_json_file(
        path, max_file_bytes=max_file_bytes, check_nesting=_walk_for_depth if header_only else True
    )
    if result.problem is not None:
        load.errors.append(LoadError(source, result.problem.error, result.problem.where))
    if not result.documents:
        return load
    try:
        bad = _classify(result.documents, result.json_lines, load)
    except RecursionError:
        load.errors.append(LoadError(source, "JSON nested too deeply"))
        bad = []
    if bad:
        # one error per file: the unreadable lines and the refused records together
        load.errors = [
            e for e in load.errors if e.error != (result.problem.error if result.problem else None)
        ]
        merged = summarize_problems(result.bad_records + bad)
        assert merged is not None
        load.errors.append(LoadError(source, merged.error, merged.where))
    if not (load.artifacts or load.dumps or load.records or load.errors):
        document = result.documents[0][1]
        what = _describe_unknown(document)
        if explicit or _looks_intended(document):
            load.errors.append(
                LoadError(
                    source,
                    f"not an inspector artifact ({what}): expected a dump, debug log, snapshot or message list",
                )
            )
        elif skipped is not None:
            skipped.append(Skipped(source, f"not an inspector artifact ({what})"))
    return load


#: Keys that only the inspector's formats use: a document carrying one was meant to be read.
_FORMAT_KEYS = frozenset(
    {"messages", "system_messages", "processor_type", "compression_request", "context_after"}
)


def _looks_intended(document: Any) -> bool:
    """True for JSON that tries to be a dump, snapshot or message list but is malformed.

    Such a file is an error even inside a folder scan; unrelated JSON is skipped quietly.
    """
    if isinstance(document, dict):
        return not _FORMAT_KEYS.isdisjoint(document)
    if isinstance(document, list) and document:
        return all(isinstance(item, dict) and "role" in item for item in document[:20])
    return False


def locate_key(path: Path, where: str | None) -> str | None:
    """Add the line and byte of a "key a.b[3].c" location, found by scanning the file's bytes."""
    if not where or not where.startswith("key "):
        return where
    try:
        if path.stat().st_size > MAX_DOCUMENT_BYTES:
            return where
        data = path.read_bytes()
    except OSError:
        return where
    position = -1
    for part in re.split(r"[.\[]", where[4:]):
        name = part.rstrip("]")
        if not name or name.isdigit():
            continue
        found = data.find(b'"' + name.encode("utf-8", "replace") + b'"', position + 1)
        if found < 0:
            return where
        position = found
    if position < 0:
        return where
    line = data.count(b"\n", 0, position) + 1
    return f"{where} (line {line}, byte {position})"


def _describe_unknown(document: Any) -> str:
    if isinstance(document, Mapping):
        if "context_changed" in document:
            return "a harness result.json"
        if "scenarios" in document:
            return "a scenario index"
        keys = ", ".join(list(document.keys())[:4])
        return f"an object with keys {keys}" if keys else "an empty object"
    if isinstance(document, list):
        if document and all(isinstance(i, Mapping) and "response_status" in i for i in document):
            return "a list of recorded HTTP requests"
        return f"a list of {len(document)} items that are not messages"
    return f"a JSON {type(document).__name__}"


def _classify(
    documents: list[tuple[str | None, Any]], json_lines: bool, load: _FileLoad
) -> list[ReadProblem]:
    """Sort the documents of one file into dumps, debug records and context artifacts.

    Returns the JSON Lines records refused for their content (a single document's problem
    goes straight to `load.errors`).
    """
    source = str(load.path)
    bad_records: list[ReadProblem] = []
    pending_messages: list[tuple[str | None, Any]] = []

    def flush_messages() -> None:
        if pending_messages:
            where = pending_messages[0][0]
            try:
                _add_messages(
                    [m for _, m in pending_messages], None, source, where, load, json_lines
                )
            except InspectorError as error:
                bad_records.append(
                    ReadProblem(str(getattr(error, "message", None) or error), where)
                )
            except (TypeError, ValueError, AttributeError, KeyError, IndexError) as error:
                bad_records.append(
                    ReadProblem(f"{UNEXPECTED} ({type(error).__name__}: {error})", where)
                )
            pending_messages.clear()

    for where, document in documents:
        line = int(where.split()[1]) if where and where.startswith("line ") else None
        if json_lines and isinstance(document, Mapping) and isinstance(document.get("role"), str):
            pending_messages.append((where, document))
            continue
        flush_messages()
        try:
            if looks_like_debug_record(document):
                check_debug_record(document)
                load.records.append(DebugRecord(document, source, line))
            elif looks_like_dump(document):
                load.dumps.append(parse_dump(document, source))
            elif looks_like_snapshot(document):
                label = (
                    f"{load.path.name}:{where}" if where else _snapshot_label(document, load.path)
                )
                snapshot = snapshot_from_dict(document, default_id=label)
                load.artifacts.append(
                    Artifact(
                        source=source,
                        id=snapshot.id,
                        kind="snapshot",
                        snapshot=snapshot,
                        session_id=_str(document.get("session_id")),
                        context_id=_str(document.get("context_id")),
                        timestamp=_seconds(document.get("timestamp")),
                        processor=snapshot.tuning.processor_class
                        if "processor" in snapshot.recorded_fields
                        else None,
                        recorded_token_mode=snapshot.tuning.token_mode
                        if "token_mode" in snapshot.recorded_fields
                        else None,
                    )
                )
            elif looks_like_message_list(document):
                _add_messages(document, None, source, where, load, json_lines)
            elif looks_like_message_container(document):
                _add_messages(document["messages"], document, source, where, load, json_lines)
        except (TypeError, ValueError, AttributeError, KeyError, IndexError) as error:
            # a shape no check anticipated: say so plainly instead of failing the whole load
            detail = f"{UNEXPECTED} ({type(error).__name__}: {error})"
            if json_lines:
                bad_records.append(ReadProblem(detail, where))
            else:
                load.errors.append(LoadError(source, detail, where))
        except InspectorError as error:
            where_text = getattr(error, "where", None)
            detail = str(getattr(error, "message", None) or error)
            location = " ".join(p for p in (where, where_text) if p) or None
            if json_lines:
                bad_records.append(ReadProblem(detail, location))
            else:
                load.errors.append(LoadError(source, detail, locate_key(load.path, location)))
    flush_messages()
    return bad_records


def _snapshot_label(document: Mapping[str, Any], path: Path) -> str:
    scenario = document.get("scenario")
    return scenario if isinstance(scenario, str) and scenario else str(path)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _seconds(value: Any) -> float | None:
    """A finite epoch time in seconds, or None (booleans and text are not times)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if number == number and abs(number) != float("inf") else None


def _add_messages(
    messages: list[Any],
    container: Mapping[str, Any] | None,
    source: str,
    where: str | None,
    load: _FileLoad,
    json_lines: bool,
) -> None:
    from inspector.core.snapshot import ContextSnapshot

    parsed = read_message_list(messages, container)
    label = (
        f"{load.path.name}:{where}"
        if where and not (json_lines and container is None)
        else load.path.name
    )
    snapshot = ContextSnapshot(
        id=label,
        system_messages=parsed.system_messages,
        messages=parsed.messages,
        tools=parsed.tools,
        tuning=Tuning(),
        extra={"format": parsed.format, "notes": list(parsed.notes)},
    )
    load.artifacts.append(
        Artifact(
            source=source,
            id=label,
            kind="messages",
            snapshot=snapshot,
            extra={"format": parsed.format, "notes": list(parsed.notes)},
        )
    )


_DUMP_KEYS_RE = re.compile(rb'"(?:processor_type|compression_request|context_after)"\s*:')
_HEAD_FIELD_RES = {
    name: re.compile(rb'"' + name.encode() + rb'"\s*:\s*("(?:[^"\\]|\\.)*")')
    for name in ("processor_type", "session_id", "context_id")
}
_TAIL_TIMESTAMP_RE = re.compile(rb'"timestamp"\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*}\s*$')
_MESSAGE_ID_RE = re.compile(rb'"context_message_id"\s*:\s*"([^"\\]{1,200})"')
_PEEK_BYTES = 64 * 1024


def _peek(path: Path) -> tuple[str, bytes]:
    """("log" | "dump" | "other", first bytes): a cheap guess that only decides reading order."""
    try:
        with path.open("rb") as handle:
            head = handle.read(_PEEK_BYTES)
    except OSError:
        return "other", b""
    first = head.lstrip().split(b"\n", 1)[0].strip()
    if first.startswith(b"{") and first.endswith(b"}"):
        try:
            record = json.loads(first)
        except (ValueError, RecursionError):
            record = None
        if looks_like_debug_record(record):
            return "log", head
    if _DUMP_KEYS_RE.search(head[:8192]):
        return "dump", head
    return "other", head


def _head_field(head: bytes, name: str) -> str | None:
    match = _HEAD_FIELD_RES[name].search(head[:8192])
    if not match:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _dump_header(path: Path, head: bytes) -> DumpRef:
    """What linking needs, from a dump's first keys and its file name or last bytes."""
    name_match = DUMP_NAME_RE.match(path.name)
    timestamp: float | None = None
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            handle.seek(max(size - 512, 0))
            tail = handle.read()
        found = _TAIL_TIMESTAMP_RE.search(tail)
        if found:
            timestamp = float(found.group(1))
    except (OSError, ValueError):
        timestamp = None
    if timestamp is None and name_match:
        timestamp = int(name_match.group(1)) / 1000
    processor = _head_field(head, "processor_type") or (name_match.group(2) if name_match else None)
    session = _head_field(head, "session_id") or (name_match.group(3) if name_match else None)
    stem = path.name[:-5] if path.name.endswith(".json") else path.name
    return DumpRef(stem, processor, session, _head_field(head, "context_id"), timestamp)


def _kept_ids_from_file(path: Path) -> frozenset[str]:
    """context_message_ids in a dump's context_after, found without parsing the file."""
    try:
        data = path.read_bytes()
    except OSError:
        return frozenset()
    start = data.rfind(b'"context_after"')
    if start < 0:
        return frozenset()
    end = data.find(b'"benefit"', start)
    return frozenset(
        m.group(1).decode("utf-8", "replace")
        for m in _MESSAGE_ID_RE.finditer(data, start, end if end > 0 else len(data))
    )


class _Streamer:
    """Reads logs and other files, links them with dump headers, then yields group by group."""

    def __init__(
        self,
        plan: list[tuple[int, Path, bool]],
        missing: list[tuple[int, LoadError]],
        groups: int,
        counters: Mapping[str, TokenCounter] | None,
        skipped: list[Skipped] | None,
        max_file_bytes: int,
        progress: Callable[[int, int], None] | None,
        contexts: bool = True,
    ) -> None:
        self.plan = plan
        self.contexts = contexts
        self._after_counts: dict[str, int | None] = {}
        self.missing = missing
        self.groups = groups
        self.counters = counters
        self.skipped = skipped
        self.max_file_bytes = max_file_bytes
        self.progress = progress
        self.done = 0
        self._made: dict[str, TokenCounter] | None = None
        self.loads: dict[Path, _FileLoad] = {}
        self.heads: dict[Path, DumpRef] = {}
        self._kept_ids: dict[str, frozenset[str]] = {}
        self._ref_paths: dict[str, Path] = {}

    def provide(self) -> dict[str, TokenCounter]:
        """Token counters, made on first need."""
        if self.counters is not None:
            return dict(self.counters)
        if self._made is None:
            from inspector.encoding import make_counters

            self._made = make_counters()
        return self._made

    def _tick(self) -> None:
        self.done += 1
        if self.progress is not None:
            self.progress(self.done, len(self.plan))

    def _read_headers(self) -> None:
        """Header-level load: read every file once, on every CPU core when it pays.

        Files named like dumps are shared out in chunks between this process and forked
        helpers (one per other core), each taking the next chunk when done with one (so a
        core slowed by other work takes fewer); a dump's result is small once its message
        lists are dropped. The other files (debug logs, whose records are needed here) are
        read in this process first. Whatever a helper did not deliver (it died) is read
        here. Results are kept in plan order.
        """
        jobs = [(file, group, explicit, self.max_file_bytes) for group, file, explicit in self.plan]
        shared = [job for job in jobs if DUMP_NAME_RE.match(job[0].name)]
        helpers = min(os.cpu_count() or 1, 4) - 1
        if not (
            helpers > 0
            and len(shared) >= POOL_MIN_FILES
            and "fork" in multiprocessing.get_all_start_methods()
            and threading.active_count() == 1
        ):
            shared = []
        found: dict[Path, _FileLoad] = {}
        with _ChunkSharing(shared, helpers) as sharing:
            in_shared = {job[0] for job in shared}
            for job in jobs:
                if job[0] not in in_shared:
                    self._took(found, _header_job(job))
            for load in sharing.results():
                self._took(found, load)
        for job in shared:
            if job[0] not in found:
                self._took(found, _header_job(job))
        self.loads.update((file, found[file]) for _, file, _ in self.plan)

    def _took(self, found: dict[Path, _FileLoad], load: _FileLoad) -> None:
        found[load.path] = load
        self._after_counts.update(load.after_counts)
        if self.skipped is not None:
            self.skipped.extend(load.skips)
        self._tick()

    def run(self) -> Iterator[LoadResult]:
        """The whole load, streamed."""
        if not self.contexts:
            self._read_headers()
        for group, file, explicit in self.plan if self.contexts else ():
            kind, head = _peek(file)
            if kind == "dump" and not explicit:
                self.heads[file] = _dump_header(file, head)
                self._ref_paths[self.heads[file].id] = file
            else:
                self.loads[file] = _load_file(
                    file, group, explicit, self.max_file_bytes, self.skipped
                )
                self._tick()
        parsed = [d for load in self.loads.values() for d in load.dumps]
        for dump in parsed if self.contexts else ():
            self._kept_ids[dump.id] = kept_message_ids(dump)
        self.refs = list(self.heads.values()) + [d.ref for d in parsed]
        records = [r for load in self.loads.values() for r in load.records]
        self.runs, self.by_dump = link_runs(group_runs(records), self.refs)
        # header-level artifacts are read for what they recorded: no session timelines
        self.timelines = session_timelines(self.runs, self.refs) if self.contexts else {}
        self._attach_debug_artifacts()
        for group in range(self.groups):
            for missing_group, missing_error in self.missing:
                if missing_group == group:
                    yield missing_error
            members = [(file, explicit) for g, file, explicit in self.plan if g == group]
            if all(explicit for _, explicit in members):
                for file, _ in members:
                    yield from self._file_results(self.loads[file])
            else:
                yield from self._folder_results(members)

    def _timeline(self, session: str | None) -> list[dict[str, Any]]:
        return self.timelines.get(None if session is None else safe_name(session), [])

    def _attach_debug_artifacts(self) -> None:
        """One artifact per run that did not end in a dump, kept with the log it came from.

        Its context is the snapshot naming that evaluation, else the one snapshot naming its
        key when the logs hold one evaluation for it (module docstring); a snapshot linked
        by evaluation is not yielded on its own.
        """
        per_file = {str(path): load for path, load in self.loads.items()}
        loads = list(self.loads.values())
        exact = _snapshots_by_evaluation(loads, self.runs)
        contexts = _snapshots_by_key(loads)
        runs_per_key = Counter(run.key for run in self.runs)
        absorbed: set[int] = set()
        for run in self.runs:
            owner = per_file.get(run.source)
            if run.dump_id is not None or owner is None:
                continue
            match = exact.get((run.key, run.index))
            link: str | None = "evaluation" if match is not None else None
            if match is not None:
                absorbed.add(id(match))
            elif runs_per_key[run.key] == 1:
                # a snapshot naming this session and context (a scenario's input.json) is the
                # context the check saw, when the log holds exactly one check for it
                match = contexts.get(run.key)
                link = "session" if match is not None else None
            owner.artifacts.append(
                debug_artifact(run, self._timeline(run.session_id), match, link=link)
            )
        if absorbed:
            for load in loads:
                load.artifacts = [a for a in load.artifacts if id(a) not in absorbed]

    def _file_results(self, load: _FileLoad) -> Iterator[LoadResult]:
        """An explicit file's results in file order (dumps made into artifacts here)."""
        yield from load.errors
        for dump in load.dumps:
            yield self._dump_result(dump, load.path)
        yield from load.artifacts

    def _folder_results(self, members: list[tuple[Path, bool]]) -> Iterator[LoadResult]:
        """A folder's results: read errors first, then everything newest first."""
        entries: list[tuple[float | None, float, int, Any]] = []
        for order, (file, _) in enumerate(members):
            load = self.loads.get(file)
            if load is None:
                ref = self.heads[file]
                entries.append((ref.timestamp, _mtime(file), order, file))
                continue
            yield from load.errors
            for dump in load.dumps:
                entries.append((dump.timestamp, load.mtime, order, (dump, load.path)))
            for artifact in load.artifacts:
                entries.append((artifact.timestamp, load.mtime, order, artifact))
        entries.sort(key=lambda e: (e[0] is None, -(e[0] if e[0] is not None else e[1]), e[2]))
        for _, _, _, item in entries:
            if isinstance(item, Artifact):
                yield item
            elif isinstance(item, tuple):
                yield self._dump_result(item[0], item[1])
            else:
                yield from self._late_file(item)

    def _late_file(self, file: Path) -> Iterator[LoadResult]:
        """A dump file read in full at its turn (anything else found in it is yielded too)."""
        load = _load_file(file, 0, False, self.max_file_bytes, self.skipped)
        self._tick()
        yield from load.errors
        for dump in load.dumps:
            yield self._dump_result(dump, file)
        if load.records:
            late_runs, _ = link_runs(group_runs(load.records), [])
            for run in late_runs:
                yield debug_artifact(run, [run.to_dict()])
        yield from load.artifacts

    def _earlier_kept(self, dump: DumpFile) -> frozenset[str]:
        """Message ids that earlier dumps of the same processor, session and context kept."""
        key = (dump.processor, safe_name(dump.ref.session_id or ""), dump.context_id)
        ids: set[str] = set()
        for ref in self.refs:
            if (
                ref.id == dump.id
                or (ref.processor, safe_name(ref.session_id or ""), ref.context_id) != key
            ):
                continue
            if ref.timestamp is None or dump.timestamp is None or ref.timestamp >= dump.timestamp:
                continue
            if ref.id not in self._kept_ids:
                path = self._ref_paths.get(ref.id)
                self._kept_ids[ref.id] = _kept_ids_from_file(path) if path else frozenset()
            ids |= self._kept_ids[ref.id]
        return frozenset(ids)

    def _dump_result(self, dump: DumpFile, path: Path) -> LoadResult:
        """The dump's artifact, linked to its run, or the error that stops its rebuild."""
        run = self.by_dump.get(dump.id)
        if not self.contexts:
            return dump_header_artifact(
                dump, run, self._timeline(dump.ref.session_id), self._after_counts.get(dump.id)
            )
        try:
            return dump_artifact(
                dump,
                run,
                self.provide,
                self._timeline(dump.ref.session_id),
                lambda: self._earlier_kept(dump),
            )
        except InspectorError as error:
            return LoadError(
                str(path),
                str(getattr(error, "message", None) or error),
                locate_key(path, getattr(error, "where", None)),
            )
        except RecursionError:
            return LoadError(str(path), "JSON nested too deeply")
        except (TypeError, ValueError, AttributeError, KeyError, IndexError) as error:
            return LoadError(str(path), f"{UNEXPECTED} ({type(error).__name__}: {error})")


def _linkable_snapshots(loads: list[_FileLoad]) -> Iterator[tuple[RunKey, Artifact]]:
    """Snapshot artifacts that name their processor, session and context, with that key."""
    for load in loads:
        for artifact in load.artifacts:
            if (
                artifact.kind == "snapshot"
                and artifact.session_id
                and artifact.context_id
                and artifact.processor
            ):
                yield (artifact.processor, artifact.session_id, artifact.context_id), artifact


def _snapshots_by_key(loads: list[_FileLoad]) -> dict[RunKey, Artifact]:
    """Snapshots without a `timestamp` naming their key, when one is the only one for it."""
    found: dict[RunKey, list[Artifact]] = {}
    for key, artifact in _linkable_snapshots(loads):
        if artifact.timestamp is None:
            found.setdefault(key, []).append(artifact)
    return {key: items[0] for key, items in found.items() if len(items) == 1}


def _snapshots_by_evaluation(
    loads: list[_FileLoad], runs: list[EvaluationRun]
) -> dict[tuple[RunKey, int], Artifact]:
    """Snapshots with a `timestamp`, by the (key, index) of the evaluation they name.

    A snapshot names the run of its key whose check time is nearest its `timestamp`,
    within EVALUATION_TOLERANCE_SECONDS (two equally near: none). A run claimed by two
    snapshots gets neither.
    """
    times: dict[RunKey, list[tuple[float, int]]] = {}
    for run in runs:
        when = run.timestamp
        if when is not None:
            times.setdefault(run.key, []).append((when, run.index))
    claims: dict[tuple[RunKey, int], list[Artifact]] = {}
    for key, artifact in _linkable_snapshots(loads):
        if artifact.timestamp is None:
            continue
        near = sorted(
            (abs(when - artifact.timestamp), index)
            for when, index in times.get(key, [])
            if abs(when - artifact.timestamp) <= EVALUATION_TOLERANCE_SECONDS
        )
        if not near or (len(near) > 1 and near[0][0] == near[1][0]):
            continue
        claims.setdefault((key, near[0][1]), []).append(artifact)
    return {claim: items[0] for claim, items in claims.items() if len(items) == 1}
