"""Live sources: a jiuwenswarm gateway WebSocket and its trajectory HTTP API.

See spec/jiuwenswarm-live.md. Public names are importable from here and load their module
on first use (so `events` alone does not pull in websockets or httpx):
`GatewayObserver`, `Backoff`, `TrajectoryFollower`, `TrajectoryClient`, `TrajectoryError`,
`load_trajectory_window`, `LiveSession`, `discover_trajectory`, `LiveTracker`, and the event
types of `events` (`inspector.sources.connect` says what a source string is and opens it).
May import `inspector.core`; never Textual or Rich.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    "GatewayObserver": "gateway",
    "Backoff": "gateway",
    "GatewayOptions": "gateway",
    "Polling": "trajectory",
    "TrajectoryFollower": "trajectory",
    "TrajectoryClient": "trajectory",
    "TrajectoryError": "trajectory",
    "TrajectoryWindow": "trajectory",
    "load_trajectory_window": "trajectory",
    "LiveSession": "session",
    "discover_trajectory": "session",
    "LiveTracker": "tracker",
    "Operation": "tracker",
    "WindowRebuilder": "window",
    "LiveEvent": "events",
    "SourceState": "events",
    "CompressionState": "events",
    "ContextUsage": "events",
    "ContextCompressed": "events",
    "TraceUpdated": "events",
    "GatewayEvent": "events",
    "NewArtifact": "events",
    "SourceProblem": "events",
    "SourceRemoved": "events",
    "parse_frame": "events",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
