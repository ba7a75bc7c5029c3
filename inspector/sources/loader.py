"""Read files and folders into artifacts; every unreadable file becomes one LoadError.

What a file is, is decided by its content: a compression dump, debug-log records (JSON
Lines), a snapshot (our interchange format, or a scenario `input.json`), or a message list
(openJiuwen, OpenAI chat or Anthropic messages; an array, an object with `messages`, or
JSON Lines). Debug records from every source are joined with every dump (by processor,
session, context and time) before anything is yielded, so a dump folder and a debug folder
given separately still link. Each `llm_request.jsonl` record (one model call) is an
artifact of kind `llm_request`, linked to the compressor evaluations of the same session
and context just before it (`core.timeline.call_evaluations`) and shown in the session
timeline. Every context also carries the release facts its reader saw
(`sources.evidence`): a dump's usage details, its run's previews and retry messages, and
whether an `llm_request.jsonl` lies in its folder or logs its session; a context with no
fact of its own takes those of the debug records in its folder or session.

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
skipped, symlinked folders not followed); their artifacts come newest first. Only regular
files are opened (`sources.files`): a FIFO, socket, device, symlink loop or dangling link,
and a folder that cannot be listed, is one LoadError each, never a hang or a skip. What one file
holds, and which JSON is skipped or refused, is decided in `inspector.sources.classify`;
`peek` takes the cheap first look, `pool` reads header-level loads on every core. A path holding
`{session_id}` or `{context_id}` (as openJiuwen's configured folders do) matches every
folder in their place. Nothing is ever written. Must not import Textual or Rich.

Results stream: debug logs and the (few) other files are read first; dump files are only
peeked at (their first keys and their file name or last bytes give processor, session,
context and time), so records and dumps are linked before anything is yielded, and each
dump is then read in full only when its turn comes, newest first.
"""

from __future__ import annotations

import functools
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.core.artifact import Artifact, LoadError, LoadResult
from inspector.core.errors import InspectorError
from inspector.core.session_timelines import LazyTimelines
from inspector.core.timeline import (
    DumpRef,
    EvaluationRun,
    call_evaluations,
    group_runs,
    link_runs,
    may_link,
    safe_name,
)
from inspector.core.tokens import TokenCounter
from inspector.processes import helper_start_method
from inspector.sources.classify import (
    UNEXPECTED,
    FileLoad,
    Skipped,
    file_mtime,
    load_one,
    locate_key,
)
from inspector.sources.debuglog import debug_artifact
from inspector.sources.dump import DUMP_NAME_RE, DumpFile, ToolLists, kept_message_ids
from inspector.sources.dump_artifact import dump_artifact, dump_header_artifact
from inspector.sources.evidence import dump_objects, run_objects
from inspector.sources.files import (
    FOLDER_SUFFIXES,
    expand_source,
    file_problem,
    folder_base,
    folder_identity,
    path_identity,
    scan_files,
    walk_files,
)
from inspector.sources.fork_server import warm_fork_server
from inspector.sources.jsonio import MAX_FILE_BYTES
from inspector.sources.llm_request import model_call, with_evaluations
from inspector.sources.neighbours import NeighbourFacts
from inspector.sources.peek import PEEK_BYTES, dump_header, kept_ids_from_file, peek
from inspector.sources.pool import (
    POOL_MIN_FILES,
    ChunkSharing,
    freeze_heap,
    gc_paused,
    header_job,
    thaw_heap,
)
from inspector.sources.snapshot_links import (
    EVALUATION_TOLERANCE_SECONDS,
    snapshots_by_evaluation,
    snapshots_by_key,
)

__all__ = [
    "EVALUATION_TOLERANCE_SECONDS",
    "FOLDER_SUFFIXES",
    "UNEXPECTED",
    "Skipped",
    "expand_source",
    "load_file",
    "load_paths",
    "locate_key",
    "scan_folder",
]


def scan_folder(folder: Path) -> list[Path]:
    """Candidate files under `folder`, recursively; hidden entries and symlinked folders skipped."""
    return walk_files(folder, FOLDER_SUFFIXES)[0]


