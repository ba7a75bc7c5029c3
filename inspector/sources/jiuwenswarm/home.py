"""Find jiuwenswarm's home folder (`~/.jiuwenswarm`) from any path inside it, by content.

A home is a folder with `config/config.yaml` holding a `react:` block with
`context_engine_config`, and an `agent/` folder (`agent/sessions/<sid>/history.jsonl`,
`agent/.checkpoint/checkpoint.db`, `agent/.logs/*.log`). `find_home(path)` accepts the
home itself, its `agent/` or `agent/sessions/` folder, one session's folder, or a file
in one (its `history.jsonl`), and says which session was meant. Reads only.
Must not import Textual or Rich.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from inspector.sources.jiuwenswarm.config import looks_like_config

#: Bytes of config.yaml read to recognise it.
_PEEK = 256 * 1024
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


@dataclass(frozen=True, slots=True)
class SwarmTarget:
    """A home folder and, when the path named one, the session meant."""

    home: Path
    session_id: str | None = None

    @property
    def sessions_dir(self) -> Path:
        """`<home>/agent/sessions`."""
        return self.home / "agent" / "sessions"

    @property
    def checkpoint(self) -> Path:
        """`<home>/agent/.checkpoint/checkpoint.db`."""
        return self.home / "agent" / ".checkpoint" / "checkpoint.db"

    @property
    def logs_dir(self) -> Path:
        """`<home>/agent/.logs`."""
        return self.home / "agent" / ".logs"

    def session_ids(self) -> list[str]:
        """The sessions to read: the one named, else every folder with a history file."""
        if self.session_id is not None:
            return [self.session_id]
        try:
            entries = sorted(self.sessions_dir.iterdir())
        except OSError:
            return []
        return [
            entry.name
            for entry in entries
            if entry.is_dir()
            and not entry.is_symlink()
            and ((entry / "history.jsonl").is_file() or (entry / "history.json").is_file())
        ]


def is_home(folder: Path) -> bool:
    """True when `folder` is a jiuwenswarm home (its config.yaml says so, and it has agent/)."""
    config = folder / "config" / "config.yaml"
    try:
        if not config.is_file() or not (folder / "agent").is_dir():
            return False
        with config.open("rb") as handle:
            text = handle.read(_PEEK).decode("utf-8", errors="replace")
    except OSError:
        return False
    return looks_like_config(text)


def find_home(path: Path) -> SwarmTarget | None:
    """The home `path` lies in (and the session it names), or None when it is none of it."""
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):
        return None
    start = resolved if resolved.is_dir() else resolved.parent
    if resolved.is_file() and resolved.name not in ("history.jsonl", "history.json"):
        return None
    chain = [start, *start.parents][:5]
    for depth, folder in enumerate(chain):
        if not is_home(folder):
            continue
        relative = start.relative_to(folder).parts
        if relative[:2] == ("agent", "sessions") and len(relative) == 3:
            return SwarmTarget(folder, relative[2])
        if depth == 0 or relative in (("agent",), ("agent", "sessions")):
            return SwarmTarget(folder)
        return None
    return None


def default_home() -> Path:
    """`$JIUWENSWARM_DATA_DIR`, else `~/.jiuwenswarm` (where jiuwenswarm keeps its files)."""
    env = os.environ.get("JIUWENSWARM_DATA_DIR")
    return Path(env) if env else Path.home() / ".jiuwenswarm"


def home_for_gateway(url: str, given: str | None) -> Path | None:
    """The home folder of a watched gateway: the one given, else the default for loopback."""
    if given:
        target = find_home(Path(given))
        return target.home if target is not None else None
    host = urlsplit(url).hostname or ""
    if host not in _LOOPBACK:
        return None
    home = default_home()
    return home if is_home(home) else None
