"""A scripted OpenAI-compatible model on 127.0.0.1 for driving a real jiuwenswarm.

Answers `POST .../chat/completions` (streamed as server-sent events or as one JSON body):
a compression request of openJiuwen's DialogueCompressor (its `[Target Mapping]` payload)
gets the JSON `{"blocks": [...]}` the processor parses, one short summary per block id;
a new user turn first gets a call of the agent's read-only `todo_list` tool (so each
turn is a ReAct round with something between the question and the answer, which is what
DialogueCompressor folds), and after the tool result a long, numbered answer, so a few
turns pass a small `tokens_threshold`. Usage numbers are len(JSON)//4 of the request and of the reply.
Every request is recorded (`requests`), with whether it was a compression call.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_BLOCK = re.compile(r"\[Block: ([^\]]+)\]")


@dataclass
class ModelCall:
    """One request the model answered."""

    compression: bool
    messages: list[dict[str, Any]]
    reply: str
    usage: dict[str, int]


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


@dataclass
class ScriptedModel:
    """The server; `base_url` ends in /v1. Use as a context manager."""

    answer_words: int = 420
    tool_name: str | None = "todo_list"
    requests: list[ModelCall] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _turn: int = 0

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>/v1`."""
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def reply_for(self, messages: list[dict[str, Any]]) -> tuple[str, bool]:
        """The reply text and whether the request was a compression call."""
        texts = [_text(m) for m in messages]
        joined = "\n".join(texts)
        if "[Target Mapping]" in joined:
            mapping = joined[joined.index("[Target Mapping]") :]
            blocks = list(dict.fromkeys(_BLOCK.findall(mapping)))
            body = {
                "blocks": [
                    {"block_id": b, "summary": f"User asked for part {b}; the answer was given."}
                    for b in blocks
                ]
            }
            return json.dumps(body), True
        if any(k in joined for k in ("Compress", "compress", "summar", "摘要", "压缩")) and (
            messages and messages[0].get("role") == "system" and "ReAct" in texts[0]
        ):
            return "Summary: the user asked numbered questions; each was answered.", True
        asked = max((i for i, t in enumerate(texts) if "Question " in t), default=-1)
        answered = any(m.get("role") == "tool" for m in messages[asked + 1 :])
        if self.tool_name and asked >= 0 and not answered:
            return "", False
        self._turn += 1
        words = " ".join(f"fact{self._turn}_{i}" for i in range(self.answer_words))
        return f"Answer {self._turn}: {words}", False

    def __enter__(self) -> ScriptedModel:
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

            def do_GET(self) -> None:  # noqa: N802
                body = json.dumps({"data": [{"id": "scripted", "object": "model"}]}).encode()
                self._send(200, body, "application/json")

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    request = json.loads(raw or b"{}")
                except ValueError:
                    request = {}
                messages = [m for m in request.get("messages") or [] if isinstance(m, dict)]
                reply, compression = model.reply_for(messages)
                call = None
                if not compression and not reply and model.tool_name:
                    call = {
                        "id": f"call_{len(model.requests)}",
                        "type": "function",
                        "function": {"name": model.tool_name, "arguments": "{}"},
                    }
                usage = {
                    "prompt_tokens": len(raw) // 4,
                    "completion_tokens": max(len(reply) // 4, 1),
                }
                usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
                model.requests.append(ModelCall(compression, messages, reply, usage))
                if request.get("stream"):
                    self._stream(reply, usage, str(request.get("model") or "scripted"), call)
                else:
                    self._send(200, self._body(reply, usage, request, call), "application/json")

            def _body(
                self,
                reply: str,
                usage: dict[str, int],
                request: dict[str, Any],
                call: dict[str, Any] | None,
            ) -> bytes:
                message: dict[str, Any] = {"role": "assistant", "content": reply}
                if call is not None:
                    message["tool_calls"] = [call]
                return json.dumps(
                    {
                        "id": "chatcmpl-scripted",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": request.get("model") or "scripted",
                        "choices": [
                            {
                                "index": 0,
                                "message": message,
                                "finish_reason": "tool_calls" if call else "stop",
                            }
                        ],
                        "usage": usage,
                    }
                ).encode()

            def _stream(
                self, reply: str, usage: dict[str, int], name: str, call: dict[str, Any] | None
            ) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                pieces = [reply[i : i + 400] for i in range(0, len(reply), 400)] or [""]
                for index, piece in enumerate(pieces):
                    delta: dict[str, Any] = {"content": piece}
                    if index == 0:
                        delta["role"] = "assistant"
                    self._event(
                        {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}, name
                    )
                if call is not None:
                    delta = {"tool_calls": [{"index": 0, **call}]}
                    self._event(
                        {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}, name
                    )
                finish = "tool_calls" if call else "stop"
                self._event({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}, name)
                self._event({"choices": [], "usage": usage}, name)
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

            def _event(self, chunk: dict[str, Any], name: str) -> None:
                chunk = {
                    "id": "chatcmpl-scripted",
                    "object": "chat.completion.chunk",
                    "model": name,
                    **chunk,
                }
                self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                self.wfile.flush()

            def _send(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
