"""Generate `sample_dumps/`: realistic openJiuwen output, built in code, deterministic.

Run `python -m inspector.sources.samples sample_dumps` (or `make samples`, or
`scripts/make_sample_dumps.py`). Each session is an agent conversation built message by
message; before every model call the compressor's trigger is evaluated with the core
engine and written as openJiuwen writes it (`threshold_check`, `span_built`,
`compression_retry` in `<Processor>.jsonl`; a dump per applied compression), so every
number in the folder is what our engine says for the context it came from. Model
failures are scripted per evaluation. Layout: `<workspace>/context/<session>_context/
{compression_logs,context_debug}/`, as openJiuwen lays it out with a workspace. Beside
those, `<session>_context/inspector_snapshots.jsonl` holds, for every evaluation that wrote
no dump, the exact context it was evaluated on as a context snapshot carrying
`session_id`, `context_id` and the check's `timestamp` (what `inspector snapshot` exports
for a debug run), so the loader gives every debug artifact its context.
This module writes files only into the folder it is given.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import struct
import sys
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.core.engine import PricedContext, Span
from inspector.core.messages import Message, Tool, ToolCall
from inspector.core.snapshot import ContextSnapshot
from inspector.core.timeline import safe_name
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import Tuning

BASE_TIME = 1_795_900_000.0
MODEL = "sample-compress-model"
PROMPT = (
    "## NON-NEGOTIABLE OUTPUT RULES\n\nReturn plain text only.\nDo NOT call any tools.\n"
    "Summarise the conversation so far inside <state_snapshot>...</state_snapshot> with the sections "
    "Active Task, Key Decisions, Completed Work, Files Touched, Immediate Resume Point."
)
MEMORY_TAGS = {
    "current_round": "memory_block_current",
    "dialogue": "memory_block_dialogue",
    "round_level": "memory_block_round",
}
ERRORS = {
    "overflow": (
        "context_overflow",
        "[181001] model call failed, reason: openAI API async invoke error: APIStatusError: Error code: 413 - "
        "{'error': {'message': \"This model's maximum context length is 8192 tokens. However, your messages "
        "resulted in 9321 tokens. Please reduce the length of the messages.\", 'type': 'invalid_request_error', "
        "'param': 'messages', 'code': 'context_length_exceeded'}} 413 request_id req_7f3a",
    ),
    "rate_limit_413": (
        "context_overflow",
        "[181001] model call failed, reason: openAI API async invoke error: RateLimitError: Error code: 429 - "
        "{'error': {'message': 'Rate limit reached for requests per min (RPM): Limit 30000, Used 29413, "
        "Requested 1.', 'type': 'requests', 'code': 'rate_limit_exceeded'}} 429",
    ),
    "rate_limit": (
        "transient:rate_limit",
        "[181001] model call failed, reason: openAI API async invoke error: RateLimitError: Error code: 429 - "
        "{'error': {'message': 'Rate limit reached for requests per min. Please try again in 2s.', "
        "'type': 'requests', 'code': 'rate_limit_exceeded'}} 429",
    ),
    "timeout": (
        "transient:timeout",
        "[181001] model call failed, reason: openAI API async invoke error: APITimeoutError: Request timed out. "
        "ReadTimeout: timed out",
    ),
    "server": (
        "transient:server_unstable",
        "[181001] model call failed, reason: openAI API async invoke error: InternalServerError: Error code: 503 - "
        "{'error': {'message': 'The server is overloaded or not ready yet.', 'type': 'server_error'}} 503",
    ),
    "unknown": (
        "transient:unknown",
        "[181001] model call failed, reason: openAI API async invoke error: APIConnectionError: Connection error. "
        "RemoteProtocolError: peer closed connection without sending complete message body",
    ),
}
TRANSIENT_DELAYS = (0.05, 0.1)
BUDGET_RATIOS = (0.85, 0.65, 0.5)
#: Per session folder: the contexts of the evaluations that wrote no dump, as snapshots.
SNAPSHOTS_FILE = "inspector_snapshots.jsonl"

TOOLS: tuple[Tool, ...] = tuple(
    Tool(
        name=name,
        description=description,
        parameters={"type": "object", "properties": props, "required": list(props)[:1]},
    )
    for name, description, props in (
        (
            "read_file",
            "Read a text file from the workspace.",
            {"path": {"type": "string"}, "offset": {"type": "integer"}},
        ),
        (
            "edit_file",
            "Replace a unique string in a file.",
            {"path": {"type": "string"}, "old": {"type": "string"}, "new": {"type": "string"}},
        ),
        (
            "write_file",
            "Create or overwrite a file.",
            {"path": {"type": "string"}, "content": {"type": "string"}},
        ),
        (
            "bash",
            "Run a shell command in the workspace.",
            {"command": {"type": "string"}, "timeout": {"type": "integer"}},
        ),
        (
            "grep",
            "Search file contents with a regular expression.",
            {"pattern": {"type": "string"}, "path": {"type": "string"}},
        ),
        ("glob", "List files matching a glob pattern.", {"pattern": {"type": "string"}}),
    )
)


def png_bytes(width: int, height: int, seed: int) -> bytes:
    """A real (small, well-compressing) RGB PNG: a checker of flat-colour tiles."""
    rows = bytearray()
    for y in range(height):
        rows.append(0)
        for x in range(width):
            # 40-pixel tiles of flat colour: a recognisable picture that compresses to a few KB
            tile = (x // 40 + y // 40 + seed) % 4
            rows += bytes(
                ((60 * tile + 40) % 256, (90 * tile + seed * 30) % 256, (200 - 40 * tile) % 256)
            )

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(bytes(rows), 9))
        + chunk(b"IEND", b"")
    )


def data_url(width: int, height: int, seed: int) -> str:
    """A PNG as a base64 data URL."""
    return "data:image/png;base64," + base64.b64encode(png_bytes(width, height, seed)).decode(
        "ascii"
    )


def usage_record(total: int, output: int) -> dict[str, Any]:
    """openJiuwen's 16-field usage record."""
    return {
        "code": 0,
        "err_msg": "",
        "prompt": "",
        "task_id": "",
        "model_name": "sample-agent-model",
        "total_latency": round(0.4 + output / 900, 3),
        "first_token_time": "",
        "request_start_time": "",
        "input_tokens": total - output,
        "output_tokens": output,
        "total_tokens": total,
        "cache_tokens": 0,
        "reasoning_tokens": 0,
        "input_cost": 0.0,
        "output_cost": 0.0,
        "total_cost": 0.0,
    }


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
        overflow_attempts = transient_attempts = 0
        for step in script:
            self.tick(0.9)
            if step == "ok":
                return self._apply(priced, span, summary, reinject)
            if step in ("auth", "empty"):
                return "silent: " + ("authentication error" if step == "auth" else "empty summary")
            error_type, message = ERRORS[step]
            if error_type == "context_overflow":
                overflow_attempts += 1
                base = {
                    "attempt": overflow_attempts,
                    "error_type": error_type,
                    "error_message": message,
                }
                if overflow_attempts > len(BUDGET_RATIOS):
                    self._record(
                        "compression_retry", **base, retried=False, reason="retry_budget_exhausted"
                    )
                    return "failed: retry budget exhausted"
                smaller = self._shrink(priced, span, BUDGET_RATIOS[overflow_attempts - 1])
                if smaller is None:
                    self._record(
                        "compression_retry", **base, retried=False, reason="no_smaller_span"
                    )
                    return "failed: no smaller span"
                ratio = BUDGET_RATIOS[overflow_attempts - 1]
                self._record(
                    "compression_retry",
                    **base,
                    retried=True,
                    reason="budget_ratio_shrink",
                    budget_ratio=ratio,
                )
                span = smaller
            else:
                transient_attempts += 1
                if transient_attempts > len(TRANSIENT_DELAYS):
                    return "silent: transient retries used up"
                delay = TRANSIENT_DELAYS[transient_attempts - 1]
                self._record(
                    "compression_retry",
                    attempt=transient_attempts,
                    error_type=error_type,
                    error_message=message,
                    retried=True,
                    reason="transient_backoff",
                    delay_seconds=delay,
                )
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

    def _apply(self, priced: PricedContext, span: Span, summary: str, reinject: str | None) -> str:
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
        before = list(self.messages)
        prefix = before[span.prefix[0] : span.prefix[1]]
        region = before[span.compress[0] : span.compress[1]]
        tail = before[span.tail[0] : span.tail[1]]
        after = prefix + added + tail
        tokens_before = self.counter.count_messages(before)
        tokens_after = self.counter.count_messages(after)
        if tokens_after >= tokens_before:
            return "silent: no benefit (result dropped)"
        raw = f"<coverage_check>\ncovered: goal, files, tests, next step\n</coverage_check>\n<state_snapshot>\n{summary}\n</state_snapshot>"
        sent_tokens = self.counter.count_messages(list(self.system) + prefix + region) + 40
        output = len(raw) // 4
        usage = {
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

        def stale(message: Message) -> Message:
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

        # openJiuwen replaces the context (marking kept usage stale) before writing the dump
        prefix, tail = [stale(m) for m in prefix], [stale(m) for m in tail]
        after = prefix + added + tail
        target = self.counter.count_messages(region)
        timestamp = self.tick(0.05)
        reduction = max(tokens_before - tokens_after, 0)
        dump = {
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
                "usage": usage,
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
        self.dumps.append(dump)
        self.contexts_before.append(tuple(before))
        self.messages = after
        return f"compressed {tokens_before} -> {tokens_after}"

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


# --- content ------------------------------------------------------------------------------

SYSTEM = (
    Message(
        role="system",
        content="You are a careful coding agent working in /workspace. Use the tools to read before you edit; run the tests after every change.",
    ),
    Message(
        role="system",
        content="# AGENTS.md\n- Python 3.11, pytest.\n- Naive datetimes are UTC.\n- Keep functions small; no new dependencies.",
    ),
)


def _code(name: str, lines: int, seed: int) -> str:
    body = [
        f'"""{name}: helpers for the sample project."""',
        "from __future__ import annotations",
        "",
    ]
    for i in range(lines):
        body.append(f"def helper_{seed}_{i}(value: int) -> int:")
        body.append(f"    return value * {i + seed} + {seed % 7}  # step {i}")
    return "\n".join(body)


def session_bugfix(counter: TokenCounter) -> Session:
    """CurrentRound, keep 2, cl100k: parallel calls; an overflow shrink, then a second compression later."""
    s = Session(
        "demo/bugfix-tinycal",
        "ctx_main",
        Tuning(
            processor="current_round",
            keep_recent=2,
            context_max=6000,
            trigger_ratio=0.6,
            token_mode="tiktoken_cl100k",
        ),
        counter,
        SYSTEM,
        BASE_TIME,
        with_usage=True,
    )
    s.user(
        "Negative half-hour offsets like -05:30 are parsed as -05:00 in tinycal. Please fix parse() and add a test."
    )
    s.check()
    s.assistant(
        "I'll read the parser, the tz helpers and the tests together.",
        [
            ("call_1", "read_file", {"path": "src/tinycal/parse.py"}),
            ("call_2", "read_file", {"path": "src/tinycal/tz.py"}),
            ("call_3", "read_file", {"path": "tests/test_parse.py"}),
        ],
    )
    for cid, name, lines in (
        ("call_1", "parse.py", 40),
        ("call_2", "tz.py", 25),
        ("call_3", "test_parse.py", 30),
    ):
        s.tool(cid, {"path": f"src/tinycal/{name}", "content": _code(name, lines, len(name))})
    s.check()
    s.assistant(
        "The offset is built from hours only. Let me grep for other callers.",
        [("call_4", "grep", {"pattern": "_parse_tz", "path": "src"})],
    )
    s.tool("call_4", {"matches": ["src/tinycal/parse.py:41", "src/tinycal/tz.py:12"]})
    s.check()
    s.assistant(
        "Running the focused test first to confirm the failure.",
        [("call_5", "bash", {"command": "pytest tests/test_parse.py -k offset -q"})],
    )
    s.tool(
        "call_5",
        {
            "exit_code": 1,
            "stdout": "F\nFAILED tests/test_parse.py::test_offset_half_hour - AssertionError: -5:00 != -5:30\n"
            * 6,
        },
    )
    s.check(
        ["overflow", "ok"],
        summary="### Active Task\n- Fix negative half-hour offsets in parse().\n### Completed Work\n- Read parse.py, tz.py, tests; the bug is in helper_8_3.\n- Focused test fails: -5:00 != -5:30.\n### Immediate Resume Point\n- Use _parse_tz(tz) for the offset and rerun the test.",
        reinject="Recently read file: /workspace/src/tinycal/tz.py\n" + _code("tz.py", 8, 5),
    )
    s.assistant(
        "Applying the fix: use _parse_tz for the whole offset.",
        [
            (
                "call_6",
                "edit_file",
                {"path": "src/tinycal/parse.py", "old": "hours_only", "new": "_parse_tz(tz)"},
            )
        ],
    )
    s.tool(
        "call_6",
        {"path": "src/tinycal/parse.py", "file_path": "src/tinycal/parse.py", "replaced": 1},
    )
    s.check()
    s.assistant("Now the whole suite.", [("call_7", "bash", {"command": "pytest -q"})])
    s.tool(
        "call_7",
        {
            "exit_code": 0,
            "stdout": "." * 120
            + "\n120 passed in 0.84s\n"
            + "tests/test_parse.py::test_offset ok\n" * 40,
        },
    )
    s.check()
    s.user("Great. Also make sure +05:45 (Nepal) works and update the changelog.")
    s.check()
    for step in range(4):
        cid = f"call_{8 + step}"
        s.assistant(
            f"Checking case {step}: reading the changelog and the relevant tests.",
            [(cid, "read_file", {"path": f"docs/CHANGELOG_{step}.md"})],
        )
        s.tool(
            cid,
            {
                "path": f"docs/CHANGELOG_{step}.md",
                "content": "\n".join(
                    f"- 0.{step}.{i}: fixed offset case {i} for zone {i * 15} minutes"
                    for i in range(35)
                ),
            },
        )
        outcome = s.check(
            ["timeout", "ok"],
            summary="### Active Task\n- +05:45 support and changelog.\n### Completed Work\n- Half-hour fix merged; suite green (120 passed).\n- Read CHANGELOG parts 0-3.\n### Immediate Resume Point\n- Add the +05:45 test, then write the changelog entry.",
        )
        if outcome.startswith("compressed"):
            break
    return s


CHINESE = [
    "请帮我把这个模块重构一下，保持接口不变。",
    "我们先看看现有的目录结构和依赖关系。",
    "这里的缓存逻辑有点复杂，需要拆成两个函数。",
    "测试全部通过了，但是覆盖率下降了百分之三。",
    "日志里出现了超时错误，可能和数据库连接池有关。",
    "好的，接下来处理配置文件的迁移。",
]


def session_long(counter: TokenCounter) -> Session:
    """Dialogue, cl100k, 300+ messages in Chinese and English, usage on every reply; checks as it grows."""
    s = Session(
        "long-refactor-zh",
        "ctx_long",
        Tuning(
            processor="dialogue", context_max=42000, trigger_ratio=0.8, token_mode="tiktoken_cl100k"
        ),
        counter,
        SYSTEM,
        BASE_TIME + 86_400,
        with_usage=True,
    )
    turn = 0
    while len(s.messages) < 318:
        zh = CHINESE[turn % len(CHINESE)]
        s.user(f"{zh} (step {turn}) Please continue with module_{turn % 9}.py.")
        if turn % 6 == 0:
            s.check()
        for k in range(3):
            cid = f"call_{turn}_{k}"
            s.assistant(
                f"第{turn}轮：正在检查 module_{turn % 9}.py 的第 {k} 部分。",
                [
                    (
                        cid,
                        ["read_file", "grep", "bash"][k],
                        {"path": f"pkg/module_{turn % 9}.py", "part": k},
                    )
                ],
            )
            s.tool(
                cid,
                {
                    "path": f"pkg/module_{turn % 9}.py",
                    "lines": [
                        f"{i}: value_{turn}_{k}_{i} = compute({i}, '数据{i}')"
                        for i in range(6 + (turn + k) % 5)
                    ],
                },
            )
        s.assistant(
            f"完成第{turn}步：module_{turn % 9}.py 已重构，测试通过。Next I will look at module_{(turn + 1) % 9}.py."
        )
        turn += 1
    s.user("总结一下目前的进度，然后继续处理剩下的模块。")
    s.check(
        summary="### Active Task\n- 重构 pkg/ 下的模块，保持接口不变。\n### Completed Work\n- 已完成 module_0 到 module_8 的多轮重构，测试全部通过。\n### Immediate Resume Point\n- 总结进度并继续剩余模块。"
    )
    return s


def session_multimodal(counter: TokenCounter) -> Session:
    """RoundLevel, keep 4, cl100k: screenshots as PNG data URLs; target_below_min before the compression."""
    s = Session(
        "ui-review-images",
        "ctx_ui",
        Tuning(
            processor="round_level",
            keep_recent=4,
            context_max=4800,
            trigger_ratio=0.5,
            min_target_ratio=0.1,
            token_mode="tiktoken_cl100k",
        ),
        counter,
        SYSTEM,
        BASE_TIME + 2 * 86_400,
    )
    s.user(
        [
            {"type": "text", "text": "这个设置页面的布局在窄屏上错位了，截图如下。"},
            {"type": "image_url", "image_url": {"url": data_url(320, 200, 1)}},
        ]
    )
    s.check()
    s.assistant(
        "I see the sidebar overlapping the form. Let me read the stylesheet.",
        [("ui_1", "read_file", {"path": "web/settings.css"})],
    )
    s.tool(
        "ui_1",
        {
            "path": "web/settings.css",
            "content": "\n".join(
                f".col-{i} {{ width: {10 + i}%; float: left; }}" for i in range(60)
            ),
        },
    )
    s.check()
    s.assistant("The columns use floats with fixed percentages; switching to a grid will fix it.")
    s.user(
        [
            {"type": "text", "text": "Here is the narrow layout after your first change."},
            {"type": "image_url", "image_url": {"url": data_url(64, 48, 2), "detail": "high"}},
            {"type": "image_url", "image_url": {"url": data_url(640, 400, 3)}},
        ]
    )
    s.check()
    for i in range(5):
        cid = f"ui_{2 + i}"
        s.assistant(
            f"Adjusting breakpoint {i}.",
            [
                (
                    cid,
                    "edit_file",
                    {"path": "web/settings.css", "old": f".col-{i}", "new": f".grid-{i}"},
                )
            ],
        )
        s.tool(
            cid,
            {
                "path": "web/settings.css",
                "file_path": "web/settings.css",
                "replaced": 1,
                "diff": "\n".join(f"-.col-{i}-{j}\n+.grid-{i}-{j}" for j in range(25)),
            },
        )
        s.check(
            summary="### Active Task\n- 修复设置页面在窄屏上的布局。\n### Completed Work\n- Replaced float columns by a CSS grid; breakpoints 0-4 adjusted.\n### Immediate Resume Point\n- Ask for a new screenshot at 360px."
        )
    return s


def session_failures(counter: TokenCounter) -> Session:
    """CurrentRound, len//4 counting: every way a compression can fail or end silently."""
    s = Session(
        "ops-incident-42",
        "ctx_ops",
        Tuning(
            processor="current_round",
            keep_recent=0,
            context_max=4500,
            trigger_ratio=0.8,
            token_mode="len_div_4",
        ),
        counter,
        SYSTEM,
        BASE_TIME + 3 * 86_400,
    )
    s.user("The nightly export job failed with a timeout. Investigate the logs and find the cause.")
    log = "\n".join(
        f"2026-11-0{i % 9 + 1}T02:{i % 60:02d}:00Z export worker={i % 4} batch={i} rows=5000 status=ok"
        for i in range(70)
    )
    scripts: list[tuple[list[str], str]] = [
        (["overflow", "overflow", "overflow", "overflow"], "four 413s: retry budget exhausted"),
        (
            ["rate_limit", "rate_limit", "rate_limit"],
            "three 429s: transient retries used up (silent)",
        ),
        (["auth"], "401: never retried, no record"),
        (["empty"], "the model answered with a tool call only"),
        (["rate_limit_413", "ok"], "a 429 taken for an overflow, then success"),
        (["server", "unknown", "ok"], "503 and a dropped connection, then success"),
    ]
    for round_index, (script, _) in enumerate(scripts):
        for k in range(3):
            cid = f"ops_{round_index}_{k}"
            s.assistant(
                f"Reading log part {k} of round {round_index}.",
                [
                    (
                        cid,
                        "bash",
                        {"command": f"sed -n '{k * 70},{k * 70 + 69}p' /var/log/export.log"},
                    )
                ],
            )
            s.tool(cid, {"stdout": log, "exit_code": 0})
        outcome = s.check(
            script,
            summary=f"### Active Task\n- Find why the nightly export timed out.\n### Completed Work\n- Read log parts 0-2 in round {round_index}; all batches ok so far.\n### Immediate Resume Point\n- Check the database pool metrics.",
        )
        if outcome.startswith("compressed"):
            s.user("Keep going, and check the database connection pool next.")
    s.assistant(
        "One last look at the pool metrics.",
        [("ops_last", "bash", {"command": "cat /var/log/pool.log | tail -n 5"})],
    )
    s.tool("ops_last", {"stdout": log.replace("status=ok", "pool=exhausted"), "exit_code": 0})
    s.check(["overflow", "overflow"], summary="unused")
    return s


def session_no_benefit(counter: TokenCounter) -> Session:
    """CurrentRound, cl100k: below threshold, nothing to compress, too little to compress, and a no-benefit drop."""
    s = Session(
        "docs-rewrite",
        "ctx_docs",
        Tuning(
            processor="current_round",
            keep_recent=0,
            context_max=3000,
            trigger_ratio=0.6,
            token_mode="tiktoken_cl100k",
        ),
        counter,
        SYSTEM,
        BASE_TIME + 4 * 86_400,
    )
    s.user("Rewrite the README introduction so it explains the three compressors.")
    s.check()
    s.assistant("Reading the current README.", [("d_1", "read_file", {"path": "README.md"})])
    readme = "\n".join(
        f"## Section {i}\nThe compressor keeps the prefix, compresses the middle and protects the tail ({i})."
        for i in range(48)
    )
    s.tool("d_1", {"path": "README.md", "content": readme})
    s.check()
    s.assistant(
        "Here is a draft of the new introduction:\n"
        + "The inspector shows what each compressor keeps. " * 20
    )
    s.user("Good, but shorter please, and mention RoundLevel.")
    s.check()
    s.assistant(
        "Checking the RoundLevel docs quickly.",
        [("d_2", "grep", {"pattern": "RoundLevel", "path": "docs"})],
    )
    s.tool("d_2", {"matches": ["docs/compressors.md:12"]})
    s.check()
    s.assistant(
        "Reading the compressor docs.", [("d_3", "read_file", {"path": "docs/compressors.md"})]
    )
    s.tool(
        "d_3",
        {
            "path": "docs/compressors.md",
            "content": "\n".join(
                f"- RoundLevel note {i}: compresses whole rounds and keeps the last four messages."
                for i in range(40)
            ),
        },
    )
    s.check(
        summary="### Active Task\n- Shorter README intro mentioning RoundLevel.\n"
        + "### Notes\n"
        + "- keep every sentence of the old README for reference\n" * 160
    )
    return s


SESSIONS = (session_bugfix, session_long, session_multimodal, session_failures, session_no_benefit)

README = """# sample_dumps

Generated by `make samples` (`python -m inspector.sources.samples sample_dumps`): do not edit by
hand. Every message is built in code; every debug record and dump is what our core engine says
for that context, written in openJiuwen's formats and its workspace layout:
`workspace/context/<session id>_context/compression_logs/<ms>_<Processor>_<session>.json` and
`.../context_debug/<Processor>.jsonl`. Open it with `make run` or `inspector sample_dumps`;
`inspector stats sample_dumps` summarises it; `inspector why sample_dumps --json` explains each run.

Beside each session's `context_debug/` folder, `workspace/context/<session id>_context/inspector_snapshots.jsonl`
holds contexts exported by the inspector (`inspector snapshot`) at each evaluation, so every
evaluation can be re-evaluated: one context snapshot per evaluation that wrote no dump
(below_threshold, no_compressible_span, target_below_min, silent ends, failures), carrying
`session_id`, `context_id` and the `timestamp` of its `threshold_check`. openJiuwen does not
write this file; in real use you would export the context from the agent. The loader links
each snapshot to the evaluation with that time, so every debug artifact has its context and
`why` reproduces the logged reason, total and threshold (and answers what setting would make
it compress). Evaluations that compressed need no such file: their dump rebuilds the context.

These are not recordings of openJiuwen: conversations, model replies and failures are scripted.
Counts, spans and trigger decisions come from the inspector's engine (which matches openJiuwen
on the parity corpus), so every file is self-consistent; real runs are in
`../shared/reference/openjiuwen`.

| session (folder) | processor, counting | what it shows | question it answers |
| --- | --- | --- | --- |
{rows}
"""

ROWS = {
    "demo/bugfix-tinycal": (
        "CurrentRound keep 2, cl100k, usage on every reply",
        "three parallel read_file calls; a 413 overflow shrink (budget 0.85) then success, with a read_file re-injection; a second compression after a timeout retry, whose context already holds usage records the first one marked stale. The slash in the session id makes a nested folder, as openJiuwen does",
        "Why did the first compression send fewer messages than the span first built? What can a rebuild of the second one not recover?",
    ),
    "long-refactor-zh": (
        "Dialogue, cl100k, usage on every reply",
        "a 300+ message session in Chinese and English; threshold checks as it grows (below_threshold, then one compression of almost everything before the last user turn)",
        "When did the session first reach its threshold, and how much did one compression save?",
    ),
    "ui-review-images": (
        "RoundLevel keep 4, cl100k",
        "screenshots as PNG data URLs (priced by size, not by base64 length); target_below_min before the compression",
        "Why didn't it compress right after the screenshots? How much do images weigh?",
    ),
    "ops-incident-42": (
        "CurrentRound keep 0, len//4",
        "every failure: 413 x4 (retry_budget_exhausted), 429 x3 (two transient_backoff records, then silence), 401 (silence), a tool-call-only reply (silence), a 429 misclassified as overflow, 503 and a dropped connection then success, and a one-message span that cannot shrink (no_smaller_span)",
        "Why did this run end without a dump? Which retries happened and of which kind?",
    ),
    "docs-rewrite": (
        "CurrentRound keep 0, cl100k",
        "below_threshold, no_compressible_span (the last message is the user's), target_below_min, and a summary longer than what it replaced, dropped for no benefit",
        "Why didn't it compress, at each step? What did the silent end most likely come from?",
    ),
}


def generate(out: Path, counters: dict[str, TokenCounter]) -> list[Path]:
    """Write every sample session under `out` (replacing its workspace folder); returns the files."""
    workspace = out / "workspace"
    if workspace.exists():
        shutil.rmtree(workspace)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    rows = []
    for build in SESSIONS:
        probe = build.__doc__ or ""
        counter = counters["len_div_4"] if "len//4" in probe else counters["tiktoken_cl100k"]
        session = build(counter)
        written += session.write(workspace)
        processor, shows, question = ROWS[session.session_id]
        rows.append(f"| `{session.session_id}` | {processor} | {shows} | {question} |")
    (out / "README.md").write_text(README.format(rows="\n".join(rows)), encoding="utf-8")
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: generate into the folder given (default `sample_dumps`)."""
    from inspector.encoding import make_counters

    args = list(sys.argv[1:] if argv is None else argv)
    out = Path(args[0] if args else "sample_dumps")
    counters = make_counters()
    if not counters["tiktoken_cl100k"].exact:
        print(
            "exact cl100k counting is unavailable: samples would not match openJiuwen's numbers",
            file=sys.stderr,
        )
        return 1
    files = generate(out, counters)
    size = sum(f.stat().st_size for f in files)
    print(f"wrote {len(files)} files, {size / 1024:.0f} KB, under {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
