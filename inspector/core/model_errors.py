"""Model-call failures, classified twice: as openJiuwen does it and by status code.

openJiuwen (`classify_compression_error`) lower-cases the joined text of the error chain
and looks for substrings, overflow markers first, so any "413" in the text (a request id, a
token count such as "Used 29413") reads as a context overflow. `classify_by_status` uses
the HTTP status and the structured error code only. `openjiuwen_error_text` rebuilds the
text openJiuwen classifies (its BaseError wrapper around the OpenAI SDK error), so the
first classification sees what openJiuwen would have seen.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

ErrorKind = Literal[
    "context_overflow",
    "rate_limit",
    "authentication",
    "timeout",
    "server_unstable",
    "api_request_error",
    "unknown",
]
#: Kinds openJiuwen retries with backoff (at most 2 times).
TRANSIENT_KINDS: frozenset[str] = frozenset({"rate_limit", "timeout", "server_unstable", "unknown"})
#: Transport-level failures (no HTTP status).
TransportFailure = Literal["timeout", "connection", "malformed", "empty_choices"]

_OVERFLOW = (
    "context length",
    "context_length",
    "maximum context",
    "max context",
    "token limit",
    "too many tokens",
    "prompt is too long",
    "input is too long",
    "request too large",
    "413",
)
_RATE_LIMIT = ("rate_limit", "rate limit", "too many requests", "429")
_AUTH = ("authentication", "unauthorized", "invalid api key", "api key invalid", "401", "403")
_TIMEOUT = ("timeout", "timed out", "read timeout", "connect timeout")
_SERVER = (
    "internal server error",
    "service unavailable",
    "bad gateway",
    "gateway timeout",
    "overloaded",
    "temporarily unavailable",
    "500",
    "502",
    "503",
    "504",
)
_BAD_REQUEST = ("bad request", "invalid request", "400")
#: Structured error codes that mean "the prompt is too long", whatever the status.
OVERFLOW_ERROR_CODES = frozenset(
    {"context_length_exceeded", "string_above_max_length", "request_too_large"}
)

#: The OpenAI SDK exception class raised for each status (openai 2.x).
_SDK_CLASSES = {
    400: "BadRequestError",
    401: "AuthenticationError",
    403: "PermissionDeniedError",
    404: "NotFoundError",
    409: "ConflictError",
    422: "UnprocessableEntityError",
    429: "RateLimitError",
}


@dataclass(frozen=True, slots=True)
class HttpFailure:
    """What came back from one failed call: status and body, or a transport failure."""

    status_code: int | None
    body_text: str = ""
    request_id: str | None = None
    transport: TransportFailure | None = None
    detail: str = ""

    @property
    def error_object(self) -> dict[str, Any]:
        """The `error` object of an OpenAI-style error body ({} when there is none)."""
        try:
            parsed = json.loads(self.body_text)
        except (TypeError, ValueError):
            return {}
        if isinstance(parsed, dict):
            inner = parsed.get("error", parsed)
            return inner if isinstance(inner, dict) else {}
        return {}

    @property
    def error_code(self) -> str | None:
        """The structured `error.code`, when the body has one."""
        code = self.error_object.get("code")
        return None if code is None else str(code)

    @property
    def error_message(self) -> str:
        """The server's own error message, or the raw body, or the transport detail."""
        message = self.error_object.get("message")
        if isinstance(message, str) and message:
            return message
        return self.body_text.strip()[:500] or self.detail


