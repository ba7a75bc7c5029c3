"""Synthetic openJiuwen data for the benchmarks: contexts, one big dump, a busy dump folder.

Everything is deterministic for a seed and built in the shapes openJiuwen writes (see
/work/shared/reference/openjiuwen/README.md): messages as `model_dump(exclude_none=True)`,
the compression dump as an indent-2 JSON object with its keys in file order, debug
records as JSON Lines, files named `<ms>_<Processor>_<safe session>.json` under
`<root>/context/<session>_context/{compression_logs,context_debug}/`.
Generated files go to bench/out/ (git-ignored) or a temp folder, never into the repository.
"""

from __future__ import annotations

import base64
import json
import random
import re
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PROCESSORS = ("CurrentRoundCompressor", "DialogueCompressor", "RoundLevelCompressor")
_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "name": name,
        "description": description,
        "parameters": {
            "type": "object",
            "properties": {arg: {"type": "string", "description": f"the {arg}"} for arg in args},
            "required": list(args[:1]),
        },
    }
    for name, description, args in (
        (
            "read_file",
            "Read a text file from the workspace. Supports offset/limit in lines.",
            ("file_path", "offset", "limit"),
        ),
        (
            "edit_file",
            "Replace an exact string in a file.",
            ("file_path", "old_string", "new_string"),
        ),
        ("write_file", "Create or overwrite a file.", ("file_path", "content")),
        (
            "bash",
            "Run a shell command in the workspace and return its output.",
            ("command", "timeout"),
        ),
        ("grep", "Search file contents with a regular expression.", ("pattern", "path")),
        ("glob", "List files matching a glob pattern.", ("pattern",)),
    )
]
_SYSTEM = [
    {
        "role": "system",
        "content": "You are Forge, a software engineering agent working inside the user's repository.\n"
        "Read the relevant code before editing it; never guess file contents.\n" * 4,
        "metadata": {},
    },
    {
        "role": "system",
        "content": "Repository conventions (from AGENTS.md):\n1. Code lives in src/, tests in tests/.",
        "metadata": {},
    },
]
_PROMPT = (
    "## NON-NEGOTIABLE OUTPUT RULES\n\nReturn plain text only.\nDo NOT call any tools.\n"
    "Summarize the work so far inside <state_snapshot>...</state_snapshot>.\n" * 8
)
_CODE_LINES = [
    "def parse(value: str) -> datetime:",
    "    offset = _parse_offset(value[-6:])",
    "    return datetime.fromisoformat(value).replace(tzinfo=offset)",
    "class TimeZoneCache(dict):",
    "        raise ValueError(f'bad offset {text!r}')",
    "import os, sys, json  # noqa: E401",
    "    for index, item in enumerate(items):",
    "FAILED tests/test_parse.py::test_half_hour_offset - AssertionError: -05:00 != -05:30",
    "==================== 212 passed, 1 failed in 3.41s ====================",
    "src/tinycal/parse.py:88:    assert ts.utcoffset() == expected",
    '    return {"status": "ok", "rows": rows, "elapsed_ms": 12.5}',
    "Traceback (most recent call last):",
]
_CHINESE = [
    "这个改动不能破坏公共接口，请先阅读相关代码。",
    "上下文压缩会把较早的消息总结成一段摘要，保留最近的几条消息。",
    "测试全部通过以后，再把修改说明写进变更日志。",
    "请检查时区偏移量的解析逻辑，特别是半小时的时区。",
    "工具调用的结果必须和发起调用的助手消息放在一起。",
    "我们需要一个能处理一万条消息的检查器，打开要快，调参要即时。",
]
_ENGLISH = [
    "The offset parser truncates the minutes, so -05:30 becomes -05:00.",
    "I will add a regression test first and then fix the slicing bug.",
    "All 213 tests pass now; ruff reports no issues.",
    "Could you also make sure the export keeps the original offset?",
    "Done. The change is limited to _parse_offset and its test.",
]


def _corpus(rng: random.Random, size: int) -> str:
    """A long mixed text (code, logs, English, Chinese) that tool outputs are cut from."""
    parts: list[str] = []
    length = 0
    while length < size:
        pick = rng.random()
        if pick < 0.6:
            line = rng.choice(_CODE_LINES) + f"  # line {rng.randrange(10_000)}"
        elif pick < 0.8:
            line = rng.choice(_ENGLISH)
        else:
            line = rng.choice(_CHINESE)
        parts.append(line)
        length += len(line) + 1
    return "\n".join(parts)


