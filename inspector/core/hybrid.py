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
import inspect
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from inspector.core.hybrid_config import HybridConfig, config_from_tuning
from inspector.core.hybrid_findings import hybrid_findings, kept_estimate
from inspector.core.hybrid_result import (  # noqa: F401 - re-exported
    SUMMARY_PREFIX,
    SUMMARY_SECTIONS,
    HybridResult,
    MessageOutcome,
    Outcome,
    Protection,
    Reason,
    Stage,
    Summarizer,
    SummaryRequest,
    SummarySource,
    WaterLevel,
    _Rows,
)
from inspector.core.hybrid_summary import (  # noqa: F401 - re-exported
    _render_rule_summary,
    _summary_message,
    _summary_part,
    _SummaryPart,
    clean_llm_summary,
    rule_summary,
    summary_prompt,
    summary_transcript,
)
from inspector.core.hybrid_truncate import Truncation, truncate_output
from inspector.core.messages import Message, Tool
from inspector.core.snapshot import ContextSnapshot
from inspector.core.tokens import (
    TokenCounter,
    image_block_tokens,
    is_image_block,
    sanitize_text,
    sanitize_value,
)

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
    after2 = kept_estimate(plan) + estimate(summary)
    plan.levels.append(WaterLevel("level_2", after2, after2 > threshold))
    if after2 <= threshold:
        plan.reason = "compressed_at_level_2"
        return plan
    plan.stage = 3
    return plan


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


def _level3(plan: _Plan, reply: Any, error: str | None) -> tuple[bool, str | None]:
    """Level 3 with the reply (or the error, or no summarizer): the summary message, the
    water level after it and the reason. Returns (an LLM call was made, its error)."""
    placeholder = plan.config.placeholder_summary_tokens
    summary_tokens_adjust = 0
    call_made = False
    level3_error: str | None = None
    if reply is _NOT_RUN and error is None:
        text = f"{SUMMARY_PREFIX} · level 3 · LLM summary not run: priced at {placeholder} tokens]"
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
    after3 = kept_estimate(plan) + plan.estimate(message) + summary_tokens_adjust
    plan.levels.append(WaterLevel("level_3", after3, after3 > plan.threshold))
    plan.reason = "compressed_at_level_3" if after3 <= plan.threshold else "still_above_threshold"
    return call_made, level3_error


def _finish(
    plan: _Plan, reply: Any, error: str | None, request: SummaryRequest | None
) -> HybridResult:
    """Level 3 when needed, then the result."""
    llm_calls = 0
    call_made = False
    level3_error: str | None = None
    if plan.stage == 3:
        llm_calls = 1
        call_made, level3_error = _level3(plan, reply, error)
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
    return dataclasses.replace(result, findings=tuple(hybrid_findings(plan, result)))


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