def openjiuwen_error_text(failure: HttpFailure) -> str:
    """The joined error text openJiuwen's classifier reads (BaseError + OpenAI SDK error)."""
    if failure.transport is not None:
        sdk_class, sdk_message = {
            "timeout": ("APITimeoutError", "Request timed out."),
            "connection": ("APIConnectionError", "Connection error."),
            "malformed": (
                "JSONDecodeError",
                failure.detail or "Expecting value: line 1 column 1 (char 0)",
            ),
            "empty_choices": ("IndexError", "list index out of range"),
        }[failure.transport]
        cause_parts = [sdk_message]
    else:
        status = failure.status_code or 0
        sdk_class = _SDK_CLASSES.get(
            status, "InternalServerError" if status >= 500 else "APIStatusError"
        )
        body_text = failure.body_text.strip()
        try:
            body: Any = json.loads(body_text)
            sdk_message = f"Error code: {status} - {body}"
        except ValueError:
            body = body_text
            sdk_message = body_text or f"Error code: {status}"
        data = body.get("error", body) if isinstance(body, dict) else body
        cause_parts = [sdk_message]
        if isinstance(data, dict) and data.get("code") is not None:
            cause_parts.append(str(data["code"]))
        cause_parts.append(str(status))
        if failure.request_id:
            cause_parts.append(failure.request_id)
        if isinstance(data, dict) and data.get("type") is not None:
            cause_parts.append(str(data["type"]))
    inner = f"openAI API async invoke error: {sdk_class}: {sdk_message}"
    parts = [
        f"[181001] model call failed, reason: {inner}",
        "StatusCode.MODEL_CALL_FAILED",
        "MODEL_CALL_FAILED",
        "model call failed, reason: {error_msg}",
        "181001",
        str({"error_msg": inner}),
        *cause_parts,
    ]
    return " ".join(p for p in parts if p).strip()


def classify_openjiuwen(
    text: str, status_code: int | None, is_timeout_error: bool = False
) -> ErrorKind:
    """openJiuwen's classification: substring tests on the lower-cased text, first match wins."""
    lowered = text.lower()

    def has(markers: tuple[str, ...]) -> bool:
        return any(marker in lowered for marker in markers)

    if has(_OVERFLOW) or status_code == 413:
        return "context_overflow"
    if has(_RATE_LIMIT) or status_code == 429:
        return "rate_limit"
    if has(_AUTH) or status_code in (401, 403):
        return "authentication"
    if is_timeout_error or has(_TIMEOUT):
        return "timeout"
    if has(_SERVER) or status_code in (500, 502, 503, 504):
        return "server_unstable"
    if has(_BAD_REQUEST) or status_code == 400:
        return "api_request_error"
    return "unknown"


def classify_by_status(failure: HttpFailure) -> ErrorKind:
    """A correct classification: the HTTP status and structured error code, never free text."""
    if failure.transport == "timeout":
        return "timeout"
    if failure.transport is not None:
        return "unknown"
    status = failure.status_code
    if status == 413 or (failure.error_code or "") in OVERFLOW_ERROR_CODES:
        return "context_overflow"
    if status == 429:
        return "rate_limit"
    if status in (401, 403):
        return "authentication"
    if status in (408, 504):
        return "timeout"
    if status is not None and status >= 500:
        return "server_unstable"
    if status is not None and 400 <= status < 500:
        return "api_request_error"
    return "unknown"


_KIND_WORDS: dict[str, str] = {
    "context_overflow": "the request was too large for the model's context window",
    "rate_limit": "the endpoint is rate-limiting requests",
    "authentication": "the API key was refused",
    "timeout": "the endpoint did not answer in time",
    "server_unstable": "the endpoint had a server error",
    "api_request_error": "the endpoint rejected the request as invalid",
    "unknown": "the call failed for an unrecognised reason",
}


def describe_kind(kind: str) -> str:
    """A short plain-words phrase for an error kind."""
    return _KIND_WORDS.get(kind, kind)


def describe_failure(failure: HttpFailure) -> str:
    """One plain sentence: what went wrong with this call."""
    if failure.transport == "timeout":
        return "the endpoint did not answer before the timeout"
    if failure.transport == "connection":
        return f"could not connect to the endpoint ({failure.detail or 'connection failed'})"
    if failure.transport == "malformed":
        return f"the endpoint answered 200 but the body is not valid JSON ({failure.detail})"
    if failure.transport == "empty_choices":
        return "the endpoint answered 200 without any choice in the reply"
    message = failure.error_message
    suffix = f": {message}" if message else ""
    return f"HTTP {failure.status_code} ({describe_kind(classify_by_status(failure))}){suffix}"
