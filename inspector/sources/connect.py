"""The one place that tells what a source string is and opens it as a live source.

`classify_source` says `gateway` (ws://, wss://), `trajectory` (http://, https://) or
`files` (a folder or log to follow). `build_request` checks a source with its session,
trajectory and subject fields and returns a `ConnectRequest`; `ConnectRequest.open_stream`
starts it: a `GatewayObserver`, a `LiveSession` (gateway plus trajectory), a
`TrajectoryFollower` or `follow_paths`. Used by `inspector watch`, the TUI's connect dialog
and the browser's command-line live sources, so all three accept and refuse the same
strings.
It sits beside `sources.live` and `sources.follow` (importing both) so neither imports the
other. May import `inspector.core` and `inspector.sources`; never Textual or Rich.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from inspector.core.live_events import LiveEvent

if TYPE_CHECKING:
    from inspector.sources.live.trajectory import Polling

SourceKind = Literal["gateway", "trajectory", "files"]
DEFAULT_GATEWAY = "ws://127.0.0.1:19000/ws"


def classify_source(text: str) -> SourceKind:
    """`gateway` for ws:// and wss://, `trajectory` for http(s)://, else `files`."""
    lowered = text.strip().lower()
    if lowered.startswith(("ws://", "wss://")):
        return "gateway"
    if lowered.startswith(("http://", "https://")):
        return "trajectory"
    return "files"


def is_live_url(source: str) -> bool:
    """True for ws://, wss://, http:// and https:// sources (not files)."""
    return classify_source(source) != "files"


class ConnectError(ValueError):
    """A source that cannot be opened as given; `field` names the input at fault."""

    def __init__(self, message: str, field: str = "source") -> None:
        super().__init__(message)
        self.field = field


@dataclass(slots=True)
class LiveStream:
    """One opened source: its label, kind, event iterator, how to stop it, and its follower."""

    label: str
    kind: SourceKind
    events: AsyncIterator[LiveEvent]
    close: Callable[[], Awaitable[None]]
    #: The trajectory follower behind a trajectory stream (gateway hints poke it).
    follower: Any = None


@dataclass(frozen=True, slots=True)
class ConnectRequest:
    """A checked live source and, for a gateway or trajectory, the session to observe."""

    kind: SourceKind
    source: str
    session_id: str | None = None
    #: Gateway only: `auto`, a trajectory base URL, or None for gateway events only.
    trajectory: str | None = "auto"
    subject_id: str = "main"
    #: Trajectory polling: seconds between reads while the window changes, and while idle.
    poll_interval: float = 1.5
    idle_interval: float = 5.0

    def open(self) -> AsyncIterator[LiveEvent]:
        """Start the connection: the merged live events until the iterator is closed."""
        return self.open_stream().events

    def open_stream(self) -> LiveStream:
        """Start the connection; the stream says how to stop it."""
        if self.kind == "gateway":
            return self._open_gateway()
        if self.kind == "trajectory":
            from inspector.sources.live.trajectory import TrajectoryFollower

            follower = TrajectoryFollower(
                self.source,
                self.session_id,
                subject_id=self.subject_id,
                polling=self._polling(),
            )
            return LiveStream(
                follower.client.session_url,
                "trajectory",
                follower.events(),
                follower.close,
                follower=follower,
            )
        from inspector.sources.follow import follow_paths

        return _closing_stream(self.source, follow_paths([self.source]))

    def _polling(self) -> Polling:
        """The follower's polling from this request's intervals."""
        from inspector.sources.live.trajectory import Polling

        return Polling(poll_interval=self.poll_interval, idle_interval=self.idle_interval)

    def _open_gateway(self) -> LiveStream:
        from inspector.sources.live.gateway import GatewayObserver
        from inspector.sources.live.session import LiveSession

        if self.trajectory is None:
            observer = GatewayObserver(self.source, session_id=self.session_id)
            return LiveStream(observer.url, "gateway", observer.events(), observer.close)
        live = LiveSession(
            self.source,
            session_id=self.session_id,
            trajectory_url=self.trajectory,
            subject_id=self.subject_id,
            polling=self._polling(),
        )
        return LiveStream(live.observer.url, "gateway", live.events(), live.close)


def _closing_stream(label: str, iterator: AsyncIterator[LiveEvent]) -> LiveStream:
    """A stream over an async generator, closed by closing the generator."""

    async def close() -> None:
        with contextlib.suppress(Exception):
            await iterator.aclose()  # type: ignore[attr-defined]

    return LiveStream(label, "files", iterator, close)


def build_request(
    source: str, session: str = "", trajectory: str = "auto", subject: str = "main"
) -> ConnectRequest:
    """Check the fields and return the request; raise ConnectError naming what is wrong."""
    from inspector.sources.live.gateway import session_of
    from inspector.sources.live.trajectory import parse_trajectory_url

    source = source.strip()
    session_id = session.strip() or None
    subject_id = subject.strip() or "main"
    if not source:
        raise ConnectError("give a gateway URL, a trajectory URL or a folder")
    kind = classify_source(source)
    if kind == "gateway":
        session_id = session_id or session_of(source)
        if not session_id:
            raise ConnectError("pick or type the session to observe", "session")
        wanted = (trajectory or "").strip()
        if wanted and wanted != "auto" and classify_source(wanted) != "trajectory":
            raise ConnectError(
                "trajectory: 'auto', an http:// URL, or empty for events only", "trajectory"
            )
        return ConnectRequest(kind, source, session_id, wanted or None, subject_id)
    if kind == "trajectory":
        try:
            _, found = parse_trajectory_url(source, session_id)
        except ValueError as error:
            raise ConnectError(str(error)) from None
        if not found:
            raise ConnectError(
                "the trajectory URL names no session; type it in the session field", "session"
            )
        return ConnectRequest(kind, source, found, None, subject_id)
    return ConnectRequest(kind, source, None, None, subject_id)