def load_paths(
    paths: Iterable[str | os.PathLike[str]],
    *,
    counters: Mapping[str, TokenCounter] | None = None,
    skipped: list[Skipped] | None = None,
    max_file_bytes: int = MAX_FILE_BYTES,
    progress: Callable[[int, int], None] | None = None,
    contexts: bool = True,
    on_demand: bool = False,
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

    `on_demand=True` (the browser's load) reads like a header-level load, with session
    timelines, and makes each dump a header-level artifact whose `whole()` reads its file
    again and gives the result a full load gives for it (the artifact, or the error that
    stops its rebuild), with the same links, timeline and release facts. Every other
    result is a full load's.
    """
    from inspector.sources.jiuwenswarm import swarm_results

    paths = list(paths)
    # a header-level load beside other threads takes its helpers from a fork server,
    # started as soon as a folder shows enough files (`_read_headers`)
    header_level = on_demand or not contexts
    warm = warm_fork_server if header_level and threading.active_count() > 1 else None
    plan: list[tuple[int, Path, bool]] = []
    missing: list[tuple[int, LoadResult]] = []  # also jiuwenswarm homes, read as a whole
    seen: set[str] = set()
    groups = 0
    for group, raw in enumerate(paths):
        groups = group + 1
        expanded = expand_source(raw)
        if not expanded:
            missing.append((group, LoadError(os.fspath(raw), "no folder matches this template")))
        for target in expanded:
            swarm = swarm_results(target, paths, counters)
            if swarm is not None:
                missing.extend((group, result) for result in swarm)  # type: ignore[misc]
                continue
            files, problems = _target_files(target, warm)
            missing.extend((group, problem) for problem in problems)
            for file, explicit, key in files:
                if key not in seen:
                    seen.add(key)
                    plan.append((group, file, explicit))
    options = _Options(counters, skipped, max_file_bytes, progress, contexts, on_demand)
    yield from _Streamer(plan, missing, groups, options).run()


def _target_files(
    target: Path, on_many: Callable[[], None] | None = None
) -> tuple[list[tuple[Path, bool, str]], list[LoadError]]:
    """(file, explicit, identity) for each regular file a source path stands for, and a
    LoadError for each path that is missing, no regular file or a folder not listable;
    `on_many()` as soon as a folder shows `POOL_MIN_FILES` files."""
    if target.is_dir():
        many = None if on_many is None else (POOL_MIN_FILES, on_many)
        found, unlisted = scan_files(target, FOLDER_SUFFIXES, many)
        errors = [LoadError(str(folder), why) for folder, why in unlisted]
        base = folder_base(target)
        files: list[tuple[Path, bool, str]] = []
        for file, plain in found:
            # a plainly regular file (`scan_files`) has no problem to look for
            problem = None if plain else file_problem(file)
            if problem is not None:
                errors.append(LoadError(str(file), problem))
            else:
                files.append((file, False, _folder_identity(file, base, plain)))
        return files, errors
    if not os.path.lexists(target):
        return [], [LoadError(str(target), "no such file or folder")]
    problem = file_problem(target)
    if problem is not None:
        return [], [LoadError(str(target), problem)]
    return [(target, True, str(_identity(target)))], []


_identity = path_identity
_folder_identity = folder_identity


def load_file(path: Path, counters: Mapping[str, TokenCounter] | None = None) -> list[LoadResult]:
    """The artifacts of one file on its own (no cross-file linking), or its LoadError."""
    return list(load_paths([path], counters=counters))


@dataclass(frozen=True, slots=True)
class _Options:
    """The caller's choices for one load (see `load_paths`)."""

    counters: Mapping[str, TokenCounter] | None
    skipped: list[Skipped] | None
    max_file_bytes: int
    progress: Callable[[int, int], None] | None
    contexts: bool
    on_demand: bool


class _Streamer:
    """Reads logs and other files, links them with dump headers, then yields group by group."""

    def __init__(
        self,
        plan: list[tuple[int, Path, bool]],
        missing: list[tuple[int, LoadResult]],
        groups: int,
        options: _Options,
    ) -> None:
        self.plan = plan
        self.contexts = options.contexts
        #: Dumps made whole on demand (`_whole`); every file is then read header-level.
        self.on_demand = options.on_demand and options.contexts
        self.header_read = self.on_demand or not options.contexts
        self._after_counts: dict[str, int | None] = {}
        #: (records seen, their runs) grouped while helpers read (`_read_headers`); -1: none.
        self._early_runs: tuple[int, list[EvaluationRun]] = (-1, [])
        #: Those runs that no dump can link to, settled, and their debug artifacts, by position.
        self._early_settled: dict[int, EvaluationRun] = {}
        self._early_debug: dict[int, Artifact] = {}
        self.missing = missing
        self.groups = groups
        self.counters = options.counters
        self.skipped = options.skipped
        self.max_file_bytes = options.max_file_bytes
        self.progress = options.progress
        self.done = 0
        self._made: dict[str, TokenCounter] | None = None
        self.loads: dict[Path, FileLoad] = {}
        self.heads: dict[Path, DumpRef] = {}
        self._kept_ids: dict[str, frozenset[str]] = {}
        self._ref_paths: dict[str, Path] = {}
        self._timeline_makers: dict[str | None, Callable[[], list[dict[str, Any]]]] = {}
        #: Each distinct tool list of the load's dumps parsed once (and so counted once).
        self._tool_lists = ToolLists()

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
        here. Loads are kept, and their skips and message counts taken, in plan order
        (whichever process read them first).
        """
        jobs = [(file, group, explicit, self.max_file_bytes) for group, file, explicit in self.plan]
        shared = [index for index, job in enumerate(jobs) if DUMP_NAME_RE.match(job[0].name)]
        helpers = min(os.cpu_count() or 1, 4) - 1
        method = helper_start_method()  # forked only when no other thread runs
        if not (helpers > 0 and len(shared) >= POOL_MIN_FILES and method is not None):
            shared = []
        found: list[FileLoad | None] = [None] * len(jobs)
        with ChunkSharing([jobs[index] for index in shared], helpers, method or "fork") as sharing:
            in_shared = set(shared)
            for index, job in enumerate(jobs):
                if index not in in_shared:
                    found[index] = header_job(job)
                    self._tick()
            if sharing.helpers:
                # while the helpers read dumps: the logs' runs (what `_prepare` would group
                # when no dump file holds records), leaving the helpers more chunks
                read = [load for load in found if load is not None]
                early = [r for load in read for r in load.records]
                self._early_runs = (len(early), group_runs(early))
                self._unlinkable_early(self._early_runs[1], read)
            for shared_index, load in sharing.results():
                found[shared[shared_index]] = load
                self._tick()
        for job, delivered in zip(jobs, found, strict=True):
            load = header_job(job) if delivered is None else delivered
            if delivered is None:
                self._tick()
            self.loads[job[0]] = load
            self._after_counts.update(load.after_counts)
            if self.skipped is not None:
                self.skipped.extend(load.skips)

    def run(self) -> Iterator[LoadResult]:
        """The whole load, streamed (the cyclic garbage collector paused while reading and
        linking: every young collection would walk the records kept so far again). Results
        are made as they are taken, each under a pause of its own (`_dump_result`): making
        them all under one pause first held every header-level result at once (+13 % peak
        memory over 50,000 files) for no measurable gain. The load also takes what it read
        out of the collector's scans while it yields (`freeze_heap`, in a process without
        other threads), and the collector stays on for the results. When the load ends, its file
        loads, timeline makers and early debug artifacts are dropped: artifacts refer back
        to this object (lazy timelines, release facts), so through them all it read was one
        cycle, freed only by a full collection (0.1 s at the end of `stats` over 5,000 dumps;
        0.4 s of 900,000 objects at the exit of one over 50,000, when the early artifacts
        still held it)."""
        with gc_paused():
            self._prepare()
            frozen = freeze_heap()
        try:
            yield from self._results()
        finally:
            self.loads = {}
            self._timeline_makers = {}
            self._early_debug = {}
            if frozen:
                thaw_heap()

    def _prepare(self) -> None:
        """Read logs and other files (every file in a header-level load), peek at dumps, link."""
        if self.header_read:
            self._read_headers()
        for group, file, explicit in () if self.header_read else self.plan:
            kind, head = peek(file)
            if kind == "dump" and not explicit:
                self.heads[file] = dump_header(file, head, whole=len(head) < PEEK_BYTES)
                self._ref_paths[self.heads[file].id] = file
            else:
                self.loads[file] = load_one(
                    file, group, explicit, self.max_file_bytes, self.skipped
                )
                self._tick()
        parsed = [d for load in self.loads.values() for d in load.dumps]
        for dump in () if self.header_read else parsed:
            self._kept_ids[dump.id] = kept_message_ids(dump)
        self.refs = (
            self._on_demand_refs()
            if self.on_demand
            else [
                *self.heads.values(),
                *(d.ref for d in parsed),
            ]
        )
        records = [r for load in self.loads.values() for r in load.records]
        # a folder scan shows the dumps beside the logs; files given alone may lack theirs
        visible = bool(self.refs) or any(not explicit for _, _, explicit in self.plan)
        early_count, early_runs = self._early_runs
        # as many records as the early grouping saw: the same records, in the same order
        grouped = early_runs if early_count == len(records) else group_runs(records)
        self.runs, self.by_dump = self._linked(grouped, visible)
        calls = [model_call(a) for load in self.loads.values() for a in load.calls]
        self.facts = NeighbourFacts(self.loads, records)
        # header-level artifacts are read for what they recorded: no session timelines
        self.timelines: Mapping[str | None, list[dict[str, Any]]] = (
            LazyTimelines(self.runs, self.refs, calls, each=self.on_demand) if self.contexts else {}
        )
        self._attach_debug_artifacts(grouped)
        # no model call: every run would be walked to link nothing
        self._attach_calls(call_evaluations(self.runs, calls) if calls else {})

    def _results(self) -> Iterator[LoadResult]:
        """Everything, group by group (a folder's newest first)."""
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

    def _attach_calls(self, evaluations: dict[str, list[EvaluationRun]]) -> None:
        """Each model call's artifact, with its evaluations and timeline, after the file's other
        artifacts; snapshots and message lists beside an `llm_request.jsonl` learn of it."""
        for load in self.loads.values():
            if load.artifacts:  # most loads (every dump's) hold none
                load.artifacts = [
                    self.facts.evidence(a, []) if a.kind in ("snapshot", "messages") else a
                    for a in load.artifacts
                ]
            for call in load.calls:
                load.artifacts.append(
                    with_evaluations(
                        call, evaluations.get(call.id, []), self._timeline(call.session_id)
                    )
                )

    def _timeline(self, session: str | None) -> list[dict[str, Any]]:
        return self.timelines.get(None if session is None else safe_name(session), [])

    def _timeline_of(self, session: str | None) -> Callable[[], list[dict[str, Any]]]:
        """`_timeline(session)`, when first read (`debug_artifact`); one function per session."""
        made = self._timeline_makers.get(session)
        if made is None:
            made = self._timeline_makers[session] = lambda: self._timeline(session)
        return made

    def _unlinkable_early(self, runs: list[EvaluationRun], loads: list[FileLoad]) -> None:
        """Settle the `runs` no dump can link to (`may_link`) as `link_runs` settles them in
        a folder, and make their debug artifacts, by position, while helpers read dumps:
        what `_linked` and `_attach_debug_artifacts` take when these are still the runs
        (and, for the artifacts, no snapshot is any run's context). Nothing when a snapshot
        already read may be one, or no folder is loaded (whether dumps were visible is not
        known yet)."""
        visible = any(not explicit for _, _, explicit in self.plan)
        if not visible or snapshots_by_key(loads) or snapshots_by_evaluation(loads, runs):
            return
        positions = [p for p, run in enumerate(runs) if not may_link(run)]
        settled, _ = link_runs([runs[p] for p in positions], [], dumps_loaded=True)
        self._early_settled = dict(zip(positions, settled, strict=True))
        self._early_debug = {
            position: debug_artifact(run, self._timeline_of(run.session_id))
            for position, run in self._early_settled.items()
        }

    def _linked(
        self, grouped: list[EvaluationRun], visible: bool
    ) -> tuple[list[EvaluationRun], dict[str, EvaluationRun]]:
        """`link_runs(grouped, self.refs, visible)`, the runs settled early
        (`_unlinkable_early`) taken as they are and only the others linked: a run no dump
        can link to takes no part in linking, and the others keep their order."""
        early = self._early_settled
        if not early or not visible or grouped is not self._early_runs[1]:
            return link_runs(grouped, self.refs, visible)
        rest = [p for p in range(len(grouped)) if p not in early]
        linked, by_dump = link_runs([grouped[p] for p in rest], self.refs, visible)
        runs = [early.get(p) for p in range(len(grouped))]
        for position, run in zip(rest, linked, strict=True):
            runs[position] = run
        return [run for run in runs if run is not None], by_dump

    def _attach_debug_artifacts(self, grouped: list[EvaluationRun]) -> None:
        """One artifact per run that did not end in a dump, kept with the log it came from.

        Its context is the snapshot naming that evaluation, else the one snapshot naming its
        key when the logs hold one evaluation for it (module docstring); a snapshot linked
        by evaluation is not yielded on its own. `grouped`: the runs before linking (the
        artifacts made early, `_unlinkable_early`, are taken when they are these and no
        snapshot is a context).
        """
        per_file = {str(path): load for path, load in self.loads.items()}
        loads = list(self.loads.values())
        exact = snapshots_by_evaluation(loads, self.runs)
        contexts = snapshots_by_key(loads)
        early = self._early_debug
        if exact or contexts or grouped is not self._early_runs[1]:
            early = {}
        runs_per_key = Counter(run.key for run in self.runs)
        absorbed: set[int] = set()
        for position, run in enumerate(self.runs):
            owner = per_file.get(run.source)
            if run.dump_id is not None or owner is None:
                continue
            made = early.get(position)
            if made is not None:
                owner.artifacts.append(made)
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
            artifact = debug_artifact(run, self._timeline_of(run.session_id), match, link=link)
            # without a context there are no release facts to attach (`evidence_for`)
            owner.artifacts.append(
                artifact
                if artifact.snapshot is None
                else self.facts.evidence(artifact, run_objects(run))
            )
        if absorbed:
            for load in loads:
                load.artifacts = [a for a in load.artifacts if id(a) not in absorbed]

    def _file_results(self, load: FileLoad) -> Iterator[LoadResult]:
        """An explicit file's results in file order (dumps made into artifacts here)."""
        yield from load.errors
        for dump in load.dumps:
            yield self._dump_result(dump, load.path)
        yield from load.artifacts

    def _folder_results(self, members: list[tuple[Path, bool]]) -> Iterator[LoadResult]:
        """A folder's results: read errors first, then everything newest first."""
        with gc_paused():
            errors, entries = self._folder_entries(members)
        yield from errors
        for _, _, _, item in entries:
            if isinstance(item, Artifact):
                yield item
            elif isinstance(item, tuple):
                yield self._dump_result(item[0], item[1])
            else:
                yield from self._late_file(item)

    def _folder_entries(
        self, members: list[tuple[Path, bool]]
    ) -> tuple[list[LoadError], list[tuple[float | None, float, int, Any]]]:
        """A folder's read errors, and its results to come (sorted newest first)."""
        errors: list[LoadError] = []
        entries: list[tuple[float | None, float, int, Any]] = []
        for order, (file, _) in enumerate(members):
            load = self.loads.get(file)
            if load is None:
                ref = self.heads[file]
                entries.append((ref.timestamp, file_mtime(file), order, file))
                continue
            errors.extend(load.errors)
            for dump in load.dumps:
                entries.append((dump.timestamp, load.mtime, order, (dump, load.path)))
            for artifact in load.artifacts:
                entries.append((artifact.timestamp, load.mtime, order, artifact))
        entries.sort(key=lambda e: (e[0] is None, -(e[0] if e[0] is not None else e[1]), e[2]))
        return errors, entries

    def _late_file(self, file: Path) -> Iterator[LoadResult]:
        """A dump file read in full at its turn (anything else found in it is yielded too).

        Read and made into results under one pause of the collector (each pause's end
        costs a young collection of what it made)."""
        with gc_paused():
            load = load_one(file, 0, False, self.max_file_bytes, self.skipped)
            self._tick()
            results: list[LoadResult] = list(load.errors)
            results.extend(self._made_result(dump, file) for dump in load.dumps)
        yield from results
        if load.records:
            late_runs, _ = link_runs(group_runs(load.records), [], dumps_loaded=True)
            for run in late_runs:
                yield debug_artifact(run, [run.to_dict()])
        yield from load.artifacts
        yield from load.calls

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
                self._kept_ids[ref.id] = self._kept_of(ref.id)
            ids |= self._kept_ids[ref.id]
        return frozenset(ids)

    def _kept_of(self, ident: str) -> frozenset[str]:
        """The message ids dump `ident` kept, found as a full load finds them: without
        parsing a folder's dump file, from the parsed dump of any other file."""
        path = self._ref_paths.get(ident)
        if path is None:
            return frozenset()
        if not self.on_demand or (not self._explicit[path] and peek(path)[0] == "dump"):
            return kept_ids_from_file(path)
        load = load_one(path, 0, self._explicit[path], self.max_file_bytes)
        found = [kept_message_ids(dump) for dump in load.dumps if dump.id == ident]
        return found[0] if found else frozenset()

    def _on_demand_refs(self) -> list[DumpRef]:
        """Every dump's ref, in a full load's order: first those of the files it would only
        peek at (a folder's files holding one dump), then the others'; and each dump's file."""
        self._explicit = {file: explicit for _, file, explicit in self.plan}
        peeked: list[DumpRef] = []
        others: list[DumpRef] = []
        for path, load in self.loads.items():
            alone = not self._explicit[path] and len(load.dumps) == 1 and not load.records
            for dump in load.dumps:
                ref = dump.ref  # a property: made anew at each read
                (peeked if alone else others).append(ref)
                self._ref_paths[ref.id] = path
        return peeked + others

    def _whole(self, path: Path, ident: str) -> LoadResult:
        """`on_demand`: the full load's result for dump `ident` of `path`, its file read again
        (an error when it no longer holds that dump)."""
        with gc_paused():
            load = load_one(path, 0, self._explicit[path], self.max_file_bytes)
            for dump in load.dumps:
                if dump.id == ident:
                    return self._full_result(dump, path, self.by_dump.get(ident))
        if load.errors:
            return load.errors[0]
        return LoadError(str(path), f"no longer holds the dump {ident} (changed since it was read)")

    def _dump_result(self, dump: DumpFile, path: Path) -> LoadResult:
        """The dump's artifact, linked to its run, or the error that stops its rebuild (a
        header-level one made without a pause: a few objects, each pause's end would cost
        a young collection)."""
        if self.header_read:
            return self._made_result(dump, path)
        with gc_paused():
            return self._made_result(dump, path)

    def _made_result(self, dump: DumpFile, path: Path) -> LoadResult:
        ident = dump.id  # a property that splits the path
        run = self.by_dump.get(ident)
        if self.header_read:
            # a header-level load has no session timelines (`_prepare`)
            whole = functools.partial(self._whole, path, ident) if self.on_demand else None
            return dump_header_artifact(dump, run, None, self._after_counts.get(ident), whole)
        return self._full_result(dump, path, run)

    def _full_result(self, dump: DumpFile, path: Path, run: EvaluationRun | None) -> LoadResult:
        """The dump's artifact in a full load, or the error that stops its rebuild."""
        try:
            evidence = self.facts.evidence_of(
                dump.source,
                dump.session_id or dump.name_session,
                [*dump_objects(dump.raw), *run_objects(run)],
            )
            return dump_artifact(
                dump,
                run,
                self.provide,
                self._timeline(dump.ref.session_id),
                lambda: self._earlier_kept(dump),
                self._tool_lists,
                evidence,
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
