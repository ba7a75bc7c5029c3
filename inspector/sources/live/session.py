"""One watched jiuwenswarm session: the gateway observer and, when the build has one, the
trajectory follower, merged into one event stream (spec/jiuwenswarm-live.md 7.2).

The gateway's `trace.updated` (and `chat.final` / `chat.error` / `chat.processing_status`)
wake the follower, so a new context window arrives right after the agent commits it; with
no gateway hints the follower polls. `discover_trajectory` finds the HTTP API next to a
gateway (same port on the newest builds, else ws port + 2, else 19002); PyPI 0.2.3 has
none, which is reported as state `unavailable`, not as an error; the session's context is
then rebuilt after each turn and compression from its home folder when it is on this
machine, else from its transcript read over the gateway (`history.get`, `swarm_history`)
with the compressions the frames reported folded in.
Imports `inspector.core` and `inspector.sources.live`; never Textual or Rich.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import httpx

from inspector.core.artifact import LoadError
from inspector.core.live_events import (
    CompressionState,
    ContextUsage,
    GatewayEvent,
    LiveEvent,
    NewArtifact,
    SourceProblem,
    SourceState,
    TraceUpdated,
)
from inspector.core.live_tracker import LiveTracker
from inspector.core.tuning import Tuning
from inspector.sources.jiuwenswarm.home import home_for_gateway
from inspector.sources.live.gateway import Backoff, GatewayObserver, session_of
from inspector.sources.live.swarm_context import (
    agent_config_event,
    context_event,
    rebuild_contexts,
    rebuild_from_history,
)
from inspector.sources.live.swarm_history import (
    HISTORY_REQUEST_PREFIX,
    HistoryUnavailable,
    fetch_history,
)
from inspector.sources.live.trajectory import API_PREFIX, Polling, TrajectoryFollower

#: Gateway events after which the trajectory is worth re-reading.
POKE_EVENTS = frozenset(
    {"chat.final", "chat.error", "chat.processing_status", "harness.session_finished"}
)
#: Seconds to wait after a turn ends before reading the agent's files.
FILES_SETTLE = 0.6
#: Seconds a transcript read over the gateway (`history.get`, every page) may take.
HISTORY_TIMEOUT = 15.0
#: Error codes only a trajectory API answers with (so the port is one, even if it refuses us).
TRAJECTORY_CODES = frozenset(
    {
        "TRAJECTORY_DISABLED",
        "UNSUPPORTED_SESSION_MODE",
        "FORBIDDEN_ORIGIN",
        "NOT_FOUND",
        "BAD_REQUEST",
    }
)


def is_poke(event: LiveEvent) -> bool:
    """True for gateway events after which the trajectory may have changed."""
    return isinstance(event, TraceUpdated) or (
        isinstance(event, GatewayEvent) and event.name in POKE_EVENTS
    )


def trajectory_candidates(gateway_url: str) -> list[str]:
    """Where the trajectory API may listen for a gateway URL: same port, port + 2, 19002."""
    parts = urlsplit(gateway_url)
    scheme = "https" if parts.scheme == "wss" else "http"
    host = parts.hostname or "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    port = parts.port or (443 if scheme == "https" else 80)
    ports = list(dict.fromkeys([port, port + 2, 19002]))
    return [f"{scheme}://{host}:{p}" for p in ports]


async def discover_trajectory(
    gateway_url: str,
    session_id: str,
    *,
    timeout: float = 1.0,
    transport: httpx.AsyncBaseTransport | None = None,
) -> str | None:
    """The base URL of the trajectory API next to a gateway, or None (e.g. jiuwenswarm 0.2.3)."""
    async with httpx.AsyncClient(transport=transport, timeout=timeout, trust_env=False) as client:
        for base in trajectory_candidates(gateway_url):
            url = f"{base}{API_PREFIX}/sessions/{session_id}/subjects"
            try:
                response = await client.get(
                    url, params={"after_revision": "0"}, headers={"Origin": base}
                )
                body = response.json()
            except (httpx.HTTPError, ValueError):
                continue
            if not isinstance(body, dict):
                continue
            if response.status_code == 200 and "watermark" in body:
                return base
            if body.get("code") in TRAJECTORY_CODES and isinstance(body.get("error"), str):
                return base  # a trajectory API that refuses or lacks this route still is one
    return None


class LiveSession:
    """Gateway + trajectory for one session; `events()` merges both, `tracker` folds them."""

    def __init__(
        self,
        gateway_url: str,
        *,
        session_id: str | None = None,
        trajectory_url: str | None = "auto",
        subject_id: str = "main",
        tuning: Tuning | None = None,
        backoff: Backoff | None = None,
        polling: Polling | None = None,
    ) -> None:
        self.observer = GatewayObserver(gateway_url, session_id=session_id, backoff=backoff)
        self.session_id = session_of(self.observer.url) or session_id or ""
        self.trajectory_url = trajectory_url
        self.subject_id = subject_id
        self.tuning = tuning
        #: The last rebuilt window, re-priced when the agent reports its context size.
        self._last_window: NewArtifact | None = None
        self.backoff = backoff
        self.polling = polling or Polling()
        self.follower: TrajectoryFollower | None = None
        self.tracker = LiveTracker()
        #: jiuwenswarm's home folder, when on this machine (its config and session files).
        self.home = home_for_gateway(gateway_url, None)
        #: True once no trajectory API was found: the context comes from the home's files,
        #: or without a home from the transcript over the gateway (`history.get`).
        self._from_files = False
        #: The `context.compression_state` payloads of this session (folded into a transcript).
        self._states: list[dict[str, Any]] = []
        self._history_lock = asyncio.Lock()
        self._revision = 0
        self._queue: asyncio.Queue[LiveEvent | None] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []
        self._closing = False

    def __aiter__(self) -> AsyncIterator[LiveEvent]:
        return self.events()

    async def _pump(self, stream: AsyncIterator[LiveEvent], pokes: bool) -> None:
        try:
            async for event in stream:
                if pokes and self.follower is not None and is_poke(event):
                    session = getattr(event, "session_id", None)
                    if session in (None, self.session_id):
                        self.follower.poke()
                await self._queue.put(event)
        finally:
            await self._queue.put(None)

    async def _start_trajectory(self) -> None:
        url = self.trajectory_url
        label = f"trajectory for {self.session_id}"
        if url == "auto":
            url = await discover_trajectory(self.observer.url, self.session_id)
            if url is None:
                self._from_files = bool(self.session_id)
                if self.home is not None:
                    detail = (
                        f"no trajectory API (jiuwenswarm 0.2.3 has none): the context is "
                        f"rebuilt from {self.home}"
                    )
                else:
                    detail = (
                        "no trajectory API found (jiuwenswarm 0.2.3 has none): the context is "
                        "rebuilt from the transcript over the gateway (history.get)"
                    )
                await self._queue.put(SourceState(label, "unavailable", detail))
                if self._from_files:
                    await self._rebuild(None)
                await self._queue.put(None)
                return
        assert url is not None
        self.follower = TrajectoryFollower(
            url,
            self.session_id,
            subject_id=self.subject_id,
            tuning=self.tuning,
            polling=self.polling,
            backoff=self.backoff,
        )
        await self._pump(self.follower.events(), pokes=False)

    async def events(self) -> AsyncIterator[LiveEvent]:
        """Every event of both sources, in arrival order, until `close()`."""
        self._tasks.append(asyncio.create_task(self._pump(self.observer.events(), pokes=True)))
        streams = 1
        if self.trajectory_url:
            self._tasks.append(asyncio.create_task(self._start_trajectory()))
            streams += 1
        if self.home is not None:
            config = agent_config_event(self.home, self.observer.url)
            if config is not None:
                await self._queue.put(config)
        try:
            while streams:
                event = await self._queue.get()
                if event is None:
                    streams -= 1
                    continue
                if _history_echo(event):
                    continue  # a transcript page or our own history.get's error: not live
                if isinstance(event, CompressionState):
                    self._keep_state(event)
                if self._from_files and _changes_context(event):
                    processor = event.processor if isinstance(event, CompressionState) else None
                    self._tasks.append(asyncio.create_task(self._rebuild(processor)))
                self.tracker.apply(event)
                learned = self._learn_context_max(event)
                if isinstance(event, NewArtifact):
                    event = self._priced(event)
                    self._last_window = event
                yield event
                if learned and self._last_window is not None:
                    # a window rebuilt before the agent reported its size: price it again
                    self._last_window = self._priced(self._last_window, change="updated")
                    yield self._last_window
        finally:
            await self.close()

    async def _rebuild(self, processor: str | None) -> None:
        """Read the session's contexts again (the home's files, else the transcript over the
        gateway); offer each as an artifact."""
        self._revision += 1
        revision = self._revision
        await asyncio.sleep(FILES_SETTLE)  # jiuwenswarm writes its transcript from a queue
        label = f"files of {self.session_id}" if self.home else f"history of {self.session_id}"
        try:
            if self.home is not None:
                artifacts = await asyncio.to_thread(
                    rebuild_contexts, self.home, self.session_id, processor, revision
                )
            else:
                records = await fetch_history(
                    self.observer, self.session_id, timeout=HISTORY_TIMEOUT
                )
                found = await asyncio.to_thread(
                    rebuild_from_history,
                    records,
                    (self.observer.url, self.session_id),
                    processor,
                    revision,
                    list(self._states),
                )
                artifacts = [found] if found is not None else []
        except HistoryUnavailable as error:
            await self._queue.put(SourceProblem(LoadError(label, str(error))))
            return
        except Exception as error:  # noqa: BLE001 - a file being written must not end the watch
            await self._queue.put(
                SourceProblem(LoadError(label, f"{type(error).__name__}: {error}"))
            )
            return
        if revision == self._revision:
            for artifact in artifacts:
                await self._queue.put(context_event(artifact, revision))

    def _keep_state(self, event: CompressionState) -> None:
        """Keep a compression state of this session once (a frame seen twice folds once)."""
        if event.session_id not in (None, self.session_id):
            return
        key = (event.operation_id, event.status)
        if all((s.get("operation_id"), s.get("status")) != key for s in self._states):
            self._states.append(dict(event.raw))

    def _learn_context_max(self, event: LiveEvent) -> bool:
        """The agent's window size (from usage or compression frames) prices rebuilt windows.

        True when it changed what this session knew.
        """
        context_max = getattr(event, "context_max", None)
        if (
            not isinstance(event, ContextUsage | CompressionState)
            or not isinstance(context_max, int)
            or context_max <= 0
        ):
            return False
        base = self.tuning or Tuning()
        if base.context_max == context_max and self.tuning is not None:
            return False
        self.tuning = base.with_(context_max=context_max)
        if self.follower is not None:
            self.follower.window.tuning = self.tuning
        return True

    def _priced(self, event: NewArtifact, change: str | None = None) -> NewArtifact:
        """The rebuilt window with the agent's learned context_max (when known)."""
        snapshot = event.artifact.snapshot
        if self.tuning is None or snapshot is None:
            return event if change is None else dataclasses.replace(event, change=change)
        if snapshot.tuning.context_max != self.tuning.context_max:
            tuned = dataclasses.replace(
                snapshot, tuning=snapshot.tuning.with_(context_max=self.tuning.context_max)
            )
            event = dataclasses.replace(
                event, artifact=dataclasses.replace(event.artifact, snapshot=tuned)
            )
        return event if change is None else dataclasses.replace(event, change=change)

    async def close(self) -> None:
        """Stop both sources."""
        if self._closing:
            return
        self._closing = True
        await self.observer.close()
        if self.follower is not None:
            await self.follower.close()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(BaseException):
                await task


def _history_echo(event: LiveEvent) -> bool:
    """A `history.message` page (ours or the web UI's), or the `chat.error` answering our
    own `history.get` (the gateway may send both to every socket of the session)."""
    if not isinstance(event, GatewayEvent):
        return False
    if event.name == "history.message":
        return True
    payload = event.payload if isinstance(event.payload, dict) else {}
    request = payload.get("request_id")
    return (
        event.name == "chat.error"
        and isinstance(request, str)
        and request.startswith(HISTORY_REQUEST_PREFIX)
    )


def _changes_context(event: LiveEvent) -> bool:
    """A turn ended or a compression finished: the agent's files have changed."""
    if isinstance(event, CompressionState):
        return event.is_terminal and event.is_compaction_boundary
    return isinstance(event, GatewayEvent) and event.name in ("chat.final", "chat.error")