def png_data_url(width: int, height: int, payload_bytes: int, rng: random.Random) -> str:
    """A data URL whose bytes start with a real PNG header of this size, padded to a length."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    header = (
        b"\x89PNG\r\n\x1a\n"
        + struct.pack(">I", len(ihdr))
        + chunk
        + struct.pack(">I", zlib.crc32(chunk))
    )
    body = rng.randbytes(max(payload_bytes - len(header), 0))
    return "data:image/png;base64," + base64.b64encode(header + body).decode("ascii")


def _usage(rng: random.Random, total: int) -> dict[str, Any]:
    out_tokens = rng.randrange(20, 400)
    return {
        "code": 0, "err_msg": "", "prompt": "", "task_id": "", "model_name": "fake-main-model",
        "total_latency": 0.0, "first_token_time": "", "request_start_time": "",
        "input_tokens": max(total - out_tokens, 1), "output_tokens": out_tokens, "total_tokens": total,
        "cache_tokens": 0, "reasoning_tokens": 0, "input_cost": 0.0, "output_cost": 0.0, "total_cost": 0.0,
    }  # fmt: skip


class ContextMaker:
    """Builds realistic agent conversations: user turns, parallel tool calls, long results.

    `tool_output_chars` is the mean length of a tool result; a few results are up to 4x
    longer. Every `image_every`-th user turn carries a PNG data-URL image; about a fifth
    of the text is Chinese.
    """

    def __init__(
        self,
        seed: int = 1,
        tool_output_chars: int = 2_000,
        image_every: int = 50,
        image_bytes: int = 40_000,
    ) -> None:
        self.rng = random.Random(seed)
        self.tool_output_chars = tool_output_chars
        self.image_every = image_every
        self.image_bytes = image_bytes
        self._corpus = _corpus(self.rng, max(tool_output_chars * 8, 50_000))
        self._ids = 0
        self._user_turns = 0

    def _mid(self) -> dict[str, Any]:
        self._ids += 1
        return {"context_message_id": f"{self._ids:032x}"}

    def _cut(self, mean: int) -> str:
        length = int(mean * self.rng.choice((0.25, 0.5, 1.0, 1.0, 1.5, 4.0)))
        length = min(length, len(self._corpus) - 1)
        start = self.rng.randrange(0, len(self._corpus) - length)
        return self._corpus[start : start + length]

    def _user(self) -> dict[str, Any]:
        self._user_turns += 1
        rng = self.rng
        text = rng.choice(_CHINESE if rng.random() < 0.3 else _ENGLISH) + " " + self._cut(200)
        if self.image_every and self._user_turns % self.image_every == 0:
            size = rng.choice(((1280, 800), (640, 480), (1920, 1080)))
            content: Any = [
                {"type": "text", "text": text},
                {
                    "type": "image_url",
                    "image_url": {"url": png_data_url(*size, self.image_bytes, rng)},
                },
            ]
        elif rng.random() < 0.05:
            content = "<system-reminder>\n" + text + "\n</system-reminder>"
        else:
            content = text
        return {"role": "user", "content": content, "metadata": self._mid()}

    def turns(self) -> Iterator[dict[str, Any]]:
        """Messages forever: user, then rounds of assistant tool calls and their results, then an answer."""
        rng = self.rng
        total = 2_000
        call_number = 0
        while True:
            yield self._user()
            for _ in range(rng.randrange(1, 6)):
                calls = []
                for _ in range(rng.choice((1, 1, 2, 3))):
                    call_number += 1
                    tool = rng.choice(_TOOLS)["name"]
                    args = json.dumps({"file_path": f"src/mod_{rng.randrange(100)}.py"})
                    calls.append(
                        {
                            "id": f"call_{call_number}",
                            "type": "function",
                            "function": {"name": tool, "arguments": args},
                        }
                    )
                total += rng.randrange(200, 3_000)
                yield {
                    "role": "assistant",
                    "content": rng.choice(("", "", rng.choice(_ENGLISH))),
                    "metadata": self._mid(),
                    "tool_calls": calls,
                    "usage_metadata": _usage(rng, total),
                    "finish_reason": "null",
                }
                for call in calls:
                    yield {
                        "role": "tool",
                        "content": "success=True data="
                        + repr({"output": self._cut(self.tool_output_chars)})
                        + " error=None",
                        "metadata": self._mid(),
                        "tool_call_id": call["id"],
                    }
            total += rng.randrange(50, 500)
            yield {
                "role": "assistant",
                "content": rng.choice(_CHINESE + _ENGLISH) + " " + self._cut(300),
                "metadata": self._mid(),
                "usage_metadata": _usage(rng, total),
                "finish_reason": "null",
            }

    def messages(self, count: int) -> list[dict[str, Any]]:
        """The first `count` messages of a conversation."""
        out: list[dict[str, Any]] = []
        for message in self.turns():
            if len(out) >= count:
                break
            out.append(message)
        return out


def tools() -> list[dict[str, Any]]:
    """The six tools every synthetic context offers."""
    return json.loads(json.dumps(_TOOLS))


def safe(text: str) -> str:
    """openJiuwen's file-name cleaning of processor and session names."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")[:80]
    return cleaned or "unknown"


