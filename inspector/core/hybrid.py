"""The HybridCompressor strategy (spec/hybrid-compressor.md), replayed on any context.

Three levels, cheapest first, each measured with one estimator; the pipeline stops at the
first level that brings the water level to or under the threshold:

1. **ToolOutputTruncator** (free, always on): every tool result is cut by its shape
   (`hybrid_truncate`), whatever the water level, as the runtime does on arrival.
2. **SlidingWindowCompressor** (free): keep the system prompt and the last
   `preserve_recent_turns` turns, fold the middle into one rule-based summary message.
3. **LlmSummaryCompressor** (one LLM call): the same middle summarised by an injected
   summarizer (Task / Progress / State / Key Data, at most 400 words); on any failure the
   level-2 rule summary is used instead. Without a summarizer (a decision only), level 3
   is priced with a placeholder summary of `placeholder_summary_tokens` tokens.

Documented choices where the spec is silent:

* **Estimator**: ceil(characters / 4) per message (text content with image data URLs
  replaced by a placeholder, plus tool-call names and arguments), images at their size
  price (as `tokens.image_block_tokens`), tool schemas at ceil(len(JSON) / 4) each, summed
  over system prompt, messages and tools. An estimate, not a tokenizer.
* **Trigger**: compress when `estimate > floor(max_context_tokens x compression_threshold)`,
  which for an integer estimate is the spec's `estimate > budget x threshold`; a level
  succeeds when the estimate is at or under that threshold.
* **Turn** (`turn_unit`): "step" (default) is one model call: the user inputs before it,
  the assistant message, and the tool results answering it; a new turn starts at every
  user or assistant message that follows an assistant message or a tool result. "user"
  starts a turn at each real user message (messages before the first form turn 0).
* **Window**: the recent window starts at the first message of the N-th last turn and is
  widened backwards until every tool result in it has its call in it, so tool-call pairs
  are never split. Inside the folded middle these stay verbatim: system-role messages,
  the latest real user message (the latest task), and tool calls in flight (an assistant
  message with a call whose result has not arrived, with whatever results of it did).
* **Layout after level 2/3**: kept middle messages in their order, then the summary (a
  `user` message starting with `[CONTEXT SUMMARY`, metadata `hybrid_summary`), then the
  recent window. Summary messages never count as the latest user task.
* **Never compressed** means never folded or summarised. Level 1 still caps tool outputs
  inside the protected turns, because the runtime applies it to every result on arrival.

Must not import anything outside the standard library and `inspector.core` (no I/O, no
httpx: the LLM call is injected).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any, Literal

from inspector.core.diagnosis import Check, Finding
from inspector.core.hybrid_config import HybridConfig, alignment_check, config_from_tuning
from inspector.core.hybrid_facts import find_errors, find_paths, message_text
from inspector.core.hybrid_truncate import Truncation, is_read_file_tool, truncate_output
from inspector.core.messages import Message, Tool
from inspector.core.snapshot import ContextSnapshot
from inspector.core.tokens import (
    TokenCounter,
    image_block_tokens,
    is_image_block,
    sanitize_text,
    sanitize_value,
)

Outcome = Literal["kept", "truncated", "folded", "summarized"]
Protection = Literal["system_prompt", "latest_user_task", "in_flight", "recent_turn"]
Stage = Literal["raw", "level_1", "level_2", "level_3"]
SummarySource = Literal["none", "rule", "llm", "fallback", "placeholder"]
Reason = Literal[
    "below_threshold",
    "compressed_at_level_1",
    "compressed_at_level_2",
    "compressed_at_level_3",
    "still_above_threshold",
]

SUMMARY_PREFIX = "[CONTEXT SUMMARY"
SUMMARY_SECTIONS: tuple[str, ...] = ("Task", "Progress", "State", "Key Data")
_FILE_ARG_KEYS = ("file_path", "path", "filepath", "filename", "file", "target_file", "paths")


# --- estimator ----------------------------------------------------------------------------


def estimate_message(message: Message) -> int:
    """The strategy's estimate for one message: ceil(chars / 4), images at their size price."""
    chars = 0
    images = 0
    content = message.content
    if isinstance(content, str):
        chars += len(sanitize_text(content))
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, str):
                chars += len(block)
            elif is_image_block(block):
                images += image_block_tokens(block)
            elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
                chars += len(block["text"])
            else:
                chars += len(json.dumps(sanitize_value(block), ensure_ascii=False, default=str))
    for call in message.tool_calls:
        chars += len(call.name) + len(call.arguments)
    return (chars + 3) // 4 + images


def estimate_tools(tools: Sequence[Tool]) -> int:
    """ceil(len(JSON) / 4) of each tool schema."""
    return sum(
        (len(json.dumps(t.to_dict(), ensure_ascii=False, default=str)) + 3) // 4 for t in tools
    )


def estimate_context(
    system_messages: Sequence[Message], messages: Sequence[Message], tools: Sequence[Tool]
) -> int:
    """The water level: system prompt + messages + tool schemas, estimated."""
    return (
        sum(estimate_message(m) for m in system_messages)
        + sum(estimate_message(m) for m in messages)
        + estimate_tools(tools)
    )


# --- turns, pairs, protection ------------------------------------------------------------


def is_summary_message(message: Message) -> bool:
    """True for a summary message this strategy wrote."""
    if "hybrid_summary" in message.metadata:
        return True
    return isinstance(message.content, str) and message.content.startswith(SUMMARY_PREFIX)


def is_user_task(message: Message) -> bool:
    """A real user message (openJiuwen's rule) that is not one of our summaries."""
    return message.is_real_user and not is_summary_message(message)


