"""Read-only observer of a jiuwenswarm gateway WebSocket (`ws://127.0.0.1:19000/ws`).

Follows spec/jiuwenswarm-live.md sections 2-4: one socket per watched session, registered by
the `session_id` query parameter, `Origin: http://<host>:<port>` always sent, nothing sent
that could change the agent (only the read-only RPCs `session.list`, and `history.get` on a
socket of its own, `swarm_history`). Missed
events are not replayed by the gateway; after a reconnect the socket registers again by its
URL. Reconnects use the web UI's policy (1, 2, 4, 8, 16 s, then every 2 s) unless the server
closed normally (1000) or refused us (HTTP 401/403, close 1008).

Uses the `websockets` asyncio client. Imports `inspector.core` and `inspector.sources.live`
only; never Textual or Rich.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

from inspector.core.artifact import LoadError
from inspector.core.live_events import (
    GatewayEvent,
    LiveEvent,
    SourceProblem,
    SourceState,
    parse_frame,
)

#: Methods an observer may send: they read, never act. Everything else is refused locally.
READ_ONLY_METHODS = frozenset({"session.list"})
#: Query parameters an observer must never send (credentials and model settings).
FORBIDDEN_QUERY_KEYS = frozenset({"api_key", "api_base", "provider", "model", "token"})
#: Frames above this size are parsed in a worker thread so a UI loop never stalls on them.
THREAD_PARSE_BYTES = 256 * 1024
#: Close codes after which reconnecting would not help.
FATAL_CLOSE_CODES = frozenset({1000, 1008})
#: The close code websockets sends when a received frame is over `max_size`.
TOO_BIG = 1009
#: After a frame over the limit, reconnect no sooner than this (seconds): the same frame
#: may be sent again, and reconnecting at once would only loop.
OVERSIZE_BACKOFF = 30.0


@dataclass(frozen=True, slots=True)
class Backoff:
    """Reconnect delays: `initial * factor**n` (capped) for `tries` attempts, then `steady`."""

    initial: float = 1.0
    factor: float = 2.0
    cap: float = 30.0
    tries: int = 5
    steady: float = 2.0

    def delays(self) -> Iterator[float]:
        """The delay before each reconnect attempt, forever."""
        delay = self.initial
        for _ in range(self.tries):
            yield min(delay, self.cap)
            delay *= self.factor
        while True:
            yield self.steady


@dataclass(frozen=True, slots=True)
class GatewayOptions:
    """How the observer connects: identity, origin, limits, reconnecting, an enterprise token."""

    user_id: str = "inspector"
    #: The Origin header (None: `http://<host>:<port>` of the URL, what the gateway allows).
    origin: str | None = None
    open_timeout: float = 5.0
    ping_interval: float | None = 20.0
    ping_timeout: float | None = 60.0
    max_size: int | None = 64 * 1024 * 1024
    #: False: the first close ends the stream (one-shot calls such as `list_sessions`).
    reconnect: bool = True
    #: Enterprise (AgentOS) JWT, when not in the URL.
    token: str | None = None


class GatewayRefused(Exception):
    """The gateway refused the observer in a way that retrying will not fix."""


def observer_url(url: str, session_id: str | None = None, user_id: str = "inspector") -> str:
    """The URL to connect with: `session_id` and `user_id` added, credentials removed."""
    parts = urlsplit(url)
    if parts.scheme not in ("ws", "wss"):
        raise ValueError(f"not a WebSocket URL: {url}")
    query = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if k not in FORBIDDEN_QUERY_KEYS
    ]
    keys = {k for k, _ in query}
    if session_id and "session_id" not in keys:
        query.append(("session_id", session_id))
    if user_id and "user_id" not in keys:
        query.append(("user_id", user_id))
    path = parts.path or "/ws"
    return urlunsplit((parts.scheme, parts.netloc, path, urlencode(query), ""))


def origin_for(url: str) -> str:
    """`http://host:port` of a ws:// URL (https for wss://), the Origin the gateway allows."""
    parts = urlsplit(url)
    scheme = "https" if parts.scheme == "wss" else "http"
    host = parts.hostname or "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    port = parts.port or (443 if scheme == "https" else 80)
    return f"{scheme}://{host}:{port}"


def session_of(url: str) -> str | None:
    """The `session_id` query parameter of a gateway URL, if any."""
    for key, value in parse_qsl(urlsplit(url).query):
        if key == "session_id" and value:
            return value
    return None


def _closed(code: int | None, reason: str) -> tuple[str, str | None]:
    """(detail, fatal detail or None) of a closed connection; no code reads as 1006."""
    code = code or 1006
    detail = f"closed {code} {reason}".strip()
    return detail, detail if code in FATAL_CLOSE_CODES else None


