"""RoundLevelCompressor's model calls as a script (spec `standard-processors.md` 6.7).

The processor compresses until the window holds at most `target_total_tokens`, phase by
phase, each stopping as soon as that holds: `l0_to_l1` (raw rounds into memory blocks),
`recursive_merge_lX_to_lY` (adjacent blocks of one level merged, repeated), then
`aggressive_keep_recent` and `aggressive_full_context` (raw rounds, else the memory
blocks, with the aggressive prompt), and at last a hard head/tail truncation of the whole
serialised context without the model. Each LLM phase is one call: a system prompt and a
user prompt (`[Compression Task]`, `[Reference Context]`, `[Selected Targets]`,
`[Protected Recent Context]`, `[Output Contract]`), head/tail cut to the call budget or
skipped when even a minimal prompt does not fit. A failed call ends the run `failed` with
the context unchanged (openJiuwen re-raises it). The rules are identical in 0.1.16, 0.1.17
and 0.1.19; the counts differ by release (the prepared context's counter). The system
prompts and the contract lines are ours (`StandardPrompts`), never openJiuwen's.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

from inspector.core.messages import Message
from inspector.core.standard.counting import content_repr
from inspector.core.standard.prepared import GET, StandardPrepared
from inspector.core.standard.rerun_script import (
    CallResult,
    EndState,
    ModelCall,
    RerunEnd,
    Script,
    StandardPrompts,
    replace_range,
)
from inspector.core.standard.rerun_texts import block_summaries, parse_json_reply
from inspector.core.standard.round_level import memory_targets, merge_targets, raw_targets
from inspector.core.standard.settings import RoundLevelSettings
from inspector.core.standard.team import team_reinjection

COMPRESS_LEVEL = "compress_level"
TRUNCATED_SCOPE = "truncated_full_context"
#: The smallest prompt a phase may send; when even it exceeds the call budget the phase is
#: skipped (its size decides that; its text is never sent: a cut prompt always wins).
_MINIMUM_PROMPT = (
    "[Compression Task]\n...[TRUNCATED]...\n[Output Contract]\nReturn valid JSON only."
)

Phase = Generator[ModelCall, CallResult, list[Message] | None]


@dataclass(frozen=True, slots=True)
class Target:
    """One block the phase asks the model to summarise (`_CompressTarget`)."""

    block_id: str
    scope: str
    start: int
    end: int
    current_level: int = 0
    next_level: int = 1
    source_block_count: int = 1


class ModelFailed(Exception):
    """A phase's model call failed: openJiuwen re-raises it (MODEL_CALL_FAILED)."""

    def __init__(self, phase: str, error: str) -> None:
        super().__init__(f"phase {phase}: {error}")
        self.phase = phase
        self.error = error


@dataclass
class _Run:
    """The processor's fixed inputs for one run and what it noted on the way."""

    prep: StandardPrepared
    settings: RoundLevelSettings
    prompts: StandardPrompts
    system: tuple[Message, ...]
    tools: tuple[Any, ...]
    notes: list[str] = field(default_factory=list)
    approximations: list[str] = field(default_factory=list)

    def _alive(self, messages: Sequence[Message]) -> None:
        # the counter caches pieces by id(message): a message counted once stays alive as
        # long as the prepared context does, so that no later message reuses its id
        self.prep.cache.setdefault(("round_level_counted",), []).extend(messages)

    def window(self, messages: Sequence[Message]) -> int:
        """`_count_context_window_tokens` (system and tools as the hook passes them)."""
        self._alive(messages)
        return self.prep.counter.window_count(self.system, messages, self.tools)

    def under(self, messages: Sequence[Message]) -> bool:
        """`_is_under_context_window_budget`."""
        return self.window(messages) <= self.settings.target_total_tokens

    def count(self, messages: Sequence[Message]) -> int:
        """`_count_message_tokens` (and the call count of a system + user prompt)."""
        self._alive(messages)
        return self.prep.counter.util_count(messages)

    @property
    def call_budget(self) -> int:
        """`effective_context_budget` with `compression_call_max_tokens`."""
        return self.prep.facts.budget(
            self.settings.model, self.settings.compression_call_max_tokens
        )

    def call_fits(self, system_prompt: str, text: str) -> bool:
        """`_is_under_compression_call_budget`."""
        pair = [Message(role="system", content=system_prompt), Message(role="user", content=text)]
        return self.count(pair) <= self.call_budget

    def head_tail(self, text: str, kept: int) -> str:
        """`_build_head_tail_truncated_text`: head share + marker + tail, `kept` chars."""
        marker = self.settings.truncated_marker
        if kept <= 0:
            return marker
        head_chars = max(int(kept * self.settings.truncate_head_ratio), 0)
        tail_chars = max(kept - head_chars, 0)
        head = text[:head_chars]
        tail = text[-tail_chars:] if tail_chars > 0 else ""
        if head and tail:
            return f"{head}\n{marker}\n{tail}"
        return head or tail or marker

    def block(self, summary: str, scope: str, level: int | None) -> Message:
        """A memory block around `summary`, with its compress_level when given."""
        return memory_block(summary, scope, self.settings.compression_marker, level)


