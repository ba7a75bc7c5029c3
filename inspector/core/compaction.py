"""openJiuwen's PrefixCompact compaction step, without the model call: pure and exact.

Request building (system + context without the protected tail + the prompt as a final user
message, in OpenAI wire form), the overflow shrink of the span, summary extraction, the
memory-block wrapper, the new context (prefix, memory block, optional `<recovered_context>`,
tail), the benefit check, and the dump document and debug records in openJiuwen's schema.
The HTTP call and its retries live in `inspector.llm`.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.core.compaction_usage import (  # noqa: F401 - re-exported
    merge_usage,
    usage_details,
)
from inspector.core.engine import Span
from inspector.core.errors import ConfigError
from inspector.core.messages import Message, Tool
from inspector.core.reinjection import Reinjection, build_reinjection
from inspector.core.releases.profiles import ReleaseProfile
from inspector.core.snapshot import ContextSnapshot
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import PROCESSOR_CLASS_NAMES

#: Budget ratios of context_max tried in turn after a context-overflow error.
OVERFLOW_BUDGET_RATIOS: tuple[float, ...] = (0.85, 0.65, 0.5)
TRANSIENT_MAX_RETRIES = 2
TRANSIENT_BASE_DELAY_SECONDS = 0.05
#: openJiuwen's ModelRequestConfig sampling defaults (also what every reference request sent).
DEFAULT_TEMPERATURE = 0.95
DEFAULT_TOP_P = 0.1

COMPACTING_PROCESSORS = ("current_round", "dialogue", "round_level")


def transient_delay(retry_number: int) -> float:
    """Backoff before transient retry `retry_number` (1-based): 0.05 s, then 0.10 s."""
    return TRANSIENT_BASE_DELAY_SECONDS * (2 ** (retry_number - 1))


def require_compacting_processor(processor: str) -> None:
    """Raise ConfigError unless `processor` is one of openJiuwen's three LLM compressors."""
    if processor not in COMPACTING_PROCESSORS:
        raise ConfigError("processor", processor, "one of " + ", ".join(COMPACTING_PROCESSORS))


# --- memory block --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MemoryWrapper:
    """The memory-block wrapper: tag, meaning sentence and conflict policy."""

    tag: str
    meaning: str
    conflict_policy: str

    def wrap(self, summary: str) -> str:
        """The memory message content around `summary`, byte for byte as openJiuwen writes it."""
        return (
            f"<{self.tag}>\n<meaning>\n{self.meaning}\n</meaning>\n"
            f"<conflict_policy>\n{self.conflict_policy}\n</conflict_policy>\n"
            f"<summary>\n{summary}\n</summary>\n</{self.tag}>"
        )


#: The class constants of the three forked compressors (as found in every reference dump).
DEFAULT_WRAPPERS: dict[str, MemoryWrapper] = {
    "current_round": MemoryWrapper(
        "memory_block_current",
        "This is a compressed summary of work already performed after the latest user request. "
        "It is not a new user request. Use it to recover completed analysis, tool calls, code "
        "changes, test results, and next steps for the current task.",
        "Newer raw messages, fresh tool results, and the latest user instructions override this summary.",
    ),
    "dialogue": MemoryWrapper(
        "memory_block_dialogue",
        "This is a compressed handoff of earlier conversation history. It is not a new user "
        "request. If any information here is relevant to the latest user request or later task "
        "execution, treat it as prior context for the current response.",
        "Newer raw messages and the latest explicit user intent override this handoff.",
    ),
    "round_level": MemoryWrapper(
        "memory_block_round",
        "This is a task-continuity checkpoint across multiple conversation rounds. It may include "
        "long-running project state, prior decisions, current goals, completed work, unfinished "
        "work, and ongoing task clues. It can help continue unfinished work, but it is not a new "
        "user request.",
        "Newer raw messages, fresh tool results, and the latest explicit user intent override this checkpoint.",
    ),
}

_WRAPPER_RE = re.compile(
    r"^\s*<(memory_block_\w+)>\n<meaning>\n(.*?)\n</meaning>\n<conflict_policy>\n(.*?)\n</conflict_policy>\n<summary>\n",
    re.DOTALL,
)


def parse_memory_wrapper(messages: Sequence[Message]) -> MemoryWrapper | None:
    """The wrapper of the first memory-block message in `messages` (e.g. a dump's context_after)."""
    for message in messages:
        if message.role == "user" and isinstance(message.content, str):
            match = _WRAPPER_RE.match(message.content)
            if match:
                return MemoryWrapper(match.group(1), match.group(2), match.group(3))
    return None


_SNAPSHOT_RE = re.compile(
    r"<state_snapshot>\s*(.*?)\s*</state_snapshot>", re.DOTALL | re.IGNORECASE
)


