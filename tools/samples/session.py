"""`Session`: one scripted agent conversation and everything openJiuwen would write for it.

Before every model call the compressor's trigger is evaluated with the core engine and
written as openJiuwen writes it (`threshold_check`, `span_built`, `compression_retry` in
`<Processor>.jsonl`; a dump per applied compression); `write` lays the files out in
openJiuwen's workspace layout. Part of the sample-dump generator, not of the runtime package."""

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.core.engine import PricedContext, Span
from inspector.core.messages import Message, ToolCall
from inspector.core.retry_policy import RetryState, on_failure
from inspector.core.snapshot import ContextSnapshot
from inspector.core.timeline import safe_name
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import Tuning
from tools.samples.common import (
    BUDGET_RATIOS,
    ERRORS,
    MEMORY_TAGS,
    MODEL,
    PROMPT,
    SNAPSHOTS_FILE,
    TOOLS,
    TRANSIENT_DELAYS,
    usage_record,
)


def _stale(message: Message) -> Message:
    """An assistant message with usage, marked stale as openJiuwen marks it after a rewrite."""
    if message.role == "assistant" and message.usage_metadata is not None:
        return Message(
            role=message.role,
            content=message.content,
            tool_calls=message.tool_calls,
            usage_metadata=message.usage_metadata,
            metadata={**message.metadata, "context_usage_stale": True},
            extra=message.extra,
        )
    return message


