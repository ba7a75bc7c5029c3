"""A misbehaving chat-completions server on 127.0.0.1, for the hardening tests.

Speaks raw HTTP/1.1 over a socket so it can misbehave in ways a framework would not allow:
`drip` sends the body one byte at a time, `endless` streams bytes forever, `body` sends a
fixed reply (NaN usage, `content: 5`, an error object in a 200), `echo` answers 401 with
every request header echoed in its body and in hostile response headers (control
characters, the key itself). Every request's raw headers are kept in `requests`.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from typing import Any

Behaviour = Callable[[socket.socket, bytes], None]


def _head(status: str, extra: str = "", length: int | None = None) -> bytes:
    lines = [f"HTTP/1.1 {status}", "Content-Type: application/json", "Connection: close"]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    if extra:
        lines.append(extra)
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8", "surrogateescape")


def body(text: str, status: str = "200 OK") -> Behaviour:
    """Answer with this body."""
    data = text.encode()

    def send(conn: socket.socket, request: bytes) -> None:
        conn.sendall(_head(status, length=len(data)) + data)

    return send


def drip(interval: float = 0.2) -> Behaviour:
    """A valid-looking reply, one byte per `interval`, never finishing in time."""

    def send(conn: socket.socket, request: bytes) -> None:
        conn.sendall(_head("200 OK", length=10_000))
        for _ in range(10_000):
            conn.sendall(b" ")
            time.sleep(interval)

    return send


def endless(chunk: int = 256 * 1024) -> Behaviour:
    """A body without end (no length, bytes as fast as the client reads)."""

    def send(conn: socket.socket, request: bytes) -> None:
        conn.sendall(_head("200 OK"))
        block = b'{"x": "' + b"a" * chunk
        while True:
            conn.sendall(block)

    return send


def echo(status: str = "401 Unauthorized") -> Behaviour:
    """The request's headers echoed in the body and in response headers, with escapes."""

    def send(conn: socket.socket, request: bytes) -> None:
        head = request.split(b"\r\n\r\n", 1)[0].decode("latin-1")
        escaped = head.replace("\\", "\\\\").replace('"', '\\"').replace("\r\n", "\\n")
        text = f'{{"error": {{"message": "bad key; you sent: {escaped} \\u001b[2J"}}}}'
        data = text.encode()
        auth = next((line for line in head.split("\r\n") if line.lower().startswith("auth")), "")
        extra = f"X-Request-Id: \x1b[31m{auth}\r\nX-Echo: {auth}"
        conn.sendall(_head(status, extra, len(data)) + data)

    return send


class HostileServer:
    """A thread serving one behaviour on 127.0.0.1 until closed."""

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self.requests: list[bytes] = []
        self._socket = socket.create_server(("127.0.0.1", 0))
        self._socket.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def base_url(self) -> str:
        """The server's base URL (`/v1`)."""
        return f"http://127.0.0.1:{self._socket.getsockname()[1]}/v1"

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(5)
        self._socket.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._socket.accept()
            except OSError:
                continue
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                request = self._read_request(conn)
                self.requests.append(request)
                self.behaviour(conn, request)
            except OSError:
                pass  # the client gave up: what a deadline is for

    @staticmethod
    def _read_request(conn: socket.socket) -> bytes:
        data = b""
        while b"\r\n\r\n" not in data:
            part = conn.recv(65536)
            if not part:
                return data
            data += part
        head, _, rest = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        while len(rest) < length:
            part = conn.recv(65536)
            if not part:
                break
            rest += part
        return head + b"\r\n\r\n" + rest
