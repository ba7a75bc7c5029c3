"""The counts each standard call site makes, per release and counter (spec section 3).

`StandardCounter` wraps the context's counter (cl100k in 0.1.16's raw form or 0.1.17's
sanitised form, 0.1.19's StringLengthCounter, or none) and the character estimates of each
call site. cl100k itself is injected (the shared `TokenCounter` of `inspector.core.tokens`,
which already counts the 0.1.17/0.1.19 way); this module adds 0.1.16's raw counting, the
StringLengthCounter and the per-call-site fallbacks. Must not import anything outside the
standard library and `inspector.core`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from inspector.core.messages import Message, Tool, is_mapping
from inspector.core.standard.release import CounterKind, Release
from inspector.core.tokens import TokenCounter, sanitize_text, sanitized_content

OVERHEAD = 3


def _json(value: Any, **kwargs: Any) -> str:
    return json.dumps(value, ensure_ascii=False, **kwargs)


def content_repr(content: Any) -> str:
    """`str(content)`: the text itself, or Python's repr of a list of parts."""
    return content if isinstance(content, str) else repr(_pythonish(content))


def _pythonish(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [_pythonish(v) for v in value]
    if is_mapping(value):
        return {k: _pythonish(v) for k, v in value.items()}
    return value


def est3(content: Any) -> int:
    """`len(c)//3` for a string, else `len(json(c))//3` (repr on a JSON error)."""
    if isinstance(content, str):
        return len(content) // 3
    try:
        return len(_json(content)) // 3
    except (TypeError, ValueError):
        return len(content_repr(content)) // 3


def estimate_tokens(release: Release, content: Any) -> int:
    """`ContextUtils.estimate_tokens` of one content, as the release computes it."""
    if release == "0.1.16":
        text = content if isinstance(content, str) else _json(content)
        return max(len(text) // 3, 1)
    divisor = 4 if release == "0.1.17" else 3
    return max(len(sanitized_content(content)) // divisor, 1)


def flat_call(call: Any) -> dict[str, Any]:
    """`ToolCall.model_dump()`: the flat shape with nulls."""
    return {
        "id": call.id,
        "type": call.type,
        "name": call.name,
        "arguments": call.arguments,
        "index": call.extra.get("index") if hasattr(call, "extra") else None,
        "response_item_id": call.response_item_id,
    }


class StandardCounter:
    """The context's counter as a standard processor sees it, with each call site's fallback."""

    def __init__(
        self,
        release: Release,
        kind: CounterKind,
        cl100k: TokenCounter | None,
    ) -> None:
        self.release = release
        self.kind: CounterKind = kind
        self._cl100k = cl100k
        # by identity; each entry holds its message, so an id is never reused while cached
        self._pieces: dict[int, tuple[Message, int]] = {}
        self._texts: dict[str, int] = {}

    @property
    def exact(self) -> bool:
        """False when cl100k counting runs without the encoder (character fallback)."""
        return self.kind != "tiktoken" or (self._cl100k is not None and self._cl100k.exact)

    @property
    def class_name(self) -> str:
        """openJiuwen's class name of the counter (None without one)."""
        return {"tiktoken": "TiktokenCounter", "string_length": "StringLengthCounter"}.get(
            self.kind, "None"
        )

    # --- counter primitives ----------------------------------------------------------------

    def text(self, text: str) -> int:
        """`counter.count(text)` for a string."""
        if self.kind == "string_length":
            return len(text) // 3
        cached = self._texts.get(text)
        if cached is not None:
            return cached
        if self._cl100k is None or not self._cl100k.exact:
            value = len(text) // (3 if self.release == "0.1.19" else 4)
        else:
            value = self._cl100k.text_tokens(text)
        self._texts[text] = value
        return value

    def piece(self, message: Message) -> int:
        """What one message adds inside `count_messages` (no +3)."""
        cached = self._pieces.get(id(message))
        if cached is not None and cached[0] is message:
            return cached[1]
        value = self._compute_piece(message)
        self._pieces[id(message)] = (message, value)
        return value

    def _compute_piece(self, message: Message) -> int:
        if self.kind == "string_length":
            total = len(f"<|start|>{message.role}\n{_string_length_text(message.content)}<|end|>")
            value = total // 3
            if message.role == "assistant" and message.tool_calls:
                value += len(_json([flat_call(c) for c in message.tool_calls])) // 3
            return value
        if self.release != "0.1.16" and self._cl100k is not None and self._cl100k.exact:
            return self._cl100k.piece_tokens(message)
        if self.release != "0.1.16":
            return _sanitised_fallback_piece(self, message)
        value = self.text(f"<|start|>{message.role}\n{content_repr(message.content)}<|end|>")
        if message.role == "assistant" and message.tool_calls:
            value += self.text(_json([c.to_openai() for c in message.tool_calls]))
        return value

    def count_messages(self, messages: Sequence[Message]) -> int:
        """`counter.count_messages(list)` (requires a counter)."""
        if not messages:
            return 0
        return sum(self.piece(m) for m in messages) + OVERHEAD

    def count_tools(self, tools: Sequence[Tool]) -> int:
        """`counter.count_tools(list)` (requires a counter)."""
        if not tools:
            return 0
        total = 0
        for index, tool in enumerate(tools):
            body = _json(
                {
                    "name": tool.name,
                    "description": tool.description or "",
                    "parameters": tool.parameters,
                },
                separators=(",", ":"),
            )
            total += self.text(f"<|start|>functions.{tool.name}:{index}\n{body}<|end|>")
        return total + OVERHEAD

    # --- call sites (spec section 3.5) ------------------------------------------------------

    def util_count(self, messages: Sequence[Message]) -> int:
        """Compressor `util.count_messages_tokens` and `DialogueCompressor._count_messages_tokens`."""
        if not messages:
            return 0
        if self.kind == "none":
            return sum(est3(m.content) for m in messages)
        return self.count_messages(messages)

    def window_count(
        self, system: Sequence[Message], messages: Sequence[Message], tools: Sequence[Tool]
    ) -> int:
        """`RoundLevelCompressor._count_context_window_tokens`."""
        if self.kind == "none":
            total = sum(est3(m.content) for m in (*system, *messages))
            return total + sum(est3(_json(t.to_dict(), sort_keys=True)) for t in tools)
        return self.count_messages([*system, *messages]) + self.count_tools(tools)

    def mso_size(self, message: Message) -> int:
        """`MessageSummaryOffloader._message_size`."""
        if self.kind == "none":
            return est3(message.content)
        return self.count_messages([message])

    def guard_count(self, messages: Sequence[Message]) -> int:
        """`budget_guard.count_messages_tokens`."""
        if self.kind == "none":
            return sum(len(content_repr(m.content)) // 3 for m in messages)
        return self.count_messages(messages)

    def offloader_tokens(self, stored: Sequence[Message], new: Sequence[Message]) -> int:
        """MessageOffloader's token trigger: two list counts, 0 without a counter."""
        if self.kind == "none":
            return 0
        return self.count_messages(stored) + self.count_messages(new)

    def result_size(self, message: Message) -> int:
        """`ToolResultBudgetProcessor._message_size`."""
        if self.kind == "none":
            return estimate_tokens(self.release, message.content)
        return self.count_messages([message])

    def full_compact_count(self, messages: Sequence[Message]) -> int:
        """`FullCompactProcessor._count_context_window_tokens`."""
        if self.kind == "none":
            return sum(estimate_tokens(self.release, m.content) for m in messages)
        return self.count_messages(messages)

    def event_tokens(self, messages: Sequence[Message]) -> int:
        """`before/after.tokens` of a compression-state event."""
        if self.kind != "none":
            return self.count_messages(messages)
        chars = sum(len(content_repr(m.content or "")) for m in messages)
        return math.ceil(chars / (3 if self.release == "0.1.19" else 4))

    def statistic_tokens(self, content: Any) -> int:
        """The event statistic's `counter.count(content or "")` (list content: TypeError -> 0)."""
        if self.kind == "none":
            return 0
        value = content or ""
        if self.kind == "string_length":
            return len(content_repr(value)) // 3
        if not isinstance(value, str):
            return 0
        return self.text(value)


def _string_length_text(content: Any) -> str:
    if isinstance(content, str):
        return sanitize_text(content)
    parts: list[str] = []
    for part in content:
        if isinstance(part, str):
            parts.append(part)
        elif is_mapping(part):
            parts.append(str(part.get("text") or part.get("type") or ""))
        else:
            parts.append(str(part))
    return "\n".join(parts)


def _sanitised_fallback_piece(counter: StandardCounter, message: Message) -> int:
    """0.1.17/0.1.19 cl100k without the encoder: the shared counter's rule, chars per token."""
    fallback = TokenCounter("tiktoken_cl100k", None)
    if counter.release == "0.1.19":
        fallback = TokenCounter("tiktoken_cl100k", lambda text: len(text) // 3)
    return fallback.piece_tokens(message)