class GatewayObserver:
    """Observe one gateway session: `async for event in observer` yields typed live events.

    `request()` needs the iterator running in another task (responses arrive through it).

    `state` always holds the latest `SourceState` (connecting, connected, ready, reconnecting
    in Ns, closed); each change is also yielded as an event, in order with the data.
    """

    def __init__(
        self,
        url: str,
        *,
        session_id: str | None = None,
        backoff: Backoff | None = None,
        options: GatewayOptions | None = None,
    ) -> None:
        options = options or GatewayOptions()
        self.url = observer_url(url, session_id, options.user_id)
        #: Enterprise (AgentOS) JWT: taken from the URL or the options, sent as a header, never shown.
        self._token = options.token or dict(parse_qsl(urlsplit(url).query)).get("token")
        self.session_id = session_of(self.url)
        self.origin = options.origin or origin_for(self.url)
        self.backoff = backoff or Backoff()
        self.open_timeout = options.open_timeout
        self.ping_interval = options.ping_interval
        self.ping_timeout = options.ping_timeout
        self.max_size = options.max_size
        self.reconnect = options.reconnect
        self._closing = False
        self._connection: ClientConnection | None = None
        self._wake = asyncio.Event()
        self._acked = False
        self._request_ids = itertools.count(1)
        self._pending: dict[str, asyncio.Future[Any]] = {}
        self.state = SourceState(self.url, "connecting")

    def __aiter__(self) -> AsyncIterator[LiveEvent]:
        return self.events()

    def _set_state(
        self, state: str, detail: str = "", retry_in: float | None = None, attempt: int = 0
    ) -> SourceState:
        self.state = SourceState(self.url, state, detail, retry_in, attempt)
        return self.state

    def _connect(self) -> Any:
        """The websockets connection context for this observer's URL, origin and limits."""
        return connect(
            self.url,
            origin=self.origin,  # type: ignore[arg-type]
            open_timeout=self.open_timeout,
            ping_interval=self.ping_interval,
            ping_timeout=self.ping_timeout,
            max_size=self.max_size,
            close_timeout=2.0,
            proxy=None,
            user_agent_header="context-inspector",
            additional_headers={"Authorization": f"Bearer {self._token}"} if self._token else None,
        )

    def side_observer(self, user_id: str) -> GatewayObserver:
        """An observer of the same session, origin and token under another user id: the
        gateway routes a request's answer by the socket's keys, so a one-shot exchange on a
        socket of its own must not share the watching socket's user id."""
        parts = urlsplit(self.url)
        query = [
            (k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "user_id"
        ]
        url = urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), ""))
        options = GatewayOptions(
            user_id=user_id,
            origin=self.origin,
            open_timeout=self.open_timeout,
            max_size=self.max_size,
            reconnect=False,
            token=self._token,
        )
        return GatewayObserver(url, options=options)

    def open(self) -> Any:
        """One connection (an async context manager) with this observer's URL, origin, token
        and limits, for a one-shot exchange such as `history.get`."""
        return self._connect()

    async def _receive(self, connection: ClientConnection) -> AsyncIterator[LiveEvent]:
        """Every frame of one connection as an event; RPC answers resolve their requests."""
        async for message in connection:
            if len(message) > THREAD_PARSE_BYTES:
                event = await asyncio.to_thread(parse_frame, message, self.url)
            else:
                event = parse_frame(message, self.url)
            if isinstance(event, GatewayEvent):
                if event.frame_type == "res" and event.name in self._pending:
                    future = self._pending.pop(event.name)
                    if not future.done():
                        future.set_result(event.raw)
                if event.frame_type == "event" and event.name == "connection.ack":
                    if self._acked:
                        continue  # acks of session peers are routed to us too
                    self._acked = True
                    yield event
                    yield self._set_state("ready", "backend acknowledged")
                    continue
            yield event

    def _limit_text(self) -> str:
        size = self.max_size
        if size is None:
            return "size"
        return f"{size // (1024 * 1024)} MB" if size >= 1024 * 1024 else f"{size:,}-byte"

    def _fail_pending(self, why: str) -> None:
        """Fail every RPC still waiting: its connection is gone."""
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError(f"gateway connection closed ({why})"))
        self._pending.clear()

    async def events(self) -> AsyncIterator[LiveEvent]:
        """Connect, yield every frame as a typed event, reconnect with backoff until closed."""
        delays = self.backoff.delays()
        attempt = 0
        #: Connections lost to a frame over the size limit (reported once, then backed off).
        oversize = 0
        while not self._closing:
            yield self._set_state("connecting", attempt=attempt)
            fatal: str | None = None
            detail = ""
            try:
                async with self._connect() as connection:
                    self._connection = connection
                    self._acked = False
                    attempt = 0
                    delays = self.backoff.delays()
                    yield self._set_state("connected", self.session_id or "")
                    async for event in self._receive(connection):
                        yield event
                    detail, fatal = _closed(connection.close_code, connection.close_reason or "")
            except InvalidStatus as error:
                status = error.response.status_code
                detail = f"HTTP {status} at upgrade"
                if status in (401, 403, 404):
                    fatal = detail + (" (origin not allowed?)" if status == 403 else "")
            except InvalidURI as error:
                fatal = f"bad URL: {error}"
            except ConnectionClosed as error:
                if error.sent is not None and error.sent.code == TOO_BIG:
                    oversize += 1
                    detail = f"a frame over the {self._limit_text()} limit"
                    if oversize == 1:
                        yield SourceProblem(
                            LoadError(self.url, f"{detail} was refused (close 1009)", "frame")
                        )
                else:
                    code = error.rcvd.code if error.rcvd else None
                    detail, fatal = _closed(
                        code, error.rcvd.reason if error.rcvd else "connection lost"
                    )
            except (OSError, TimeoutError, InvalidHandshake) as error:
                detail = f"{type(error).__name__}: {error}".strip() or type(error).__name__
            finally:
                self._connection = None
                self._fail_pending(detail or fatal or "")
            if self._closing:
                break
            if fatal or not self.reconnect:
                yield self._set_state("closed", fatal or detail)
                return
            delay = next(delays)
            if oversize:
                delay = max(delay, OVERSIZE_BACKOFF)
            attempt += 1
            yield self._set_state("reconnecting", detail, delay, attempt)
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), delay)
        yield self._set_state("closed", "stopped")

    async def request(
        self, method: str, params: dict[str, Any] | None = None, timeout: float = 5.0
    ) -> Any:
        """Send a read-only RPC (only `session.list`) and return its `res` frame."""
        if method not in READ_ONLY_METHODS:
            raise ValueError(f"{method} is not a read-only method; the observer never sends it")
        connection = self._connection
        if connection is None:
            raise ConnectionError("not connected")
        request_id = f"inspector_{next(self._request_ids)}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        frame = {"type": "req", "id": request_id, "method": method, "params": params or {}}
        try:
            await connection.send(json.dumps(frame))
        except ConnectionClosed as error:
            self._pending.pop(request_id, None)
            raise ConnectionError(f"gateway closed the connection: {error}") from None
        return await asyncio.wait_for(future, timeout)

    async def close(self) -> None:
        """Stop observing: close the socket, end the event iterator with state `closed`."""
        self._closing = True
        self._wake.set()
        connection = self._connection
        if connection is not None:
            await connection.close()


