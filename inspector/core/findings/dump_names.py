"""Dump file names that lose the session: cut or cleaned ids, and collisions in a folder.

openJiuwen names a dump `{ms}_{Processor}_{safe session}.json`, where the session id has
every run of characters outside `[A-Za-z0-9_.-]` replaced by `-`, is trimmed of `-` and cut
to 80 characters (`core.compaction.safe_name`). Two sessions can map to one name, and a name
cannot be traced back to its session. Must not import anything outside the standard
library and `inspector.core`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePath

from inspector.core.artifact import Artifact
from inspector.core.checks import Finding
from inspector.core.compaction import safe_name
from inspector.core.findings.base import FindingInput

_LIMIT = 80


def dump_name_loses_session(inp: FindingInput) -> list[Finding]:
    """The dump's file name carries a cut or changed copy of the session id."""
    artifact = inp.artifact
    if artifact is None or artifact.kind != "dump" or not artifact.session_id:
        return []
    raw = artifact.session_id
    safe = safe_name(raw)
    if safe == raw:
        return []
    name = PurePath(artifact.source).name
    cut = len(_cleaned(raw)) > _LIMIT
    numbers = {"session_id": raw, "file_session": safe, "file": name, "cut": cut}
    if cut:
        return [
            Finding(
                "dump_name_session_cut",
                "warning",
                f"the dump file name {name} carries the session id cut to {_LIMIT} characters "
                f"({len(raw)} in session_id {raw[:40]!r}...): sessions that share the first "
                f"{_LIMIT} cleaned characters get the same name",
                numbers,
                fix="use session ids of at most 80 characters from [A-Za-z0-9_.-]",
            )
        ]
    return [
        Finding(
            "dump_name_session_changed",
            "info",
            f"the dump file name {name} carries {safe!r}, a cleaned copy of session_id {raw!r} "
            "(characters outside [A-Za-z0-9_.-] replaced): the name cannot be traced back to the "
            "session, read session_id inside the file",
            numbers,
            fix="use session ids made of [A-Za-z0-9_.-] only",
        )
    ]


def _cleaned(raw: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", raw).strip("-")


def dump_name_collisions(artifacts: Iterable[Artifact]) -> list[tuple[Artifact, Finding]]:
    """Dumps in one folder whose different session ids map to the same file-name part."""
    groups: dict[tuple[str, str], dict[str, Artifact]] = {}
    for artifact in artifacts:
        if artifact.kind != "dump" or not artifact.session_id:
            continue
        folder = str(PurePath(artifact.source).parent)
        sessions = groups.setdefault((folder, safe_name(artifact.session_id)), {})
        sessions.setdefault(artifact.session_id, artifact)
    out: list[tuple[Artifact, Finding]] = []
    for (folder, safe), sessions in sorted(groups.items()):
        if len(sessions) < 2:
            continue
        ids = sorted(sessions)
        shown = ", ".join(repr(i) for i in ids[:4]) + (" ..." if len(ids) > 4 else "")
        finding = Finding(
            "dump_name_collision",
            "problem",
            f"{len(ids)} sessions ({shown}) write dumps named *_{safe}.json in {folder}: the "
            "file names cannot tell them apart, and dumps written in the same millisecond "
            "overwrite each other",
            {"folder": folder, "file_session": safe, "session_ids": ids},
            fix="give each session an id that stays unique after cleaning and the 80-character cut, "
            "or a dump folder per session ({session_id} in compression_dump_dir)",
        )
        out.extend((sessions[i], finding) for i in ids)
    return out