def turn_starts(messages: Sequence[Message], unit: str = "step") -> list[int]:
    """First message index of each turn (see the module docstring for the two units)."""
    if not messages:
        return []
    if unit == "user":
        return [0] + [i for i in range(1, len(messages)) if is_user_task(messages[i])]
    starts = [0]
    for index in range(1, len(messages)):
        role, previous = messages[index].role, messages[index - 1].role
        if role != "tool" and previous in ("assistant", "tool"):
            starts.append(index)
    return starts


def result_call_index(messages: Sequence[Message]) -> dict[int, int]:
    """Tool result index -> index of the nearest earlier assistant message holding its call."""
    latest: dict[str, int] = {}
    out: dict[int, int] = {}
    for index, message in enumerate(messages):
        if message.role == "assistant":
            for call_id in message.call_ids:
                latest[call_id] = index
        elif message.role == "tool" and message.tool_call_id in latest:
            out[index] = latest[message.tool_call_id]
    return out


def in_flight_groups(messages: Sequence[Message]) -> dict[int, list[int]]:
    """Assistant index -> its result indices, for assistant messages with a call still in flight."""
    calls_of = result_call_index(messages)
    answered: dict[int, set[str]] = {}
    results: dict[int, list[int]] = {}
    for result, call in calls_of.items():
        answered.setdefault(call, set()).add(messages[result].tool_call_id or "")
        results.setdefault(call, []).append(result)
    out: dict[int, list[int]] = {}
    for index, message in enumerate(messages):
        if message.role != "assistant" or not message.tool_calls:
            continue
        ids = [c.id for c in message.tool_calls]
        if any(i is None for i in ids):
            pending = index + 1 >= len(messages) or messages[index + 1].role != "tool"
        else:
            pending = any(i not in answered.get(index, set()) for i in ids)
        if pending:
            out[index] = sorted(results.get(index, []))
    return out


def recent_window_start(messages: Sequence[Message], config: HybridConfig) -> int:
    """Start of the protected recent window: N-th last turn, widened to keep tool-call pairs."""
    return HybridContext((), messages, ()).recent_start(config)


# --- results ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """What level 3 asks the LLM: the prompt and the middle messages to summarise."""

    prompt: str
    messages: tuple[Message, ...]
    max_words: int


Summarizer = Callable[[SummaryRequest], "str | Awaitable[str]"]


@dataclass(frozen=True, slots=True)
class MessageOutcome:
    """What the pipeline did to one context message."""

    index: int
    role: str
    turn: int
    outcome: Outcome
    truncation: Truncation
    protected_by: Protection | None
    estimate_before: int
    estimate_after_level_1: int

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        out: dict[str, Any] = {
            "index": self.index,
            "role": self.role,
            "turn": self.turn,
            "outcome": self.outcome,
            "protected_by": self.protected_by,
        }
        if self.truncation.cut:
            out["branch"] = self.truncation.branch
            out["chars_removed"] = self.truncation.chars_removed
        return out


@dataclass(frozen=True, slots=True)
class WaterLevel:
    """The estimate after one stage, and whether it is above the threshold."""

    stage: Stage
    estimated_tokens: int
    above_threshold: bool


@dataclass(frozen=True, slots=True)
class _Rows:
    """Per-message arrays of one decision; MessageOutcome objects are built from them on demand."""

    roles: tuple[str, ...]
    turns: Sequence[int]
    truncations: Sequence[Truncation]
    protection: Sequence[Protection | None]
    est_original: Sequence[int]
    est_level1: Sequence[int]
    folded: frozenset[int]
    summarized: bool

    def outcome(self, index: int) -> MessageOutcome:
        """What happened to message `index`."""
        truncation = self.truncations[index]
        if index in self.folded:
            outcome: Outcome = "summarized" if self.summarized else "folded"
        elif truncation.cut:
            outcome = "truncated"
        else:
            outcome = "kept"
        return MessageOutcome(
            index=index,
            role=self.roles[index],
            turn=self.turns[index],
            outcome=outcome,
            truncation=truncation,
            protected_by=self.protection[index],
            estimate_before=self.est_original[index],
            estimate_after_level_1=self.est_level1[index],
        )


