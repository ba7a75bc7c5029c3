"""Debug logs read record by record, each evaluation yielded as soon as it is complete.

For a debug log given on its own (nothing to link it with: no dump, no snapshot), memory
stays bounded by one open run per (processor, session, context) key instead of every
record of the file: a line is read (at most `MAX_LINE_BYTES`; a longer one is skipped
without being held), parsed, checked as the batch reader checks it
(`debuglog.check_debug_record`), and added to its key's open run; the next
`threshold_check` of that key closes the run, which is then given its outcome
(`core.timeline.settle_alone`: `link_runs` with no dumps) and yielded as the same debug
artifact the loader makes. What differs from `inspector.sources.loader`, by design: runs come in the
order they complete (the loader groups them by key), the error line for unreadable
records comes after the runs (one `LoadError`, as the loader words it), a run's timeline is
the run itself, and records are taken in file order (openJiuwen appends them as they
happen; the loader sorts each key's records by time). `streamable` says when a command may
use this path. A reader of counts alone (`stats`) takes `tally_debug_runs`: the same
records, checks and runs, each closed run's check and retries handed to a counter instead
of made a run. Must not import Textual or Rich.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import IO, Any, Generic, TypeVar

from inspector.core.artifact import Artifact, LoadError
from inspector.core.errors import InspectorError
from inspector.core.timeline import EvaluationRun, RunKey, alone_run
from inspector.sources.debuglog import (
    LLM_REQUEST_FILE,
    check_debug_record,
    debug_artifact,
    is_llm_request,
    looks_like_debug_record,
    near_debug_record,
    plainly_valid,
)
from inspector.sources.jsonio import (
    MAX_DEPTH,
    MAX_LINE_BYTES,
    ReadProblem,
    loads_strict,
    loads_strict_bytes_vouched,
    parsed_too_deep,
    summarize_problems,
)

T = TypeVar("T")

#: Suffixes of the files that may be streamed (JSON Lines).
_SUFFIXES = (".jsonl", ".ndjson")
#: How much of a file's start `streamable` reads to find its first record.
_HEAD_BYTES = 1 << 16


def _first_record(path: Path) -> Any:
    """The first non-empty line of a file, parsed (None if it is not JSON)."""
    try:
        with path.open("rb") as handle:
            for raw in handle.read(_HEAD_BYTES).splitlines():
                if raw.strip():
                    return loads_strict(raw.decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return None
    return None


def streamable(sources: Sequence[str], min_bytes: int) -> list[Path] | None:
    """The sources as paths when every one is a debug log of JSON Lines (first record a
    debug record, not `llm_request.jsonl`) and together they hold at least `min_bytes`;
    else None (the loader reads them, linking what it can)."""
    paths: list[Path] = []
    total = 0
    for source in sources:
        if "{" in source:
            return None
        path = Path(source)
        if not path.is_file() or not path.name.lower().endswith(_SUFFIXES):
            return None
        if path.name == LLM_REQUEST_FILE:
            return None
        first = _first_record(path)
        if not looks_like_debug_record(first) or is_llm_request(first):
            return None
        total += path.stat().st_size
        paths.append(path)
    return paths if paths and total >= min_bytes else None


def _skip_rest(handle: IO[bytes]) -> None:
    """Read past the rest of an over-long line, in blocks (it is never held)."""
    while True:
        rest = handle.readline(1 << 20)
        if not rest or rest.endswith(b"\n"):
            return


#: What a closed run is made into (see `_RunBuilder`): its key and builder state.
_Close = Callable[[RunKey, list[Any]], T]


class _RunBuilder(Generic[T]):
    """The open runs of a log, one per key; a run closes when the next `threshold_check`
    of its key comes (or the file ends) and is handed to `close` (the settled run, or a
    count of it)."""

    def __init__(self, close: _Close[T]) -> None:
        self.close = close
        #: Each open run: [index, first line, check, span_built, retries, other events].
        self.open: dict[RunKey, list[Any]] = {}
        self.counts: dict[RunKey, int] = {}

    def add(self, raw: dict[str, Any], line: int) -> T | None:
        """Take one checked record (line `line`); what `close` made of the run it closes,
        if any. Its key and event are read as `DebugRecord` reads them."""
        processor = raw.get("processor")
        session = raw.get("session_id")
        context = raw.get("context_id")
        # `_text` inline: a parsed value is a str exactly when its type is
        key = (
            processor if type(processor) is str else None,
            session if type(session) is str else None,
            context if type(context) is str else None,
        )
        event = raw.get("event")
        state = self.open.get(key)
        closed = None
        if event == "threshold_check" or state is None:
            if state is not None:
                closed = self.close(key, state)
            index = self.counts[key] = self.counts.get(key, 0) + 1
            state = self.open[key] = [index, line, None, None, [], []]
        if event == "threshold_check":
            state[2] = raw
        elif event == "span_built" and state[3] is None:
            state[3] = raw
        elif event == "compression_retry":
            state[4].append(raw)
        else:
            state[5].append(raw)
        return closed

    def close_all(self) -> Iterator[T]:
        """What `close` makes of the runs still open at the end of the file, in the order
        they started."""
        for key, state in sorted(self.open.items(), key=lambda item: item[1][1] or 0):
            yield self.close(key, state)
        self.open.clear()


def _settled_run(source: str) -> _Close[EvaluationRun]:
    """A closed run made the settled run of a log given alone."""

    def close(key: RunKey, state: list[Any]) -> EvaluationRun:
        index, line, check, span, retries, other = state
        # a log given alone: `link_runs` with no dumps (`settle_alone`), made at once
        return alone_run(key, index, source, line, (check, span, tuple(retries), tuple(other)))

    return close


def run_artifact(run: EvaluationRun) -> Artifact:
    """A streamed run's debug artifact (its timeline, the run itself, made when read)."""
    return debug_artifact(run, lambda: [run.to_dict()])


