"""Messages and tools as openJiuwen serializes them, read leniently and written back faithfully.

Both tool-call shapes are accepted (OpenAI nested `{id,type,function:{name,arguments}}` and
flat `{id,type,name,arguments}`); unknown keys are kept in `extra` and written back.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inspector.core.errors import FormatError
from inspector.core.frozen import plain_init

#: Prefixes that make a user message "internal" (not a real user turn), compared after lstrip().
INTERNAL_USER_PREFIXES: tuple[str, ...] = (
    "<system-reminder>",
    "<memory_block_current>",
    "<memory_block_dialogue>",
    "<memory_block_round>",
    "<memory_block_session>",
    "<recovered_context>",
    "[STATE_REINJECTION]",
)

#: The largest magnitude a number may have (a float's range): a usage total beyond it is refused.
FLOAT_MAX = sys.float_info.max

_MESSAGE_KEYS = frozenset(
    {"role", "content", "name", "tool_calls", "tool_call_id", "usage_metadata", "metadata"}
)
_TOOL_CALL_KEYS = frozenset(
    {"id", "type", "function", "name", "arguments", "index", "response_item_id"}
)


def is_mapping(value: Any) -> bool:
    """isinstance(value, Mapping), with a fast path for plain dicts (the ABC check is slow)."""
    return type(value) is dict or isinstance(value, Mapping)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call of an assistant message, kept in openJiuwen's flat form."""

    id: str | None
    name: str
    arguments: str
    type: str = "function"
    response_item_id: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, raw: Any) -> ToolCall:
        """Read a nested or flat tool call; `arguments` given as an object is JSON-encoded.

        A plain JSON shape is built without the checks (`_plain_tool_call`); anything else
        takes `checked_from_dict`, the one statement of the rules."""
        if type(raw) is dict and cls is ToolCall:
            made = _plain_tool_call(raw)
            if made is not None:
                return made
        return cls.checked_from_dict(raw)

    @classmethod
    def checked_from_dict(cls, raw: Any) -> ToolCall:
        """`from_dict` with every rule checked, whatever the shape (the reference path)."""
        if not is_mapping(raw):
            raise FormatError(f"a tool call must be an object, got {type(raw).__name__}")
        function = raw.get("function")
        if is_mapping(function):
            name = function.get("name")
            arguments = function.get("arguments")
        else:
            name = raw.get("name")
            arguments = raw.get("arguments")
        if arguments is None:
            arguments = ""
        elif not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        call_id = raw.get("id")
        return cls(
            id=None if call_id is None else str(call_id),
            name="" if name is None else str(name),
            arguments=arguments,
            type=str(raw.get("type") or "function"),
            response_item_id=raw.get("response_item_id"),
            extra={k: v for k, v in raw.items() if k not in _TOOL_CALL_KEYS},
        )

    def to_openai(self) -> dict[str, Any]:
        """The nested dict openJiuwen dumps (and counts): id, type, function, [response_item_id]."""
        out: dict[str, Any] = {
            "id": self.id,
            "type": self.type,
            "function": {"name": self.name, "arguments": self.arguments},
        }
        if self.response_item_id is not None:
            out["response_item_id"] = self.response_item_id
        return out


