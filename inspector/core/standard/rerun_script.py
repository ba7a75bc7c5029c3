"""A standard processor's model calls as a script: what it sends, and what it does with replies.

Each script is a generator: it yields a `ModelCall` (the exact messages openJiuwen's
processor passes to `Model.invoke`), receives a `CallResult` (the reply text, or the
error), and finally returns a `RerunEnd` (the context after, which indices changed, the
event state and why). The driver (`inspector.llm.standard_runner`) makes the HTTP calls;
a dry run takes only the first call. Rules: spec `standard-processors.md` 6.1
(MessageSummaryOffloader), 6.5 (DialogueCompressor), 6.6 (CurrentRoundCompressor).
The prompts are parameters (`StandardPrompts`): the inspector's own, or the user's.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from inspector.core.messages import Message
from inspector.core.standard.compressors import (
    current_round_span,
    dialogue_cut,
    dialogue_targets,
)
from inspector.core.standard.prepared import StandardPrepared
from inspector.core.standard.rerun_texts import (
    block_summaries,
    blocks_payload,
    cr_block,
    cr_line,
    dialogue_block,
    dialogue_context_payload,
    dialogue_mapping_payload,
    is_cr_block,
    parse_json_reply,
)
from inspector.core.standard.settings import CurrentRoundSettings, DialogueSettings
from inspector.core.standard.team import team_reinjection

EndState = Literal["completed", "noop", "failed", "nothing"]


@dataclass(frozen=True, slots=True)
class StandardPrompts:
    """The prompt templates, with openJiuwen's placeholders (`{compression_target_tokens}`, ...)."""

    dialogue: str
    current_round: str
    current_round_merge: str
    offload: str
    full_compact: str
    #: RoundLevelCompressor's system prompts (first pass, aggressive passes) and the
    #: `[Output Contract]` lines that end its user prompt.
    round_level: str
    round_level_aggressive: str
    round_level_contract: str
    #: Where they came from: "inspector" (ours), "file" (--prompt-file), "config"
    #: (the snapshot's custom_compression_prompt).
    source: str = "inspector"


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One `Model.invoke` of the processor: its stage and the messages it passes."""

    stage: str
    messages: tuple[Message, ...]
    #: The call goes through openJiuwen's JSON output parser.
    json_output: bool = False
    note: str = ""


@dataclass(frozen=True, slots=True)
class CallResult:
    """What came back: the reply text, or the error text of a failed call."""

    content: str | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """True when the model answered."""
        return self.error is None


@dataclass(frozen=True, slots=True)
class RerunEnd:
    """How the processor ended: event state, the context after, changed indices, why."""

    state: EndState
    messages: tuple[Message, ...]
    modified: tuple[int, ...] = ()
    compact_summary: str = ""
    reason: str = ""
    #: Sentences on what the re-run could not reproduce exactly.
    approximations: tuple[str, ...] = field(default_factory=tuple)


Script = Generator[ModelCall, CallResult, RerunEnd]


#: Status codes the OpenAI SDK (openJiuwen's client) retries, up to `max_retries` times.
SDK_RETRY_STATUS = frozenset({408, 409, 429})


def sdk_retry_delay(retry: int, status: int | None, transport: str | None) -> float | None:
    """The wait before SDK retry number `retry` (1-based) of a failed call, or None when the
    SDK does not retry it: timeouts, connection errors, 408/409/429 and 5xx are retried after
    min(0.5 x 2^(retry-1), 8) seconds (the SDK adds jitter; we do not)."""
    retryable = transport in ("timeout", "connection") or (
        status is not None and (status in SDK_RETRY_STATUS or status >= 500)
    )
    if not retryable:
        return None
    return min(0.5 * 2 ** (retry - 1), 8.0)


def replace_range(
    messages: Sequence[Message], start: int, end: int, new: Sequence[Message]
) -> list[Message]:
    """`ContextUtils.replace_messages`: `messages[start:end+1]` replaced by `new`."""
    return [*messages[:start], *new, *messages[end + 1 :]]


def _beneficial(
    prep: StandardPrepared, original: Sequence[Message], new: Sequence[Message]
) -> bool:
    """DialogueCompressor's benefit test: the original counts > 0 and more than the block."""
    before = prep.counter.util_count(original)
    return before > 0 and prep.counter.util_count(new) < before


# --- DialogueCompressor ----------------------------------------------------------------------


