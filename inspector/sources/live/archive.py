"""Offline trajectory archives: rebuild the context windows a jiuwenswarm export holds.

Reads what `GET …/archive` downloads (spec/jiuwenswarm-live.md 5.4 g and 5.5): version 3,
a zip with one `trajectory.jsonl` entry (or that JSON Lines text itself): a header, then
`blob` / `sequence` / `checkpoint` lines, `record` lines in commit order (stored OTLP text
in `raw_json` or `raw_json_base64`), `usage` lines and an `end` line; and the older single
JSON object (`archive_version` 1 or 2, `records` with `otlp` or `raw_json_base64`). Each
execution subject's latest window becomes one Artifact, exactly as the live client builds it.
Lenient: unknown line types are skipped; a broken line is reported, the rest still used.
Imports the standard library, `inspector.core` and `inspector.sources.live.window`.
"""

from __future__ import annotations

import base64
import io
import json
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.core.artifact import Artifact, LoadError
from inspector.core.tuning import Tuning
from inspector.sources.live.window import WindowRebuilder, window_artifact

ARCHIVE_FORMAT = "openjiuwen.trajectory.archive"
ARCHIVE_ENTRY = "trajectory.jsonl"


class ArchiveError(Exception):
    """The bytes are not a trajectory archive this reader understands."""


def looks_like_archive(data: bytes) -> bool:
    """True for a zip, or JSON text whose first object names the archive format."""
    if data[:4] == b"PK\x03\x04":
        return True
    head = data[:4096].decode("utf-8", errors="replace")
    return ARCHIVE_FORMAT in head


