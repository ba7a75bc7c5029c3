"""The live-event fold, re-exported where the live sources have always offered it.

`LiveTracker` and `Operation` are pure and live in `inspector.core.live_tracker`; import
them from there. Never Textual or Rich.
"""

from __future__ import annotations

from inspector.core.live_tracker import LiveTracker, Operation

__all__ = ["LiveTracker", "Operation"]
