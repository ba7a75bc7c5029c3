"""Write a re-run's artifacts in openJiuwen's schema and file naming.

`{ms}_{Processor}_{safe session}.json` (only when openJiuwen would have applied the result,
as openJiuwen only dumps applied compressions) and `{Processor}.jsonl` (appended: the
threshold_check, span_built and compression_retry records openJiuwen would write).
`{session_id}` / `{context_id}` in the folder name are expanded like openJiuwen's dump dir.
Never writes into a folder the inspector read from (`check_out_dir`).
"""

from __future__ import annotations

import json
import os
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
    expand_dir_template,
)
from inspector.core.rerun import RerunResult, debug_records
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
    target = Path(out_dir).expanduser().resolve()
    for source in sources:
        path = Path(source).expanduser().resolve()
        folder = path if path.is_dir() else path.parent
        if target == folder or folder in target.parents:
            raise OutputDirError(
                f"refusing to write into {target}: it is inside the source folder {folder} "
                "(the inspector never writes where it reads); choose another --out"
            )


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
) -> WrittenFiles:
    """Write the dump (applied results only) and append the debug records; return the paths."""
    identity = result.identity
    folder = Path(
        expand_dir_template(str(out_dir), identity.session_id, identity.context_id)
    ).expanduser()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OutputDirError(f"cannot create {folder}: {error.strerror or error}") from None
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
        _atomic_write(dump_path, json.dumps(document, ensure_ascii=False, indent=2))
    debug_path = folder / debug_file_name(identity.processor_type)
    with debug_path.open("a", encoding="utf-8") as stream:
        for record in debug_records(result, now):
            stream.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
    return WrittenFiles(folder, dump_path, debug_path)
