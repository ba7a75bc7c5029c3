"""openJiuwen compression dumps: read leniently, check types, rebuild the context before.

A dump (`<ms>_<Processor>_<safe session>.json`) is written after an applied compression.
Every key is optional (older engine versions lack some); unknown keys are kept in the raw
record; a key that is present with the wrong type is an error naming its JSON path.

The pre-compression context is rebuilt as `messages_sent_to_model` without its leading
system messages and its final prompt message, followed by the last `protected_tail_count`
messages of `context_after.messages`. What the dump cannot give back exactly:

* the `context_usage_stale` flags of kept assistant messages: openJiuwen sets the flag on
  every kept usage record when it replaces the context, before writing the dump. The
  rebuild assumes those records were fresh before (the usual case) and checks that
  against the linked `threshold_check` total; if the record disagrees and the flags as
  dumped reproduce it, the flags are kept. Either way `recorded["stale_usage"]` says so.
* the tuning: only the processor and context_max are written. The trigger ratio comes
  from the linked check's threshold, keep_recent from the span first built; the token mode
  from which counter reproduces `trigger.total_tokens_before`.
* the span before an overflow shrink (only the linked `span_built` record has it).
Must not import Textual or Rich.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inspector.core.artifact import Artifact
from inspector.core.engine import PricedContext
from inspector.core.errors import ConfigError, FormatError
from inspector.core.messages import Message, Tool, parse_messages, parse_tools
from inspector.core.snapshot import ContextSnapshot
from inspector.core.timeline import DumpRef, EvaluationRun
from inspector.core.tokens import TokenCounter, usage_tail_tokens
from inspector.core.tuning import DEFAULT_KEEP_RECENT, Tuning, parse_processor

DUMP_NAME_RE = re.compile(r"^(\d{10,16})_([A-Za-z0-9_.-]+?Compressor)_(.+)\.json$")
#: Kept under its old private name for the benchmarks that import it.
_DUMP_NAME_RE = DUMP_NAME_RE
_DUMP_SECTIONS = (
    "trigger",
    "span",
    "compression_request",
    "compression_response",
    "context_after",
    "benefit",
)

CounterProvider = Callable[[], dict[str, TokenCounter]]
_MEMORY_PREFIXES = (
    "<memory_block_current>",
    "<memory_block_dialogue>",
    "<memory_block_round>",
    "<memory_block_session>",
)


def _basename(path: str) -> str:
    """os.path.basename, cheaper where "/" is the only separator (ids are asked for often)."""
    return path.rpartition(os.sep)[2] if os.altsep is None else os.path.basename(path)


def looks_like_dump(document: Any) -> bool:
    """True for an object that is a compression dump (current or older schema)."""
    if not isinstance(document, Mapping):
        return False
    if isinstance(document.get("processor_type"), str) and any(
        k in document for k in _DUMP_SECTIONS
    ):
        return True
    return "compression_request" in document and (
        "context_after" in document or "benefit" in document
    )


class _Checker:
    """Reads typed fields by dotted path; a present key of the wrong type is a FormatError."""

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.raw = raw

    def section(self, name: str) -> Mapping[str, Any]:
        value = self.raw.get(name)
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise FormatError(f"'{name}' must be an object, got {_type_name(value)}", f"key {name}")
        return value

    def get(self, path: str, kind: str) -> Any:
        parts = path.split(".")
        node: Any = self.raw
        for part in parts[:-1]:
            node = node.get(part) if isinstance(node, Mapping) else None
            if node is None:
                return None
        if not isinstance(node, Mapping):
            return None
        value = node.get(parts[-1])
        if value is None:
            return None
        if not _KIND_CHECKS[kind](value):
            words = {
                "int": "an integer",
                "number": "a number",
                "str": "a string",
                "list": "a list",
                "object": "an object",
            }[kind]
            raise FormatError(f"'{path}' must be {words}, got {_type_name(value)}", f"key {path}")
        if kind == "int" and value < 0:
            raise FormatError(f"'{path}' must not be negative, got {value}", f"key {path}")
        return value


#: Whether a value has the kind `_Checker.get` asks for.
_KIND_CHECKS: dict[str, Callable[[Any], bool]] = {
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v),
    "str": lambda v: isinstance(v, str),
    "list": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, Mapping),
}


def _type_name(value: Any) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
    }.get(type(value), type(value).__name__)


@dataclass(frozen=True, slots=True)
class DumpFile:
    """A type-checked compression dump; absent keys are None, the raw object is kept."""

    source: str
    raw: Mapping[str, Any]
    processor: str | None
    session_id: str | None
    context_id: str | None
    timestamp: float | None
    context_max: int | None
    tokens_before: int | None
    target_tokens: int | None
    prefix_count: int | None
    compress_count: int | None
    tail_count: int | None
    prompt: str | None
    system_count: int | None
    tools_raw: list[Any] | None
    sent_raw: list[Any] | None
    after_raw: list[Any] | None
    tokens_after: int | None
    reduction: int | None
    reduction_ratio: float | None
    summary: str | None
    usage: Mapping[str, Any] | None
    name_session: str | None = None

    @property
    def id(self) -> str:
        """The file name without `.json` (unique: it holds the time in ms and the session)."""
        name = _basename(self.source)
        return name[:-5] if name.endswith(".json") else name

    @property
    def ref(self) -> DumpRef:
        """What linking to debug records needs."""
        return DumpRef(
            self.id,
            self.processor,
            self.session_id or self.name_session,
            self.context_id,
            self.timestamp,
        )


def parse_dump(document: Mapping[str, Any], source: str) -> DumpFile:
    """Check a dump's known keys for type; raise FormatError naming the first bad one."""
    check = _Checker(document)
    for name in _DUMP_SECTIONS:
        check.section(name)
    name_match = DUMP_NAME_RE.match(_basename(source))
    processor = check.get("processor_type", "str") or (name_match.group(2) if name_match else None)
    timestamp = check.get("timestamp", "number")
    if timestamp is None and name_match:
        timestamp = int(name_match.group(1)) / 1000
    usage = check.get("compression_response.usage", "object")
    ratio = check.get("benefit.reduction_ratio", "number")
    return DumpFile(
        source=source,
        raw=document,
        processor=processor,
        session_id=check.get("session_id", "str"),
        context_id=check.get("context_id", "str"),
        timestamp=None if timestamp is None else float(timestamp),
        context_max=check.get("trigger.context_max", "int"),
        tokens_before=_first(
            check.get("benefit.tokens_before", "int"),
            check.get("trigger.total_tokens_before", "int"),
        ),
        target_tokens=check.get("trigger.target_tokens", "int"),
        prefix_count=check.get("span.preserved_prefix_count", "int"),
        compress_count=check.get("span.messages_to_compress_count", "int"),
        tail_count=_first(
            check.get("span.protected_tail_count", "int"),
            check.get("compression_request.exclude_recent_messages", "int"),
        ),
        prompt=check.get("compression_request.prompt", "str"),
        system_count=check.get("compression_request.system_messages_count", "int"),
        tools_raw=check.get("compression_request.tools", "list"),
        sent_raw=check.get("compression_request.messages_sent_to_model", "list"),
        after_raw=check.get("context_after.messages", "list"),
        tokens_after=_first(
            check.get("benefit.tokens_after", "int"),
            check.get("context_after.total_tokens_after", "int"),
        ),
        reduction=check.get("benefit.reduction", "int"),
        reduction_ratio=None if ratio is None else float(ratio),
        summary=check.get("compression_response.extracted_summary", "str"),
        usage=usage,
        name_session=name_match.group(3) if name_match else None,
    )


