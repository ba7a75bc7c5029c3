"""The loop every report command shares: load sources, apply tuning, diagnose, report errors.

What only some runs need is imported where it is first used: the strategies, the token
counters and their cache, and the folder loader (`load_paths`, an attribute of this module
made on first read). A `stats` over streamed debug logs (`sources.debugstream`) needs none
of them, and its whole process is the budget (`tests/test_logstats2_startup.py`).
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from inspector.cli.common import (
    UsageError,
    check_jobs,
    check_overrides,
    print_json_line,
    require_sources,
    tuning_overrides,
)
from inspector.core.artifact import Artifact, LoadError
from inspector.core.errors import ConfigError
from inspector.core.redact import escape_controls, shown_name
from inspector.sources.debugstream import stream_logs, streamable
from inspector.sources.jsonio import STREAM_MIN_BYTES

if TYPE_CHECKING:
    from rich.progress import Progress

    from inspector.core.strategy.base import Decision, Prepared
    from inspector.core.strategy.selection import Selection
    from inspector.core.tokens import TokenCounter
    from inspector.sources.cache import TokenCache


T = TypeVar("T")

#: `ReportRun.spread` works this many loaded artifacts at a time (each window its helpers),
SPREAD_WINDOW = 4096
#: or fewer, once holding them made this process this much bigger (big dumps: 4,096 of
#: them held would be gigabytes; one at a time they never are).
SPREAD_WINDOW_BYTES = 256 * 1024**2


def __getattr__(name: str) -> Any:
    """`load_paths`, imported on first read and kept here (so a test can replace it)."""
    if name == "load_paths":
        from inspector.sources.loader import load_paths

        globals()[name] = load_paths
        return load_paths
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def shown_names(artifact: Artifact) -> Artifact:
    """The artifact with its file name and id escaped for a text report (a name cannot
    write control characters to the terminal; JSON output escapes them itself)."""
    source, ident = shown_name(artifact.source), shown_name(artifact.id)
    if source == artifact.source and ident == artifact.id:
        return artifact
    return dataclasses.replace(artifact, source=source, id=ident)


def _stderr_progress() -> Progress | None:
    """A transient progress bar on stderr, or None when stderr is not a terminal."""
    from rich.console import Console  # imported here: --json runs never need Rich
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    console = Console(stderr=True)
    if not console.is_terminal:
        return None
    return Progress(
        TextColumn("[dim]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=console,
        transient=True,
    )


def _load_paths() -> Callable[..., Iterator[Artifact | LoadError]]:
    """The folder loader, `load_paths`, as this module holds it (imported on first use)."""
    loader: Callable[..., Iterator[Artifact | LoadError]] = globals().get("load_paths") or (
        __getattr__("load_paths")
    )
    return loader


class _CountersOnDemand(Mapping[str, "TokenCounter"]):
    """A run's token counters (`ReportRun.counters`), made when a loader first reads one: a
    header-level load (`stats --no-findings`) never does, and making them (the token
    cache's store, the encoders' registry) cost 30 ms before the first file was read."""

    def __init__(self, report: ReportRun) -> None:
        self._report = report

    def __getitem__(self, mode: str) -> TokenCounter:
        return self._report.counters[mode]

    def __iter__(self) -> Iterator[str]:
        return iter(self._report.counters)

    def __len__(self) -> int:
        return len(self._report.counters)


@dataclass
class Evaluated:
    """One artifact with its strategy, settings, prepared context and decision (None without a
    context)."""

    artifact: Artifact
    selection: Selection | None
    prepared: Prepared | None
    decision: Decision | None


class ReportRun:
    """Iterates the sources of a command, counting unreadable inputs for the exit status."""

    def __init__(self, args: argparse.Namespace, contexts: bool = True) -> None:
        """`contexts=False`: a header-level load (see `load_paths`) for commands that read
        only what artifacts recorded (`stats`)."""
        self.contexts = contexts
        # a command without TUNING flags (`stats`: no `--processor`) has no overrides, and
        # reading none needs no strategy imported
        self.overrides: dict[str, Any] = {}
        if hasattr(args, "processor"):
            self.overrides = tuning_overrides(args)
            check_overrides(self.overrides)
        self.sources = require_sources(getattr(args, "sources", []) or [])
        self.json = bool(getattr(args, "json", False))
        self.errors = 0
        self._cache: TokenCache | None = None
        self._counters: dict[str, TokenCounter] | None = None
        self._notices: set[tuple[str, str]] = set()
        #: Processes that evaluate (`spread`): `--jobs` (checked by the command,
        #: `check_jobs`); not given, the default, bounded by the free memory when spreading.
        self.jobs = check_jobs(args, "")
        self._jobs_given = getattr(args, "jobs", None) is not None
        #: While `spread` works an artifact: the notices said, to say once its answer is taken.
        self._held: list[tuple[tuple[str, str], str]] | None = None
        #: While `spread` loads: the load errors met since the last artifact, to report.
        self._deferred: list[LoadError] | None = None
        #: Debug logs given alone and at least this big are streamed record by record
        #: (`inspector.sources.debugstream`): memory bounded by one open run per key.
        self.stream_min_bytes = STREAM_MIN_BYTES

    @property
    def cache(self) -> TokenCache:
        """Per-message cl100k counts persist here (user cache dir or
        $CONTEXT_INSPECTOR_CACHE_DIR), so reopening a big dump does not tokenize it again;
        best-effort, never fails a run. Made on first use: a streamed `stats` never counts."""
        if self._cache is None:
            from inspector.sources.cache import TokenCache

            self._cache = TokenCache()
        return self._cache

    @property
    def counters(self) -> dict[str, TokenCounter]:
        """The token counters, the cl100k one backed by `cache` (made on first use: a
        streamed `stats` never counts)."""
        if self._counters is None:
            from inspector.sources.cache import cached_counters

            self._counters = cached_counters(self.cache)
        return self._counters

    @property
    def counting_note(self) -> str:
        """Which cl100k encoder counts, or why exact counting is unavailable."""
        from inspector.encoding import load_cl100k

        return load_cl100k().note

    @property
    def streamed(self) -> bool:
        """Whether the sources are big debug logs given alone, read record by record
        (`artifacts`): never held whole, so never `spread`."""
        return streamable(self.sources, self.stream_min_bytes) is not None

    def artifacts(self) -> Iterator[Artifact]:
        """Loaded artifacts; each load error is reported (JSON line and stderr) and counted.

        A Rich progress bar runs on stderr while files load, unless --json or stderr is not a
        terminal. Big debug logs given alone are streamed (`stream_min_bytes`), so each
        evaluation is reported as soon as it is read.
        """
        progress = _stderr_progress() if not self.json else None
        callback = None
        if progress is not None:
            bar = progress
            task = bar.add_task("loading", total=None)
            bar.start()

            def callback(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

        logs = streamable(self.sources, self.stream_min_bytes)
        items = (
            stream_logs(logs)
            if logs is not None
            else _load_paths()(
                self.sources,
                counters=_CountersOnDemand(self),
                progress=callback,
                contexts=self.contexts,
            )
        )
        try:
            for item in items:
                if progress is not None:
                    progress.stop()
                    progress = None
                if isinstance(item, LoadError):
                    self.report_error(item)
                else:
                    yield item if self.json else shown_names(item)
        finally:
            if progress is not None:
                progress.stop()
            if self._cache is not None:
                self._cache.flush()

    def report_error(self, error: LoadError) -> None:
        """One JSON line with `error` (in --json mode) and a plain sentence on stderr (kept
        for later while `spread` loads)."""
        if self._deferred is not None:
            self._deferred.append(error)
            return
        self.errors += 1
        if self.json:
            print_json_line(error.to_dict())
        where = f" ({error.where})" if error.where else ""
        print(
            f"error: {shown_name(error.source)}{where}: {escape_controls(error.error)}",
            file=sys.stderr,
        )

    def select(self, artifact: Artifact) -> Selection | None:
        """The strategy and settings for an artifact (None without a context); a notice on
        stderr, once per strategy, for flags that do not apply to it."""
        if artifact.snapshot is None:
            return None
        from inspector.core.strategy.selection import select

        try:
            selection = select(artifact.snapshot, self.overrides)
        except ConfigError as error:
            raise UsageError(f"{artifact.source}: {error}") from None
        for name in selection.ignored:
            flag = "--" + name.replace("_", "-")
            self._say_once(
                (selection.strategy.key, name),
                f"note: {flag} does not apply to {selection.strategy.processor}",
            )
        return selection

    def _say_once(self, notice: tuple[str, str], text: str) -> None:
        """`text` on stderr the first time `notice` is said (while `spread` works an
        artifact: held, and said once its answer is taken)."""
        if self._held is not None:
            self._held.append((notice, text))
        elif notice not in self._notices:
            self._notices.add(notice)
            print(text, file=sys.stderr)

    def spread(self, work: Callable[[Artifact], T]) -> Iterator[tuple[Artifact, T]]:
        """Each artifact of the sources with `work(artifact)`, in order, on `jobs`
        processes (`processes.spread`; `--jobs` not given: no more than the free memory
        holds, `processes.jobs_memory_holds`), `SPREAD_WINDOW` loaded artifacts at a time
        or as many as make this process `SPREAD_WINDOW_BYTES` bigger (the load makes each
        artifact when it is read: holding them all would take ~2.5x the memory of a
        50,000-file folder's load, and gigabytes for big dumps).

        The load's errors are reported where the load met them, between the answers; what
        `work` prints on stderr (wherever it works) is printed when its answer is taken,
        and each notice of `select` once: both streams read as if each artifact were
        worked here as it loaded. A helper counts with a token cache connection of its
        own, and writes what it counts from there."""
        from inspector.processes import resident_bytes

        window: list[tuple[Artifact, list[LoadError]]] = []
        start = resident_bytes()
        for artifact, errors in self._with_errors():
            if artifact is not None:
                window.append((artifact, errors))
            full = len(window) == SPREAD_WINDOW or (
                start is not None and (resident_bytes() or 0) - start > SPREAD_WINDOW_BYTES
            )
            if window and (artifact is None or full):
                yield from self._spread_window(window, work)
                window = []
                start = resident_bytes()
            if artifact is None:
                for error in errors:
                    self.report_error(error)

    def _with_errors(self) -> Iterator[tuple[Artifact | None, list[LoadError]]]:
        """Each artifact with the load errors met since the one before it (kept, not yet
        reported); last, None with those met after the last artifact."""
        artifacts = self.artifacts()
        while True:
            self._deferred = []
            try:
                artifact = next(artifacts, None)
            except BaseException:  # what was met before it is reported, as it would be
                errors, self._deferred = self._deferred, None
                for error in errors:
                    self.report_error(error)
                raise
            errors, self._deferred = self._deferred, None
            yield artifact, errors
            if artifact is None:
                return

    def _spread_window(
        self, window: list[tuple[Artifact, list[LoadError]]], work: Callable[[Artifact], T]
    ) -> Iterator[tuple[Artifact, T]]:
        """`spread` over one window of artifacts (each with the load errors before it)."""
        from inspector.processes import jobs_memory_holds, spread

        def job(
            pair: tuple[Artifact, list[LoadError]],
        ) -> tuple[T, list[tuple[tuple[str, str], str]], str]:
            held: list[tuple[tuple[str, str], str]] = []
            said, self._held, saved = io.StringIO(), held, sys.stderr
            sys.stderr = said
            try:
                return work(pair[0]), held, said.getvalue()
            finally:
                sys.stderr, self._held = saved, None

        self.cache.flush()  # the helpers' cache starts where this one is
        jobs = self.jobs if self._jobs_given else jobs_memory_holds(self.jobs)
        answers = spread(job, window, jobs, self._after_fork)
        for artifact, errors in window:
            for error in errors:  # before the answer, which may raise (a usage error)
                self.report_error(error)
            answer, held, said = next(answers)
            for notice, text in held:
                self._say_once(notice, text)
            if said:
                sys.stderr.write(said)
            yield artifact, answer

    def _after_fork(self) -> None:
        """A helper's start (`spread`): a token cache connection of its own."""
        if self._cache is not None:
            self._cache.after_fork()

    def evaluate(self, artifact: Artifact) -> Evaluated:
        """Decide an artifact under the recorded settings with the user's overrides."""
        selection = self.select(artifact)
        if selection is None or artifact.snapshot is None:
            return Evaluated(artifact, None, None, None)
        snapshot = artifact.snapshot
        mode = getattr(selection.settings, "token_mode", None)
        counter = self.counters.get(mode) if isinstance(mode, str) else None
        if counter is not None and counter.store is not None:
            from inspector.sources.cache import warm_counter

            # batch the cache lookups and count the misses on both cores when it pays
            warm_counter(counter, [*snapshot.system_messages, *snapshot.messages], self.cache)
        strategy = selection.strategy
        prepared = strategy.prepare(snapshot, self.counters, self.counting_note)
        decision = strategy.decide(prepared, selection.settings, artifact)
        self.cache.flush()
        return Evaluated(artifact, selection, prepared, decision)

    def warn_inexact(self) -> None:
        """Say once on stderr when exact counting is unavailable."""
        if not self.counters["tiktoken_cl100k"].exact:
            print(f"warning: {self.counting_note}", file=sys.stderr)

    @property
    def exit_status(self) -> int:
        """0 when every input was read, 1 otherwise."""
        return 1 if self.errors else 0