def dialogue_script(prep: StandardPrepared, settings: DialogueSettings, prompt: str) -> Script:
    """One JSON call over all target rounds; blocks accepted one by one, else the fallback."""
    messages = list(prep.messages)
    cut = dialogue_cut(messages, settings)
    targets = dialogue_targets(messages, cut)
    if not targets:
        return RerunEnd(
            "nothing",
            tuple(messages),
            reason="no compressible round before the cut: DialogueCompressor makes no call",
        )
    system = prompt.replace("{compression_target_tokens}", str(settings.compression_target_tokens))
    call = ModelCall(
        "dialogue_blocks",
        (
            Message(role="system", content=system),
            Message(role="user", content=dialogue_context_payload(messages, targets)),
            Message(role="user", content=dialogue_mapping_payload(targets)),
        ),
        json_output=True,
        note=f"one call for {len(targets)} target round(s)",
    )
    result = yield call
    if not result.ok:
        return RerunEnd(
            "noop",
            tuple(messages),
            reason=f"the model call failed ({result.error}): DialogueCompressor logs it, keeps "
            "the context and the chain continues",
        )
    parsed = parse_json_reply(result.content)
    summaries = block_summaries(parsed)
    replacements: list[tuple[int, int, list[Message]]] = []
    for block_id, _user, start, end in targets:
        summary = summaries.get(block_id)
        if not summary:
            continue
        original = messages[start : end + 1]
        block = dialogue_block(summary)
        if _beneficial(prep, original, [block]):
            replacements.append((start, end, [block, *team_reinjection(original)]))
    if replacements:
        return _applied(messages, replacements, "DialogueCompressor")
    if not blocks_payload(parsed) and (result.content or "").strip():
        return _dialogue_fallback(prep, messages, targets, result.content or "")
    why = (
        "no block summary passed the benefit test"
        if blocks_payload(parsed)
        else "the reply is empty"
    )
    return RerunEnd("noop", tuple(messages), reason=f"{why}: the context stays unchanged")


def _applied(
    messages: list[Message], replacements: list[tuple[int, int, list[Message]]], processor: str
) -> RerunEnd:
    """The context with the replacements applied from the last; the event's fields."""
    updated = messages
    for start, end, new in sorted(replacements, key=lambda r: r[0], reverse=True):
        updated = replace_range(updated, start, end, new)
    modified = tuple(i for start, end, _ in replacements for i in range(start, end + 1))
    summary = "\n\n".join(
        m.content
        for _, _, new in replacements
        for m in new
        if isinstance(m.content, str) and m.content.startswith("[DIALOGUE_MEMORY_BLOCK]")
    )
    return RerunEnd(
        "completed",
        tuple(updated),
        modified,
        summary,
        reason=f"{processor} replaced {len(replacements)} range(s)",
    )


def _dialogue_fallback(
    prep: StandardPrepared, messages: list[Message], targets: Sequence[Sequence[Any]], text: str
) -> RerunEnd:
    """A reply that is no blocks payload: one block over first start .. last end."""
    start = min(int(t[2]) for t in targets)
    end = max(int(t[3]) for t in targets)
    original = [m for t in targets for m in messages[int(t[2]) : int(t[3]) + 1]]
    block = dialogue_block(text)
    if not _beneficial(prep, original, [block]):
        return RerunEnd(
            "noop",
            tuple(messages),
            reason="the plain-text reply (fallback block) is not smaller than the target rounds",
        )
    end_state = _applied(messages, [(start, end, [block, *team_reinjection(original)])], "")
    return RerunEnd(
        "completed",
        end_state.messages,
        end_state.modified,
        end_state.compact_summary,
        reason=f"the reply is no blocks JSON: one fallback block replaced [{start}, {end}], the "
        "opening user messages of later targets included",
    )


# --- CurrentRoundCompressor ----------------------------------------------------------------


def _cr_prompt(
    prep: StandardPrepared,
    settings: CurrentRoundSettings,
    prompt: str,
    user: int,
    span: tuple[int, int],
) -> str:
    """The first-stage prompt with its five placeholders filled."""
    messages, release = prep.messages, prep.release
    prior = "\n---\n".join(str(m.content) for m in messages if is_cr_block(m))
    recent = "\n".join(cr_line(m, release) for m in messages[span[1] + 1 :] if not is_cr_block(m))
    plain = [
        m
        for m in messages[:user]
        if (m.role == "user" and not is_cr_block(m)) or (m.role == "assistant" and not m.tool_calls)
    ][-settings.prior_context_window_size :]
    lines = [cr_line(m, release) for m in plain]
    lines.append(f"\n--- Current User Intent ---\n{cr_line(messages[user], release)}")
    selected = "\n".join(cr_line(m, release) for m in messages[span[0] : span[1] + 1])
    return (
        prompt.replace("{target_tokens}", str(settings.compression_target_tokens))
        .replace("{accumulated_summaries}", prior or "(none)")
        .replace("{recent_messages}", recent or "(none)")
        .replace("{prior_context_and_query}", "\n".join(lines) or "(none)")
        .replace("{selected_messages}", selected)
    )