async def list_sessions(
    url: str, *, timeout: float = 5.0, limit: int = 200
) -> list[dict[str, Any]]:
    """The sessions a gateway knows, newest first (read-only `session.list`).

    Raises ConnectionError saying why when the gateway cannot be reached or refuses.
    """
    observer = GatewayObserver(url, options=GatewayOptions(reconnect=False, open_timeout=timeout))
    events = observer.events()
    reader: asyncio.Task[None] | None = None

    async def drain() -> None:
        async for _ in events:
            pass

    try:
        async with asyncio.timeout(timeout):
            async for event in events:
                if isinstance(event, SourceState) and event.state == "connected":
                    break
                if isinstance(event, SourceState) and event.state == "closed":
                    raise ConnectionError(f"cannot connect: {event.detail}")
            reader = asyncio.create_task(drain())
            response = await observer.request("session.list", {"limit": limit})
    except TimeoutError:
        raise ConnectionError("session.list timed out") from None
    finally:
        await observer.close()
        if reader is not None:
            reader.cancel()
            with contextlib.suppress(BaseException):
                await reader
    if not isinstance(response, dict) or not response.get("ok"):
        reason = response.get("error") if isinstance(response, dict) else response
        raise ConnectionError(f"session.list refused: {reason}")
    sessions = (response.get("payload") or {}).get("sessions") or []
    return [s for s in sessions if isinstance(s, dict)]


@dataclass(frozen=True, slots=True)
class GatewayProbe:
    """What a first look at a gateway found: its sessions and the watched one's metadata."""

    url: str
    sessions: tuple[dict[str, Any], ...]
    #: The watched session's metadata (None when no session was asked for).
    session: dict[str, Any] | None
    #: The backend acknowledged the socket (`connection.ack`); False: not ready yet.
    backend_ready: bool