def _archive_text(data: bytes) -> str:
    if data[:4] == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                names = archive.namelist()
                entry = (
                    ARCHIVE_ENTRY
                    if ARCHIVE_ENTRY in names
                    else next((n for n in names if n.endswith(".jsonl")), None)
                )
                if entry is None:
                    raise ArchiveError(f"zip has no {ARCHIVE_ENTRY} entry")
                return archive.read(entry).decode("utf-8")
        except zipfile.BadZipFile as error:
            raise ArchiveError(f"not a readable zip: {error}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ArchiveError(f"not UTF-8 text at byte {error.start}") from None


def _record_from_line(line: Mapping[str, Any]) -> dict[str, Any]:
    """A records-page record from an archive record line (stored bytes parsed to OTLP)."""
    text = line.get("raw_json")
    if not isinstance(text, str) and isinstance(line.get("raw_json_base64"), str):
        try:
            text = base64.b64decode(line["raw_json_base64"]).decode("utf-8", errors="replace")
        except ValueError:
            text = None
    otlp = line.get("otlp") if isinstance(line.get("otlp"), Mapping) else None
    if otlp is None and isinstance(text, str):
        try:
            parsed = json.loads(text)
            otlp = parsed if isinstance(parsed, Mapping) else None
        except ValueError:
            otlp = None
    try:
        change_seq = int(str(line.get("change_seq")))
    except ValueError:
        change_seq = 0
    return {
        **{k: v for k, v in line.items() if k not in ("raw_json", "raw_json_base64")},
        "otlp": otlp,
        "change_seq": change_seq,
    }


class _Chains:
    """Sequence nodes (`{hash, prev, blob, depth}`) resolved into blob lists on demand."""

    def __init__(self) -> None:
        self.nodes: dict[str, tuple[str | None, str, int]] = {}

    def add(self, line: Mapping[str, Any]) -> None:
        prev = line.get("prev")
        self.nodes[str(line.get("hash"))] = (
            None if prev is None else str(prev),
            str(line.get("blob")),
            int(line.get("depth") or 0),
        )

    def resolve(self, head: str) -> list[str] | None:
        first = self.nodes.get(head)
        if first is None:
            return None
        blobs: list[str] = []
        node: tuple[str | None, str, int] | None = first
        while node is not None and len(blobs) < first[2]:
            blobs.append(node[1])
            node = self.nodes.get(node[0]) if node[0] is not None else None
        return blobs[::-1]


def _checkpoint_heads(checkpoint: Mapping[str, Any]) -> Iterator[str]:
    v2 = (checkpoint.get("state") or {}).get("v2") or {}
    if isinstance(v2, Mapping):
        for subject in v2.values():
            ref = (
                ((subject or {}).get("window") or {}).get("messages")
                if isinstance(subject, Mapping)
                else None
            )
            if isinstance(ref, Mapping) and isinstance(ref.get("hash"), str):
                yield ref["hash"]


@dataclass(slots=True)
class _Parsed:
    """What an archive holds, gathered from either of its two shapes."""

    header: Mapping[str, Any] = field(default_factory=dict)
    blobs: dict[str, str] = field(default_factory=dict)
    flat_sequences: dict[str, list[str]] = field(default_factory=dict)
    chains: _Chains = field(default_factory=_Chains)
    checkpoints: list[Mapping[str, Any]] = field(default_factory=list)
    records: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    problems: list[LoadError] = field(default_factory=list)

    def add_record(self, line: Mapping[str, Any]) -> None:
        self.records.setdefault(str(line.get("subject_id") or ""), []).append(
            _record_from_line(line)
        )

    def sequences(self) -> dict[str, list[str]]:
        """Flat sequences, plus every chained sequence resolved from its head."""
        out = dict(self.flat_sequences)
        for head in [*self.chains.nodes]:
            resolved = self.chains.resolve(head)
            if resolved is not None:
                out.setdefault(head, resolved)
        return out


def _parse_single(single: Mapping[str, Any]) -> _Parsed:
    """The one-object export: header fields, blobs, flat sequences and records together."""
    parsed = _Parsed(header=single)
    blobs = single.get("blobs") or {}
    parsed.blobs.update({str(k): v for k, v in blobs.items() if isinstance(v, str)})
    sequences = single.get("sequences") or {}
    parsed.flat_sequences.update(
        {str(k): list(v) for k, v in sequences.items() if isinstance(v, list)}
    )
    for raw in single["records"]:
        if isinstance(raw, Mapping):
            parsed.add_record(raw)
    return parsed


def _parse_lines(text: str, source: str) -> _Parsed:
    """The JSON Lines archive: one typed line each (header, blob, sequence, checkpoint, record)."""
    parsed = _Parsed()
    for number, line_text in enumerate(text.splitlines(), start=1):
        if not line_text.strip():
            continue
        try:
            line = json.loads(line_text)
        except ValueError:
            parsed.problems.append(LoadError(source, "archive line is not JSON", f"line {number}"))
            continue
        if not isinstance(line, Mapping):
            continue
        kind = line.get("type")
        if kind == "header":
            parsed.header = line
        elif kind == "blob" and isinstance(line.get("text"), str):
            parsed.blobs[str(line.get("hash"))] = line["text"]
        elif kind == "sequence":
            try:
                parsed.chains.add(line)
            except (TypeError, ValueError):
                parsed.problems.append(LoadError(source, "invalid sequence line", f"line {number}"))
        elif kind == "checkpoint":
            parsed.checkpoints.append(line)
        elif kind == "record":
            parsed.add_record(line)
    return parsed


def _parse(text: str, source: str) -> _Parsed:
    """Either shape of archive; ArchiveError without an archive header."""
    stripped = text.lstrip()
    single: Any = None
    if stripped.startswith("{") and "\n{" not in stripped.strip():
        try:
            single = json.loads(text)
        except ValueError:
            single = None
    if isinstance(single, Mapping) and isinstance(single.get("records"), list):
        parsed = _parse_single(single)
    else:
        parsed = _parse_lines(text, source)
    if parsed.header.get("format") != ARCHIVE_FORMAT:
        raise ArchiveError("no openjiuwen.trajectory.archive header")
    return parsed


def read_archive(
    data: bytes, source: str = "archive", tuning: Tuning | None = None
) -> list[Artifact | LoadError]:
    """The latest window of every subject in an archive (one Artifact each), plus problems."""
    parsed = _parse(_archive_text(data), source)
    header = parsed.header
    session_id = str(header.get("session_id") or "archive")
    sequences = parsed.sequences()
    checkpoints = parsed.checkpoints
    subjects = list(
        dict.fromkeys([*(str(c.get("subject_id")) for c in checkpoints), *parsed.records])
    )
    out: list[Artifact | LoadError] = list(parsed.problems)
    for subject in subjects:
        rebuilder = WindowRebuilder(subject or "main")
        content = {"sequences": sequences, "blobs": parsed.blobs}
        rebuilder.seed_checkpoint(
            {
                **content,
                "checkpoints": [c for c in checkpoints if str(c.get("subject_id")) == subject],
            }
        )
        rebuilder.merge_content(content)
        rebuilder.add_records({"records": parsed.records.get(subject, [])})
        state = rebuilder.rebuild()
        if state.window_id is None and not state.commits:
            continue  # a subject with no context windows (tool-only, or pre-v2 records)
        out.append(
            window_artifact(
                state,
                source=source,
                session_id=session_id,
                revision=_int(header.get("revision")),
                store_epoch=header.get("store_epoch"),
                api_generation=f"archive v{header.get('archive_version')}",
                tuning=tuning,
            )
        )
    return out


def _int(value: Any) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


def load_archive(path: str | Path, tuning: Tuning | None = None) -> list[Artifact | LoadError]:
    """Read an archive file; an unreadable one becomes one LoadError."""
    source = str(path)
    try:
        data = Path(path).read_bytes()
        return read_archive(data, source, tuning)
    except OSError as error:
        return [LoadError(source, f"cannot read: {error.strerror or error}")]
    except ArchiveError as error:
        return [LoadError(source, str(error))]
