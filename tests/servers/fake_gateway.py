"""A fake jiuwenswarm web gateway (`ws://127.0.0.1:<port>/ws`) for tests.

Built to the fake-server checklist of spec/jiuwenswarm-live.md section 8: only the
configured path (others closed 1008), optional Origin check (HTTP 403), `connection.ack`
with and without a ready backend (acks broadcast to session peers), registration by the
`session_id` query and by `params.session_id`, routing in 0.2.3 mode (every session socket
gets the session's events) or main mode (request-scoped events go to the requester only),
`BAD_REQUEST` / `METHOD_NOT_FOUND` / `session.list`, scripted emission of the sample frames,
protocol pings, and server-initiated close 1001 for reconnect tests.

The server runs its own event loop in a background thread, so both async tests and tests
that run `inspector watch` in a subprocess can drive it. Listens on 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.http11 import Request, Response

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "jiuwenswarm"


def load_ws_samples() -> dict[str, Any]:
    """The frames of ws-context-events.json, keyed by sample name (notes dropped)."""
    data = json.loads((SAMPLES / "ws-context-events.json").read_text(encoding="utf-8"))
    return {k: v for k, v in data.items() if not k.startswith("_")}


def sample_frame(name: str, session_id: str | None = None) -> dict[str, Any]:
    """One sample frame, with its payload's session_id replaced when given."""
    frame = json.loads(json.dumps(load_ws_samples()[name]))
    if session_id is not None:
        frame["payload"]["session_id"] = session_id
    return frame