def dump_document(
    messages: list[dict[str, Any]],
    processor: str,
    session_id: str,
    context_id: str,
    timestamp: float,
    tail: int = 6,
    token_mode: str = "len_div_4",
) -> dict[str, Any]:
    """A compression dump: the context minus its last `tail` messages was sent and summarized.

    Its totals are counted with the core's counter in `token_mode`, as openJiuwen's own
    counter would have, so the loader can infer the mode.
    """
    prefix = 0
    compress = len(messages) - tail
    sent = _SYSTEM + messages[:compress] + [{"role": "user", "content": _PROMPT, "metadata": {}}]
    memory = {
        "role": "user",
        "content": "<memory_block_current>\n<summary>\nWork so far: fixed the parser.\n</summary>\n</memory_block_current>",
        "metadata": {"context_message_id": "f" * 32},
    }
    after = [memory, *messages[compress:]]
    before_tokens = count_tokens(messages, token_mode)
    after_tokens = count_tokens(after, token_mode)
    reduction = max(before_tokens - after_tokens, 0)
    return {
        "processor_type": processor,
        "session_id": session_id,
        "context_id": context_id,
        "trigger": {
            "context_max": before_tokens + 10_000,
            "total_tokens_before": before_tokens,
            "target_tokens": max(before_tokens - after_tokens, 0),
        },
        "span": {
            "preserved_prefix_count": prefix,
            "messages_to_compress_count": compress,
            "protected_tail_count": tail,
        },
        "compression_request": {
            "prompt": _PROMPT,
            "exclude_recent_messages": tail,
            "system_messages_count": len(_SYSTEM),
            "tools_count": len(_TOOLS),
            "tools": tools(),
            "messages_sent_to_model": sent,
        },
        "compression_response": {
            "raw_content": "<state_snapshot>Work so far: fixed the parser.</state_snapshot>",
            "extracted_summary": "Work so far: fixed the parser.",
            "usage": None,
        },
        "context_after": {"messages": after, "total_tokens_after": after_tokens},
        "benefit": {
            "tokens_before": before_tokens,
            "tokens_after": after_tokens,
            "reduction": reduction,
            "reduction_ratio": round(reduction / before_tokens, 4) if before_tokens else 0.0,
        },
        "timestamp": timestamp,
    }


_COUNTERS: dict[str, Any] = {}


def count_tokens(messages: list[dict[str, Any]], token_mode: str) -> int:
    """openJiuwen's count of a serialized message list in `token_mode` (via the core)."""
    from inspector.core.messages import parse_messages
    from inspector.encoding import make_counters

    if not _COUNTERS:
        _COUNTERS.update(make_counters())
    return int(_COUNTERS[token_mode].count_messages(parse_messages(messages)))


def write_dump(path: Path, document: dict[str, Any]) -> int:
    """Write a dump the way openJiuwen does (indent 2, UTF-8, non-ASCII kept); bytes written."""
    data = json.dumps(document, ensure_ascii=False, indent=2).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return len(data)


def write_big_dump(
    folder: Path, messages: int = 20_000, target_mb: float = 100.0, seed: int = 1
) -> Path:
    """One dump of `messages` context messages, about `target_mb` MB; reused when already there."""
    session = "bench/big"
    name = f"1795975303278_CurrentRoundCompressor_{safe(session)}-{messages}-{int(target_mb)}.json"
    path = folder / name
    if path.exists():
        return path
    # ~42 % of messages are tool results and carry most of the bytes; images add ~7 %.
    # A result's characters cost about 2 bytes each once repr- and JSON-escaped (Chinese: 3).
    tool_chars = max(int(target_mb * 1e6 * 0.86 / (messages * 0.42) / 2.0), 50)
    maker = ContextMaker(
        seed=seed, tool_output_chars=tool_chars, image_every=25, image_bytes=60_000
    )
    document = dump_document(
        maker.messages(messages),
        "CurrentRoundCompressor",
        session,
        "ctx_big",
        1795975303.278,
        token_mode="tiktoken_cl100k",
    )
    tmp = path.with_suffix(".tmp")
    write_dump(tmp, document)
    tmp.replace(path)
    return path