@dataclass(frozen=True)
class HybridResult:
    """The pipeline's full decision on one context (per-message outcomes built on first use)."""

    config: HybridConfig
    threshold: int
    hit: bool
    reason: Reason
    stopped_at: int
    water_levels: tuple[WaterLevel, ...]
    rows: _Rows = field(repr=False)
    system_messages: tuple[Message, ...]
    messages_after: tuple[Message, ...]
    recent_start: int
    kept_middle: tuple[int, ...]
    folded: tuple[int, ...]
    summary_source: SummarySource
    summary_text: str | None
    llm_calls: int
    llm_call_made: bool
    level3_error: str | None
    findings: tuple[Finding, ...]
    counted_before: int | None = None
    counted_after: int | None = None
    counter_mode: str | None = None
    #: Our count of the whole request (system + messages + tools) as loaded, when a counter was given.
    counted_request: int | None = None
    estimator: str = "chars/4"
    summary_request: SummaryRequest | None = field(default=None, repr=False)

    @functools.cached_property
    def outcomes(self) -> tuple[MessageOutcome, ...]:
        """What the pipeline did to each context message, in order."""
        return tuple(self.rows.outcome(i) for i in range(len(self.rows.roles)))

    def outcome(self, index: int) -> MessageOutcome:
        """What the pipeline did to one message (cheap: no list of all outcomes is built)."""
        return self.rows.outcome(index)

    @property
    def event(self) -> dict[str, Any] | None:
        """The runtime's `ContextCompressed(before, after, strategy)` for this decision, or None.

        Level 1 alone emits none: it runs on arrival and is not a compression of the context.
        """
        if self.stopped_at < 2 or not self.folded:
            return None
        strategy = (
            "LlmSummaryCompressor"
            if self.summary_source in ("llm", "placeholder")
            else "SlidingWindowCompressor"
        )
        return {
            "type": "ContextCompressed",
            "before": self.water_levels[1].estimated_tokens,
            "after": self.estimate_after,
            "strategy": strategy,
            "messages_folded": len(self.folded),
        }

    @property
    def message_count(self) -> int:
        """How many context messages went in."""
        return len(self.rows.roles)

    @property
    def estimate_before(self) -> int:
        """The raw water level (as loaded)."""
        return self.water_levels[0].estimated_tokens

    @property
    def estimate_after(self) -> int:
        """The water level after the last stage that ran."""
        return self.water_levels[-1].estimated_tokens

    @property
    def truncated(self) -> tuple[MessageOutcome, ...]:
        """Outcomes of the tool outputs level 1 cut."""
        return tuple(self.rows.outcome(i) for i, t in enumerate(self.rows.truncations) if t.cut)

    @property
    def span_counts(self) -> dict[str, int]:
        """openJiuwen-like counts: kept before the summary / folded / protected recent window."""
        n = self.message_count
        return {
            "preserved_prefix": len(self.kept_middle),
            "messages_to_compress": len(self.folded),
            "protected_tail": n - self.recent_start,
        }

    def checks(self) -> tuple[Check, ...]:
        """The ordered checks of the why panel: the water level after each stage, then alignment."""
        out: list[Check] = []
        counted = (
            f"; our {self.counter_mode} count of the same is {self.counted_request}"
            if self.counted_request is not None
            else ""
        )
        out.append(
            Check(
                "hybrid_estimator",
                "Estimator",
                "info",
                f"{self.estimator} estimate of system prompt + messages + tool schemas: "
                f"{self.estimate_before}{counted}. An estimate decides every level.",
                {"estimated_tokens": self.estimate_before, "counted_tokens": self.counted_request},
            )
        )
        titles = {
            "raw": "Water level as loaded",
            "level_1": "Level 1 · ToolOutputTruncator (free, always on)",
            "level_2": "Level 2 · SlidingWindowCompressor (free)",
            "level_3": "Level 3 · LlmSummaryCompressor (one LLM call)",
        }
        seen = {w.stage for w in self.water_levels}
        for level in self.water_levels:
            relation = "above" if level.above_threshold else "at or under"
            sentence = f"{level.estimated_tokens} estimated tokens, {relation} the threshold {self.threshold}"
            if level.stage == "raw":
                sentence += f" (= floor({self.config.max_context_tokens} x {self.config.compression_threshold}))"
            elif level.stage == "level_1":
                cut = [t for t in self.rows.truncations if t.cut]
                removed = sum(t.chars_removed for t in cut)
                sentence += f"; {len(cut)} tool outputs cut by shape, {removed} characters removed"
            elif level.stage == "level_2":
                sentence += (
                    f"; {len(self.folded)} messages folded into one rule summary, "
                    f"{self.message_count - self.recent_start} kept in the last "
                    f"{self.config.preserve_recent_turns} turns"
                )
            elif level.stage == "level_3":
                sentence += {
                    "llm": "; the middle summarised by the LLM",
                    "fallback": f"; the LLM call failed ({self.level3_error}), the level-2 summary is kept",
                    "placeholder": (
                        "; not run here: the summary is priced at "
                        f"{self.config.placeholder_summary_tokens} tokens"
                    ),
                }.get(self.summary_source, "")
            if level.stage != "raw" and self.stopped_at == int(level.stage[-1]):
                sentence += ". The pipeline stops here."
            out.append(
                Check(
                    f"hybrid_{level.stage}",
                    titles[level.stage],
                    "fail" if level.above_threshold else "pass",
                    sentence,
                    {"estimated_tokens": level.estimated_tokens, "threshold": self.threshold},
                )
            )
        for stage in ("level_2", "level_3"):
            if stage not in seen:
                out.append(
                    Check(
                        f"hybrid_{stage}",
                        titles[stage],
                        "skip",
                        "not needed: an earlier level was enough",
                    )
                )
        mismatch = alignment_check(self.config)
        out.append(
            Check(
                "hybrid_alignment",
                "Engine budget vs model window",
                "pass"
                if mismatch is None
                else "info"
                if mismatch.key == "model_window_unknown"
                else "fail",
                f"engine budget {self.config.max_context_tokens} vs the model's usable window "
                f"{self.config.usable_window} (= context_window {self.config.context_window} - "
                f"reserved_output_tokens {self.config.reserved_output_tokens})"
                + (
                    ": they agree"
                    if mismatch is None
                    else ": the model window is not known"
                    if mismatch.key == "model_window_unknown"
                    else ": they disagree (see findings)"
                ),
                {
                    "max_context_tokens": self.config.max_context_tokens,
                    "usable_window": self.config.usable_window,
                },
            )
        )
        return tuple(out)

    def to_json(self, with_outcomes: bool = True) -> dict[str, Any]:
        """The decision fields of `why --json` for `--processor hybrid`, plus a `hybrid` block."""
        middle_estimate = sum(self.rows.est_level1[i] for i in self.folded)
        out: dict[str, Any] = {
            "processor": "hybrid",
            "hit": self.hit,
            "reason": self.reason,
            "total_tokens": self.estimate_before,
            "threshold": self.threshold,
            "target_tokens": middle_estimate if self.folded else None,
            "min_target_tokens": None,
            "effective_keep": self.message_count - self.recent_start,
            "span": self.span_counts,
            "checks": [c.to_dict() for c in self.checks()],
            "findings": [f.to_dict() for f in self.findings],
            "hybrid": {
                "estimator": self.estimator,
                "stopped_at": self.stopped_at,
                "event": self.event,
                "water_levels": [
                    {
                        "stage": w.stage,
                        "estimated_tokens": w.estimated_tokens,
                        "above_threshold": w.above_threshold,
                    }
                    for w in self.water_levels
                ],
                "truncated": sum(1 for t in self.rows.truncations if t.cut),
                "chars_removed": sum(t.chars_removed for t in self.rows.truncations if t.cut),
                "folded": len(self.folded),
                "summary_source": self.summary_source,
                "llm_calls": self.llm_calls,
                "llm_call_made": self.llm_call_made,
                "level3_error": self.level3_error,
                "messages_after": len(self.messages_after),
                "counted_before": self.counted_before,
                "counted_after": self.counted_after,
                "counter_mode": self.counter_mode,
                "counted_request": self.counted_request,
                "config": {
                    k: v for k, v in dataclasses.asdict(self.config).items() if k != "given"
                },
            },
        }
        if with_outcomes:
            out["hybrid"]["messages"] = [o.to_dict() for o in self.outcomes]
        return out


