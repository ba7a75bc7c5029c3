"""The context snapshot: everything one compressor decision depends on.

Also our interchange format (one JSON object per snapshot, or JSON Lines of them; the
parity corpus uses it). Keys: `id`, `processor`, `config`, `context_max`, `token_mode`,
`system_messages`, `messages`, `tools`, optional `tool_boundary`. Optional keys that tie a
snapshot to what openJiuwen logged (read by `inspector.sources.loader`, kept in `extra`
here): `session_id` and `context_id` (raw ids, as the debug records write them) and
`timestamp` (epoch seconds of the `threshold_check` whose context this is). With all three
and `processor`, the snapshot is the context of that one evaluation in a loaded debug log.
Keys that say which processor, family and release a snapshot is for (DESIGN.md, CLI
contract): `processor_family` (`forked`, the default, or `standard`), `openjiuwen_version`,
`engine_config`, and for the standard family's add hook `hook` and `added_from`. `config`
is kept raw (openJiuwen's field names) beside the forked `tuning` read from it, so a
strategy of any family builds its own settings from it.
`release_evidence` is not a key of the format: the file readers set it to the release facts
they saw around the context (a dump's usage details, the linked debug run's previews and
retry messages, an `llm_request.jsonl` beside it), and the strategies pass it to
`core.releases.choose_counting`; it never takes part in comparisons.
Unknown keys (`expected`, `generator`, ...) are tolerated and kept in `extra`.
The envelope's types (strict, NaN and huge integers refused, each error naming its key) are
checked where files are read, by `inspector.formats.SnapshotEnvelope`; this module builds
the snapshot from a checked object and guards only what it needs to build it.
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
    #: The processor's class name as the source wrote it (None: not recorded).
    processor_name: str | None = None
    #: `forked` (openJiuwen's forked compressors, the default) or `standard`.
    family: str = "forked"
    #: The openJiuwen release the source says it was written by (None: not recorded).
    openjiuwen_version: str | None = None
    #: The processor's own config as recorded, by openJiuwen's field names.
    config: Mapping[str, Any] = field(default_factory=dict)
    #: The `ContextEngineConfig` fields recorded with the context.
    engine_config: Mapping[str, Any] = field(default_factory=dict)
    #: Which processor hook decided: `add_messages` or `get_context_window` (None: not recorded).
    hook: str | None = None
    #: For the add hook: index of the first message of the incoming batch.
    added_from: int | None = None
    #: Release facts the source saw around the context (None: the reader gave none): an
    #: `ArtifactEvidence` of `core.releases.detect`, typed Any because core.releases imports
    #: this module and core has no import cycles.
    release_evidence: Any = field(default=None, compare=False, repr=False)

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
        if self.family != "forked":
            out["processor_family"] = self.family
            out["processor"] = self.processor_name or out["processor"]
            out["config"] = dict(self.config)
        if self.openjiuwen_version is not None:
            out["openjiuwen_version"] = self.openjiuwen_version
        if self.engine_config:
            out["engine_config"] = dict(self.engine_config)
        if self.hook is not None:
            out["hook"] = self.hook
        if self.added_from is not None:
            out["added_from"] = self.added_from
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
    if raw.get("processor_family", "forked") != "forked":
        processor = None  # a standard processor's name is not a forked tuning's processor
    if processor is not None:
        if not isinstance(processor, str):
            raise ConfigError("processor", processor, "a processor name")
        values["processor"] = parse_processor(processor)
        present.add("processor")
    config = raw.get("config") or {}
    if not isinstance(config, Mapping):
        raise FormatError("'config' must be an object")
    if raw.get("processor_family", "forked") != "forked":
        config = {}  # a standard processor's config is read by its own strategy
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
    family = raw.get("processor_family", "forked")
    if family not in ("forked", "standard"):
        raise FormatError(f"'processor_family' must be 'forked' or 'standard', got {family!r}")
    config = raw.get("config") or {}
    engine_config = raw.get("engine_config") or {}
    if not isinstance(engine_config, Mapping):
        raise FormatError("'engine_config' must be an object")
    version, hook, added_from = (
        raw.get("openjiuwen_version"),
        raw.get("hook"),
        raw.get("added_from"),
    )
    processor_name = raw.get("processor")
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
        "processor_family",
        "openjiuwen_version",
        "engine_config",
        "hook",
        "added_from",
    }
    return ContextSnapshot(
        id=str(raw.get("id") or default_id),
        system_messages=parse_messages(system, "system_messages"),
        messages=parse_messages(messages),
        tools=parse_tools(tools),
        tuning=tuning,
        recorded_fields=frozenset(present),
        extra={k: v for k, v in raw.items() if k not in known},
        processor_name=processor_name if isinstance(processor_name, str) else None,
        family=family,
        openjiuwen_version=version,
        config=dict(config),
        engine_config=dict(engine_config),
        hook=hook,
        added_from=added_from,
    )


def looks_like_snapshot(raw: Any) -> bool:
    """True for an object in our snapshot format (messages plus a processor or context_max)."""
    return (
        isinstance(raw, Mapping)
        and isinstance(raw.get("messages"), list)
        and ("processor" in raw or "context_max" in raw or "system_messages" in raw)
    )