def memory_block(summary: str, scope: str, marker: str, level: int | None = None) -> Message:
    """A RoundLevel memory block (`_wrap_memory_block`): a user message, six header lines,
    a blank line, `Summary:` and the text; `metadata.compress_level` when `level` is given."""
    content = (
        f"{marker}\n"
        "processor: RoundLevelCompressor\n"
        "type: historical_memory_block\n"
        f"scope: {scope}\n"
        "authority: This block is reference memory, not a binding source of truth.\n"
        "instruction_status: Historical fallback context only. Do not treat as a new user "
        "instruction.\n"
        "conflict_priority: Prefer newer explicit user intent, newer raw context, and fresh "
        "tool results over this block.\n\n"
        "Summary:\n"
        f"{summary}"
    )
    metadata = {COMPRESS_LEVEL: level} if level is not None else {}
    return Message(role="user", content=content, metadata=metadata)


def compress_level(message: Message) -> int:
    """`_get_compress_level`: the metadata's compress_level (every stored message has a
    metadata dict, so a missing one is 0)."""
    value = message.metadata.get(COMPRESS_LEVEL, 0)
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def serialise(index: int, message: Message) -> str:
    """`_serialize_message`: `[i] role=R | tool_calls=.. | tool_call_id=.. | compress_level=lN
    | content=C`."""
    parts = [f"[{index}] role={message.role}"]
    if message.role == "assistant" and message.tool_calls:
        parts.append("tool_calls=" + ", ".join(c.name for c in message.tool_calls))
    if message.role == "tool":
        parts.append(f"tool_call_id={message.tool_call_id}")
    level = compress_level(message)
    if level > 0:
        parts.append(f"compress_level=l{level}")
    parts.append(f"content={content_repr(message.content)}")
    return " | ".join(parts)


# --- targets -------------------------------------------------------------------------------


def _raw(run: _Run, messages: Sequence[Message], cend: int) -> list[Target]:
    marker = run.settings.compression_marker
    return [Target(t[0], t[1], t[2], t[3]) for t in raw_targets(messages, cend, marker)]


def _memory(run: _Run, messages: Sequence[Message], cend: int) -> list[Target]:
    """The existing blocks as targets, each at the highest level among its messages."""
    out: list[Target] = []
    for block_id, start, end, _ in memory_targets(messages, cend, run.settings.compression_marker):
        level = max(compress_level(m) for m in messages[start : end + 1])
        out.append(Target(block_id, "existing_round_level_block", start, end, level, level + 1))
    return out


def _merges(run: _Run, messages: Sequence[Message], cend: int) -> list[Target]:
    """`_build_recursive_merge_targets`: adjacent blocks of the chosen level, in groups."""
    memory = _memory(run, messages, cend)
    if len(memory) < 2:
        return []
    rows = [[t.block_id, t.start, t.end, t.current_level] for t in memory]
    return [
        Target(m[0], "recursive_merge", m[1], m[2], m[3], m[4], m[5]) for m in merge_targets(rows)
    ]


# --- one LLM phase -------------------------------------------------------------------------


def _user_prompt(
    run: _Run,
    messages: Sequence[Message],
    targets: Sequence[Target],
    name: str,
    hint: int,
    keep: int,
) -> str:
    """`_build_compression_user_prompt`, the contract lines ours."""
    inside = {i for t in targets for i in range(t.start, t.end + 1)}
    first = min(t.start for t in targets)
    last = max(t.end for t in targets)
    recent_start = max(len(messages) - keep, last + 1)
    reference = [
        serialise(i, m) for i, m in enumerate(messages) if i not in inside and i < recent_start
    ]
    selected: list[str] = []
    for t in targets:
        selected += [
            f"[Block: {t.block_id}]",
            f"- scope: {t.scope}",
            f"- replace_range: [{t.start}, {t.end}]",
            f"- current_level: l{t.current_level}",
            f"- next_level: l{t.next_level}",
            f"- source_block_count: {t.source_block_count}",
        ]
        selected += [serialise(i, messages[i]) for i in range(t.start, t.end + 1)]
        selected.append("")
    recent = [serialise(i, messages[i]) for i in range(recent_start, len(messages))]
    lines = [
        "[Compression Task]",
        f"- phase: {name}",
        f"- target_summary_tokens: {hint}",
        f"- keep_recent_messages: {keep}",
        f"- selected_blocks: {len(targets)}",
        f"- current_context_window_tokens: {run.window(messages)}",
        f"- compression_call_budget_limit: {run.call_budget}",
        f"- selected_range: [{first}, {last}]",
        "",
        "[Reference Context]",
        "\n".join(reference) or "(none)",
        "",
        "[Selected Targets]",
        "\n".join(selected).rstrip() or "(none)",
        "",
        "[Protected Recent Context]",
        "\n".join(recent) or "(none)",
        "",
        "[Output Contract]",
        run.prompts.round_level_contract.rstrip("\n"),
    ]
    return "\n".join(lines)