# --- the rule summary (level 2) and the LLM request (level 3) ---------------------------


def _files_from_arguments(arguments: str) -> list[str]:
    try:
        parsed = json.loads(arguments)
    except (ValueError, RecursionError):
        return list(find_paths(arguments).values())
    if not isinstance(parsed, Mapping):
        return []
    out: list[str] = []
    for key in _FILE_ARG_KEYS:
        value = parsed.get(key)
        if isinstance(value, str) and value:
            out.append(value)
        elif isinstance(value, list):
            out.extend(v for v in value if isinstance(v, str))
    return out


def rule_summary(messages: Sequence[Message]) -> str:
    """Level 2's summary of folded messages: counts, tools called, files touched, errors seen."""
    names: dict[str, str] = {}
    parts: list[_SummaryPart] = []
    for message in messages:
        for call in message.tool_calls:
            if call.id:
                names[call.id] = call.name
        parts.append(_summary_part(message, names.get(message.tool_call_id or "")))
    return _render_rule_summary(Counter(m.role for m in messages), parts, len(messages))


def _render_rule_summary(roles: Counter[str], parts: Sequence[_SummaryPart], count: int) -> str:
    tools: Counter[str] = Counter()
    files: dict[str, None] = {}
    errors: dict[str, None] = {}
    for part in parts:
        for name in part.tools:
            tools[name] += 1
        for path in part.files:
            files[path] = None
        for line in part.errors:
            errors[line] = None
    role_text = ", ".join(f"{n} {role}" for role, n in sorted(roles.items()))
    lines = [
        f"{SUMMARY_PREFIX} · level 2 · rule-based] Folded {count} earlier messages ({role_text}).",
    ]
    if tools:
        called = ", ".join(f"{name} ×{n}" for name, n in tools.most_common())
        lines.append(f"Tools called ({sum(tools.values())}): {called}.")
    if files:
        lines.append(f"Files touched ({len(files)}): " + ", ".join(files) + ".")
    if errors:
        shown = list(errors)[:5]
        more = f" (+{len(errors) - 5} more)" if len(errors) > 5 else ""
        lines.append(f"Errors seen ({len(errors)}){more}:")
        lines.extend(f"- {e}" for e in shown)
    return "\n".join(lines)


def summary_prompt(max_words: int = 400) -> str:
    """The level-3 instruction: Task / Progress / State / Key Data, at most `max_words` words."""
    sections = "\n".join(f"## {name}" for name in SUMMARY_SECTIONS)
    return (
        "Summarise the earlier part of this agent conversation for the agent that will "
        f"continue it. Write at most {max_words} words, in exactly these sections:\n"
        f"{sections}\n"
        "Task: what the user asked. Progress: what was done and found. State: where the work "
        "stands and what comes next. Key Data: file paths, identifiers, commands, error "
        "messages and decisions, verbatim. Do not call tools; reply with the summary only."
    )


def summary_transcript(messages: Sequence[Message], max_chars_per_message: int = 4000) -> str:
    """The middle messages as one plain-text transcript for the level-3 request.

    One block per message (`[index] role`, tool calls as `-> name(arguments)`, a tool
    result as `[index] tool (call id)`), each cut to `max_chars_per_message` characters:
    sending text rather than wire-form messages keeps the request valid whatever the
    roles and pairs of the middle look like.
    """
    blocks: list[str] = []
    for index, message in enumerate(messages):
        head = f"[{index}] {message.role}"
        if message.role == "tool" and message.tool_call_id:
            head += f" ({message.tool_call_id})"
        if message.role == "tool":
            text = message_text(message)
        elif isinstance(message.content, str):
            text = message.content
        else:
            text = dataclasses.replace(message, tool_calls=()).text_preview(10**9)
        if len(text) > max_chars_per_message:
            text = (
                text[:max_chars_per_message] + f" …[{len(text) - max_chars_per_message} chars cut]"
            )
        lines = [head + (f": {text}" if text else "")]
        lines.extend(f"  -> {c.name}({c.arguments})" for c in message.tool_calls)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def clean_llm_summary(reply: Any, max_words: int) -> tuple[str, list[str]]:
    """Validate an LLM reply: non-empty text, cut to `max_words` words; notes on what was off."""
    if not isinstance(reply, str) or not reply.strip():
        raise ValueError("empty summary")
    text = reply.strip()
    notes: list[str] = []
    words = text.split()
    if len(words) > max_words:
        notes.append(f"summary had {len(words)} words, cut to {max_words}")
        # keep line structure up to the word limit
        kept = [
            m.group(0) for _, m in zip(range(max_words), re.finditer(r"\S+\s*", text), strict=False)
        ]
        text = "".join(kept).rstrip()
    missing = [s for s in SUMMARY_SECTIONS if not re.search(rf"(?im)^\W*{re.escape(s)}\b", text)]
    if missing:
        notes.append("summary lacks sections: " + ", ".join(missing))
    return text, notes


def _summary_message(text: str, source: str) -> Message:
    return Message(role="user", content=text, metadata={"hybrid_summary": source})


# --- the pipeline ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _SummaryPart:
    """What one folded message adds to the rule summary."""

    tools: tuple[str, ...]
    files: tuple[str, ...]
    errors: tuple[str, ...]


