"""One call to an OpenAI-compatible `POST {base_url}/chat/completions` over httpx.

The transport is injectable (tests pass a real local server or an `httpx.MockTransport`).
The API key goes into the Authorization header only: it is never logged, never part of
an error message, and `EndpointConfig` never holds it (only the name of its variable).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from inspector.core.compaction import Sampling
from inspector.core.model_errors import HttpFailure
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
    #: Seconds for connect, read and write each.
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


def _content_text(content: Any) -> str:
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
        return "".join(parts)
    return str(content)


def parse_reply(response: httpx.Response) -> ModelReply:
    """Read a 2xx chat-completions body; raise ModelCallFailed when it cannot be used."""
    try:
        data = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ModelCallFailed(
            HttpFailure(
                response.status_code, response.text[:2000], transport="malformed", detail=str(error)
            )
        ) from None
    choices = data.get("choices") if isinstance(data, Mapping) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise ModelCallFailed(
            HttpFailure(response.status_code, response.text[:2000], transport="empty_choices")
        )
    choice = choices[0]
    raw_message = choice.get("message")
    message: Mapping[str, Any] = raw_message if isinstance(raw_message, Mapping) else {}
    calls = message.get("tool_calls") or ()
    usage = data.get("usage")
    return ModelReply(
        content=_content_text(message.get("content")),
        tool_calls=tuple(c for c in calls if isinstance(c, Mapping))
        if isinstance(calls, list)
        else (),
        usage=usage if isinstance(usage, Mapping) else None,
        model=data.get("model") if isinstance(data.get("model"), str) else None,
        finish_reason=choice.get("finish_reason")
        if isinstance(choice.get("finish_reason"), str)
        else None,
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
        """POST the body; the reply and its status, or ModelCallFailed with what came back."""
        try:
            response = await self._client.post(self.endpoint.url, json=body)
        except httpx.TimeoutException:
            raise ModelCallFailed(
                HttpFailure(None, transport="timeout", detail="timed out")
            ) from None
        except httpx.TransportError as error:
            detail = f"{type(error).__name__}: {error}".rstrip(": ")
            raise ModelCallFailed(
                HttpFailure(None, transport="connection", detail=detail)
            ) from None
        if not 200 <= response.status_code < 300:
            raise ModelCallFailed(
                HttpFailure(
                    response.status_code,
                    response.text[:20_000],
                    request_id=response.headers.get("x-request-id"),
                )
            )
        return parse_reply(response), response.status_code
