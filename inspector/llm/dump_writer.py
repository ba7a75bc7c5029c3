"""Write a re-run's artifacts in openJiuwen's schema and file naming.

`{ms}_{Processor}_{safe session}.json` (only when openJiuwen would have applied the result,
as openJiuwen only dumps applied compressions) and `{Processor}.jsonl` (appended: the
threshold_check, span_built and compression_retry records openJiuwen would write).
`{session_id}` / `{context_id}` in the folder name are expanded like openJiuwen's dump dir,
through the same safe-name rule as file names and never to `.` or `..` (`safe_component`).
Never writes into a folder the inspector read from (`check_out_dir`, checked again on the
expanded folder against every source); files are created without following symlinks, and
what is written is masked (`core.redact.Masker`) unless the caller passes another masker.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from inspector.core.compaction import (
    Exchange,
    debug_file_name,
    dump_document,
    dump_file_name,
)
from inspector.core.redact import Masker
from inspector.core.rerun import RerunResult, debug_records
from inspector.core.timeline import safe_name
from inspector.llm.errors import LLMError

APP_NAME = "context-inspector"


class OutputDirError(LLMError):
    """The output folder is not allowed (inside a source folder) or cannot be created."""


@dataclass(frozen=True, slots=True)
class WrittenFiles:
    """What a re-run wrote."""

    folder: Path
    dump: Path | None
    debug_log: Path


def default_out_dir() -> Path:
    """The user data folder: `<user data dir>/context-inspector/reruns`."""
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / "reruns"


def check_out_dir(out_dir: Path, sources: Iterable[str | os.PathLike[str]]) -> None:
    """Refuse an output folder that is a source folder or lies inside one."""
    target = Path(os.path.realpath(Path(out_dir).expanduser()))
    for source in sources:
        path = Path(os.path.realpath(Path(source).expanduser()))
        folder = path if path.is_dir() else path.parent
        if target == folder or folder in target.parents:
            raise OutputDirError(
                f"refusing to write into {target}: it is inside the source folder {folder} "
                "(the inspector never writes where it reads); choose another --out"
            )


def safe_component(value: str) -> str:
    """A session or context id as one folder name: openJiuwen's safe form, leading dots
    dropped, so it is never `.`, `..` or hidden."""
    return safe_name(value).lstrip(".") or "unknown"


def expand_out_dir(out_dir: str, session_id: str, context_id: str) -> Path:
    """The output folder with `{session_id}` / `{context_id}` replaced by safe components."""
    return Path(
        out_dir.replace("{session_id}", safe_component(session_id)).replace(
            "{context_id}", safe_component(context_id)
        )
    ).expanduser()


def _append_no_follow(path: Path, lines: Iterable[str]) -> None:
    """Append to `path`, refusing a symlink or anything but a regular file there."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as error:
        raise OutputDirError(
            f"cannot write {path}: {error.strerror or error} (a symlink is never followed)"
        ) from None
    with os.fdopen(fd, "a", encoding="utf-8") as stream:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OutputDirError(f"cannot write {path}: not a regular file")
        for line in lines:
            stream.write(line)


def _atomic_write(path: Path, text: str) -> None:
    handle, temp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def write_rerun(
    result: RerunResult,
    out_dir: str | os.PathLike[str],
    clock: Callable[[], float] = time.time,
    sources: Iterable[str | os.PathLike[str]] = (),
    masker: Masker | None = None,
) -> WrittenFiles:
    """Write the dump (applied results only) and append the debug records; return the paths.

    The expanded folder is checked against `sources` (OutputDirError when inside one).
    """
    mask = masker or Masker()
    identity = result.identity
    folder = expand_out_dir(os.fspath(out_dir), identity.session_id, identity.context_id)
    check_out_dir(folder, sources)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OutputDirError(f"cannot create {folder}: {error.strerror or error}") from None
    check_out_dir(folder, sources)  # a folder made meanwhile may be a link into a source
    now = clock()
    dump_path: Path | None = None
    if result.outcome == "applied" and result.compaction is not None and result.reply is not None:
        exchange = Exchange(result.prompt, result.reply.content, result.usage, result.include_tools)
        document = dump_document(
            identity, result.snapshot, result.tuning.context_max, result.compaction, exchange, now
        )
        dump_path = folder / dump_file_name(
            int(now * 1000), identity.processor_type, identity.session_id
        )
        _atomic_write(dump_path, json.dumps(mask.value(document), ensure_ascii=False, indent=2))
    debug_path = folder / debug_file_name(identity.processor_type)
    _append_no_follow(
        debug_path,
        (
            json.dumps(mask.value(record), ensure_ascii=False, default=str) + "\n"
            for record in debug_records(result, now)
        ),
    )
    return WrittenFiles(folder, dump_path, debug_path)