def _summary_part(message: Message, tool_name: str | None) -> _SummaryPart:
    files: list[str] = []
    for call in message.tool_calls:
        files.extend(_files_from_arguments(call.arguments))
    errors: list[str] = []
    # file contents are not errors seen, even when the code mentions ValueError
    if message.role == "tool" and not is_read_file_tool(tool_name):
        errors = find_errors(message_text(message))
    return _SummaryPart(
        tuple(call.name or "?" for call in message.tool_calls), tuple(files), tuple(errors)
    )


def _level1_key(config: HybridConfig) -> tuple[int, ...]:
    return (
        config.max_tool_output_length,
        config.json_tail_chars,
        config.list_min_lines,
        config.list_short_line_chars,
        config.list_head_lines,
        config.list_tail_lines,
        config.head_chars,
        config.tail_chars,
    )


class HybridContext:
    """One context prepared for many pipeline decisions (a tuning panel re-decides on every change).

    Tool names, tool-call pairs, calls in flight, the latest task, turns per unit, level-1
    cuts per cap, estimates and rule-summary parts are computed once and cached, so a new
    decision is a few linear passes over plain lists.
    """

    def __init__(
        self,
        system_messages: Sequence[Message],
        messages: Sequence[Message],
        tools: Sequence[Tool],
        counter: TokenCounter | None = None,
    ) -> None:
        self.system = tuple(system_messages)
        self.messages = tuple(messages)
        self.tools = tuple(tools)
        self.counter = counter
        self.n = len(self.messages)
        names: dict[str, str] = {}
        self.tool_names: list[str | None] = []
        for message in self.messages:
            for call in message.tool_calls:
                if call.id:
                    names[call.id] = call.name
            self.tool_names.append(
                names.get(message.tool_call_id or "") if message.role == "tool" else None
            )
        calls_of = result_call_index(self.messages)
        self._pull = [self.n] * (self.n + 1)
        for index in range(self.n - 1, -1, -1):
            self._pull[index] = min(calls_of.get(index, self.n), self._pull[index + 1])
        self.in_flight = in_flight_groups(self.messages)
        self.latest_task = next(
            (i for i in range(self.n - 1, -1, -1) if is_user_task(self.messages[i])), -1
        )
        self._turns: dict[str, tuple[list[int], list[int]]] = {}
        self._level1: dict[tuple[int, ...], tuple[tuple[Message, ...], list[Truncation]]] = {}
        self._estimates: dict[tuple[Any, ...], tuple[list[int], list[int], int]] = {}
        self._parts: dict[tuple[tuple[int, ...], int], _SummaryPart] = {}
        self._counts: dict[str, int] = {}
        self._piece_prefix: dict[tuple[int, ...], list[int]] = {}

    @classmethod
    def from_snapshot(
        cls, snapshot: ContextSnapshot, counter: TokenCounter | None = None
    ) -> HybridContext:
        """Prepare a snapshot's system prompt, messages and tools."""
        return cls(snapshot.system_messages, snapshot.messages, snapshot.tools, counter)

    def turns(self, unit: str) -> tuple[list[int], list[int]]:
        """Turn start indices and each message's turn number, for a turn unit (cached)."""
        if unit not in self._turns:
            starts = turn_starts(self.messages, unit)
            turn_of = [0] * self.n
            for number, start in enumerate(starts):
                end = starts[number + 1] if number + 1 < len(starts) else self.n
                turn_of[start:end] = [number] * (end - start)
            self._turns[unit] = (starts, turn_of)
        return self._turns[unit]

    def recent_start(self, config: HybridConfig) -> int:
        """Start of the protected recent window (see `recent_window_start`)."""
        starts, _ = self.turns(config.turn_unit)
        keep = config.preserve_recent_turns
        if keep == 0 or not starts:
            start = self.n
        elif keep >= len(starts):
            start = 0
        else:
            start = starts[-keep]
        while start < self.n and self._pull[start] < start:
            start = self._pull[start]
        return start

    def level1(self, config: HybridConfig) -> tuple[tuple[Message, ...], list[Truncation]]:
        """Every tool result cut by level 1 under this config (cached per level-1 settings)."""
        key = _level1_key(config)
        if key not in self._level1:
            out: list[Message] = []
            truncations: list[Truncation] = []
            for message, name in zip(self.messages, self.tool_names, strict=True):
                if message.role == "tool":
                    content, truncation = truncate_output(message.content, name, config)
                    if truncation.cut:
                        message = dataclasses.replace(message, content=content)
                else:
                    truncation = _NO_CUT
                out.append(message)
                truncations.append(truncation)
            self._level1[key] = (tuple(out), truncations)
        return self._level1[key]

    def estimator(self, config: HybridConfig) -> Callable[[Message], int]:
        """The water-level estimator this config asks for (the counter only when one was given)."""
        if config.estimator == "counter" and self.counter is not None:
            return self.counter.piece_tokens
        return estimate_message

    def estimates(self, config: HybridConfig) -> tuple[list[int], list[int], int]:
        """Per-message estimates as loaded and after level 1, and the fixed part (system + tools)."""
        estimate = self.estimator(config)
        key = (estimate is estimate_message, *_level1_key(config))
        if key not in self._estimates:
            level1, truncations = self.level1(config)
            original = [estimate(m) for m in self.messages]
            after = [
                estimate(m) if t.cut else e
                for m, t, e in zip(level1, truncations, original, strict=True)
            ]
            if estimate is estimate_message:
                fixed = sum(estimate_message(m) for m in self.system) + estimate_tools(self.tools)
            else:
                assert self.counter is not None
                fixed = (
                    sum(self.counter.piece_tokens(m) for m in self.system)
                    + self.counter.overhead
                    + self.counter.count_tools(self.tools)
                )
            self._estimates[key] = (original, after, fixed)
        return self._estimates[key]

    def rule_summary(self, config: HybridConfig, indices: Sequence[int]) -> str:
        """The level-2 rule summary of these messages (after level 1), from cached parts."""
        level1, _ = self.level1(config)
        key = _level1_key(config)
        parts: list[_SummaryPart] = []
        for index in indices:
            part = self._parts.get((key, index))
            if part is None:
                part = _summary_part(level1[index], self.tool_names[index])
                self._parts[(key, index)] = part
            parts.append(part)
        return _render_rule_summary(Counter(level1[i].role for i in indices), parts, len(indices))

    def counted(self, what: str) -> int:
        """Our counter's count of the context messages (`messages`) or the whole request (`request`)."""
        assert self.counter is not None
        if what not in self._counts:
            if what == "messages":
                self._counts[what] = self.counter.count_messages(self.messages)
            else:
                self._counts[what] = self.counter.count_messages(
                    self.system + self.messages
                ) + self.counter.count_tools(self.tools)
        return self._counts[what]

    def counted_after(self, plan: _Plan) -> int:
        """Our counter's count of the context after the plan, from prefix sums of level-1 pieces."""
        counter = self.counter
        assert counter is not None
        key = _level1_key(plan.config)
        prefix = self._piece_prefix.get(key)
        if prefix is None:
            prefix = [0, *accumulate(counter.piece_tokens(m) for m in plan.level1)]
            self._piece_prefix[key] = prefix
        if plan.summary_source == "none":
            return prefix[-1] + counter.overhead if self.n else 0
        summary = plan.messages_after[len(plan.kept_middle)]
        assert is_summary_message(summary)
        summary_tokens = counter.piece_tokens(summary)
        if plan.summary_source == "placeholder":
            summary_tokens = plan.config.placeholder_summary_tokens
        kept = sum(prefix[i + 1] - prefix[i] for i in plan.kept_middle)
        return kept + summary_tokens + prefix[-1] - prefix[plan.recent_start] + counter.overhead

    def decide(self, config: HybridConfig) -> HybridResult:
        """The pipeline's decision without an LLM call (level 3, if reached, priced by placeholder)."""
        plan = _plan(self, config)
        return _finish(plan, _NOT_RUN, None, _request(plan) if plan.stage == 3 else None)