@dataclass(frozen=True, slots=True)
class Message:
    """One context message; `content` is a string or a list of blocks, kept as read."""

    role: str
    content: Any = ""
    name: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    usage_metadata: Mapping[str, Any] | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, raw: Any) -> Message:
        """Read one serialized message (openJiuwen dump shape); unknown keys go to `extra`.

        A plain JSON shape is built without the checks (`_plain_message`); anything else
        takes `checked_from_dict`, the one statement of the rules."""
        if type(raw) is dict and cls is Message:
            made = _plain_message(raw)
            if made is not None:
                return made
        return cls.checked_from_dict(raw)

    @classmethod
    def checked_from_dict(cls, raw: Any) -> Message:
        """`from_dict` with every rule checked, whatever the shape (the reference path)."""
        if not is_mapping(raw):
            raise FormatError(f"a message must be an object, got {type(raw).__name__}")
        role = raw.get("role")
        if not isinstance(role, str):
            raise FormatError("a message needs a string 'role'")
        content = raw.get("content", "")
        if content is None:
            content = ""
        elif not isinstance(content, str | list):
            raise FormatError(
                f"message content must be a string or a list, got {type(content).__name__}"
            )
        calls_raw = raw.get("tool_calls") or ()
        if not isinstance(calls_raw, list | tuple):
            raise FormatError("tool_calls must be a list")
        usage = raw.get("usage_metadata")
        if usage is not None:
            if not is_mapping(usage):
                raise FormatError("usage_metadata must be an object")
            total = usage.get("total_tokens")
            if type(total) is int and not -FLOAT_MAX <= total <= FLOAT_MAX:
                raise FormatError(
                    f"usage_metadata.total_tokens is out of range: an integer of "
                    f"{len(str(abs(total))) if abs(total) < 10**4000 else '>4000'} digits, "
                    "beyond what a number can hold"
                )
        metadata = raw.get("metadata")
        if not is_mapping(metadata):
            metadata = {}
        tool_call_id = raw.get("tool_call_id")
        name = raw.get("name")
        return cls(
            role=role,
            content=content,
            name=None if name is None else str(name),
            tool_calls=tuple(ToolCall.checked_from_dict(c) for c in calls_raw),
            tool_call_id=None if tool_call_id is None else str(tool_call_id),
            usage_metadata=usage,
            metadata=metadata,
            extra={k: v for k, v in raw.items() if k not in _MESSAGE_KEYS},
        )

    def to_dict(self) -> dict[str, Any]:
        """Serialize like openJiuwen's `model_dump(exclude_none=True)`, keeping unknown keys."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.name is not None:
            out["name"] = self.name
        if self.role == "assistant":
            if self.metadata:
                out["metadata"] = dict(self.metadata)
            if self.tool_calls:
                out["tool_calls"] = [c.to_openai() for c in self.tool_calls]
            if self.usage_metadata is not None:
                out["usage_metadata"] = dict(self.usage_metadata)
            out["finish_reason"] = self.extra.get("finish_reason", "null")
        else:
            out["metadata"] = dict(self.metadata)
            if self.tool_call_id is not None or self.role == "tool":
                out["tool_call_id"] = self.tool_call_id if self.tool_call_id is not None else ""
            if self.tool_calls:
                out["tool_calls"] = [c.to_openai() for c in self.tool_calls]
            if self.usage_metadata is not None:
                out["usage_metadata"] = dict(self.usage_metadata)
        for key, value in self.extra.items():
            out.setdefault(key, value)
        return out

    @property
    def is_real_user(self) -> bool:
        """True for a user turn typed by a person, not an engine-injected user message."""
        if self.role != "user":
            return False
        if not isinstance(self.content, str):
            return True
        return not self.content.lstrip().startswith(INTERNAL_USER_PREFIXES)

    @property
    def usage_total(self) -> int | None:
        """`usage_metadata.total_tokens` as an int, or None when absent or not a number."""
        if self.usage_metadata is None:
            return None
        total = self.usage_metadata.get("total_tokens")
        if isinstance(total, bool) or not isinstance(total, int | float):
            return None
        return int(total)

    @property
    def usage_stale(self) -> bool:
        """True when the engine marked this usage record stale after a context rewrite."""
        return bool(self.metadata.get("context_usage_stale"))

    @property
    def call_ids(self) -> tuple[str, ...]:
        """Non-empty tool-call ids of this assistant message, as strings."""
        return tuple(c.id for c in self.tool_calls if c.id)

    def text_preview(self, limit: int = 120) -> str:
        """A one-line human preview of the content (images shown as [image])."""
        if isinstance(self.content, str):
            text = self.content
        else:
            parts: list[str] = []
            for block in self.content:
                if isinstance(block, str):
                    parts.append(block)
                elif isinstance(block, Mapping):
                    kind = block.get("type")
                    if kind in ("image_url", "image") or "image_url" in block or "image" in block:
                        parts.append("[image]")
                    elif "text" in block:
                        parts.append(str(block.get("text") or ""))
                    else:
                        parts.append(f"[{kind or 'block'}]")
            text = " ".join(parts)
        if not text and self.tool_calls:
            text = ", ".join(f"{c.name}({c.arguments})" for c in self.tool_calls)
        text = " ".join(text.split())
        return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class Tool:
    """A tool offered to the model: `{type, name, description, parameters}` plus unknown keys."""

    name: str
    description: str | None = ""
    parameters: Any = field(default_factory=dict)
    type: str = "function"
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, raw: Any) -> Tool:
        """Read openJiuwen's ToolInfo dump or OpenAI's `{type, function:{...}}` form."""
        if not isinstance(raw, Mapping):
            raise FormatError(f"a tool must be an object, got {type(raw).__name__}")
        body = raw.get("function") if isinstance(raw.get("function"), Mapping) else raw
        assert isinstance(body, Mapping)
        known = {"type", "name", "description", "parameters", "function"}
        return cls(
            name=str(body.get("name") or ""),
            description=body.get("description"),
            parameters=body.get("parameters", {}),
            type=str(raw.get("type") or "function"),
            extra={k: v for k, v in raw.items() if k not in known},
        )

    def to_dict(self) -> dict[str, Any]:
        """Serialize as openJiuwen's ToolInfo dump."""
        out: dict[str, Any] = {
            "type": self.type,
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
        }
        out.update({k: v for k, v in self.extra.items() if k not in out})
        return out