def _probe_url(url: str) -> str:
    """The URL without a session (a probe registers nowhere) and without credentials."""
    parts = urlsplit(observer_url(url))
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "session_id"]
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), ""))


async def _exchange(connection: ClientConnection, deadline: float) -> tuple[Any, bool, Any]:
    """Send `session.list`; (its res frame, backend acknowledged, ack payload)."""
    loop = asyncio.get_running_loop()
    await connection.send(
        json.dumps(
            {
                "type": "req",
                "id": "inspector_probe",
                "method": "session.list",
                "params": {"limit": 200},
            }
        )
    )
    acked, ack_payload = False, None
    while True:
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise TimeoutError
        message = await asyncio.wait_for(connection.recv(), remaining)
        event = parse_frame(message, "probe")
        if not isinstance(event, GatewayEvent):
            continue
        if event.frame_type == "event" and event.name == "connection.ack":
            acked, ack_payload = True, event.payload
        elif event.frame_type == "res" and event.name == "inspector_probe":
            return event.raw, acked, ack_payload


def _judge(
    url: str, response: Any, acked: bool, ack_payload: Any, session_id: str | None
) -> GatewayProbe:
    """The probe's verdict on one `session.list` answer; GatewayRefused saying why not."""
    if not isinstance(response, dict):
        raise GatewayRefused(f"{url} is not a jiuwenswarm web gateway (odd answer to session.list)")
    raw_payload = response.get("payload")
    payload: dict[str, Any] = raw_payload if isinstance(raw_payload, dict) else {}
    transport = ack_payload.get("transport") if isinstance(ack_payload, dict) else None
    if transport == "tui" or "current_branch" in payload:
        raise GatewayRefused(
            f"{url} is jiuwenswarm's TUI gateway, not its web gateway: "
            "watch the web gateway, by default ws://127.0.0.1:19000/ws"
        )
    if not response.get("ok"):
        reason = response.get("error") or response.get("code") or "refused"
        raise GatewayRefused(f"{url} refused session.list: {reason}")
    sessions = payload.get("sessions")
    if not isinstance(sessions, list):
        raise GatewayRefused(f"{url} is not a jiuwenswarm web gateway (no session list)")
    known = tuple(s for s in sessions if isinstance(s, dict))
    found = None
    if session_id:
        found = next((s for s in known if s.get("session_id") == session_id), None)
        if found is None:
            names = ", ".join(str(s.get("session_id")) for s in known[:5])
            more = (
                f" ({len(known)} known: {names}{', …' if len(known) > 5 else ''})" if known else ""
            )
            raise GatewayRefused(f"unknown session {session_id!r} at {url}{more}")
    return GatewayProbe(url, known, found, acked)


async def probe_gateway(url: str, session_id: str | None, *, timeout: float = 5.0) -> GatewayProbe:
    """Check that `url` is a jiuwenswarm web gateway that knows `session_id`, within `timeout`.

    Raises GatewayRefused with a sentence for the user: refused port, HTTP error at
    upgrade, a path the server closes (1008), no answer to `session.list` (an internal
    agent port, another server), jiuwenswarm's TUI gateway, or an unknown session.
    """
    probe = _probe_url(url)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    try:
        async with connect(
            probe,
            origin=origin_for(probe),  # type: ignore[arg-type]
            open_timeout=timeout,
            close_timeout=1.0,
            proxy=None,
            max_size=64 * 1024 * 1024,
            user_agent_header="context-inspector",
        ) as connection:
            response, acked, ack_payload = await _exchange(connection, deadline)
    except InvalidStatus as error:
        raise GatewayRefused(
            f"{url} refused the WebSocket upgrade (HTTP {error.response.status_code}): "
            "not a jiuwenswarm web gateway, or it wants a token"
        ) from None
    except ConnectionClosed as error:
        code = error.rcvd.code if error.rcvd else 1006
        reason = (error.rcvd.reason if error.rcvd else "") or "no reason"
        raise GatewayRefused(
            f"{url} closed the connection ({code} {reason}): not a jiuwenswarm web gateway"
        ) from None
    except TimeoutError:
        raise GatewayRefused(
            f"{url} did not answer session.list within {timeout:g}s: not a jiuwenswarm web "
            "gateway (its internal agent port?)"
        ) from None
    except (OSError, InvalidHandshake, InvalidURI) as error:
        what = "connection refused" if isinstance(error, ConnectionRefusedError) else str(error)
        raise GatewayRefused(f"cannot connect to {url}: {what or type(error).__name__}") from None
    return _judge(url, response, acked, ack_payload, session_id)