_NO_CUT = Truncation("none", 0, 0)


@dataclass(slots=True)
class _Plan:
    context: HybridContext
    config: HybridConfig
    threshold: int
    level1: tuple[Message, ...]
    truncations: list[Truncation]
    est_original: list[int]
    est_level1: list[int]
    fixed: int  # estimate of system prompt + tools
    turns: list[int]
    recent_start: int
    kept_middle: list[int]
    middle: list[int]
    protection: list[Protection | None]
    levels: list[WaterLevel]
    estimate: Callable[[Message], int]
    stage: int = 1
    reason: Reason = "below_threshold"
    messages_after: tuple[Message, ...] = ()
    summary_source: SummarySource = "none"
    summary_text: str | None = None
    rule_text: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def system(self) -> tuple[Message, ...]:
        return self.context.system

    @property
    def original(self) -> tuple[Message, ...]:
        return self.context.messages

    @property
    def counter(self) -> TokenCounter | None:
        return self.context.counter


def _plan(context: HybridContext, config: HybridConfig) -> _Plan:
    """Levels 1 and 2 (both free), and whether level 3 is needed."""
    n = context.n
    level1, truncations = context.level1(config)
    est_original, est_level1, fixed = context.estimates(config)
    estimate = context.estimator(config)
    threshold = config.threshold
    raw = fixed + sum(est_original)
    after1 = fixed + sum(est_level1)

    # the protected parts, computed on every run so views can show them
    _, turn_of = context.turns(config.turn_unit)
    recent_start = context.recent_start(config)
    recent: Protection = "recent_turn"
    protection: list[Protection | None] = [None] * n
    protection[recent_start:] = [recent] * (n - recent_start)
    for index in range(recent_start):
        if context.messages[index].role == "system":
            protection[index] = "system_prompt"
    if 0 <= context.latest_task < recent_start:
        protection[context.latest_task] = "latest_user_task"
    for call_index, results in context.in_flight.items():
        for index in (call_index, *results):
            if index < recent_start and protection[index] is None:
                protection[index] = "in_flight"
    kept_middle = [i for i in range(recent_start) if protection[i] is not None]
    middle = [i for i in range(recent_start) if protection[i] is None]

    plan = _Plan(
        context=context,
        config=config,
        threshold=threshold,
        level1=level1,
        truncations=truncations,
        est_original=est_original,
        est_level1=est_level1,
        fixed=fixed,
        turns=turn_of,
        recent_start=recent_start,
        kept_middle=kept_middle,
        middle=middle,
        protection=protection,
        levels=[
            WaterLevel("raw", raw, raw > threshold),
            WaterLevel("level_1", after1, after1 > threshold),
        ],
        estimate=estimate,
    )
    plan.messages_after = level1
    if raw <= threshold:
        plan.reason = "below_threshold"
        return plan
    if after1 <= threshold:
        plan.reason = "compressed_at_level_1"
        return plan
    plan.stage = 2
    if not middle:
        plan.reason = "still_above_threshold"
        plan.levels.append(WaterLevel("level_2", after1, True))
        plan.notes.append("nothing_to_fold")
        return plan
    plan.rule_text = context.rule_summary(config, middle)
    summary = _summary_message(plan.rule_text, "rule")
    plan.messages_after = _layout(plan, summary)
    plan.summary_source, plan.summary_text = "rule", plan.rule_text
    after2 = _kept_estimate(plan) + estimate(summary)
    plan.levels.append(WaterLevel("level_2", after2, after2 > threshold))
    if after2 <= threshold:
        plan.reason = "compressed_at_level_2"
        return plan
    plan.stage = 3
    return plan


