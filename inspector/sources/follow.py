"""Follow growing folders and logs: new dumps and appended records appear as events.

A scan stats every file under the followed paths (folders are scanned as the loader scans
them: `*.json`, `*.jsonl`, `*.ndjson`, hidden entries skipped, so `x.json.tmp` is ignored
until renamed). A new or changed file (size, mtime or inode differ) is read again through
`inspector.sources.loader` and the artifacts are diffed against those reported before, by
(source, id). Where the OS can tell (the `watchfiles` package: inotify, FSEvents,
ReadDirectoryChangesW), a `ChangeWatcher` thread waits for its notifications and `poll()`
scans only after one arrived, so an idle follower costs nothing; without `watchfiles`, for
`{session_id}` templates, for roots that do not exist yet, or if the watcher fails, every
`poll()` scans (polling).

Files inside openJiuwen's `{session}_context/compression_logs/` and `…/context_debug/` (and
files lying beside those two folders, such as `inspector_snapshots.jsonl`) are
reloaded together with their session folder, so a dump that appears live is linked with its
debug records and the session timeline is whole (a session folder over `group_limit_bytes`
falls back to reading only the changed file). A file that does not parse is treated as
still being written: it is retried on every change and reported as a `SourceProblem` only
once it has stopped changing for `settle` seconds. Never writes anything. Imports
`inspector.core` and `inspector.sources` only; never Textual or Rich.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.core.artifact import Artifact, LoadError, LoadResult
from inspector.core.live_events import (
    LiveEvent,
    NewArtifact,
    SourceProblem,
    SourceRemoved,
    SourceState,
)

#: File names that are work in progress, never artifacts.
IGNORED_SUFFIXES = (".tmp", ".part", ".swp", ".crdownload", "~")
#: How the loader starts the error for JSON of no known format (skipped quietly in folders).
NOT_AN_ARTIFACT = "not an inspector artifact"
#: openJiuwen's per-session artifact folders, reloaded with their session folder.
SESSION_SUBFOLDERS = frozenset({"compression_logs", "context_debug"})

FollowEvent = LiveEvent

#: Reads one group: (paths to load, whether they were named explicitly) -> results.
GroupLoader = Callable[[list[Path], bool], list[LoadResult]]


class _SourceLoader:
    """`loader.load_paths` with token counters made once (dumps need them to infer the mode)."""

    def __init__(self) -> None:
        self._counters: Mapping[str, Any] | None = None

    def __call__(self, paths: list[Path], explicit: bool) -> list[LoadResult]:
        from inspector.sources.loader import load_paths

        if self._counters is None:
            from inspector.encoding import make_counters

            self._counters = make_counters()
        return list(load_paths(paths, counters=self._counters))


@dataclass(slots=True)
class _Group:
    """Files read together (one file, or an openJiuwen session folder) and what they yielded."""

    root: Path
    is_folder: bool
    explicit: bool
    changed_at: float
    artifacts: dict[tuple[str, str], Artifact] | None = None
    pending_errors: list[LoadError] = field(default_factory=list)
    reported: bool = False
    #: Existed when following started and was not read then (its artifacts are "updated").
    primed: bool = False


def ignored(name: str) -> bool:
    """True for dotfiles and temporary names a writer renames later."""
    return name.startswith(".") or name.endswith(IGNORED_SUFFIXES)


class ChangeWatcher:
    """OS change notifications for some folders and files, in a daemon thread.

    `changed()` says (and forgets) whether anything changed since the last call; `alive`
    is False once the watcher stopped or failed (the follower then polls). Needs
    `watchfiles`; `start()` returns None without it.
    """

    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths
        self._stop = threading.Event()
        self._changed = threading.Event()
        self._ready = threading.Event()
        self.alive = False
        self.error: str | None = None
        self._thread: threading.Thread | None = None

    @classmethod
    def start(cls, paths: list[Path]) -> ChangeWatcher | None:
        """A running watcher of `paths` (all must exist), or None where it cannot run."""
        try:
            import watchfiles  # noqa: F401 - an optional speed-up, polling otherwise
        except ImportError:
            return None
        if not paths or not all(p.exists() for p in paths):
            return None
        watcher = cls(paths)
        watcher.alive = True
        watcher._thread = threading.Thread(
            target=watcher._run, name="inspector-follow-watch", daemon=True
        )
        watcher._thread.start()
        return watcher

    def _run(self) -> None:
        import watchfiles

        try:
            for _ in watchfiles.watch(
                *self.paths,
                watch_filter=None,
                debounce=50,
                step=50,
                rust_timeout=1000,
                yield_on_timeout=True,
                stop_event=self._stop,
                raise_interrupt=False,
            ):
                self._ready.set()
                if _:
                    self._changed.set()
                if self._stop.is_set():
                    break
        except Exception as error:  # noqa: BLE001 - any watcher failure means: poll instead
            self.error = f"{type(error).__name__}: {error}"
        finally:
            self.alive = False
            self._changed.set()  # one last scan, then polling
            self._ready.set()

    @property
    def ready(self) -> bool:
        """True once the watch is in place (its first wake-up came): before, scan anyway."""
        return self._ready.is_set()

    def changed(self) -> bool:
        """Whether a notification arrived since the last call (or the watcher stopped)."""
        if self._changed.is_set():
            self._changed.clear()
            return True
        return False

    def stop(self) -> None:
        """Stop the thread (it notices within a step)."""
        self._stop.set()


class FileFollower:
    """Synchronous core of the follower: `poll()` returns what changed since the last call."""

    def __init__(
        self,
        paths: Iterable[str | os.PathLike[str]],
        *,
        settle: float = 2.0,
        include_existing: bool = True,
        group_limit_bytes: int = 32 * 1024 * 1024,
        clock: Callable[[], float] = time.monotonic,
        loader: GroupLoader | None = None,
        notify: bool = False,
    ) -> None:
        """`notify`: wait for OS notifications between scans where possible (see the module
        docstring), so a poll of an unchanged folder costs nothing but a notification may
        reach a poll a few milliseconds after the change; False (the default, exact for
        callers that write and poll at once) always scans."""
        self.roots = [Path(p) for p in paths]
        self.settle = settle
        self.include_existing = include_existing
        self.group_limit_bytes = group_limit_bytes
        self.clock = clock
        self.loader = loader or _SourceLoader()
        self._signatures: dict[Path, tuple[int, int, int]] = {}
        self._file_group: dict[Path, Path] = {}
        #: Path text -> the one Path object this follower knows that file (or group) by.
        self._interned: dict[str, Path] = {}
        self._groups: dict[Path, _Group] = {}
        self._first = True
        self.notify = notify
        self._watcher: ChangeWatcher | None = None

    @property
    def watching(self) -> bool:
        """True while OS notifications decide when to scan (False: every poll scans)."""
        return self._watcher is not None and self._watcher.alive

    def _start_watcher(self) -> None:
        """Watch the roots for notifications (after the first scan); polling if impossible."""
        if not self.notify or any("{" in str(root) for root in self.roots):
            return
        self._watcher = ChangeWatcher.start(list(self.roots))
        if self._watcher is not None:
            weakref.finalize(self, self._watcher.stop)

    def close(self) -> None:
        """Stop the notification thread, if any (polling from now on)."""
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None

    def _quiet(self) -> bool:
        """Nothing can have changed: the watcher saw nothing and no problem waits to settle."""
        watcher = self._watcher
        if watcher is None or not watcher.alive or not watcher.ready or watcher.changed():
            return False
        return not any(g.pending_errors and not g.reported for g in self._groups.values())

    def files(self) -> Iterator[tuple[Path, Path]]:
        """Every followed file that exists now, in a stable order, with the root it came from."""
        from inspector.sources.loader import expand_source, scan_folder

        for template in self.roots:
            # `{session_id}` / `{context_id}` templates are expanded on every scan, so the
            # folders of sessions that start while following are picked up too
            for root in expand_source(template):
                if root.is_dir():
                    for path in scan_folder(root):
                        if not ignored(path.name):
                            yield path, root
                elif root.is_file():
                    yield root, root

    @property
    def file_count(self) -> int:
        """How many files are being followed."""
        return len(self._signatures)

    @property
    def files_text(self) -> str:
        """What the live indicator says is followed: "1 file", "12 files"."""
        count = self.file_count
        return f"{count} file" if count == 1 else f"{count} files"

    def _group_of(self, path: Path, root: Path) -> tuple[Path, bool]:
        """The group a file reloads with: its session folder, or the file alone.

        A file lying beside a session's `compression_logs/` or `context_debug/` (such as the
        `inspector_snapshots.jsonl` of `sample_dumps/`, contexts linked to the session's
        evaluations) reloads with that session folder too.
        """
        if path == root:
            return path, False
        session = path.parent.parent
        if path.parent.name in SESSION_SUBFOLDERS and (session == root or root in session.parents):
            return session, True
        beside = path.parent
        if (beside == root or root in beside.parents) and any(
            (beside / sub).is_dir() for sub in SESSION_SUBFOLDERS
        ):
            return beside, True
        return path, False

    def poll(self) -> list[LiveEvent]:
        """One scan: artifacts added or updated, files removed, problems that settled.

        With notifications, a poll when nothing was notified returns at once."""
        if not self._first and self._quiet():
            return []
        if self._first and self.notify and self._watcher is None:
            self._start_watcher()  # before the scan: a change during it is not missed
        now = self.clock()
        events: list[LiveEvent] = []
        seen: set[Path] = set()
        dirty: set[Path] = set()
        first = self._first
        self._first = False
        # a file's group depends on its folder and root only (`_group_of`): asked once per
        # folder, not per file; and each file is known by one Path object from scan to scan
        # (`_interned`), so the look-ups below compare it by identity, not part by part: a
        # 50,000-file folder's first scan spent most of its time in those two
        folder_groups: dict[tuple[str, Path], Path | None] = {}
        interned = self._interned
        for found, root in self.files():
            text = str(found)
            path = interned.setdefault(text, found)
            seen.add(path)
            try:
                stat = os.stat(text)
            except OSError:
                continue  # vanished between listing and stat
            signature = (stat.st_size, stat.st_mtime_ns, stat.st_ino)
            alone = found is root  # a file source (a folder's scan yields what is in it)
            if alone:
                key, is_folder = path, False
            else:
                where = (os.path.dirname(text), root)
                if where not in folder_groups:
                    key, is_folder = self._group_of(path, root)
                    # a session folder for all of this folder's files, or each file alone
                    folder_groups[where] = interned.setdefault(str(key), key) if is_folder else None
                folder = folder_groups[where]
                is_folder = folder is not None
                key = path if folder is None else folder
            self._file_group[path] = key
            group = self._groups.get(key)
            if group is None:
                group = self._groups[key] = _Group(key, is_folder, alone, now)
                if first and not self.include_existing:
                    group.primed = True
                    group.changed_at = now - self.settle
            if self._signatures.get(path) == signature:
                continue
            self._signatures[path] = signature
            if first and not self.include_existing:
                continue
            group.changed_at = now
            dirty.add(key)
        for gone in [p for p in self._signatures if p not in seen]:
            del self._signatures[gone]
            interned.pop(str(gone), None)
            events.append(SourceRemoved(str(gone)))
            key = self._file_group.pop(gone, gone)
            if any(g == key for g in self._file_group.values()):
                dirty.add(key)
            else:
                self._groups.pop(key, None)
        for key in sorted(dirty):
            events.extend(self._reload(self._groups[key]))
        for key, group in self._groups.items():
            if (key in dirty and self.settle > 0) or not group.pending_errors or group.reported:
                continue
            if now - group.changed_at >= self.settle:
                group.reported = True
                events.extend(SourceProblem(error) for error in group.pending_errors)
        return events

    def _group_files(self, group: _Group) -> list[Path]:
        return sorted(p for p, g in self._file_group.items() if g == group.root)

    def _reload(self, group: _Group) -> list[LiveEvent]:
        members = self._group_files(group)
        if (
            group.is_folder
            and sum(self._signatures[p][0] for p in members if p in self._signatures)
            <= self.group_limit_bytes
        ):
            results = self.loader([group.root], False)
        else:
            results = []
            for member in members:
                results.extend(self.loader([member], group.explicit))
        errors = [
            r
            for r in results
            if isinstance(r, LoadError)
            and (group.explicit or not r.error.startswith(NOT_AN_ARTIFACT))
        ]
        fresh = {(r.source, r.id): r for r in results if isinstance(r, Artifact)}
        events: list[LiveEvent] = []
        previous = group.artifacts
        for key, artifact in fresh.items():
            if previous is None:
                events.append(NewArtifact(artifact, "updated" if group.primed else "added"))
            elif key not in previous:
                events.append(NewArtifact(artifact, "added"))
            elif previous[key] != artifact:
                events.append(NewArtifact(artifact, "updated"))
        if previous is not None and not errors:
            events.extend(
                SourceRemoved(source, artifact_id)
                for source, artifact_id in previous
                if (source, artifact_id) not in fresh
            )
        if fresh or not errors:
            # a half-written file keeps what the group showed before it
            group.artifacts = {**(previous or {}), **fresh} if errors else fresh
        group.pending_errors = errors
        group.reported = False
        return events

    def prime(self) -> None:
        """Record the current files without reporting them (start following from now)."""
        saved = self.include_existing
        self.include_existing = False
        self._first = True
        self.poll()
        self.include_existing = saved


async def follow_paths(
    paths: Iterable[str | os.PathLike[str]],
    *,
    interval: float = 0.5,
    settle: float = 2.0,
    include_existing: bool = True,
) -> AsyncIterator[FollowEvent]:
    """Follow files and folders: a `following` state, then every change, until cancelled."""
    follower = FileFollower(paths, settle=settle, include_existing=include_existing, notify=True)
    label = ", ".join(str(p) for p in follower.roots)
    events = await asyncio.to_thread(follower.poll)
    yield SourceState(label, "following", follower.files_text)
    for event in events:
        yield event
    try:
        while True:
            await asyncio.sleep(interval)
            for event in await asyncio.to_thread(follower.poll):
                yield event
    finally:
        follower.close()