def _record(raw: bytes) -> dict[str, Any]:
    """One line as a checked debug record (ValueError or InspectorError when it is not)."""
    # `loads_strict(raw.decode("utf-8"))`, how many containers the line opens, and
    # whether the fast path vouches for its numbers' ranges
    document, openings, vouched = loads_strict_bytes_vouched(raw)
    # infinite numbers: refused by `loads_strict`; a line opening at most MAX_DEPTH
    # containers cannot nest deeper (the parser's own count instead of a walk)
    if openings > MAX_DEPTH and parsed_too_deep(document):
        raise ValueError("depth")
    # `check_debug_record`'s first question, asked first: a record it vouches for is a
    # dict with a string event other than `pre_call`, so a debug record and no llm_request
    if plainly_valid(document, vouched):
        return document  # type: ignore[no-any-return]
    if not (looks_like_debug_record(document) or near_debug_record(document)):
        raise ValueError("not a debug-log record")
    # `is_llm_request` wants the event `pre_call`: no other record need be asked
    if document.get("event") == "pre_call" and is_llm_request(document):
        raise ValueError("an llm_request record inside a debug log")
    check_debug_record(document)
    return document  # type: ignore[no-any-return]


def stream_debug_log(
    path: Path, max_line_bytes: int = MAX_LINE_BYTES
) -> Iterator[Artifact | LoadError]:
    """Each evaluation run of a debug log as its artifact, as soon as it completes; then one
    LoadError naming the unreadable records, if any (see the module docstring)."""
    for item in stream_debug_runs(path, max_line_bytes):
        yield item if isinstance(item, LoadError) else run_artifact(item)


def stream_debug_runs(
    path: Path, max_line_bytes: int = MAX_LINE_BYTES
) -> Iterator[EvaluationRun | LoadError]:
    """`stream_debug_log` without the artifacts: each settled run, then the LoadError."""
    return _stream(path, _settled_run(str(path)), max_line_bytes)


#: What `tally_debug_runs` hands on of each run: its processor, check and retries.
RunCount = Callable[[str | None, Mapping[str, Any] | None, Sequence[Mapping[str, Any]]], None]


def tally_debug_runs(
    path: Path, count: RunCount, max_line_bytes: int = MAX_LINE_BYTES
) -> Iterator[LoadError]:
    """`stream_debug_runs` for a reader of counts (`stats`): each run's processor, check
    and retries handed to `count` (`core.stats.DebugRunTally.add_alone`, which settles
    them as `alone_run` does) instead of made a run; yields only the LoadError."""

    def close(key: RunKey, state: list[Any]) -> None:
        count(key[0], state[2], state[4])

    for item in _stream(path, close, max_line_bytes):
        if item is not None:
            yield item


def _stream(path: Path, close: _Close[T], max_line_bytes: int) -> Iterator[T | LoadError]:
    """What `close` makes of each run of a log as it completes, then the LoadError."""
    source = str(path)
    builder = _RunBuilder(close)
    bad: list[ReadProblem] = []
    try:
        with path.open("rb") as handle:
            # each line read, at most `max_line_bytes` of it (a longer one is skipped unheld)
            lines = iter(partial(handle.readline, max_line_bytes + 1), b"")
            for number, raw in enumerate(lines, start=1):
                if len(raw) > max_line_bytes and not raw.endswith(b"\n"):
                    _skip_rest(handle)
                    bad.append(ReadProblem("record is over the line limit", f"line {number}"))
                    continue
                if raw.isspace():  # `not raw.strip()`: a line is never empty
                    continue
                try:
                    record = _record(raw)
                except (InspectorError, ValueError, UnicodeDecodeError, RecursionError) as error:
                    text = getattr(error, "message", None) or str(error) or type(error).__name__
                    bad.append(ReadProblem(str(text), f"line {number}"))
                    continue
                closed = builder.add(record, number)
                if closed is not None:
                    yield closed
    except OSError as error:
        yield LoadError(source, f"cannot read: {error.strerror or error}")
        return
    yield from builder.close_all()
    problem = summarize_problems(bad)
    if problem is not None:
        yield LoadError(source, problem.error, problem.where)


def stream_logs(paths: Sequence[Path]) -> Iterator[Artifact | LoadError]:
    """`stream_debug_log` over several logs, in order."""
    for path in paths:
        yield from stream_debug_log(path)