def current_round_script(
    prep: StandardPrepared, settings: CurrentRoundSettings, prompts: StandardPrompts
) -> Script:
    """First stage over the current round's span, then at most one memory-block merge."""
    messages = list(prep.messages)
    approx = (
        "each message is sent in openJiuwen's pydantic string form; its metadata is the "
        "snapshot's (the engine adds a context_message_id to every stored message)",
    )
    user, span, why = current_round_span(messages, settings.messages_to_keep)
    n = len(messages)
    if user is None or user == n - 1 or user >= n - settings.messages_to_keep:
        return RerunEnd("nothing", tuple(messages), reason=f"{why}: no call is made")
    modified: list[int] = []
    parts: list[str] = []
    notes: list[str] = []
    if span is not None:
        selected = messages[span[0] : span[1] + 1]
        tokens = prep.counter.util_count(selected)
        if tokens < settings.min_selected_tokens_for_compression:
            notes.append(
                f"first stage skipped: the span counts {tokens} < "
                f"min_selected_tokens_for_compression {settings.min_selected_tokens_for_compression}"
            )
        else:
            text = _cr_prompt(prep, settings, prompts.current_round, user, span)
            result = yield ModelCall(
                "first_stage", (Message(role="user", content=text),), note="the current round"
            )
            block = _cr_accept(prep, result, tokens, notes)
            if block is not None:
                new = [block, *team_reinjection(selected)]
                messages = replace_range(messages, span[0], span[1], new)
                modified.extend(range(span[0], span[1] + 1))
                parts.append(str(block.content))
    else:
        notes.append(f"first stage: {why}")
    merged = yield from _cr_merge(prep, settings, prompts.current_round_merge, messages, notes)
    if merged is not None:
        messages, run, text = merged
        modified.extend(range(run[0], run[1] + 1))
        parts.append(text)
    state: EndState = "completed" if modified else "noop"
    return RerunEnd(
        state,
        tuple(messages),
        tuple(modified),
        "\n\n".join(p for p in parts if p),
        reason="; ".join(notes) or f"CurrentRoundCompressor replaced {len(parts)} range(s)",
        approximations=approx,
    )


def _cr_accept(
    prep: StandardPrepared, result: CallResult, tokens: int, notes: list[str]
) -> Message | None:
    """The first-stage block, or None (failed call, or a reply no smaller than the span)."""
    if not result.ok:
        notes.append(f"first stage skipped: the model call failed ({result.error})")
        return None
    summary = result.content or ""
    if summary:
        size = prep.counter.util_count([Message(role="user", content=summary)])
        if size >= tokens:
            notes.append(f"first stage: no benefit (reply {size} >= span {tokens} tokens)")
            return None
    else:
        notes.append("first stage: the reply is empty and openJiuwen still accepts it")
    return cr_block(summary)


def _cr_merge(
    prep: StandardPrepared,
    settings: CurrentRoundSettings,
    prompt: str,
    messages: list[Message],
    notes: list[str],
) -> Generator[ModelCall, CallResult, tuple[list[Message], tuple[int, int], str] | None]:
    """The second stage: the first run of memory blocks over the limit that gets a reply."""
    for start, end in _merge_runs(messages, settings.summary_merge_min_blocks):
        run = messages[start : end + 1]
        tokens = prep.counter.util_count(run)
        if tokens <= settings.accumulated_summary_token_limit:
            notes.append(
                f"merge of [{start}, {end}] skipped: {tokens} <= accumulated_summary_token_limit"
            )
            continue
        blocks = "\n\n".join(f"[MEMORY_BLOCK_{i}]\n{m.content}" for i, m in enumerate(run, 1))
        text = prompt.replace("{compress_len}", str(settings.summary_merge_target_tokens)).replace(
            "{compressed_blocks}", blocks or "(none)"
        )
        result = yield ModelCall(
            "merge", (Message(role="user", content=text),), note=f"memory blocks [{start}, {end}]"
        )
        if not result.ok or not (result.content or ""):
            notes.append(f"merge of [{start}, {end}] skipped: {result.error or 'empty reply'}")
            continue
        block = cr_block(result.content or "")
        return replace_range(messages, start, end, [block]), (start, end), str(block.content)
    return None


def _merge_runs(messages: Sequence[Message], min_blocks: int) -> list[tuple[int, int]]:
    """`iter_summary_merge_ranges`: runs of consecutive CurrentRound blocks of >= min_blocks."""
    runs: list[tuple[int, int]] = []
    start: int | None = None
    for i in range(len(messages) + 1):
        inside = i < len(messages) and is_cr_block(messages[i])
        if inside and start is None:
            start = i
        elif not inside and start is not None:
            if i - start >= min_blocks:
                runs.append((start, i - 1))
            start = None
    return runs