# --- the plain shapes, built without the checks ---------------------------------------
#
# What JSON gives (exact dict, str, list, int, None) in the shapes `checked_from_dict`
# surely accepts is built without the dataclass `__init__` (which sets each field through
# `object.__setattr__`): `core.frozen.plain_init` fills a mutable twin with the same slots
# by plain attribute stores (a third of the cost of calling each slot's setter), then
# makes it the frozen class by assigning `__class__`.
# Each helper returns None for anything else, which then takes the checked path: the
# rules are stated there only, and `tests/test_folder2_messages.py` builds every message
# of the corpora both ways (`tests/test_fullload_messages.py`: the twins, whole lists).


#: `Message` and `ToolCall` from every field's value, without the frozen `__init__`
#: (`core.frozen`: a big dump holds 20,000 messages).
_made_message = plain_init(Message)
_made_tool_call = plain_init(ToolCall)


def _plain_tool_call(raw: dict[str, Any]) -> ToolCall | None:
    """`ToolCall.checked_from_dict(raw)` for a plain shape (exact types), else None."""
    function = raw.get("function")
    if type(function) is dict:
        name = function.get("name")
        arguments = function.get("arguments")
    elif function is None:
        name = raw.get("name")
        arguments = raw.get("arguments")
    else:
        return None
    call_id = raw.get("id")
    kind = raw.get("type")
    if (
        (arguments is not None and type(arguments) is not str)
        or (call_id is not None and type(call_id) is not str)
        or (name is not None and type(name) is not str)
        or (kind and type(kind) is not str)
    ):
        return None
    return _made_tool_call(
        call_id,
        "" if name is None else name,
        "" if arguments is None else arguments,
        kind or "function",
        raw.get("response_item_id"),
        {}
        if _TOOL_CALL_KEYS.issuperset(raw)
        else {k: v for k, v in raw.items() if k not in _TOOL_CALL_KEYS},
    )


def _plain_calls(calls_raw: list[Any]) -> tuple[ToolCall, ...]:
    """The tool calls of a plain message: each built without the checks while they are
    plain; from the first that is not, every call through `ToolCall.from_dict`."""
    made: list[ToolCall] = []
    for raw in calls_raw:
        call = _plain_tool_call(raw) if type(raw) is dict else None
        if call is None:
            return tuple(map(ToolCall.from_dict, calls_raw))
        made.append(call)
    return tuple(made)


def _plain_message(raw: dict[str, Any]) -> Message | None:
    """`Message.checked_from_dict(raw)` for a plain shape (exact types), else None."""
    role = raw.get("role")
    content = raw.get("content", "")
    if type(role) is not str:
        return None
    if content is None:
        content = ""
    elif type(content) is not str and type(content) is not list:
        return None
    calls_raw = raw.get("tool_calls")
    if calls_raw and type(calls_raw) is not list:
        return None
    usage = raw.get("usage_metadata")
    if usage is not None:
        if type(usage) is not dict:
            return None
        total = usage.get("total_tokens")
        if type(total) is int and not -FLOAT_MAX <= total <= FLOAT_MAX:
            return None
    metadata = raw.get("metadata")
    if type(metadata) is not dict:
        if metadata is not None:
            return None
        metadata = {}
    call_id = raw.get("tool_call_id")
    name = raw.get("name")
    if (call_id is not None and type(call_id) is not str) or (
        name is not None and type(name) is not str
    ):
        return None
    # the calls last, as the checked path reads them: after every other check
    calls: tuple[ToolCall, ...] = _plain_calls(calls_raw) if calls_raw else ()
    return _made_message(
        role,
        content,
        name,
        calls,
        call_id,
        usage,
        metadata,
        {}
        if _MESSAGE_KEYS.issuperset(raw)
        else {k: v for k, v in raw.items() if k not in _MESSAGE_KEYS},
    )


def parse_messages(raw: Sequence[Any], what: str = "messages") -> tuple[Message, ...]:
    """Read a list of serialized messages, naming the index of a bad one."""
    made: list[Message] = []
    for item in raw:  # plain messages built straight (`Message.from_dict`'s first step)
        message = _plain_message(item) if type(item) is dict else None
        if message is None:
            break
        made.append(message)
    else:
        return tuple(made)
    try:
        return tuple([Message.from_dict(item) for item in raw])
    except FormatError:
        pass  # the same again, item by item, to name the bad one
    out: list[Message] = []
    for index, item in enumerate(raw):
        try:
            out.append(Message.from_dict(item))
        except FormatError as error:
            raise FormatError(f"{what}[{index}]: {error.message}") from None
    return tuple(out)


def parse_tools(raw: Sequence[Any]) -> tuple[Tool, ...]:
    """Read a list of tools, naming the index of a bad one."""
    out: list[Tool] = []
    for index, item in enumerate(raw):
        try:
            out.append(Tool.from_dict(item))
        except FormatError as error:
            raise FormatError(f"tools[{index}]: {error.message}") from None
    return tuple(out)
