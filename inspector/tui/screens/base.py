"""The base of every screen: worker errors go to one handler that shows a notice.

Worker state messages do not bubble, so each screen forwards them here; nothing a worker
raises ever reaches the terminal as a traceback.
"""

from __future__ import annotations

from typing import TypeVar

from textual.screen import Screen
from textual.worker import Worker, WorkerState

ResultType = TypeVar("ResultType")


class InspectorScreen(Screen[ResultType]):
    """A screen whose failed workers become error notices."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Turn a failed worker into a notice naming what failed."""
        if event.state == WorkerState.ERROR:
            error = event.worker.error
            self.app.notify(
                f"{type(error).__name__}: {error}",
                title=f"{event.worker.name or 'background task'} failed",
                severity="error",
            )