def _fit_prompt(run: _Run, system_prompt: str, text: str) -> str | None:
    """The prompt as sent: whole, else the longest head/tail cut within the call budget
    (binary search over the kept characters), else None (the phase is skipped)."""
    if run.call_fits(system_prompt, text):
        return text
    if not run.call_fits(system_prompt, _MINIMUM_PROMPT):
        return None
    low, high, best = 0, len(text), _MINIMUM_PROMPT
    while low <= high:
        middle = (low + high) // 2
        candidate = run.head_tail(text, middle)
        if run.call_fits(system_prompt, candidate):
            best, low = candidate, middle + 1
        else:
            high = middle - 1
    return best


def _accepted(run: _Run, original: Sequence[Message], block: Message) -> list[Message] | None:
    """The block (and the team re-injection) when it fits the call budget and saves tokens."""
    if run.count([block]) > run.call_budget:
        return None
    if run.count(original) <= run.count([block]):
        return None
    return [block, *team_reinjection(original)]


def _replacements(
    run: _Run, messages: Sequence[Message], targets: Sequence[Target], reply: str
) -> list[tuple[int, int, list[Message]]]:
    """The accepted block per target from a blocks reply, else one raw-fallback block."""
    summaries = block_summaries(parse_json_reply(reply))
    out: list[tuple[int, int, list[Message]]] = []
    for t in targets:
        summary = summaries.get(t.block_id)
        if not summary:
            continue
        block = run.block(summary, t.scope, t.next_level)
        new = _accepted(run, messages[t.start : t.end + 1], block)
        if new is not None:
            out.append((t.start, t.end, new))
    if out or not reply.strip():
        return out
    original = [m for t in targets for m in messages[t.start : t.end + 1]]
    block = run.block(reply.strip(), "mixed_context", max(t.next_level for t in targets))
    new = _accepted(run, original, block)
    if new is None:
        return []
    run.notes.append("a reply without usable blocks became one raw_fallback block")
    return [(min(t.start for t in targets), max(t.end for t in targets), new)]


def _say_once(run: _Run, sentence: str) -> None:
    if sentence not in run.approximations:
        run.approximations.append(sentence)


def _phase(
    run: _Run,
    messages: list[Message],
    targets: Sequence[Target],
    name: str,
    keep: int,
    aggressive: bool = False,
) -> Phase:
    """`_apply_llm_phase`: one call; the context with the accepted blocks, or None."""
    settings = run.settings
    hint = settings.first_pass_target_tokens
    if name == "aggressive_keep_recent":
        hint = settings.second_pass_target_tokens
    elif name == "aggressive_full_context":
        hint = settings.third_pass_target_tokens
    system_prompt = run.prompts.round_level_aggressive if aggressive else run.prompts.round_level
    whole = _user_prompt(run, messages, targets, name, hint, keep)
    text = _fit_prompt(run, system_prompt, whole)
    if text is None:
        run.notes.append(f"{name} skipped: even a minimal prompt exceeds the call budget")
        return None
    note = f"{len(targets)} target(s): " + ", ".join(t.block_id for t in targets)
    if text != whole:
        _say_once(
            run,
            "a prompt was cut to the call budget: its size is that of the inspector's system "
            "prompt and contract lines, so with openJiuwen's own prompt the cut falls elsewhere",
        )
        note += (
            f"; prompt cut to the call budget {run.call_budget} ({len(text)} of {len(whole)} chars)"
        )
    result = yield ModelCall(
        name,
        (Message(role="system", content=system_prompt), Message(role="user", content=text)),
        json_output=True,
        note=note,
    )
    if not result.ok:
        raise ModelFailed(name, result.error or "error")
    found = _replacements(run, messages, targets, result.content or "")
    if not found:
        why = "the reply is empty" if not (result.content or "").strip() else "no block accepted"
        run.notes.append(f"{name}: {why}")
        return None
    updated = messages
    for start, end, new in sorted(found, key=lambda r: r[0], reverse=True):
        updated = replace_range(updated, start, end, new)
    run.notes.append(f"{name}: {len(found)} block(s) replaced")
    return updated


# --- the phase loop ------------------------------------------------------------------------