def _debug_records(document: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    common = {
        "event": "threshold_check",
        "processor": document["processor_type"],
        "session_id": document["session_id"],
        "context_id": document["context_id"],
        "phase": "get_context_window",
    }
    context_max = document["trigger"]["context_max"]
    threshold = int(context_max * 0.8)
    records: list[dict[str, Any]] = []
    for _ in range(rng.randrange(0, 3)):
        records.append({"timestamp": document["timestamp"] - 10, **common, "total_tokens": threshold - rng.randrange(1, 500),
                        "context_max": context_max, "threshold": threshold, "hit": False, "reason": "below_threshold"})  # fmt: skip
    records.append({"timestamp": document["timestamp"] - 1, **common, "total_tokens": threshold + 10, "context_max": context_max,
                    "threshold": threshold, "hit": True, "reason": "reached_threshold", "target_tokens": document["trigger"]["target_tokens"]})  # fmt: skip
    span = {"timestamp": document["timestamp"] - 0.5, **common, "event": "span_built"}
    sent = document["compression_request"]["messages_sent_to_model"][len(_SYSTEM) : -1]
    span["preserved_prefix"] = []
    span["messages_to_compress"] = [
        {
            "idx": i,
            "role": m["role"],
            "tokens": max(len(str(m["content"])) // 4, 1),
            "preview": str(m["content"])[:200],
        }
        for i, m in enumerate(sent)
    ]
    span["protected_tail"] = []
    records.append(span)
    return records


def write_folder(
    root: Path,
    dumps: int = 5_000,
    sessions: int = 50,
    messages_per_dump: int = 16,
    seed: int = 7,
    tool_output_chars: int = 600,
) -> Path:
    """A workspace `context/` tree: `dumps` dumps over `sessions` sessions, plus their debug logs.

    Small `messages_per_dump` and `tool_output_chars` make tiny dumps (a 50,000-file folder
    in little disk). Reused when a marker file says it was made with the same numbers.
    """
    marker = root / ".bench-folder.json"
    settings: dict[str, int] = {
        "dumps": dumps,
        "sessions": sessions,
        "messages_per_dump": messages_per_dump,
        "seed": seed,
    }
    if tool_output_chars != 600:  # the default is left out: older folders are still reused
        settings["tool_output_chars"] = tool_output_chars
    if marker.exists() and json.loads(marker.read_text()) == settings:
        return root
    rng = random.Random(seed)
    maker = ContextMaker(seed=seed, tool_output_chars=tool_output_chars, image_every=0)
    pool = maker.messages(messages_per_dump * 40)
    for session_index in range(sessions):
        session = f"agent/s{session_index:03d}"
        processor = PROCESSORS[session_index % len(PROCESSORS)]
        base = root / "context" / f"{session}_context"
        debug_lines: list[str] = []
        per_session = dumps // sessions + (1 if session_index < dumps % sessions else 0)
        for dump_index in range(per_session):
            start = rng.randrange(0, len(pool) - messages_per_dump)
            window = pool[start : start + messages_per_dump]
            ms = 1795975000000 + session_index * 10_000_000 + dump_index * 60_000
            document = dump_document(
                window,
                processor,
                session,
                f"ctx_{session_index}",
                ms / 1000,
                tail=rng.randrange(1, min(6, messages_per_dump - 1)),
            )
            write_dump(
                base / "compression_logs" / f"{ms}_{processor}_{safe(session)}.json", document
            )
            debug_lines.extend(
                json.dumps(r, ensure_ascii=False) for r in _debug_records(document, rng)
            )
        debug = base / "context_debug" / f"{processor}.jsonl"
        debug.parent.mkdir(parents=True, exist_ok=True)
        debug.write_text("\n".join(debug_lines) + "\n", encoding="utf-8")
    marker.write_text(json.dumps(settings))
    return root


def synthetic_snapshot(
    messages: int, seed: int = 3, tool_output_chars: int = 400
) -> dict[str, Any]:
    """A snapshot dict (interchange format) of a long conversation, for engine benchmarks."""
    maker = ContextMaker(
        seed=seed, tool_output_chars=tool_output_chars, image_every=40, image_bytes=2_000
    )
    return {
        "id": f"synthetic-{messages}",
        "processor": "CurrentRoundCompressor",
        "config": {
            "trigger_context_ratio": 0.8,
            "min_target_context_ratio": 0.1,
            "keep_recent_messages": 10,
        },
        "context_max": 2_000_000,
        "token_mode": "tiktoken_cl100k",
        "system_messages": json.loads(json.dumps(_SYSTEM)),
        "messages": maker.messages(messages),
        "tools": tools(),
    }
