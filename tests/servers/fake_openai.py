"""A scriptable OpenAI-compatible chat-completions server on 127.0.0.1, in a thread.

Each POST to `.../chat/completions` takes the next scripted reply (the last one repeats):
a status with an assistant message, an OpenAI-style error body, raw bytes (malformed
JSON), or a delay (to provoke client timeouts). Every request is recorded: path, whether
it carried an Authorization header, and the parsed body. Usage numbers follow the
reference harness: prompt tokens = len(request JSON)//4, completion = len(reply)//4.

    with FakeOpenAI([Reply(status=429, error={...}), Reply(content="<state_snapshot>..")]) as server:
        endpoint = EndpointConfig(server.base_url, "m")
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer."""

    status: int = 200
    content: str | None = ""
    tool_calls: list[dict[str, Any]] | None = None
    error: dict[str, Any] | None = None
    raw: bytes | None = None
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    with_usage: bool = True

    @classmethod
    def from_script(cls, item: Mapping[str, Any]) -> Reply:
        """Read one entry of a reference scenario's `fake_server_script`."""
        return cls(
            status=int(item.get("status", 200)),
            content=item.get("content"),
            tool_calls=item.get("tool_calls"),
            error=item.get("error"),
        )


@dataclass
class RecordedRequest:
    """What the server received."""

    path: str
    had_authorization_header: bool
    authorization: str | None
    body: Any
    status: int


class FakeOpenAI:
    """The server; use as a context manager or call start()/stop()."""

    def __init__(self, script: Iterable[Reply | Mapping[str, Any]]) -> None:
        self.script = [r if isinstance(r, Reply) else Reply.from_script(r) for r in script]
        if not self.script:
            raise ValueError("a script needs at least one reply")
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>/v1`."""
        assert self._server is not None, "server not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def _next(self) -> Reply:
        with self._lock:
            index = min(len(self.requests), len(self.script) - 1)
            return self.script[index]

    def start(self) -> FakeOpenAI:
        """Bind an ephemeral port and serve in a daemon thread."""
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw_body = self.rfile.read(length)
                try:
                    body = json.loads(raw_body)
                except ValueError:
                    body = None
                reply = owner._next()
                auth = self.headers.get("Authorization")
                with owner._lock:
                    owner.requests.append(
                        RecordedRequest(self.path, auth is not None, auth, body, reply.status)
                    )
                if not self.path.endswith("/chat/completions"):
                    self._send(404, json.dumps({"error": {"message": "not found"}}).encode(), {})
                    return
                if reply.delay:
                    time.sleep(reply.delay)
                self._send(reply.status, owner._payload(reply, body), reply.headers)

            def _send(self, status: int, payload: bytes, headers: Mapping[str, str]) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        server.block_on_close = False  # type: ignore[attr-defined]
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="fake-openai",
            daemon=True,
        )
        self._thread.start()
        return self

    @staticmethod
    def _payload(reply: Reply, body: Any) -> bytes:
        if reply.raw is not None:
            return reply.raw
        if reply.error is not None:
            return json.dumps({"error": reply.error}).encode()
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = reply.tool_calls
        data: dict[str, Any] = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "fake") if isinstance(body, dict) else "fake",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                }
            ],
        }
        if reply.with_usage:
            prompt_tokens = len(json.dumps(body, ensure_ascii=False)) // 4
            completion_tokens = len(reply.content or "") // 4
            data["usage"] = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            }
        return json.dumps(data, ensure_ascii=False).encode()

    def stop(self) -> None:
        """Shut the server down."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
