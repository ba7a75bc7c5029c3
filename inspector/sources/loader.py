"""Read files and folders into artifacts; every unreadable file becomes one LoadError.

Detection is by content: a snapshot object (or JSON Lines of them), or a plain message list.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from inspector.core.artifact import Artifact, LoadError, LoadResult
from inspector.core.errors import InspectorError
from inspector.core.messages import parse_messages
from inspector.core.snapshot import ContextSnapshot, looks_like_snapshot, snapshot_from_dict
from inspector.core.tuning import Tuning

#: Files above this size are refused with a clear message instead of exhausting memory.
MAX_FILE_BYTES = 2 * 1024**3


def load_paths(paths: Iterable[str | os.PathLike[str]]) -> Iterator[LoadResult]:
    """Every artifact and load error found under `paths`, in input order."""
    for path in paths:
        target = Path(path)
        if target.is_dir():
            for file in sorted(p for p in target.rglob("*") if p.is_file()):
                yield from load_file(file)
        elif target.exists():
            yield from load_file(target)
        else:
            yield LoadError(str(path), "no such file or folder")


def load_file(path: Path) -> list[LoadResult]:
    """The artifacts of one file, or one LoadError saying why it cannot be read."""
    source = str(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            return [LoadError(source, f"file is {size} bytes, over the {MAX_FILE_BYTES} byte limit")]
        data = path.read_bytes()
    except OSError as error:
        return [LoadError(source, f"cannot read: {error.strerror or error}")]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return [LoadError(source, "not UTF-8 text (binary file?)", f"byte {error.start}")]
    try:
        documents = parse_json_documents(text)
    except _JsonProblem as problem:
        return [LoadError(source, problem.message, problem.where)]
    results: list[LoadResult] = []
    for where, document in documents:
        try:
            results.append(artifact_from_document(document, source, where))
        except InspectorError as error:
            results.append(LoadError(source, str(error), where))
        except RecursionError:
            results.append(LoadError(source, "JSON nested too deeply", where))
    return results


class _JsonProblem(Exception):
    def __init__(self, message: str, where: str | None) -> None:
        super().__init__(message)
        self.message = message
        self.where = where


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json_documents(text: str) -> list[tuple[str | None, Any]]:
    """One JSON document, or JSON Lines (one per non-empty line) with "line N" locations."""
    if not text.strip():
        raise _JsonProblem("empty file", None)
    try:
        return [(None, json.loads(text, parse_constant=_reject_constant))]
    except RecursionError:
        raise _JsonProblem("JSON nested too deeply", None) from None
    except ValueError as whole_error:
        lines = text.splitlines()
        if len(lines) < 2:
            raise _JsonProblem(_json_error_text(whole_error), _json_where(whole_error)) from None
        documents: list[tuple[str | None, Any]] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                documents.append((f"line {number}", json.loads(line, parse_constant=_reject_constant)))
            except RecursionError:
                raise _JsonProblem("JSON nested too deeply", f"line {number}") from None
            except ValueError as error:
                raise _JsonProblem(_json_error_text(error), f"line {number}") from None
        return documents


def _json_error_text(error: ValueError) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"not valid JSON: {error.msg}"
    return f"not valid JSON: {error}"


def _json_where(error: ValueError) -> str | None:
    if isinstance(error, json.JSONDecodeError):
        return f"line {error.lineno} column {error.colno} (byte {error.pos})"
    return None


def artifact_from_document(document: Any, source: str, where: str | None) -> Artifact:
    """Detect what one JSON document is and turn it into an artifact."""
    label = f"{source}:{where}" if where else source
    if looks_like_snapshot(document):
        snapshot = snapshot_from_dict(document, default_id=label)
        return Artifact(source=source, id=snapshot.id, kind="snapshot", snapshot=snapshot)
    messages_raw: Any = None
    if isinstance(document, list):
        messages_raw = document
    elif isinstance(document, dict) and isinstance(document.get("messages"), list):
        messages_raw = document["messages"]
    if messages_raw is not None:
        messages = parse_messages(messages_raw)
        leading = next((i for i, m in enumerate(messages) if m.role != "system"), len(messages))
        system, rest = messages[:leading], messages[leading:]
        snapshot = ContextSnapshot(
            id=label, system_messages=system, messages=rest, tools=(), tuning=Tuning()
        )
        return Artifact(source=source, id=label, kind="messages", snapshot=snapshot)
    raise InspectorError("not a format the inspector knows (snapshot, dump, debug log or message list)")