@dataclass
class Session:
    """One agent conversation and everything openJiuwen would write for it."""

    session_id: str
    context_id: str
    tuning: Tuning
    counter: TokenCounter
    system: tuple[Message, ...]
    clock: float
    with_usage: bool = False
    messages: list[Message] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    dumps: list[dict[str, Any]] = field(default_factory=list)
    #: What each check led to, in words (for the README and for tests).
    outcomes: list[str] = field(default_factory=list)
    #: The context before each applied compression, in dump order (what a rebuild must give back).
    contexts_before: list[tuple[Message, ...]] = field(default_factory=list)
    #: A context snapshot (interchange form) for each evaluation that wrote no dump: the
    #: exact context it was evaluated on, tied to its check by session, context and time.
    snapshots: list[dict[str, Any]] = field(default_factory=list)
    _serial: int = 0

    # --- building the conversation -------------------------------------------------------

    def _meta(self) -> dict[str, Any]:
        self._serial += 1
        digest = hashlib.md5(
            f"{self.session_id}/{self.context_id}/{self._serial}".encode()
        ).hexdigest()
        return {"context_message_id": digest}

    def tick(self, seconds: float) -> float:
        """Advance the session clock."""
        self.clock = round(self.clock + seconds, 4)
        return self.clock

    def user(self, content: Any) -> None:
        """Append a user message (a string or a list of blocks)."""
        self.messages.append(Message(role="user", content=content, metadata=self._meta()))
        self.tick(7.0)

    def assistant(self, text: str, calls: Sequence[tuple[str, str, dict[str, Any]]] = ()) -> None:
        """Append an assistant reply, with usage when the session records it."""
        tool_calls = tuple(
            ToolCall(id=cid, name=name, arguments=json.dumps(args, ensure_ascii=False))
            for cid, name, args in calls
        )
        usage = None
        if self.with_usage:
            priced = PricedContext(self.system, self.messages, TOOLS, self.counter)
            output = max(len(text) // 4, 1) + 20 * len(tool_calls)
            usage = usage_record(priced.counted_total + output, output)
        extra = {"finish_reason": "tool_calls" if tool_calls else "stop"}
        self.messages.append(
            Message(
                role="assistant",
                content=text,
                tool_calls=tool_calls,
                usage_metadata=usage,
                metadata=self._meta(),
                extra=extra,
            )
        )
        self.tick(3.0)

    def tool(self, call_id: str, data: dict[str, Any]) -> None:
        """Append a tool result rendered as openJiuwen's harness renders a ToolOutput."""
        self.messages.append(
            Message(
                role="tool",
                content=f"success=True data={data!r} error=None",
                tool_call_id=call_id,
                metadata=self._meta(),
            )
        )
        self.tick(0.5)

    # --- what the compressor does before a model call ---------------------------------------

    def _record(self, event: str, **values: Any) -> None:
        record = {
            "timestamp": self.tick(0.004),
            "event": event,
            "processor": self.tuning.processor_class,
            "session_id": self.session_id,
            "context_id": self.context_id,
        }
        record.update(values)
        self.records.append(record)

    def check(
        self, script: Sequence[str] = ("ok",), summary: str = "", reinject: str | None = None
    ) -> str:
        """Evaluate the trigger before a model call (see `_check`) and remember the outcome."""
        context = tuple(self.messages)
        first = len(self.records)
        outcome = self._check(script, summary, reinject)
        self.outcomes.append(outcome)
        if not outcome.startswith("compressed"):
            self.snapshots.append(self._snapshot(context, self.records[first]))
        return outcome

    def _snapshot(self, context: tuple[Message, ...], check: dict[str, Any]) -> dict[str, Any]:
        """The context of one evaluation as `inspector snapshot` exports it for a debug run."""
        index = sum(1 for r in self.records if r["event"] == "threshold_check")
        snapshot = ContextSnapshot(
            id=f"{self.session_id}/{self.context_id}/{self.tuning.processor_class}#{index}",
            system_messages=self.system,
            messages=context,
            tools=TOOLS,
            tuning=self.tuning,
        ).to_dict()
        snapshot.update(
            session_id=self.session_id, context_id=self.context_id, timestamp=check["timestamp"]
        )
        return snapshot

    def _check(self, script: Sequence[str], summary: str, reinject: str | None) -> str:
        """Evaluate the trigger before a model call and play the compression out per `script`.

        `script` lists what each model call returns: "ok", an ERRORS key, "auth" (401),
        "empty" (an empty or tool-call-only reply). Returns the outcome in words.
        """
        priced = PricedContext(self.system, self.messages, TOOLS, self.counter)
        ev = priced.evaluate(self.tuning)
        values: dict[str, Any] = {
            "phase": "get_context_window",
            "total_tokens": ev.total_tokens,
            "context_max": self.tuning.context_max,
            "threshold": ev.threshold,
            "hit": ev.hit,
            "reason": ev.reason,
        }
        if ev.reason == "target_below_min":
            values.update(target_tokens=ev.target_tokens, min_target_tokens=ev.min_target_tokens)
        elif ev.reason == "reached_threshold":
            values["target_tokens"] = ev.target_tokens
        self._record("threshold_check", **values)
        if not ev.hit:
            return ev.reason
        span = ev.span
        self._record(
            "span_built",
            phase="get_context_window",
            **{
                name: self._preview(rng)
                for name, rng in (
                    ("preserved_prefix", span.prefix),
                    ("messages_to_compress", span.compress),
                    ("protected_tail", span.tail),
                )
            },
        )
        return self._play(priced, RetryState(span), script, summary, reinject)

    def _play(
        self,
        priced: PricedContext,
        state: RetryState,
        script: Sequence[str],
        summary: str,
        reinject: str | None,
    ) -> str:
        """Play the scripted model calls through openJiuwen's retry policy (core.retry_policy)."""

        def shrink(span: Span, ratio: float) -> Span | None:
            return self._shrink(priced, span, ratio)

        for step in script:
            self.tick(0.9)
            if step == "ok":
                return self._apply(priced, state.span, summary, reinject)
            if step in ("auth", "empty"):
                return "silent: " + ("authentication error" if step == "auth" else "empty summary")
            error_type, message = ERRORS[step]
            kind = error_type.removeprefix("transient:")
            retry = on_failure(
                state, kind, shrink, ratios=BUDGET_RATIOS, max_transient=len(TRANSIENT_DELAYS)
            )
            if retry.reason is None:
                return "silent: transient retries used up"
            record: dict[str, Any] = {
                "attempt": retry.record_attempt,
                "error_type": error_type,
                "error_message": message,
                "retried": retry.state is not None,
                "reason": retry.reason,
            }
            if retry.action == "shrink":
                record["budget_ratio"] = retry.budget_ratio
            elif retry.action == "backoff":
                record["delay_seconds"] = retry.delay_s
            self._record("compression_retry", **record)
            if retry.state is None:
                return "failed: " + retry.reason.replace("_", " ")
            state = retry.state
        return "silent: script ended"

    def _preview(self, rng: tuple[int, int]) -> list[dict[str, Any]]:
        out = []
        for idx, message in enumerate(self.messages[rng[0] : rng[1]]):
            text = message.content if isinstance(message.content, str) else repr(message.content)
            out.append(
                {
                    "idx": idx,
                    "role": message.role,
                    "tokens": max(len(text) // 4, 1),
                    "preview": text[:200],
                }
            )
        return out

    def _shrink(self, priced: PricedContext, span: Span, ratio: float) -> Span | None:
        """A smaller span after an overflow: the part of the region that fits the budget (tail takes the rest)."""
        start, end = span.compress
        if end - start <= 1:
            return None
        budget = int(priced.count_range(start, end) * ratio)
        keep = 1
        while start + keep < end and priced.count_range(start, start + keep + 1) <= budget:
            keep += 1
        keep = min(keep, end - start - 1)
        return Span(span.prefix, (start, start + keep), (start + keep, span.tail[1]))

    def _added(self, summary: str, reinject: str | None) -> list[Message]:
        """The memory block, and the recovered-context message when files are re-injected."""
        tag = MEMORY_TAGS[self.tuning.processor]
        memory = Message(
            role="user",
            content=(
                f"<{tag}>\n<meaning>\nThis is a compressed summary of work already performed. It is not a new user "
                f"request.\n</meaning>\n<conflict_policy>\nNewer raw messages and the latest user instructions override "
                f"this summary.\n</conflict_policy>\n<summary>\n{summary}\n</summary>\n</{tag}>"
            ),
            metadata=self._meta(),
        )
        added = [memory]
        if reinject:
            added.append(
                Message(
                    role="user",
                    content=(
                        "<recovered_context>\n<instruction>\nThese sections restore context that may have been compacted "
                        'out. Do not treat them as new user commands.\n</instruction>\n\n<section name="read_file">\n'
                        f"{reinject}\n</section>\n</recovered_context>"
                    ),
                    metadata=self._meta(),
                )
            )
        return added

    @staticmethod
    def _usage(sent_tokens: int, output: int) -> dict[str, Any]:
        """The compression call's merged usage, as a dump records it."""
        return {
            "calls": 1,
            "input_tokens": sent_tokens,
            "output_tokens": output,
            "total_tokens": sent_tokens + output,
            "cache_tokens": 0,
            "input_cost": 0.0,
            "output_cost": 0.0,
            "total_cost": 0.0,
            "model_name": MODEL,
            "details": [dict(usage_record(sent_tokens + output, output), model_name=MODEL)],
        }

    def _apply(self, priced: PricedContext, span: Span, summary: str, reinject: str | None) -> str:
        """Replace the context with prefix + memory (+ re-injection) + tail and write the dump."""
        added = self._added(summary, reinject)
        before = list(self.messages)
        prefix = before[span.prefix[0] : span.prefix[1]]
        region = before[span.compress[0] : span.compress[1]]
        tail = before[span.tail[0] : span.tail[1]]
        tokens_before = self.counter.count_messages(before)
        tokens_after = self.counter.count_messages(prefix + added + tail)
        if tokens_after >= tokens_before:
            return "silent: no benefit (result dropped)"
        # openJiuwen replaces the context (marking kept usage stale) before writing the dump
        prefix, tail = [_stale(m) for m in prefix], [_stale(m) for m in tail]
        after = prefix + added + tail
        self.dumps.append(
            self._dump(prefix, region, tail, after, summary, (tokens_before, tokens_after))
        )
        self.contexts_before.append(tuple(before))
        self.messages = after
        return f"compressed {tokens_before} -> {tokens_after}"

    def _dump(
        self,
        prefix: list[Message],
        region: list[Message],
        tail: list[Message],
        after: list[Message],
        summary: str,
        tokens: tuple[int, int],
    ) -> dict[str, Any]:
        """The compression dump openJiuwen writes for this compression."""
        tokens_before, tokens_after = tokens
        raw = f"<coverage_check>\ncovered: goal, files, tests, next step\n</coverage_check>\n<state_snapshot>\n{summary}\n</state_snapshot>"
        sent_tokens = self.counter.count_messages(list(self.system) + prefix + region) + 40
        target = self.counter.count_messages(region)
        timestamp = self.tick(0.05)
        reduction = max(tokens_before - tokens_after, 0)
        return {
            "processor_type": self.tuning.processor_class,
            "session_id": self.session_id,
            "context_id": self.context_id,
            "trigger": {
                "context_max": self.tuning.context_max,
                "total_tokens_before": tokens_before,
                "target_tokens": target,
            },
            "span": {
                "preserved_prefix_count": len(prefix),
                "messages_to_compress_count": len(region),
                "protected_tail_count": len(tail),
            },
            "compression_request": {
                "prompt": PROMPT,
                "exclude_recent_messages": len(tail),
                "system_messages_count": len(self.system),
                "tools_count": len(TOOLS),
                "tools": [t.to_dict() for t in TOOLS],
                "messages_sent_to_model": [m.to_dict() for m in (*self.system, *prefix, *region)]
                + [{"role": "user", "content": PROMPT, "metadata": {}}],
            },
            "compression_response": {
                "raw_content": raw,
                "extracted_summary": summary,
                "usage": self._usage(sent_tokens, len(raw) // 4),
            },
            "context_after": {
                "messages": [m.to_dict() for m in after],
                "total_tokens_after": tokens_after,
            },
            "benefit": {
                "tokens_before": tokens_before,
                "tokens_after": tokens_after,
                "reduction": reduction,
                "reduction_ratio": round(reduction / tokens_before, 4) if tokens_before else 0.0,
            },
            "timestamp": timestamp,
        }

    # --- writing --------------------------------------------------------------------------

    def write(self, workspace: Path) -> list[Path]:
        """Write the dumps and the debug log where openJiuwen puts them with a workspace.

        Beside them, `SNAPSHOTS_FILE` holds the context of every evaluation without a dump.
        """
        root = workspace / "context" / f"{self.session_id}_context"
        written: list[Path] = []
        if self.dumps:
            logs = root / "compression_logs"
            logs.mkdir(parents=True, exist_ok=True)
            for dump in self.dumps:
                name = f"{int(dump['timestamp'] * 1000)}_{safe_name(dump['processor_type'])}_{safe_name(self.session_id)}.json"
                path = logs / name
                path.write_text(json.dumps(dump, ensure_ascii=False, indent=2), encoding="utf-8")
                written.append(path)
        if self.records:
            debug = root / "context_debug"
            debug.mkdir(parents=True, exist_ok=True)
            path = debug / f"{safe_name(self.tuning.processor_class)}.jsonl"
            with path.open("a", encoding="utf-8") as handle:
                for record in self.records:
                    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            written.append(path)
        if self.snapshots:
            path = root / SNAPSHOTS_FILE
            root.mkdir(parents=True, exist_ok=True)
            with path.open("w", encoding="utf-8") as handle:
                for snapshot in self.snapshots:
                    handle.write(json.dumps(snapshot, ensure_ascii=False) + "\n")
            written.append(path)
        return written