def extract_summary(content: str) -> str:
    """Inside of the first `<state_snapshot>` (trimmed), or the whole trimmed reply."""
    raw = (content or "").strip()
    if not raw:
        return ""
    match = _SNAPSHOT_RE.search(raw)
    if match is None:
        return raw
    return match.group(1).strip() or raw


def has_state_snapshot(content: str) -> bool:
    """True when the reply holds a non-empty `<state_snapshot>` block."""
    match = _SNAPSHOT_RE.search((content or "").strip())
    return bool(match and match.group(1).strip())


# --- the request -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sampling:
    """Sampling values sent with the request (None: left out of the body)."""

    temperature: float | None = DEFAULT_TEMPERATURE
    top_p: float | None = DEFAULT_TOP_P
    max_tokens: int | None = None
    stop: Any = None


#: The sampling a release's `ModelRequestConfig` sends when the host sets none, by profile
#: name: 0.1.17's defaults are temperature 0.95 and top_p 0.1; from 0.1.18 both default
#: to None and are left out of the body.
_RELEASE_SAMPLING: dict[str, Sampling] = {"0.1.17": Sampling()}


def release_sampling(profile: ReleaseProfile) -> Sampling:
    """The sampling values `profile`'s releases send by default."""
    return _RELEASE_SAMPLING.get(profile.name, Sampling(temperature=None, top_p=None))


def prompt_message(prompt: str) -> Message:
    """The final user message that carries the compaction prompt."""
    return Message(role="user", content=prompt)


def request_messages(snapshot: ContextSnapshot, span: Span, prompt: str) -> list[Message]:
    """System messages + context messages before the protected tail + the prompt message."""
    return [*snapshot.system_messages, *snapshot.messages[: span.tail[0]], prompt_message(prompt)]


def wire_message(message: Message) -> dict[str, Any]:
    """OpenAI wire form as openJiuwen's client sends it: role, content, tool_calls, tool_call_id."""
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "type": c.type, "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
        reasoning = message.extra.get("reasoning_content")
        if reasoning:
            out["reasoning_content"] = reasoning
    if message.role == "tool":
        out["tool_call_id"] = message.tool_call_id
    return out