def _kept_estimate(plan: _Plan) -> int:
    """System prompt, tools, protected middle and recent window (everything but the summary)."""
    return (
        plan.fixed
        + sum(plan.est_level1[i] for i in plan.kept_middle)
        + sum(plan.est_level1[plan.recent_start :])
    )


def _layout(plan: _Plan, summary: Message) -> tuple[Message, ...]:
    kept = [plan.level1[i] for i in plan.kept_middle]
    return (*kept, summary, *plan.level1[plan.recent_start :])


def _request(plan: _Plan) -> SummaryRequest:
    return SummaryRequest(
        prompt=summary_prompt(plan.config.summary_max_words),
        messages=tuple(plan.level1[i] for i in plan.middle),
        max_words=plan.config.summary_max_words,
    )


_NOT_RUN = object()


def _finish(
    plan: _Plan, reply: Any, error: str | None, request: SummaryRequest | None
) -> HybridResult:
    """Level 3 with the reply (or the error, or no summarizer), then the result."""
    llm_calls = 0
    call_made = False
    level3_error: str | None = None
    summary_tokens_adjust = 0
    if plan.stage == 3:
        llm_calls = 1
        placeholder = plan.config.placeholder_summary_tokens
        if reply is _NOT_RUN and error is None:
            text = (
                f"{SUMMARY_PREFIX} · level 3 · LLM summary not run: priced at {placeholder} tokens]"
            )
            message = _summary_message(text, "placeholder")
            plan.summary_source, plan.summary_text = "placeholder", None
            summary_tokens_adjust = placeholder - plan.estimate(message)
        else:
            call_made = True
            try:
                if error is not None:
                    raise RuntimeError(error)
                text, notes = clean_llm_summary(reply, plan.config.summary_max_words)
                plan.notes.extend(notes)
                text = f"{SUMMARY_PREFIX} · level 3 · LLM summary]\n{text}"
                message = _summary_message(text, "llm")
                plan.summary_source, plan.summary_text = "llm", text
            except Exception as failure:  # noqa: BLE001 - compression must never fail
                level3_error = (str(failure) or type(failure).__name__)[:300]
                assert plan.rule_text is not None
                message = _summary_message(plan.rule_text, "rule")
                plan.summary_source, plan.summary_text = "fallback", plan.rule_text
        plan.messages_after = _layout(plan, message)
        after3 = _kept_estimate(plan) + plan.estimate(message) + summary_tokens_adjust
        plan.levels.append(WaterLevel("level_3", after3, after3 > plan.threshold))
        plan.reason = (
            "compressed_at_level_3" if after3 <= plan.threshold else "still_above_threshold"
        )
    elif plan.stage == 2 and plan.reason != "compressed_at_level_2":
        plan.reason = "still_above_threshold"

    folded = tuple(plan.middle) if plan.stage >= 2 and plan.summary_source != "none" else ()
    summarized = plan.stage == 3 and plan.summary_source in ("llm", "placeholder")
    rows = _Rows(
        roles=tuple(m.role for m in plan.original),
        turns=plan.turns,
        truncations=plan.truncations,
        protection=plan.protection,
        est_original=plan.est_original,
        est_level1=plan.est_level1,
        folded=frozenset(folded),
        summarized=summarized,
    )

    counted_before = counted_after = counted_request = None
    mode = None
    if plan.counter is not None:
        mode = plan.counter.mode
        counted_request = plan.context.counted("request")
        counted_before = plan.context.counted("messages")
        counted_after = plan.context.counted_after(plan)

    result = HybridResult(
        config=plan.config,
        threshold=plan.threshold,
        hit=plan.levels[0].above_threshold,
        reason=plan.reason,
        stopped_at=plan.stage,
        water_levels=tuple(plan.levels),
        rows=rows,
        system_messages=plan.system,
        messages_after=plan.messages_after,
        recent_start=plan.recent_start,
        kept_middle=tuple(plan.kept_middle),
        folded=folded,
        summary_source=plan.summary_source,
        summary_text=plan.summary_text,
        llm_calls=llm_calls,
        llm_call_made=call_made,
        level3_error=level3_error,
        findings=(),
        counted_before=counted_before,
        counted_after=counted_after,
        counter_mode=mode,
        counted_request=counted_request,
        estimator=(
            f"counter ({plan.counter.mode})"
            if plan.estimate is not estimate_message and plan.counter is not None
            else "chars/4"
        ),
        summary_request=request,
    )
    return dataclasses.replace(result, findings=tuple(_findings(plan, result)))


