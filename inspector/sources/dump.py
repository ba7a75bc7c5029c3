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

This module reads and rebuilds; `dump_infer` recovers what the dump does not say (ratios,
keep_recent, token mode, stale flags) and `dump_artifact` makes the artifact.
Must not import Textual or Rich.
"""

from __future__ import annotations

import functools
import marshal
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from inspector.core.errors import FormatError
from inspector.core.frozen import plain_init
from inspector.core.messages import Message, Tool, parse_messages, parse_tools
from inspector.core.timeline import DumpRef, plain_dump_ref
from inspector.formats.base import validate
from inspector.formats.dump import (
    Benefit,
    CompressionRequest,
    CompressionResponse,
    ContextAfter,
    DumpDocument,
    DumpSpan,
    Trigger,
)

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
    #: `compression_response.usage.calls`: successful model calls.
    model_calls: int | None
    name_session: str | None = None

    @property
    def id(self) -> str:
        """The file name without `.json` (unique: it holds the time in ms and the session)."""
        name = _basename(self.source)
        return name[:-5] if name.endswith(".json") else name

    @property
    def ref(self) -> DumpRef:
        """What linking to debug records needs."""
        return plain_dump_ref(
            self.id,
            self.processor,
            self.session_id or self.name_session,
            self.context_id,
            self.timestamp,
        )


#: `DumpFile(...)` with every field given, built without the frozen `__init__`
#: (`core.frozen`): a folder's load makes one per dump, and the parent remakes a helper's.
plain_dump = plain_init(DumpFile)


@functools.cache
def _empty(section: type[Any]) -> Any:
    """The section with every key absent (what a dump without that section reads as), made
    on first use: a dump that has every section never builds these validators."""
    return section.model_validate({})


def parse_dump(document: Mapping[str, Any], source: str) -> DumpFile:
    """Check a dump's known keys for type (`formats.DumpDocument`); FormatError names the first bad one."""
    dump: DumpDocument = validate(DumpDocument, document)
    trigger, span = dump.trigger or _empty(Trigger), dump.span or _empty(DumpSpan)
    request = dump.compression_request or _empty(CompressionRequest)
    response = dump.compression_response or _empty(CompressionResponse)
    after, benefit = dump.context_after or _empty(ContextAfter), dump.benefit or _empty(Benefit)
    name_match = DUMP_NAME_RE.match(_basename(source))
    timestamp = dump.timestamp
    if timestamp is None and name_match:
        timestamp = int(name_match.group(1)) / 1000
    return plain_dump(
        source=source,
        raw=document,
        processor=dump.processor_type or (name_match.group(2) if name_match else None),
        session_id=dump.session_id,
        context_id=dump.context_id,
        timestamp=timestamp,
        context_max=trigger.context_max,
        tokens_before=_first(benefit.tokens_before, trigger.total_tokens_before),
        target_tokens=trigger.target_tokens,
        prefix_count=span.preserved_prefix_count,
        compress_count=span.messages_to_compress_count,
        tail_count=_first(span.protected_tail_count, request.exclude_recent_messages),
        prompt=request.prompt,
        system_count=request.system_messages_count,
        tools_raw=request.tools,
        sent_raw=request.messages_sent_to_model,
        after_raw=after.messages,
        tokens_after=_first(benefit.tokens_after, after.total_tokens_after),
        reduction=benefit.reduction,
        reduction_ratio=benefit.reduction_ratio,
        summary=response.extracted_summary,
        model_calls=None if response.usage is None else response.usage.calls,
        name_session=name_match.group(3) if name_match else None,
    )


def _first(value: Any, fallback: Any) -> Any:
    """`value`, or `fallback` when it is None (a key an older schema spells otherwise)."""
    return fallback if value is None else value


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


#: Distinct tool lists a `ToolLists` keeps (a folder's dumps offer a handful).
TOOL_LISTS_KEPT = 256


class ToolLists:
    """Tool lists parsed once per distinct raw list (one load's dumps offer the same few):
    equal raw lists, compared by their `marshal` bytes, share one tuple of `Tool`s, so a
    counter counts that tuple once (`TokenCounter.count_tools` remembers it)."""

    def __init__(self) -> None:
        self._parsed: dict[bytes, tuple[Tool, ...]] = {}

    def parse(self, raw: list[Any]) -> tuple[Tool, ...]:
        """`parse_tools(raw)`, the same tuple for a list equal to one parsed before."""
        try:
            # an exact serialization (2.5x cheaper than JSON text) tells apart what the
            # parsed tools would: order, 1 vs 1.0 vs true, -0.0; version 0 writes no
            # back-references and no interning marks, so equal values give equal bytes
            key = marshal.dumps(raw, 0)
        except (TypeError, ValueError, RecursionError):
            return parse_tools(raw)
        known = self._parsed.get(key)
        if known is None:
            known = parse_tools(raw)
            if len(self._parsed) >= TOOL_LISTS_KEPT:
                self._parsed.clear()
            self._parsed[key] = known
        return known


def rebuild_context(dump: DumpFile, tool_lists: ToolLists | None = None) -> Rebuild:
    """Rebuild system messages, context messages and tools from a dump (flags as dumped);
    `tool_lists` shares the tools of dumps offering the same list."""
    out = Rebuild()
    if dump.tools_raw is not None:
        try:
            out.tools = (
                parse_tools(dump.tools_raw)
                if tool_lists is None
                else tool_lists.parse(dump.tools_raw)
            )
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


def strip_dump(dump: DumpFile) -> tuple[DumpFile, int | None]:
    """The dump without its message lists (for a header-level load), and how many messages
    `context_after.messages` held. Small enough to send between processes."""
    after = None if dump.after_raw is None else len(dump.after_raw)
    stripped = DumpFile(
        dump.source,
        dict.fromkeys(dump.raw),
        dump.processor,
        dump.session_id,
        dump.context_id,
        dump.timestamp,
        dump.context_max,
        dump.tokens_before,
        dump.target_tokens,
        dump.prefix_count,
        dump.compress_count,
        dump.tail_count,
        None,  # prompt
        dump.system_count,
        None,  # tools_raw
        None,  # sent_raw
        None,  # after_raw
        dump.tokens_after,
        dump.reduction,
        dump.reduction_ratio,
        dump.summary,
        dump.model_calls,
        dump.name_session,
    )
    return stripped, after