def wire_tool(tool: Tool) -> dict[str, Any]:
    """OpenAI function-tool form."""
    return {
        "type": tool.type,
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


def chat_body(messages: Iterable[Message], model: str, sampling: Sampling) -> dict[str, Any]:
    """The body of `POST /chat/completions` openJiuwen's client sends for these messages:
    model, messages, no streaming, and the sampling values that are set (no tools)."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [wire_message(m) for m in messages],
        "stream": False,
    }
    if sampling.temperature is not None:
        body["temperature"] = sampling.temperature
    if sampling.top_p is not None:
        body["top_p"] = sampling.top_p
    if sampling.max_tokens is not None:
        body["max_tokens"] = sampling.max_tokens
    if sampling.stop is not None:
        body["stop"] = sampling.stop
    return body


def request_body(
    snapshot: ContextSnapshot,
    span: Span,
    prompt: str,
    model: str,
    sampling: Sampling = Sampling(),
    include_tools: bool = True,
) -> dict[str, Any]:
    """The JSON body of `POST /chat/completions` openJiuwen sends for this span."""
    body = chat_body(request_messages(snapshot, span, prompt), model, sampling)
    if include_tools and snapshot.tools:
        body["tools"] = [wire_tool(t) for t in snapshot.tools]
        body["tool_choice"] = "auto"
    return body


# --- overflow shrink -----------------------------------------------------------------------


def shrink_span(
    snapshot: ContextSnapshot,
    span: Span,
    prompt: str,
    counter: TokenCounter,
    context_max: int,
    budget_ratio: float,
    include_tools: bool = True,
) -> Span | None:
    """The smaller span openJiuwen retries with after an overflow, or None when none fits.

    Budget = int(context_max x ratio) minus system + prefix + prompt and the tools; the
    greedy head of the span that fits stays, the rest moves into the tail; at least one
    message always moves, and at least one stays when the span has more than one.
    """
    start, end = span.compress
    size = end - start
    if size <= 0:
        return None
    budget = max(int(context_max * budget_ratio), 1)
    fixed = counter.count_messages(
        [
            *snapshot.system_messages,
            *snapshot.messages[span.prefix[0] : span.prefix[1]],
            prompt_message(prompt),
        ]
    )
    if include_tools:
        fixed += counter.count_tools(snapshot.tools)
    target = budget - fixed
    if target <= 0:
        return None
    fit = running = 0
    for message in snapshot.messages[start:end]:
        tokens = counter.message_tokens(message)
        if running + tokens > target:
            break
        running += tokens
        fit += 1
    if fit >= size:
        fit = max(size - 1, 0)
    if fit <= 0 and size > 1:
        fit = 1
    if fit <= 0:
        return None
    return Span(span.prefix, (start, start + fit), (start + fit, span.tail[1]))


# --- the result -----------------------------------------------------------------------------


def mark_usage_stale(messages: Sequence[Message]) -> tuple[Message, ...]:
    """Assistant messages with usage records get `metadata.context_usage_stale: true`."""
    out: list[Message] = []
    for message in messages:
        if (
            message.role == "assistant"
            and message.usage_metadata is not None
            and not message.usage_stale
        ):
            metadata = dict(message.metadata)
            metadata["context_usage_stale"] = True
            message = Message(
                role=message.role,
                content=message.content,
                name=message.name,
                tool_calls=message.tool_calls,
                tool_call_id=message.tool_call_id,
                usage_metadata=message.usage_metadata,
                metadata=metadata,
                extra=message.extra,
            )
        out.append(message)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Compaction:
    """The new context built from a summary, with openJiuwen's benefit numbers."""

    span: Span
    summary: str
    memory_message: Message
    reinjection: Reinjection
    recovered_message: Message | None
    #: The new context as it is counted (prefix, memory, recovered context, tail).
    new_messages: tuple[Message, ...]
    tokens_before: int
    tokens_after: int
    target_tokens: int
    #: Tokens of the new context had nothing been re-injected.
    tokens_after_without_reinjection: int
    recovered_tokens: int
    #: One-message counts of the memory block; list counts of the kept prefix and tail.
    memory_tokens: int = 0
    prefix_tokens: int = 0
    tail_tokens: int = 0

    @property
    def beneficial(self) -> bool:
        """openJiuwen's benefit check: the new context counts fewer tokens (or the old was empty)."""
        return self.tokens_before <= 0 or self.tokens_after < self.tokens_before

    @property
    def reduction(self) -> int:
        """max(before - after, 0)."""
        return max(self.tokens_before - self.tokens_after, 0)

    @property
    def reduction_ratio(self) -> float:
        """reduction / before rounded to 4 places (0.0 when before is 0)."""
        return round(self.reduction / self.tokens_before, 4) if self.tokens_before else 0.0

    @property
    def after_messages(self) -> tuple[Message, ...]:
        """The new context as the dump shows it (usage records marked stale)."""
        return mark_usage_stale(self.new_messages)

    @property
    def reinjection_defeated_benefit(self) -> bool:
        """True when the result is dropped only because of the re-injected files."""
        return (
            not self.beneficial
            and self.recovered_message is not None
            and self.tokens_after_without_reinjection < self.tokens_before
        )


def build_compaction(
    snapshot: ContextSnapshot,
    span: Span,
    summary: str,
    counter: TokenCounter,
    processor: str,
    wrapper: MemoryWrapper,
    new_id: Callable[[], str],
) -> Compaction:
    """Prefix + memory block + optional recovered context + tail, counted like openJiuwen."""
    original = snapshot.messages
    prefix = original[span.prefix[0] : span.prefix[1]]
    tail = original[span.tail[0] : span.tail[1]]
    memory = Message(
        role="user", content=wrapper.wrap(summary), metadata={"context_message_id": new_id()}
    )
    keep = [*prefix, memory, *tail]
    reinjection = build_reinjection(processor, original, keep)
    recovered: Message | None = None
    new_messages: list[Message] = keep
    if reinjection.content is not None:
        recovered = Message(
            role="user", content=reinjection.content, metadata={"context_message_id": new_id()}
        )
        new_messages = [*prefix, memory, recovered, *tail]
    return Compaction(
        span=span,
        summary=summary,
        memory_message=memory,
        reinjection=reinjection,
        recovered_message=recovered,
        new_messages=tuple(new_messages),
        tokens_before=counter.count_messages(original),
        tokens_after=counter.count_messages(new_messages),
        target_tokens=counter.count_messages(original[span.compress[0] : span.compress[1]]),
        tokens_after_without_reinjection=counter.count_messages(keep),
        recovered_tokens=counter.message_tokens(recovered) if recovered is not None else 0,
        memory_tokens=counter.message_tokens(memory),
        prefix_tokens=counter.count_messages(prefix),
        tail_tokens=counter.count_messages(tail),
    )


# --- dump and debug records -----------------------------------------------------------------

_UNSAFE_RE = re.compile(r"[^A-Za-z0-9_.-]+")


def safe_name(value: str) -> str:
    """openJiuwen's file-name cleanup: runs of other characters -> '-', trimmed, <= 80 chars."""
    cleaned = _UNSAFE_RE.sub("-", value).strip("-")[:80]
    return cleaned or "unknown"


def dump_file_name(time_ms: int, processor_type: str, session_id: str) -> str:
    """`{ms}_{Processor}_{safe session}.json`."""
    return f"{time_ms}_{safe_name(processor_type)}_{safe_name(session_id)}.json"


def debug_file_name(processor_type: str) -> str:
    """`{Processor}.jsonl`."""
    return f"{safe_name(processor_type)}.jsonl"


def expand_dir_template(path: str, session_id: str, context_id: str) -> str:
    """Replace `{session_id}` / `{context_id}` by their safe forms, as openJiuwen does."""
    return path.replace("{session_id}", safe_name(session_id)).replace(
        "{context_id}", safe_name(context_id)
    )


def _tool_dump(tool: Tool) -> dict[str, Any]:
    return {k: v for k, v in tool.to_dict().items() if v is not None}


@dataclass(frozen=True, slots=True)
class DumpIdentity:
    """Names a dump carries: processor class, raw session id, context id."""

    processor_type: str
    session_id: str = "unknown_session"
    context_id: str = "unknown_context"


@dataclass(frozen=True, slots=True)
class Exchange:
    """The compression call a dump records: the prompt sent, the reply, its usage, and
    whether the agent's tools were offered."""

    prompt: str
    raw_content: str
    usage: Mapping[str, Any] | None
    include_tools: bool


def dump_document(
    identity: DumpIdentity,
    snapshot: ContextSnapshot,
    context_max: int,
    compaction: Compaction,
    exchange: Exchange,
    timestamp: float,
) -> dict[str, Any]:
    """The compression dump openJiuwen writes after an applied compression (keys in file order)."""
    prompt, raw_content, usage = exchange.prompt, exchange.raw_content, exchange.usage
    include_tools = exchange.include_tools
    span = compaction.span
    sent_tools = list(snapshot.tools) if include_tools else []
    after = compaction.after_messages
    # The prefix messages are the same objects as the new context's, so the stale marking
    # that replacing the context applies shows in the request part of the dump too.
    prefix = mark_usage_stale(snapshot.messages[span.prefix[0] : span.prefix[1]])
    context_sent = (*prefix, *snapshot.messages[span.prefix[1] : span.tail[0]])
    sent = [m.to_dict() for m in (*snapshot.system_messages, *context_sent)]
    sent.append({"role": "user", "content": prompt, "metadata": {}})
    return {
        "processor_type": identity.processor_type,
        "session_id": identity.session_id,
        "context_id": identity.context_id,
        "trigger": {
            "context_max": context_max,
            "total_tokens_before": compaction.tokens_before,
            "target_tokens": compaction.target_tokens,
        },
        "span": {
            "preserved_prefix_count": span.prefix[1] - span.prefix[0],
            "messages_to_compress_count": span.compress[1] - span.compress[0],
            "protected_tail_count": span.tail[1] - span.tail[0],
        },
        "compression_request": {
            "prompt": prompt,
            "exclude_recent_messages": span.tail[1] - span.tail[0],
            "system_messages_count": len(snapshot.system_messages),
            "tools_count": len(sent_tools),
            "tools": [_tool_dump(t) for t in sent_tools],
            "messages_sent_to_model": sent,
        },
        "compression_response": {
            "raw_content": raw_content,
            "extracted_summary": compaction.summary,
            "usage": dict(usage) if usage is not None else None,
        },
        "context_after": {
            "messages": [m.to_dict() for m in after],
            "total_tokens_after": compaction.tokens_after,
        },
        "benefit": {
            "tokens_before": compaction.tokens_before,
            "tokens_after": compaction.tokens_after,
            "reduction": compaction.reduction,
            "reduction_ratio": compaction.reduction_ratio,
        },
        "timestamp": timestamp,
    }


def debug_record(
    identity: DumpIdentity, event: str, timestamp: float, **fields: Any
) -> dict[str, Any]:
    """One context_debug JSONL record with openJiuwen's common keys first."""
    return {
        "timestamp": timestamp,
        "event": event,
        "processor": identity.processor_type,
        "session_id": identity.session_id,
        "context_id": identity.context_id,
        **fields,
    }


def span_preview(messages: Sequence[Message], divisor: int = 4) -> list[dict[str, Any]]:
    """span_built entries: idx, role, rough tokens max(len(str(content))//divisor, 1) (4 up
    to 0.1.17.post2, 3 from 0.1.18: `ReleaseProfile.preview_divisor`), 200-char preview."""
    return [
        {
            "idx": index,
            "role": message.role,
            "tokens": max(len(str(message.content or "")) // divisor, 1),
            "preview": str(message.content)[:200],
        }
        for index, message in enumerate(messages)
    ]


def processor_type(processor: str) -> str:
    """openJiuwen's class name for a processor kind."""
    return PROCESSOR_CLASS_NAMES[processor]  # type: ignore[index]
