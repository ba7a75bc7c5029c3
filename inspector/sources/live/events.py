"""Typed live events, re-exported where the live sources have always offered them.

The event types and the frame parser are pure values and live in `inspector.core.live_events`
(so `render` can draw them without importing `sources`); import them from there.
Never Textual or Rich.
"""

from __future__ import annotations

from inspector.core.live_events import (
    LEGACY_EVENT_NAMES,
    TERMINAL_STATUSES,
    CompressionState,
    ContextCompressed,
    ContextUsage,
    GatewayEvent,
    LiveEvent,
    LiveEventBase,
    NewArtifact,
    Saved,
    SourceProblem,
    SourceRemoved,
    SourceState,
    TokenPoint,
    TraceUpdated,
    parse_event,
    parse_frame,
)

__all__ = [
    "CompressionState",
    "ContextCompressed",
    "ContextUsage",
    "GatewayEvent",
    "LEGACY_EVENT_NAMES",
    "LiveEvent",
    "LiveEventBase",
    "NewArtifact",
    "Saved",
    "SourceProblem",
    "SourceRemoved",
    "SourceState",
    "TERMINAL_STATUSES",
    "TokenPoint",
    "TraceUpdated",
    "parse_event",
    "parse_frame",
]
