"""One call to an OpenAI-compatible `POST {base_url}/chat/completions` over httpx.

The transport is injectable (tests pass a real local server or an `httpx.MockTransport`).
The API key goes into the Authorization header only: it is never logged, never part of
an error message, and `EndpointConfig` never holds it (only the name of its variable).
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from inspector.core.compaction import Sampling
from inspector.core.model_errors import HttpFailure
from inspector.core.redact import Masker, escape_controls
from inspector.core.rerun import ModelReply
from inspector.llm.errors import ModelCallFailed

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class EndpointConfig:
    """Where and how to call the model; the key is read from `api_key_env` at call time."""

    base_url: str
    model: str
    api_key_env: str = DEFAULT_API_KEY_ENV
    #: Seconds for the whole call (connect, send and the complete reply).
    timeout_s: float = DEFAULT_TIMEOUT_S
    #: Extra request headers (values are never shown: they may hold secrets too).
    extra_headers: Mapping[str, str] = field(default_factory=dict)
    sampling: Sampling = field(default_factory=Sampling)
    #: False lets a run go on without any key (local servers that need none).
    require_key: bool = True

    def __repr__(self) -> str:
        headers = ", ".join(f"{k}=***" for k in self.extra_headers)
        return (
            f"EndpointConfig(base_url={self.base_url!r}, model={self.model!r}, "
            f"api_key_env={self.api_key_env!r}, timeout_s={self.timeout_s}, extra_headers=[{headers}])"
        )

    @property
    def url(self) -> str:
        """The chat-completions URL."""
        return self.base_url.rstrip("/") + "/chat/completions"


#: A reply body above this size is refused (a summary is a few KB; an endless body is not).
MAX_REPLY_BYTES = 16 * 1024**2


class _BadReply(ValueError):
    """A 2xx body that does not follow the chat-completions reply model."""


def _content_text(content: Any) -> str:
    """The reply text: a string, null, or a list of text parts; anything else is refused."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            else:
                raise _BadReply("a content part that is not text")
        return "".join(parts)
    raise _BadReply(f"message content is a JSON {type(content).__name__}, not a string")


