"""What every format model shares: one model config, strict number types, and one translation
of a pydantic `ValidationError` into our `FormatError` naming the field as the file spells it.

The rules (the input boundary of every reader): unknown keys are kept (`extra="allow"`);
types are strict (`True` is not an integer, `"3"` is not an integer, `3.5` is not an
integer; an integer is a number); NaN and Infinity are refused; an integer beyond the range
of a float (`1` followed by 400 zeros) is refused where a number is expected, since every
later computation on it would overflow. Must not import anything outside pydantic, the
standard library and `inspector.core`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
)
from pydantic_core import PydanticCustomError

from inspector.core.errors import FormatError

#: The largest magnitude a number may have (a float's range).
FLOAT_MAX = sys.float_info.max


class FormatModel(BaseModel):
    """Base of every format model: unknown keys kept, strict types, no NaN, immutable."""

    model_config = ConfigDict(
        extra="allow", strict=True, allow_inf_nan=False, frozen=True, defer_build=True
    )

    def extras(self) -> dict[str, Any]:
        """The keys the model does not declare, as read."""
        return dict(self.__pydantic_extra__ or {})


def _out_of_range(value: int) -> PydanticCustomError:
    return PydanticCustomError(
        "out_of_range",
        "an integer of {digits} digits, beyond what a number can hold",
        {"digits": len(str(abs(value))) if abs(value) < 10**4000 else ">4000"},
    )


def extras_in_range(values: dict[str, Any] | None) -> None:
    """Refuse an integer beyond a float's range among a model's undeclared top-level keys."""
    for key, value in (values or {}).items():
        if type(value) is int and (value > FLOAT_MAX or value < -FLOAT_MAX):
            error = _out_of_range(value)
            raise PydanticCustomError(
                "extra_out_of_range", error.message_template, {**(error.context or {}), "key": key}
            )


def _number_in_range(value: Any) -> Any:
    if type(value) is int and (value > FLOAT_MAX or value < -FLOAT_MAX):
        raise _out_of_range(value)
    return value


#: The largest integer a float can stand for: bounds checked natively by pydantic-core
#: (a Python validator per integer would cost a call each).
_INT_MAX = int(FLOAT_MAX)

#: An integer (not a boolean, not text, not 3.0) within a float's range.
Int = Annotated[int, Field(ge=-_INT_MAX, le=_INT_MAX), WithJsonSchema({"type": "integer"})]
#: An integer >= 0 within a float's range (a count, a token total).
Count = Annotated[int, Field(ge=0, le=_INT_MAX), WithJsonSchema({"type": "integer", "minimum": 0})]
#: A finite number (an integer is accepted and read as a float).
Number = Annotated[float, BeforeValidator(_number_in_range)]

_MESSAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "one message as openJiuwen serializes it (unknown keys are kept)",
    "required": ["role"],
    "properties": {
        "role": {"type": "string"},
        "content": {"anyOf": [{"type": "string"}, {"type": "array"}, {"type": "null"}]},
        "name": {"type": ["string", "null"]},
        "tool_calls": {"anyOf": [{"type": "array", "items": {"type": "object"}}, {"type": "null"}]},
        "tool_call_id": {"type": ["string", "null"]},
        "usage_metadata": {"type": ["object", "null"]},
        "metadata": {"type": ["object", "null"]},
    },
    "additionalProperties": True,
}
_TOOL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "a tool: openJiuwen's {type, name, description, parameters} or OpenAI's {type, function}",
    "additionalProperties": True,
}

#: A list of messages. Validated as a plain list here: the messages themselves are read by
#: the fast slots-dataclass reader (`inspector.core.messages`), which costs a quarter of the
#: memory of one model per message; the schema still describes each message.
MessageList = Annotated[list[Any], WithJsonSchema({"type": "array", "items": _MESSAGE_SCHEMA})]
#: A list of tools (read by `inspector.core.messages.parse_tools`).
ToolList = Annotated[list[Any], WithJsonSchema({"type": "array", "items": _TOOL_SCHEMA})]

_WORDS = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "string_type": "a string",
    "bool_type": "true or false",
    "list_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "union_tag_invalid": "a known kind",
}


def type_name(value: Any) -> str:
    """A JSON value's kind in words ("a string", "an integer", ...)."""
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def key_path(loc: Sequence[int | str], prefix: str = "") -> str:
    """A pydantic location as the file spells it: ("trigger", "context_max") -> "trigger.context_max"."""
    text = prefix
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _shown(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > FLOAT_MAX:
        return "a huge integer"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def describe_error(details: Any, path: str) -> str:
    """One pydantic error detail in our words, naming `path`."""
    kind, value, ctx = details["type"], details.get("input"), details.get("ctx") or {}
    if kind in _WORDS:
        return f"'{path}' must be {_WORDS[kind]}, got {type_name(value)}"
    if kind == "finite_number":
        return f"'{path}' must be a finite number, got {_shown(value)}"
    if kind == "out_of_range":
        return f"'{path}' is out of range: {details['msg']}"  # the digits, never the value
    if kind == "extra_out_of_range":
        return f"'{key_path([ctx['key']], path)}' is out of range: {details['msg']}"
    if (
        kind in ("less_than_equal", "greater_than_equal")
        and abs(ctx.get("le", ctx.get("ge", 0))) == _INT_MAX
    ):
        return f"'{path}' is out of range: {_out_of_range(value).message()}"
    if kind == "greater_than_equal" and ctx.get("ge") == 0:
        return f"'{path}' must not be negative, got {_shown(value)}"
    if kind == "literal_error":
        return f"'{path}' must be {ctx.get('expected')}, got {_shown(value)}"
    if kind == "missing":
        return f"'{path}' is missing"
    return f"'{path}': {details['msg']}"


def format_error(error: ValidationError, prefix: str = "") -> FormatError:
    """The first problem of a validation error as a FormatError located by key ("key a.b[2]")."""
    details = error.errors(include_url=False)[0]
    path = key_path(details["loc"], prefix) or prefix or "document"
    if details["type"] == "extra_out_of_range":
        where = key_path([(details.get("ctx") or {})["key"]], path)
        return FormatError(describe_error(details, path), f"key {where}")
    return FormatError(describe_error(details, path), f"key {path}")


def validate(model: type[FormatModel], raw: Any, prefix: str = "") -> Any:
    """`model.model_validate(raw)`, raising our FormatError instead of a ValidationError."""
    try:
        return model.model_validate(raw)
    except ValidationError as error:
        raise format_error(error, prefix) from None