def _findings(plan: _Plan, result: HybridResult) -> list[Finding]:
    out: list[Finding] = []
    config = plan.config
    mismatch = alignment_check(config)
    if mismatch is not None:
        out.append(mismatch)
    cut = [(i, t) for i, t in enumerate(plan.truncations) if t.cut]
    if cut:
        branches = Counter(t.branch for _, t in cut)
        biggest_index, biggest = max(cut, key=lambda item: item[1].chars_before)
        out.append(
            Finding(
                "tool_outputs_truncated",
                "info",
                f"level 1 cut {len(cut)} tool outputs over {config.max_tool_output_length} chars "
                f"({', '.join(f'{b} ×{n}' for b, n in branches.most_common())}), "
                f"{sum(t.chars_removed for _, t in cut)} chars removed; the largest was "
                f"message {biggest_index} ({biggest.chars_before} chars). Frequent large "
                "outputs (whole files, whole pages) make compression fire often: prefer narrower tools.",
                {"count": len(cut), "branches": dict(branches)},
            )
        )
    if plan.stage >= 2:
        protected = _kept_estimate(plan)
        if protected > plan.threshold:
            out.append(
                Finding(
                    "protected_part_above_threshold",
                    "warning",
                    f"the never-compressed part alone (system prompt, tools, latest task, "
                    f"in-flight calls and the last {config.preserve_recent_turns} turns) is "
                    f"{protected} estimated tokens, above the threshold {plan.threshold}: no level "
                    "can bring the context under it. Lower preserve_recent_turns or shorten tool outputs.",
                    {"protected_tokens": protected, "threshold": plan.threshold},
                )
            )
        level2 = next((w for w in plan.levels if w.stage == "level_2"), None)
        if level2 is not None and result.folded and level2.estimated_tokens < plan.threshold // 2:
            room = plan.threshold - level2.estimated_tokens
            per_turn: dict[int, int] = {}
            for index in plan.middle:
                per_turn[plan.turns[index]] = (
                    per_turn.get(plan.turns[index], 0) + plan.est_level1[index]
                )
            more = 0
            for turn in sorted(per_turn, reverse=True):  # the most recent folded turns first
                room -= per_turn[turn]
                if room < 0:
                    break
                more += 1
            if more:
                out.append(
                    Finding(
                        "window_overshoot",
                        "info",
                        f"level 2 left {level2.estimated_tokens} estimated tokens, "
                        f"{100 * level2.estimated_tokens // max(plan.threshold, 1)}% of the threshold "
                        f"{plan.threshold}: the window keeps exactly {config.preserve_recent_turns} turns, "
                        f"so about {more} more recent turn(s) would have fitted verbatim; raising "
                        f"preserve_recent_turns to {config.preserve_recent_turns + more} loses less at no cost.",
                        {"estimated_tokens": level2.estimated_tokens, "more_turns": more},
                    )
                )
        if "nothing_to_fold" in plan.notes:
            out.append(
                Finding(
                    "nothing_to_fold",
                    "warning",
                    "level 2 is needed but every message before the recent window is protected: "
                    "nothing can be folded or summarised.",
                )
            )
        folded_users = [i for i in result.folded if plan.original[i].is_real_user]
        if folded_users:
            out.append(
                Finding(
                    "user_messages_folded",
                    "warning",
                    f"{len(folded_users)} earlier user message(s) were folded into the summary "
                    f"(indices {folded_users[:8]}): an agreement or constraint stated there may be "
                    "forgotten. Raise preserve_recent_turns or move it into the system prompt.",
                    {"indices": folded_users},
                )
            )
    if plan.stage == 3:
        out.append(
            Finding(
                "llm_summary_needed",
                "info",
                "level 2 was not enough: level 3 costs one LLM call every time the pipeline gets "
                "this far; long tasks then get slower and slower. Split the task or write "
                "intermediate results to files.",
                {"llm_calls": 1, "summary_source": result.summary_source},
            )
        )
        if result.level3_error is not None:
            out.append(
                Finding(
                    "llm_summary_failed",
                    "warning",
                    f"the level-3 LLM call failed ({result.level3_error}); the level-2 rule summary was used instead.",
                )
            )
        for note in plan.notes:
            if note.startswith("summary "):
                out.append(Finding("llm_summary_format", "info", note))
    if (
        result.counted_request is not None
        and plan.counter is not None
        and result.estimator == "chars/4"
    ):
        counted_total = result.counted_request
        estimate = result.estimate_before
        if counted_total > estimate * 1.1:
            out.append(
                Finding(
                    "estimator_undercounts",
                    "warning",
                    f"the chars/4 estimate ({estimate}) is {100 * (counted_total - estimate) // max(estimate, 1)}% "
                    f"below the {plan.counter.mode} count ({counted_total}): the model sees more than "
                    "the engine thinks. Use a lower compression_threshold as a safety margin.",
                    {"estimated_tokens": estimate, "counted_tokens": counted_total},
                )
            )
    return out


def _inputs(snapshot: ContextSnapshot, config: HybridConfig | None) -> HybridConfig:
    return config if config is not None else config_from_tuning(snapshot.tuning)


def hybrid_decision(
    snapshot: ContextSnapshot,
    config: HybridConfig | None = None,
    counter: TokenCounter | None = None,
) -> HybridResult:
    """The pipeline's decision without any LLM call (level 3, if needed, is priced by placeholder)."""
    return HybridContext.from_snapshot(snapshot, counter).decide(_inputs(snapshot, config))


def run_hybrid(
    snapshot: ContextSnapshot,
    config: HybridConfig | None = None,
    counter: TokenCounter | None = None,
    summarizer: Summarizer | None = None,
) -> HybridResult:
    """Run the pipeline with a synchronous summarizer for level 3 (None: decision only)."""
    plan = _plan(HybridContext.from_snapshot(snapshot, counter), _inputs(snapshot, config))
    if plan.stage != 3 or summarizer is None:
        return _finish(plan, _NOT_RUN, None, _request(plan) if plan.stage == 3 else None)
    request = _request(plan)
    try:
        reply = summarizer(request)
        if inspect.isawaitable(reply):
            if inspect.iscoroutine(reply):
                reply.close()
            return _finish(plan, None, "the summarizer is async: use run_hybrid_async", request)
    except Exception as failure:  # noqa: BLE001 - compression must never fail
        return _finish(plan, None, str(failure) or type(failure).__name__, request)
    return _finish(plan, reply, None, request)


async def run_hybrid_async(
    snapshot: ContextSnapshot,
    config: HybridConfig | None = None,
    counter: TokenCounter | None = None,
    summarizer: Summarizer | None = None,
) -> HybridResult:
    """Run the pipeline awaiting a sync or async summarizer for level 3 (None: decision only)."""
    plan = _plan(HybridContext.from_snapshot(snapshot, counter), _inputs(snapshot, config))
    if plan.stage != 3 or summarizer is None:
        return _finish(plan, _NOT_RUN, None, _request(plan) if plan.stage == 3 else None)
    request = _request(plan)
    try:
        reply = summarizer(request)
        if inspect.isawaitable(reply):
            reply = await reply
    except Exception as failure:  # noqa: BLE001 - compression must never fail
        return _finish(plan, None, str(failure) or type(failure).__name__, request)
    return _finish(plan, reply, None, request)
