"""jiuwenswarm's files as a source: its home folder, sessions, checkpoint and logs.

`find_home(path)` recognises a home folder (or a path inside it) by content;
`load_swarm(target, counters)` reads it into artifacts: per session, one snapshot per
processor of the agent's chain (the context it really held, its config, its thresholds)
with what the logs and the checkpoint recorded (which processors ran, when each
compressed). `read_config(home)` gives the agent's processors and thresholds;
`home_for_gateway(url, given)` the home of a watched gateway. Reads only, never writes.
Must not import Textual or Rich.
"""

from __future__ import annotations

from collections.abc import Sequence

from inspector.sources.jiuwenswarm.config import SwarmConfig, read_config
from inspector.sources.jiuwenswarm.home import SwarmTarget, find_home, home_for_gateway

__all__ = [
    "SwarmConfig",
    "SwarmTarget",
    "find_home",
    "home_for_gateway",
    "is_swarm_log",
    "load_swarm",
    "read_config",
    "swarm_results",
]


def load_swarm(target: SwarmTarget, counters: object = None) -> list[object]:
    """Every artifact and load error of a home folder (see `session.load_home`)."""
    from inspector.sources.jiuwenswarm.session import load_home

    return list(load_home(target, counters))  # type: ignore[arg-type]


#: Bytes of a file read to tell a jiuwenswarm stdout log.
_LOG_PEEK = 1024 * 1024


def is_swarm_log(path: object) -> bool:
    """True for a text log (not JSON) holding openJiuwen's `context compression state:` lines."""
    from pathlib import Path

    file = Path(str(path))
    if not file.is_file() or file.suffix.lower() in (".json", ".jsonl", ".ndjson"):
        return False
    try:
        with file.open("rb") as handle:
            head = handle.read(_LOG_PEEK)
    except OSError:
        return False
    return b"context compression state:" in head


def swarm_results(
    target: object, paths: Sequence[object], counters: object = None
) -> list[object] | None:
    """What the loader yields for `target` when it is jiuwenswarm's, else None.

    A home folder (or a path inside it: a session folder, its `history.jsonl`) gives its
    sessions' artifacts, with the stdout logs among `paths` joined to them; such a log
    named beside a home gives nothing of its own, alone it gives what it recorded.
    """
    from pathlib import Path

    path = Path(str(target))
    logs = [Path(str(p)) for p in paths if is_swarm_log(p)]
    if path.is_file() and is_swarm_log(path):
        from inspector.sources.jiuwenswarm.session import load_logs

        homes = [p for p in paths if find_home(Path(str(p))) is not None]
        return [] if homes else list(load_logs([path]))
    found = find_home(path)
    if found is None:
        return None
    from inspector.sources.jiuwenswarm.session import load_home

    return list(load_home(found, counters, logs))  # type: ignore[arg-type]
