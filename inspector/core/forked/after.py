"""What a forked compressor's decision leaves in the context, for `compare`.

From a context alone this is an estimate: the preserved prefix, one memory block whose
summary is unknown without an LLM call (priced at `summary_tokens`), the `<recovered_context>`
message rebuilt from the files read inside the span (openJiuwen's read_file and skills
builders, `core.reinjection`), then the protected tail. openJiuwen keeps a result only when
it counts fewer tokens than the old context: a result that does not is modelled as the
no-benefit rollback. Must not import anything outside the standard library and
`inspector.core`.
"""

from __future__ import annotations

from collections.abc import Sequence

from inspector.core.compaction import DEFAULT_WRAPPERS
from inspector.core.engine import Evaluation
from inspector.core.messages import Message
from inspector.core.reinjection import build_reinjection
from inspector.core.strategy.after import SUMMARY_PLACEHOLDER, After
from inspector.core.tokens import TokenCounter


def reinjection_estimate(
    messages: Sequence[Message], compress: tuple[int, int], processor: str = "current_round"
) -> Message | None:
    """openJiuwen's `<recovered_context>` message for a span (`core.reinjection`), or None."""
    start, end = compress
    built = build_reinjection(processor, messages, [*messages[:start], *messages[end:]])
    if built.content is None:
        return None
    return Message(role="user", content=built.content, metadata={"estimated": True})


def memory_block(processor: str, summary: str) -> Message:
    """The memory block openJiuwen writes around `summary` (the wrapper of `core.compaction`)."""
    content = DEFAULT_WRAPPERS[processor].wrap(summary)
    return Message(role="user", content=content, metadata={"estimated": True})


def forked_after(
    processor: str,
    before: Sequence[Message],
    evaluation: Evaluation,
    counter: TokenCounter,
    summary_tokens: int,
) -> After:
    """The estimate for one forked processor (`processor`: its registry key)."""
    if not evaluation.hit:
        note = (
            f"not compressed: {evaluation.reason} (total {evaluation.total_tokens}, "
            f"threshold {evaluation.threshold})"
        )
        tokens = counter.count_messages(before)
        return After(False, evaluation.reason, "estimate", before, tokens, 0, False, [note])
    span = evaluation.span
    recovered = reinjection_estimate(before, span.compress, processor)
    after: list[Message] = [
        *before[slice(*span.prefix)],
        memory_block(processor, SUMMARY_PLACEHOLDER),
    ]
    if recovered is not None:
        after.append(recovered)
    after.extend(before[slice(*span.tail)])
    tokens_after = (
        counter.count_messages(after) - counter.text_tokens(SUMMARY_PLACEHOLDER) + summary_tokens
    )
    counts = span.counts
    notes = [
        "estimate: the memory block's summary is unknown without an LLM call, "
        f"priced at {summary_tokens} tokens",
        f"span {counts['preserved_prefix']}/{counts['messages_to_compress']}"
        f"/{counts['protected_tail']}",
    ]
    if recovered is not None:
        notes.append(
            "recovered_context estimated from files read in the span: "
            f"{counter.piece_tokens(recovered)} tokens"
        )
    tokens_before = counter.count_messages(before)
    if tokens_after >= tokens_before:
        notes.append(
            f"no benefit: {tokens_after} tokens after >= {tokens_before} before with a "
            f"{summary_tokens}-token summary, so openJiuwen would drop the result after paying "
            "for the call"
        )
        return After(
            False, "no_benefit_rollback", "estimate", before, tokens_before, 1, False, notes
        )
    return After(True, evaluation.reason, "estimate", after, tokens_after, 1, True, notes)