class FakeGateway:
    """The fake gateway; `start()` it, point clients at `url(session_id)`, `stop()` it."""

    def __init__(
        self,
        *,
        path: str = "/ws",
        routing: str = "broadcast",
        backend_ready: bool = True,
        origin_check: bool = False,
        allowed_hosts: Iterable[str] = ("127.0.0.1", "localhost"),
        ping_interval: float | None = 20.0,
        chat_script: Iterable[Mapping[str, Any]] = (),
        port: int = 0,
    ) -> None:
        assert routing in ("broadcast", "requester")
        self.path = path
        self.routing = routing
        self.backend_ready = backend_ready
        self.origin_check = origin_check
        self.allowed_hosts = set(allowed_hosts)
        self.ping_interval = ping_interval
        self.chat_script = [dict(f) for f in chat_script]
        self.port = port
        self.sessions_meta: list[dict[str, Any]] = []
        #: Transcript records per session, oldest first, served by `history.get` the way the
        #: 0.2.3 agent does (newest first, 20 a page, one `history.message` event each).
        self.histories: dict[str, list[dict[str, Any]]] = {}
        #: Every text frame any client sent, with the socket's handshake session.
        self.received: list[tuple[str, str]] = []
        #: Origin header and query of every accepted upgrade.
        self.handshakes: list[dict[str, Any]] = []
        self._buckets: dict[str, set[ServerConnection]] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, daemon=True, name="fake-gateway"
        )
        self._thread.start()
        self._server: Server | None = None

    # ---- lifecycle -------------------------------------------------------------------

    def _call(self, coro: Any, timeout: float = 10.0) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    async def _acall(self, coro: Any) -> Any:
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self._loop))

    def start(self) -> FakeGateway:
        """Listen on 127.0.0.1 (the same port again after a stop)."""
        self._call(self._start())
        return self

    async def astart(self) -> FakeGateway:
        """`start()` for async tests."""
        await self._acall(self._start())
        return self

    async def _start(self) -> None:
        self._server = await serve(
            self._handle,
            "127.0.0.1",
            self.port,
            process_request=self._process_request,
            ping_interval=self.ping_interval,
            ping_timeout=60.0,
            compression=None,
        )
        self.port = self._server.sockets[0].getsockname()[1]

    def stop(self, *, abrupt: bool = False) -> None:
        """Close every socket with 1001 "server shutdown" (or drop them) and stop listening."""
        self._call(self._stop(abrupt))

    async def astop(self, *, abrupt: bool = False) -> None:
        """`stop()` for async tests."""
        await self._acall(self._stop(abrupt))

    async def _stop(self, abrupt: bool) -> None:
        server = self._server
        if server is None:
            return
        self._server = None
        server.close(close_connections=False)
        connections = {c for bucket in self._buckets.values() for c in bucket}
        for connection in connections:
            if abrupt:
                connection.transport.abort()
            else:
                await connection.close(1001, "server shutdown")
        await server.wait_closed()
        self._buckets.clear()

    def shutdown(self) -> None:
        """Stop and end the background loop."""
        self.stop()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    def __enter__(self) -> FakeGateway:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def url(self, session_id: str | None = None, path: str | None = None) -> str:
        """The client URL, with `session_id` in the query when given."""
        query = f"?session_id={session_id}" if session_id else ""
        return f"ws://127.0.0.1:{self.port}{path or self.path}{query}"

    # ---- inspection ------------------------------------------------------------------

    def registered(self, session_id: str) -> int:
        """How many sockets are registered on a session right now."""
        return self._call(self._count(session_id))

    async def _count(self, session_id: str) -> int:
        return len(self._buckets.get(session_id, ()))

    def wait_registered(self, session_id: str, count: int = 1, timeout: float = 5.0) -> None:
        """Block until `count` sockets sit on the session."""
        deadline = time.monotonic() + timeout
        while self.registered(session_id) < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{count} sockets never registered on {session_id}")
            time.sleep(0.02)

    async def await_registered(self, session_id: str, count: int = 1, timeout: float = 5.0) -> None:
        """`wait_registered()` for async tests."""
        deadline = time.monotonic() + timeout
        while await self._acall(self._count(session_id)) < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{count} sockets never registered on {session_id}")
            await asyncio.sleep(0.02)

    # ---- emission --------------------------------------------------------------------

    def emit(
        self, session_id: str, frame: Mapping[str, Any], requester: ServerConnection | None = None
    ) -> int:
        """Route one event frame as the gateway would; returns how many sockets got it."""
        return self._call(self._emit(session_id, dict(frame), requester))

    async def aemit(self, session_id: str, frame: Mapping[str, Any]) -> int:
        """`emit()` for async tests."""
        return await self._acall(self._emit(session_id, dict(frame), None))

    def emit_sample(self, session_id: str, name: str) -> int:
        """Emit one sample frame of ws-context-events.json on a session."""
        return self.emit(session_id, sample_frame(name, session_id))

    async def _emit(
        self, session_id: str, frame: dict[str, Any], requester: ServerConnection | None
    ) -> int:
        if (
            requester is not None
            and self.routing == "requester"
            and requester in self._buckets.get(session_id, ())
        ):
            targets = {requester}
        else:
            targets = set(self._buckets.get(session_id, ()))
        text = json.dumps(frame, ensure_ascii=False)
        sent = 0
        for connection in targets:
            try:
                await connection.send(text)
                sent += 1
            except Exception:  # noqa: BLE001 - a socket closing mid-send is not our concern
                pass
        return sent

    async def _history(
        self, connection: ServerConnection, session_id: str, page: Any, request_id: str
    ) -> None:
        """One page of the session's transcript as the agent streams it (or `chat.error`)."""
        records = self.histories.get(session_id)
        total = max(1, -(-len(records) // 20)) if records is not None else 0
        if records is None or not isinstance(page, int) or not 1 <= page <= total:
            error = {
                "event_type": "chat.error",
                "error": "invalid page_idx or session history not found",
                "session_id": session_id,
                "request_id": request_id,  # the gateway adds it to chat.* events
            }
            await self._emit(
                session_id, {"type": "event", "event": "chat.error", "payload": error}, connection
            )
            return
        newest = list(reversed(records))[(page - 1) * 20 : page * 20]
        common = {"session_id": session_id, "total_pages": total, "page_idx": page}
        for record in newest:
            payload = {"event_type": "history.message", "message": record, **common}
            await self._emit(
                session_id,
                {"type": "event", "event": "history.message", "payload": payload},
                connection,
            )
        done = {"event_type": "history.message", "status": "done", **common}
        await self._emit(
            session_id, {"type": "event", "event": "history.message", "payload": done}, connection
        )

    # ---- protocol --------------------------------------------------------------------

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        origin = request.headers.get("Origin")
        if self.origin_check:
            host = urlsplit(origin).hostname if origin else None
            allowed = (host in self.allowed_hosts) if origin else ("none" in self.allowed_hosts)
            if not allowed:
                return connection.respond(403, "Forbidden: Origin not allowed\n")
        self.handshakes.append(
            {
                "origin": origin,
                "path": request.path,
                "authorization": request.headers.get("Authorization"),
            }
        )
        return None

    def _register(self, connection: ServerConnection, session_id: str) -> None:
        self._buckets.setdefault(session_id, set()).add(connection)

    async def _handle(self, connection: ServerConnection) -> None:
        parts = urlsplit(connection.request.path if connection.request else "/")
        if parts.path != self.path:
            await connection.close(1008, f"unsupported path: {parts.path}")
            return
        query = dict(parse_qsl(parts.query))
        session_id = (
            query.get("session_id") or f"sess_{int(time.time() * 1000):x}_{secrets.token_hex(3)}"
        )
        self._register(connection, session_id)
        try:
            if self.backend_ready:
                ack = {
                    "type": "event",
                    "event": "connection.ack",
                    "payload": {
                        "session_id": session_id,
                        "mode": "BUILD",
                        "tools": [],
                        "protocol_version": "1.0",
                        "task_running": False,
                    },
                }
                await self._emit(session_id, ack, None)
            async for message in connection:
                self.received.append(
                    (session_id, message if isinstance(message, str) else repr(message))
                )
                await self._on_message(connection, message)
        except Exception:  # noqa: BLE001 - a dropped client ends its handler quietly
            pass
        finally:
            for bucket in self._buckets.values():
                bucket.discard(connection)

    async def _reply(
        self,
        connection: ServerConnection,
        request_id: str,
        ok: bool,
        payload: Any,
        error: str | None = None,
        code: str | None = None,
    ) -> None:
        frame: dict[str, Any] = {"type": "res", "id": request_id, "ok": ok, "payload": payload}
        if not ok:
            frame["error"] = error
            frame["code"] = code
        await connection.send(json.dumps(frame, ensure_ascii=False))

    async def _on_message(self, connection: ServerConnection, message: Any) -> None:
        try:
            frame = json.loads(message)
        except ValueError:
            await self._reply(connection, "", False, {}, "invalid json", "BAD_REQUEST")
            return
        if not (
            isinstance(frame, dict)
            and frame.get("type") == "req"
            and isinstance(frame.get("id"), str)
            and isinstance(frame.get("method"), str)
        ):
            request_id = (
                frame.get("id")
                if isinstance(frame, dict) and isinstance(frame.get("id"), str)
                else ""
            )
            await self._reply(connection, request_id, False, {}, "invalid request", "BAD_REQUEST")
            return
        params = frame.get("params") if isinstance(frame.get("params"), dict) else {}
        session_id = params.get("session_id")
        if isinstance(session_id, str) and session_id:
            self._register(connection, session_id)
        method = frame["method"]
        if method == "session.list":
            limit = params.get("limit", 20)
            offset = params.get("offset", 0)
            items = self.sessions_meta[offset : offset + limit]
            await self._reply(
                connection,
                frame["id"],
                True,
                {
                    "sessions": items,
                    "total": len(self.sessions_meta),
                    "limit": limit,
                    "offset": offset,
                },
            )
        elif method == "history.get" and isinstance(session_id, str):
            accepted = {"accepted": True, "session_id": session_id}
            if "page_idx" in params:
                accepted["page_idx"] = params["page_idx"]
            await self._reply(connection, frame["id"], True, accepted)
            await self._history(connection, session_id, params.get("page_idx"), frame["id"])
        elif method == "chat.send" and isinstance(session_id, str):
            await self._reply(
                connection, frame["id"], True, {"accepted": True, "session_id": session_id}
            )
            for scripted in self.chat_script:
                event = json.loads(json.dumps(scripted))
                if isinstance(event.get("payload"), dict):
                    event["payload"]["session_id"] = session_id
                    if str(event.get("event", "")).startswith("chat."):
                        event["payload"]["request_id"] = frame["id"]
                await self._emit(session_id, event, connection)
        else:
            await self._reply(
                connection, frame["id"], False, {}, f"unknown method: {method}", "METHOD_NOT_FOUND"
            )