def _first(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def _parse_list(raw: list[Any], path: str) -> tuple[Message, ...]:
    try:
        return parse_messages(raw, path)
    except FormatError as error:
        raise FormatError(error.message, f"key {error.message.split(':', 1)[0]}") from None


@dataclass(slots=True)
class Rebuild:
    """The rebuilt context before compression, with what could not be recovered, in words."""

    system_messages: tuple[Message, ...] = ()
    messages: tuple[Message, ...] | None = None
    tools: tuple[Tool, ...] = ()
    after: tuple[Message, ...] | None = None
    #: Indices (in `messages`) of kept assistant messages whose stale flag the compression set.
    stale_candidates: tuple[int, ...] = ()
    notes: list[str] = field(default_factory=list)


def rebuild_context(dump: DumpFile) -> Rebuild:
    """Rebuild system messages, context messages and tools from a dump (flags as dumped)."""
    out = Rebuild()
    if dump.tools_raw is not None:
        try:
            out.tools = parse_tools(dump.tools_raw)
        except FormatError as error:
            raise FormatError(error.message, "key compression_request.tools") from None
    if dump.after_raw is not None:
        out.after = _parse_list(dump.after_raw, "context_after.messages")
    if dump.sent_raw is None:
        out.notes.append(
            "the dump has no compression_request.messages_sent_to_model: the context before cannot be rebuilt"
        )
        return out
    sent = _parse_list(dump.sent_raw, "compression_request.messages_sent_to_model")
    system_count = dump.system_count
    if system_count is None:
        system_count = next((i for i, m in enumerate(sent) if m.role != "system"), len(sent))
        out.notes.append(
            f"system_messages_count missing: took the {system_count} leading system messages"
        )
    elif system_count > len(sent):
        raise FormatError(
            f"system_messages_count {system_count} is more than the {len(sent)} messages sent",
            "key compression_request.system_messages_count",
        )
    out.system_messages = sent[:system_count]
    body = list(sent[system_count:])
    if body and body[-1].role == "user":
        last = body.pop()
        if dump.prompt is not None and last.content != dump.prompt:
            out.notes.append(
                "the last message sent is not the recorded prompt; it was dropped as the prompt anyway"
            )
    else:
        out.notes.append(
            "the messages sent do not end with the prompt message; nothing was dropped"
        )
    tail_count = dump.tail_count or 0
    tail: tuple[Message, ...] = ()
    if tail_count:
        if out.after is None:
            out.notes.append(
                f"context_after.messages missing: the {tail_count} tail messages cannot be recovered"
            )
        elif tail_count > len(out.after):
            raise FormatError(
                f"protected_tail_count {tail_count} is more than the {len(out.after)} messages after compression",
                "key span.protected_tail_count",
            )
        else:
            tail = out.after[len(out.after) - tail_count :]
    elif dump.tail_count is None:
        out.notes.append("protected_tail_count missing: assumed no tail")
    messages = tuple(body) + tail
    expected = [
        c for c in (dump.prefix_count, dump.compress_count, dump.tail_count) if c is not None
    ]
    if len(expected) == 3 and sum(expected) != len(messages):
        out.notes.append(
            f"the span counts add up to {sum(expected)} messages but {len(messages)} were rebuilt"
        )
    prefix_end = min(dump.prefix_count or 0, len(body))
    surviving = list(range(prefix_end)) + list(range(len(body), len(messages)))
    out.stale_candidates = tuple(
        i
        for i in surviving
        if messages[i].role == "assistant"
        and messages[i].usage_metadata is not None
        and messages[i].usage_stale
    )
    out.messages = messages
    return out


def kept_message_ids(dump: DumpFile) -> frozenset[str]:
    """context_message_ids of the messages a dump kept after compression."""
    ids: set[str] = set()
    for raw in dump.after_raw or ():
        if isinstance(raw, Mapping):
            metadata = raw.get("metadata")
            if isinstance(metadata, Mapping) and isinstance(
                metadata.get("context_message_id"), str
            ):
                ids.add(metadata["context_message_id"])
    return frozenset(ids)


def without_stale_flag(message: Message) -> Message:
    """The message with `metadata.context_usage_stale` removed."""
    metadata = {k: v for k, v in message.metadata.items() if k != "context_usage_stale"}
    return dataclasses.replace(message, metadata=metadata)


def usage_baseline_total(system: tuple[Message, ...], messages: tuple[Message, ...]) -> int | None:
    """openJiuwen's usage-baseline total (last valid fresh assistant usage + len//4 after it)."""
    everything = system + messages
    for j in range(len(everything) - 1, -1, -1):
        message = everything[j]
        if message.role != "assistant" or message.usage_metadata is None:
            continue
        total = message.usage_total
        if total is None or total <= 0 or message.usage_stale:
            continue
        return total + sum(usage_tail_tokens(m) for m in everything[j + 1 :])
    return None


def infer_ratio(context_max: int, value: int, floor_one: bool) -> float | None:
    """The shortest decimal r in (0, 1) with int(context_max * r) == value (max 1 if floor_one)."""
    if context_max <= 0:
        return None
    for digits in range(1, 7):
        for candidate in {
            round(value / context_max, digits),
            round((value + 0.5) / context_max, digits),
        }:
            if not 0 < candidate < 1:
                continue
            got = int(context_max * candidate)
            if floor_one:
                got = max(got, 1)
            if got == value:
                return candidate
    return None


def infer_token_mode(
    rebuild: Rebuild, dump: DumpFile, counters: CounterProvider
) -> tuple[str | None, str]:
    """Which counter reproduces the dump's own totals; (mode or None, how it was found).

    The context after compression is small, so its total is tried first.
    """
    if rebuild.after is not None and dump.tokens_after is not None:
        messages, target, what = (
            rebuild.after,
            dump.tokens_after,
            "context_after.total_tokens_after",
        )
    elif rebuild.messages is not None and dump.tokens_before is not None:
        messages, target, what = rebuild.messages, dump.tokens_before, "trigger.total_tokens_before"
    else:
        return None, "the dump has no totals to compare counters with"
    available = counters()
    quarter = available["len_div_4"]
    if quarter.count_messages(messages) == target:
        before_ok = (
            rebuild.messages is None
            or dump.tokens_before is None
            or quarter.count_messages(rebuild.messages) == dump.tokens_before
        )
        if before_ok:
            return "len_div_4", f"len//4 counting reproduces {what} = {target}"
    tiktoken = available["tiktoken_cl100k"]
    if not tiktoken.exact:
        return (
            None,
            f"len//4 does not reproduce {what}; exact cl100k counting is unavailable to check tiktoken",
        )
    got = tiktoken.count_messages(messages)
    if got == target:
        return "tiktoken_cl100k", f"cl100k counting reproduces {what} = {target}"
    return None, f"neither counter reproduces {what} = {target} (cl100k gives {got})"


def dump_artifact(
    dump: DumpFile,
    run: EvaluationRun | None,
    counters: CounterProvider,
    timeline: list[dict[str, Any]] | None = None,
    earlier_kept_ids: Callable[[], frozenset[str]] | None = None,
) -> Artifact:
    """The dump as an artifact: the rebuilt context before, the context after, and the record.

    `earlier_kept_ids` gives (on demand) the context_message_ids that earlier dumps of the
    same context kept, whose usage records were therefore stale before this compression.
    """
    rebuild = rebuild_context(dump)
    check = (
        dict(run.threshold_check) if run is not None and run.threshold_check is not None else None
    )
    unrecoverable: list[str] = list(rebuild.notes)
    inferred: dict[str, Any] = {}
    tuning_values: dict[str, Any] = {}
    present: set[str] = set()

    processor_kind = None
    if dump.processor:
        try:
            processor_kind = parse_processor(dump.processor)
            tuning_values["processor"] = processor_kind
            tuning_values["keep_recent"] = DEFAULT_KEEP_RECENT[processor_kind]
            present.add("processor")
        except ConfigError:
            unrecoverable.append(
                f"processor {dump.processor!r} is not one the inspector models: evaluated as CurrentRound"
            )
    context_max = dump.context_max or (check or {}).get("context_max")
    if isinstance(context_max, int) and not isinstance(context_max, bool) and context_max > 0:
        tuning_values["context_max"] = context_max
        present.add("context_max")
    if check is not None and isinstance(context_max, int) and context_max > 0:
        threshold = check.get("threshold")
        if isinstance(threshold, int) and not isinstance(threshold, bool):
            ratio = infer_ratio(context_max, threshold, floor_one=True)
            if ratio is not None:
                tuning_values["trigger_ratio"] = ratio
                present.add("trigger_ratio")
                inferred["trigger_ratio"] = {
                    "value": ratio,
                    "from": f"threshold_check.threshold = {threshold}",
                }
        minimum = check.get("min_target_tokens")
        if isinstance(minimum, int) and not isinstance(minimum, bool):
            ratio = infer_ratio(context_max, minimum, floor_one=False)
            if ratio is not None:
                tuning_values["min_target_ratio"] = ratio
                present.add("min_target_ratio")
                inferred["min_target_ratio"] = {
                    "value": ratio,
                    "from": f"threshold_check.min_target_tokens = {minimum}",
                }
    if "trigger_ratio" not in tuning_values:
        unrecoverable.append(
            "the trigger ratio is not in the dump and no threshold_check was linked: default 0.8 used"
        )

    mode, mode_how = infer_token_mode(rebuild, dump, counters)
    if mode is not None:
        tuning_values["token_mode"] = mode
        present.add("token_mode")
        inferred["token_mode"] = {"value": mode, "from": mode_how}
    else:
        tuning_values["token_mode"] = "tiktoken_cl100k"
        unrecoverable.append(f"the token mode is not in the dump ({mode_how}): cl100k assumed")

    snapshot: ContextSnapshot | None = None
    stale_info: dict[str, Any] | None = None
    span_first = run.span_counts if run is not None else None
    if rebuild.messages is not None:
        messages = rebuild.messages
        if processor_kind in ("current_round", "round_level"):
            keep, how = _infer_keep(rebuild, dump, span_first, counters)
            if keep is not None:
                tuning_values["keep_recent"] = keep
                inferred["keep_recent"] = {"value": keep, "from": how}
        tuning = _safe_tuning(tuning_values, unrecoverable)
        messages, stale_info = _resolve_stale(rebuild, tuning, check, counters, earlier_kept_ids)
        if stale_info is not None:
            unrecoverable.append(stale_info["note"])
        snapshot = ContextSnapshot(
            id=dump.id,
            system_messages=rebuild.system_messages,
            messages=messages,
            tools=rebuild.tools,
            tuning=tuning,
            recorded_fields=frozenset(present),
            extra={"rebuilt_from": "dump"},
        )
    if (
        span_first is not None
        and dump.compress_count is not None
        and span_first["messages_to_compress"] != dump.compress_count
    ):
        unrecoverable.append(
            "the span was shrunk after a context overflow: first built "
            f"{span_first['preserved_prefix']}/{span_first['messages_to_compress']}/{span_first['protected_tail']}, "
            f"sent {dump.prefix_count}/{dump.compress_count}/{dump.tail_count}"
        )
    elif run is None and dump.compress_count is not None:
        unrecoverable.append(
            "no debug record was linked: the span first built (before any overflow shrink) is unknown"
        )

    recorded: dict[str, Any] = {
        "outcome": "compressed",
        "span": {
            "preserved_prefix": dump.prefix_count,
            "messages_to_compress": dump.compress_count,
            "protected_tail": dump.tail_count,
        },
        "tokens_before": dump.tokens_before,
        "tokens_after": dump.tokens_after,
        "reduction": dump.reduction,
        "reduction_ratio": dump.reduction_ratio,
        "context_max": dump.context_max,
        "target_tokens": dump.target_tokens,
        "retries": [dict(r) for r in run.retries] if run is not None else [],
        "messages_before": None if rebuild.messages is None else len(rebuild.messages),
        "messages_after": None if rebuild.after is None else len(rebuild.after),
        "summary_chars": None if dump.summary is None else len(dump.summary),
        "model_calls": (dump.usage or {}).get("calls"),
        "span_first_built": span_first,
        "inferred": inferred,
        "unrecoverable": unrecoverable,
    }
    if check is not None:
        recorded["threshold_check"] = check
    if stale_info is not None:
        recorded["stale_usage"] = {k: v for k, v in stale_info.items() if k != "note"}
    return Artifact(
        source=dump.source,
        id=dump.id,
        kind="dump",
        snapshot=snapshot,
        recorded=recorded,
        processor=dump.processor,
        session_id=dump.session_id or dump.name_session,
        context_id=dump.context_id,
        timestamp=dump.timestamp,
        after=rebuild.after,
        recorded_token_mode=mode,
        extra={"timeline": timeline or [], "raw_keys": sorted(dump.raw.keys())},
    )


#: The note a header-level dump artifact carries instead of the rebuild's notes.
HEADER_ONLY_NOTE = "header-level load: the context before compression was not rebuilt"


def strip_dump(dump: DumpFile) -> tuple[DumpFile, int | None]:
    """The dump without its message lists (for a header-level load), and how many messages
    `context_after.messages` held. Small enough to send between processes."""
    after = None if dump.after_raw is None else len(dump.after_raw)
    raw = {key: None for key in dump.raw}
    stripped = dataclasses.replace(
        dump, raw=raw, sent_raw=None, after_raw=None, tools_raw=None, prompt=None
    )
    return stripped, after


def dump_header_artifact(
    dump: DumpFile,
    run: EvaluationRun | None,
    timeline: list[dict[str, Any]] | None = None,
    messages_after: int | None = None,
) -> Artifact:
    """The dump as an artifact from its recorded fields only: no context is rebuilt.

    For `inspector stats` and other readers of `Artifact.recorded` alone: the keys that
    `dump_artifact` fills from the dump's header (span, tokens, reduction, retries, the
    linked threshold_check) are the same; `snapshot` and `after` are None, the token mode
    is not inferred, and a dump whose messages could not be rebuilt is not refused (its
    message lists are never read). `messages_before` is None; `extra["header_only"]` is
    True.
    """
    check = (
        dict(run.threshold_check) if run is not None and run.threshold_check is not None else None
    )
    recorded: dict[str, Any] = {
        "outcome": "compressed",
        "span": {
            "preserved_prefix": dump.prefix_count,
            "messages_to_compress": dump.compress_count,
            "protected_tail": dump.tail_count,
        },
        "tokens_before": dump.tokens_before,
        "tokens_after": dump.tokens_after,
        "reduction": dump.reduction,
        "reduction_ratio": dump.reduction_ratio,
        "context_max": dump.context_max,
        "target_tokens": dump.target_tokens,
        "retries": [dict(r) for r in run.retries] if run is not None else [],
        "messages_before": None,
        "messages_after": messages_after,
        "summary_chars": None if dump.summary is None else len(dump.summary),
        "model_calls": (dump.usage or {}).get("calls"),
        "span_first_built": run.span_counts if run is not None else None,
        "inferred": {},
        "unrecoverable": [HEADER_ONLY_NOTE],
    }
    if check is not None:
        recorded["threshold_check"] = check
    return Artifact(
        source=dump.source,
        id=dump.id,
        kind="dump",
        snapshot=None,
        recorded=recorded,
        processor=dump.processor,
        session_id=dump.session_id or dump.name_session,
        context_id=dump.context_id,
        timestamp=dump.timestamp,
        after=None,
        recorded_token_mode=None,
        extra={
            "timeline": timeline or [],
            "raw_keys": sorted(dump.raw.keys()),
            "header_only": True,
        },
    )


class _NoCounts(TokenCounter):
    """A counter that counts nothing (every piece 0): for a `PricedContext` used only for
    its tool-boundary rule (`adjust_keep`), which does not depend on counts."""

    def __init__(self) -> None:
        super().__init__("len_div_4")

    def piece_tokens(self, message: Message) -> int:
        """0: no count is needed."""
        return 0

    def count_tools(self, tools: Sequence[Tool]) -> int:
        """0: no count is needed."""
        return 0


_STRUCTURE_ONLY = _NoCounts()


def _safe_tuning(values: dict[str, Any], notes: list[str]) -> Tuning:
    try:
        return Tuning().with_(**values)
    except ConfigError as error:
        notes.append(f"recorded {error.field} {error.value!r} is out of range: default used")
        values.pop(error.field, None)
        return _safe_tuning(values, notes)


def _infer_keep(
    rebuild: Rebuild, dump: DumpFile, span_first: dict[str, int] | None, counters: CounterProvider
) -> tuple[int | None, str]:
    """keep_recent that reproduces the tail first built (tool-boundary widening included)."""
    assert rebuild.messages is not None
    if span_first is not None:
        tail, how = span_first["protected_tail"], "span_built.protected_tail"
    elif dump.tail_count is not None:
        tail, how = dump.tail_count, "the dump's protected_tail_count (no span_built linked)"
    else:
        return None, ""
    # only the tool-boundary rule is needed here: counting 20,000 messages would be wasted
    priced = PricedContext((), rebuild.messages, (), _STRUCTURE_ONLY)
    if priced.adjust_keep(tail) == tail:
        return tail, f"{how} = {tail}"
    for keep in range(0, tail):
        if priced.adjust_keep(keep) == tail:
            return keep, f"{how} = {tail} (smallest keep that widens to it)"
    return None, ""


def _resolve_stale(
    rebuild: Rebuild,
    tuning: Tuning,
    check: Mapping[str, Any] | None,
    counters: CounterProvider,
    earlier_kept_ids: Callable[[], frozenset[str]] | None = None,
) -> tuple[tuple[Message, ...], dict[str, Any] | None]:
    """Choose the kept usage records' stale flags: fresh (default) or as dumped, checked if possible."""
    assert rebuild.messages is not None
    # A record an earlier compression kept was marked stale by it already: it sits before
    # that compression's memory block (its prefix), or an earlier loaded dump of the same
    # context kept it (same context_message_id). Only the others are in doubt.
    last_memory = max(
        (
            i
            for i, m in enumerate(rebuild.messages)
            if m.role == "user"
            and isinstance(m.content, str)
            and m.content.lstrip().startswith(_MEMORY_PREFIXES)
        ),
        default=-1,
    )

    known: list[frozenset[str]] = []

    def was_kept_before(index: int) -> bool:
        if index < last_memory:
            return True
        if earlier_kept_ids is None:
            return False
        if not known:
            known.append(earlier_kept_ids())
        message_id = (
            rebuild.messages[index].metadata.get("context_message_id") if rebuild.messages else None
        )
        return isinstance(message_id, str) and message_id in known[0]

    already = tuple(i for i in rebuild.stale_candidates if was_kept_before(i))
    candidates = tuple(i for i in rebuild.stale_candidates if not was_kept_before(i))
    if not candidates:
        if already:
            return rebuild.messages, {
                "messages": [],
                "already_stale": list(already),
                "assumed": "stale",
                "confirmed": True,
                "note": f"{len(already)} kept usage records older than an earlier compression were stale already",
            }
        return rebuild.messages, None
    fresh = tuple(
        without_stale_flag(m) if i in candidates else m for i, m in enumerate(rebuild.messages)
    )
    recorded_total = (check or {}).get("total_tokens")
    listed = ", ".join(f"#{i}" for i in candidates)
    info: dict[str, Any] = {"messages": list(candidates), "recorded_total": recorded_total}
    if already:
        info["already_stale"] = list(already)
    base = (
        f"{len(candidates)} kept assistant usage record{'s' if len(candidates) != 1 else ''} ({listed}) "
        "were marked context_usage_stale by this compression; whether they were stale before it is not in the dump"
    )
    if not isinstance(recorded_total, int) or isinstance(recorded_total, bool):
        info.update(assumed="fresh", confirmed=False)
        info["note"] = base + ": assumed fresh (no threshold_check linked to confirm)"
        return fresh, info
    fresh_total = usage_baseline_total(rebuild.system_messages, fresh)
    if fresh_total is None:
        fresh_total = PricedContext(
            rebuild.system_messages, fresh, rebuild.tools, counters()[tuning.token_mode]
        ).counted_total
    info["total_if_fresh"] = fresh_total
    if fresh_total == recorded_total:
        info.update(assumed="fresh", confirmed=True)
        info["note"] = base + (
            f": assumed fresh, confirmed (the recorded total {recorded_total} is reproduced; only the newest "
            "usage record decides it, so older flags cannot be checked)"
        )
        return fresh, info
    dumped_total = usage_baseline_total(rebuild.system_messages, rebuild.messages)
    if dumped_total is None:
        dumped_total = PricedContext(
            rebuild.system_messages, rebuild.messages, rebuild.tools, counters()[tuning.token_mode]
        ).counted_total
    info["total_if_stale"] = dumped_total
    if dumped_total == recorded_total:
        info.update(assumed="stale", confirmed=True)
        info["note"] = (
            base
            + f": kept stale as dumped, confirmed (the recorded total {recorded_total} is reproduced)"
        )
        return rebuild.messages, info
    info.update(assumed="fresh", confirmed=False)
    info["note"] = (
        base
        + f": assumed fresh, but neither choice reproduces the recorded total {recorded_total} "
        f"(fresh {fresh_total}, stale {dumped_total})"
    )
    return fresh, info
