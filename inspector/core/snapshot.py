"""The context snapshot: everything one compressor decision depends on.

Also our interchange format (one JSON object per snapshot, or JSON Lines of them; the
parity corpus uses it). Keys: `id`, `processor`, `config`, `context_max`, `token_mode`,
`system_messages`, `messages`, `tools`, optional `tool_boundary`. Optional keys that tie a
snapshot to what openJiuwen logged (read by `inspector.sources.loader`, kept in `extra`
here): `session_id` and `context_id` (raw ids, as the debug records write them) and
`timestamp` (epoch seconds of the `threshold_check` whose context this is). With all three
and `processor`, the snapshot is the context of that one evaluation in a loaded debug log.
Unknown keys (`expected`, `generator`, ...) are tolerated and kept in `extra`.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from inspector.core.errors import ConfigError, FormatError
from inspector.core.messages import Message, Tool, parse_messages, parse_tools
from inspector.core.tuning import DEFAULT_KEEP_RECENT, Tuning, parse_processor

#: Config keys of openJiuwen's processor configs and the Tuning fields they set.
_CONFIG_KEYS = {
    "trigger_context_ratio": "trigger_ratio",
    "min_target_context_ratio": "min_target_ratio",
    "keep_recent_messages": "keep_recent",
}


@dataclass(frozen=True, slots=True)
class ContextSnapshot:
    """System messages, context messages, tools, and the tuning the source recorded."""

    id: str
    system_messages: tuple[Message, ...]
    messages: tuple[Message, ...]
    tools: tuple[Tool, ...]
    tuning: Tuning
    #: Which tuning values the source actually recorded (the rest are defaults).
    recorded_fields: frozenset[str] = frozenset()
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Serialize in the snapshot interchange format."""
        config: dict[str, Any] = {
            "trigger_context_ratio": self.tuning.trigger_ratio,
            "min_target_context_ratio": self.tuning.min_target_ratio,
        }
        if self.tuning.processor in ("current_round", "round_level"):
            config["keep_recent_messages"] = self.tuning.keep_recent
        out: dict[str, Any] = {
            "id": self.id,
            "processor": self.tuning.processor_class,
            "config": config,
            "context_max": self.tuning.context_max,
            "token_mode": self.tuning.token_mode,
            "system_messages": [m.to_dict() for m in self.system_messages],
            "messages": [m.to_dict() for m in self.messages],
            "tools": [t.to_dict() for t in self.tools],
        }
        if not self.tuning.tool_boundary:
            out["tool_boundary"] = False
        return out


def tuning_from_record(
    raw: Mapping[str, Any], base: Tuning | None = None
) -> tuple[Tuning, set[str]]:
    """Read processor, config, context_max and token_mode from a snapshot-like object.

    Returns the tuning and the names of the fields that were present.
    """
    values: dict[str, Any] = {}
    present: set[str] = set()
    processor = raw.get("processor")
    if processor is not None:
        if not isinstance(processor, str):
            raise ConfigError("processor", processor, "a processor name")
        values["processor"] = parse_processor(processor)
        present.add("processor")
    config = raw.get("config") or {}
    if not isinstance(config, Mapping):
        raise FormatError("'config' must be an object")
    for key, name in _CONFIG_KEYS.items():
        if key in config and config[key] is not None:
            values[name] = config[key]
            present.add(name)
    if raw.get("context_max") is not None:
        values["context_max"] = raw["context_max"]
        present.add("context_max")
    if raw.get("token_mode") is not None:
        values["token_mode"] = raw["token_mode"]
        present.add("token_mode")
    if raw.get("tool_boundary") is False:
        values["tool_boundary"] = False
    start = base or Tuning()
    if "keep_recent" not in values and "processor" in values:
        values["keep_recent"] = DEFAULT_KEEP_RECENT[values["processor"]]
    return start.with_(**values), present


def snapshot_from_dict(raw: Any, default_id: str = "snapshot") -> ContextSnapshot:
    """Read one snapshot object; `expected`, `generator` and other unknown keys are kept aside."""
    if not isinstance(raw, Mapping):
        raise FormatError(f"a snapshot must be an object, got {type(raw).__name__}")
    messages = raw.get("messages")
    if not isinstance(messages, list):
        raise FormatError("a snapshot needs a 'messages' list")
    system = raw.get("system_messages") or []
    tools = raw.get("tools") or []
    if not isinstance(system, list) or not isinstance(tools, list):
        raise FormatError("'system_messages' and 'tools' must be lists")
    tuning, present = tuning_from_record(raw)
    known = {
        "id",
        "processor",
        "config",
        "context_max",
        "token_mode",
        "system_messages",
        "messages",
        "tools",
        "tool_boundary",
    }
    return ContextSnapshot(
        id=str(raw.get("id") or default_id),
        system_messages=parse_messages(system, "system_messages"),
        messages=parse_messages(messages),
        tools=parse_tools(tools),
        tuning=tuning,
        recorded_fields=frozenset(present),
        extra={k: v for k, v in raw.items() if k not in known},
    )


def looks_like_snapshot(raw: Any) -> bool:
    """True for an object in our snapshot format (messages plus a processor or context_max)."""
    return (
        isinstance(raw, Mapping)
        and isinstance(raw.get("messages"), list)
        and ("processor" in raw or "context_max" in raw or "system_messages" in raw)
    )