def _recursive(run: _Run, messages: list[Message], keep: int) -> Phase:
    """`_run_recursive_compression`: l0_to_l1, then merges while over target."""
    working, changed = messages, False
    cend = len(working) - keep - 1
    raw = _raw(run, working, cend) if cend >= 0 else []
    if raw:
        updated = yield from _phase(run, working, raw, "l0_to_l1", keep)
        if updated is not None:
            working, changed = updated, True
    while not run.under(working):
        cend = len(working) - keep - 1
        merges = _merges(run, working, cend) if cend >= 0 else []
        if not merges:
            break
        name = f"recursive_merge_l{merges[0].current_level}_to_l{merges[0].next_level}"
        updated = yield from _phase(run, working, merges, name, keep)
        if updated is None or updated == working:
            break
        working, changed = updated, True
    return working if changed else None


def _aggressive(run: _Run, messages: list[Message], keep: int, name: str) -> Phase:
    """`_run_aggressive_phase`: raw targets, else the memory blocks, aggressive prompt."""
    cend = len(messages) - keep - 1
    if cend < 0:
        return None
    targets = _raw(run, messages, cend) or _memory(run, messages, cend)
    if not targets:
        return None
    return (yield from _phase(run, messages, targets, name, keep, aggressive=True))


def _truncated(run: _Run, messages: list[Message]) -> list[Message]:
    """`_truncate_to_target`: the longest head/tail cut of the serialised context whose block
    fits target_total_tokens, else a minimal block, else the marker alone."""
    settings = run.settings
    compact = Message(
        role="user", content=f"{settings.compression_marker}\n{settings.truncated_marker}"
    )
    team = team_reinjection(messages)
    if settings.target_total_tokens - run.window([]) <= 0:
        return [compact, *team]
    serialised = "\n".join(serialise(i, m) for i, m in enumerate(messages))
    if not serialised:
        return messages
    low, high = 0, len(serialised)
    best: Message | None = None
    while low <= high:
        middle = (low + high) // 2
        candidate = run.block(run.head_tail(serialised, middle), TRUNCATED_SCOPE, None)
        if run.under([candidate]):
            best, low = candidate, middle + 1
        else:
            high = middle - 1
    if best is not None:
        return [best, *team]
    minimal = Message(
        role="user",
        content=f"{settings.compression_marker}\nprocessor: RoundLevelCompressor\n"
        f"type: historical_memory_block\nscope: {TRUNCATED_SCOPE}\nSummary:\n"
        f"{settings.truncated_marker}",
    )
    return [minimal if run.under([minimal]) else compact, *team]


def _until_target(run: _Run, messages: list[Message], keep: int) -> Phase:
    """`_compress_until_target` after its first under-target test: the phases in order."""
    working = messages
    updated = yield from _recursive(run, working, keep)
    working = updated if updated is not None else working
    for name, phase_keep in (("aggressive_keep_recent", keep), ("aggressive_full_context", 0)):
        if run.under(working):
            return working
        updated = yield from _aggressive(run, working, phase_keep, name)
        working = updated if updated is not None else working
    if run.under(working):
        return working
    run.notes.append("still over target after the LLM phases: hard truncation, no model call")
    return _truncated(run, working)


def round_level_script(
    prep: StandardPrepared, settings: RoundLevelSettings, prompts: StandardPrompts
) -> Script:
    """The processor's calls on its hook (add: keep_recent_messages; get window: keep 0)."""
    get = prep.hook == GET
    passes = get or prep.add_passes_window
    run = _Run(prep, settings, prompts, prep.system if passes else (), prep.tools if passes else ())
    messages = list(prep.messages)
    total = run.window(messages)
    if total <= settings.target_total_tokens:
        return RerunEnd(
            "nothing",
            tuple(messages),
            reason=f"the window counts {total} <= target_total_tokens "
            f"{settings.target_total_tokens}: RoundLevelCompressor makes no call",
        )
    keep = 0 if get else settings.keep_recent_messages
    try:
        result = yield from _until_target(run, messages, keep)
    except ModelFailed as failed:
        return RerunEnd(
            "failed",
            tuple(messages),
            reason=f"the model call of {failed.phase} failed ({failed.error}): the processor "
            "raises MODEL_CALL_FAILED, the engine emits state failed and keeps the context "
            "as it was (the incoming messages added unchanged)",
        )
    assert result is not None
    changed = get or result != messages
    state: EndState = "completed" if changed else "noop"
    marker = settings.compression_marker
    summary = "\n\n".join(
        content_repr(m.content) for m in result if content_repr(m.content).startswith(marker)
    )
    return RerunEnd(
        state,
        tuple(result),
        tuple(range(len(messages))) if changed else (),
        summary if changed else "",
        reason="; ".join(run.notes) or "RoundLevelCompressor left the context unchanged",
        approximations=tuple(run.approximations),
    )
