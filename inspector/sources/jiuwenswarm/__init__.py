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

from inspector.sources.jiuwenswarm.config import SwarmConfig, read_config
from inspector.sources.jiuwenswarm.home import SwarmTarget, find_home, home_for_gateway

__all__ = [
    "SwarmConfig",
    "SwarmTarget",
    "find_home",
    "home_for_gateway",
    "load_swarm",
    "read_config",
]


def load_swarm(target: SwarmTarget, counters: object = None) -> list[object]:
    """Every artifact and load error of a home folder (see `session.load_home`)."""
    from inspector.sources.jiuwenswarm.session import load_home

    return list(load_home(target, counters))  # type: ignore[arg-type]