def _usage(value: Any) -> Mapping[str, Any] | None:
    """The `usage` object, refusing numbers that are not finite (NaN, Infinity, 1e999) or too
    big for a float, anywhere inside it."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise _BadReply(f"usage is a JSON {type(value).__name__}, not an object")
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, bool) or item is None or isinstance(item, str):
            continue
        elif isinstance(item, int) and abs(item) > 2**63:
            raise _BadReply("a usage number is out of range")
        elif isinstance(item, float) and not math.isfinite(item):
            raise _BadReply("a usage number is not finite")
    return value


def _decode_body(data: bytes) -> Any:
    """The JSON of a reply body: NaN, Infinity and overflowing numbers refused, nesting bounded."""
    text = data.decode("utf-8")
    if _nesting(text) > MAX_REPLY_DEPTH:
        raise _BadReply(f"the reply nests deeper than {MAX_REPLY_DEPTH} levels")
    return _STRICT.decode(text)


def _refuse_constant(name: str) -> Any:
    raise _BadReply(f"{name} is not valid JSON")


def _finite(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _BadReply("a number overflows to infinity")
    return value


_STRICT = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite)


#: Replies nested deeper than this are refused before parsing.
MAX_REPLY_DEPTH = 64


def _nesting(text: str) -> int:
    """The deepest bracket nesting in `text`, strings skipped (a text with few brackets is
    not walked: it cannot nest deeper than it has brackets)."""
    if text.count("[") + text.count("{") <= MAX_REPLY_DEPTH:
        return 0
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def kept_body(data: bytes, masker: Masker) -> str:
    """A reply body as a failure keeps it: at most 20,000 characters, secrets masked, control
    characters escaped inside its JSON strings (or in the text when it is no JSON), and a
    body nested too deeply replaced by a note (it is parsed again for its error message)."""
    text = masker.text(data[:20_000].decode("utf-8", "replace"))
    if _nesting(text) > MAX_REPLY_DEPTH:
        return f"(a reply nested deeper than {MAX_REPLY_DEPTH} levels, not kept)"
    try:
        parsed = _STRICT.decode(text)
    except (ValueError, RecursionError):
        return escape_controls(text)
    return json.dumps(_escaped_strings(parsed), ensure_ascii=False)


def _escaped_strings(value: Any) -> Any:
    if isinstance(value, str):
        return escape_controls(value)
    if isinstance(value, list):
        return [_escaped_strings(v) for v in value]
    if isinstance(value, dict):
        return {escape_controls(str(k)): _escaped_strings(v) for k, v in value.items()}
    return value


def parse_reply(status: int, data: bytes, masker: Masker | None = None) -> ModelReply:
    """Read a 2xx chat-completions body; raise ModelCallFailed when it cannot be used (not
    JSON, no choice, content not a string, usage not finite, an `error` object)."""
    mask = masker or Masker()
    body_text = kept_body(data, mask)
    try:
        parsed = _decode_body(data)
    except (ValueError, RecursionError) as error:
        detail = mask.text(str(error))[:300]
        raise ModelCallFailed(
            HttpFailure(status, body_text[:2000], transport="malformed", detail=detail)
        ) from None
    if isinstance(parsed, Mapping) and parsed.get("error") not in (None, "", {}):
        # a 200 carrying an error object: the server's own message is shown
        raise ModelCallFailed(HttpFailure(status, body_text))
    try:
        return _reply_from(parsed)
    except _BadReply as error:
        raise ModelCallFailed(
            HttpFailure(status, body_text[:2000], transport="malformed", detail=str(error))
        ) from None
    except _NoChoice:
        raise ModelCallFailed(
            HttpFailure(status, body_text[:2000], transport="empty_choices")
        ) from None


class _NoChoice(ValueError):
    """A reply without any choice."""


def _reply_from(data: Any) -> ModelReply:
    """The reply model of a parsed body (raises _BadReply or _NoChoice)."""
    choices = data.get("choices") if isinstance(data, Mapping) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise _NoChoice()
    choice = choices[0]
    raw_message = choice.get("message")
    if raw_message is not None and not isinstance(raw_message, Mapping):
        raise _BadReply(f"message is a JSON {type(raw_message).__name__}, not an object")
    message: Mapping[str, Any] = raw_message or {}
    calls = message.get("tool_calls") or ()
    if not isinstance(calls, list | tuple):
        raise _BadReply("tool_calls is not a list")
    model = data.get("model")
    finish = choice.get("finish_reason")
    return ModelReply(
        content=_content_text(message.get("content")),
        tool_calls=tuple(c for c in calls if isinstance(c, Mapping)),
        usage=_usage(data.get("usage")),
        model=model if isinstance(model, str) else None,
        finish_reason=finish if isinstance(finish, str) else None,
    )


class ChatClient:
    """An async chat-completions client bound to one endpoint and key."""

    def __init__(
        self,
        endpoint: EndpointConfig,
        api_key: str | None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        headers.update(endpoint.extra_headers)
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self.endpoint = endpoint
        #: Masks the key and every header value in whatever the server sends back.
        self.masker = Masker(secrets=(api_key or "", *endpoint.extra_headers.values()))
        self._client = httpx.AsyncClient(
            headers=headers, timeout=httpx.Timeout(endpoint.timeout_s), transport=transport
        )

    def __repr__(self) -> str:
        return f"ChatClient({self.endpoint!r})"

    async def __aenter__(self) -> ChatClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the underlying connection pool."""
        await self._client.aclose()

    async def complete(self, body: Mapping[str, Any]) -> tuple[ModelReply, int]:
        """POST the body; the reply and its status, or ModelCallFailed with what came back.

        `timeout_s` bounds the whole call (connect, send, every byte of the reply), not each
        read: a server dripping one byte a second still ends at the deadline.
        """
        try:
            async with asyncio.timeout(self.endpoint.timeout_s):
                status, request_id, data = await self._exchange(body)
        except (TimeoutError, httpx.TimeoutException):
            raise ModelCallFailed(
                HttpFailure(
                    None,
                    transport="timeout",
                    detail=f"no complete reply within {self.endpoint.timeout_s:g} s",
                )
            ) from None
        except httpx.TransportError as error:
            detail = self.masker.text(f"{type(error).__name__}: {error}".rstrip(": "))
            raise ModelCallFailed(
                HttpFailure(None, transport="connection", detail=detail)
            ) from None
        if not 200 <= status < 300:
            raise ModelCallFailed(
                HttpFailure(status, kept_body(data, self.masker), request_id=request_id)
            )
        return parse_reply(status, data, self.masker), status

    async def _exchange(self, body: Mapping[str, Any]) -> tuple[int, str | None, bytes]:
        """Status, request id and body bytes of one POST, refusing a body over the cap."""
        async with self._client.stream("POST", self.endpoint.url, json=body) as response:
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > MAX_REPLY_BYTES:
                    raise ModelCallFailed(
                        HttpFailure(
                            response.status_code,
                            transport="malformed",
                            detail=f"the reply is over the {MAX_REPLY_BYTES // 1024**2} MB "
                            "limit: refused",
                        )
                    )
                chunks.append(chunk)
            request_id = response.headers.get("x-request-id")
            shown_id = escape_controls(self.masker.text(request_id))[:200] if request_id else None
            return response.status_code, shown_id, b"".join(chunks)
