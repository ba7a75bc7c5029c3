"""Random realistic contexts for the differential test, in our snapshot format.

Each case is one trigger evaluation of a forked compressor: system messages, context
messages (tool calls incl. parallel ones, tool results in openJiuwen's ToolOutput
rendering, internal user messages, list content with images, Chinese text, data URLs),
tools, usage records (valid, stale, zero, missing), a processor config and an engine
config (`enable_tiktoken_counter`, `model_name`, `model_provider`, which decide the
counter a release picks). About half the cases are steered: `context_max` and the
min-target ratio are chosen from our own count of the context so that the total sits a
few tokens either side of the threshold, or the span target either side of the minimum.
The expected values always come from the release (runner.py), never from here.
Imports `inspector` only to steer; never imports openJiuwen.
"""

from __future__ import annotations

import base64
import json
import random
import struct
import zlib
from typing import Any

PHRASES_EN = (
    "Let me check how the config loader resolves relative paths before changing anything.",
    "The retry decorator swallows KeyboardInterrupt; that is why Ctrl-C hangs the worker.",
    "I'll run the narrowest test first, then the full suite.",
    "The failing assertion compares naive and aware datetimes, which raises TypeError.",
    "According to the traceback the cache key includes the request id, so entries are never reused.",
    "Done. The migration now runs inside a transaction and rolls back on failure.",
    "Could you also make sure the CLI prints a helpful message when the file is missing?",
    "Use pnpm, not npm, and don't touch the lockfile unless necessary.",
    "    return {k: v for k, v in items if v is not None}\n",
    'SELECT id, status FROM orders WHERE status = "pending" LIMIT 50;\n',
    "def parse(text: str) -> dict[str, int]:\n    return json.loads(text)\n",
    'Tab\tseparated\tvalues and a backslash \\ and quotes "inside".',
)
PHRASES_ZH = (
    "好的，接下来我会读取 src/payment/gateway.py 并定位重试逻辑。",
    "测试用例 test_refund_flow 失败，报错信息是“余额不足”，但账户里明明有钱。",
    "根据日志，问题出在缓存失效时间的计算上：单位应该是秒而不是毫秒。",
    "上下文压缩之后，模型仍然需要知道当前任务的目标和已经完成的步骤。",
    "这个改动不能影响现有的对外接口，请保持函数签名不变。",
    "请帮我检查一下这个函数为什么在并发情况下会返回重复的订单号。",
)
INTERNAL_PREFIXES = (
    "<system-reminder>",
    "<memory_block_current>",
    "<memory_block_dialogue>",
    "<memory_block_round>",
    "<recovered_context>",
    "[STATE_REINJECTION]",
)
NEAR_MISS_PREFIXES = (
    "<System-Reminder>",
    "< system-reminder>",
    "[STATE REINJECTION]",
    "note: <system-reminder>",
)
TOOL_NAMES = ("read_file", "edit_file", "write_file", "bash", "grep", "glob")
PROCESSORS = ("CurrentRoundCompressor", "DialogueCompressor", "RoundLevelCompressor")
MODEL_NAMES = ("gpt-4o", "gpt-4", "qwen-plus", "deepseek-chat", "glm-4")
PROVIDERS = ("OpenAI", "openai", "DashScope", "SiliconFlow")


def _png(width: int, height: int) -> bytes:
    """A tiny valid PNG header (IHDR plus one IDAT) of the given size."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 16))


def _gif(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00\x00\x00" + b"\x3b"


class Generator:
    """Makes cases from one seeded random source."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.seed = seed

    # --- text -------------------------------------------------------------------------

    def text(self, low: int = 1, high: int = 6) -> str:
        """A few sentences, mixed English / Chinese / code."""
        rng = self.rng
        count = rng.randint(low, high)
        parts = []
        for _ in range(count):
            pool = PHRASES_ZH if rng.random() < 0.3 else PHRASES_EN
            parts.append(rng.choice(pool))
        sep = rng.choice((" ", "\n", " ", "\n\n"))
        out = sep.join(parts)
        if rng.random() < 0.04:
            out += " see data:image/png;base64," + base64.b64encode(_png(8, 8)).decode()
        if rng.random() < 0.01:
            out += " broken \ud83d surrogate"  # a lone surrogate: the encoder's fallback path
        if rng.random() < 0.02:
            out = ""
        return out

    def data_url(self) -> str:
        rng = self.rng
        w, h = rng.choice(((1280, 800), (640, 480), (300, 200), (2400, 1600), (28, 28)))
        raw = _png(w, h) if rng.random() < 0.7 else _gif(w, h)
        kind = "png" if raw.startswith(b"\x89PNG") else "gif"
        return f"data:image/{kind};base64," + base64.b64encode(raw).decode()

    def image_block(self) -> dict[str, Any]:
        rng = self.rng
        roll = rng.random()
        if roll < 0.4:
            url: dict[str, Any] = {"url": self.data_url()}
            if rng.random() < 0.3:
                url["detail"] = rng.choice(("high", "low", "auto"))
            return {"type": "image_url", "image_url": url}
        if roll < 0.65:
            return {"type": "image_url", "image_url": {"url": "https://example.com/shot.png"}}
        if roll < 0.85:
            data = base64.b64encode(_png(rng.randint(50, 1500), rng.randint(50, 1500))).decode()
            return {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": data},
            }
        return {
            "type": "image_url",
            "image_url": {"url": "https://example.com/a.jpg"},
            "width": 900,
            "height": 600,
        }

    def list_content(self) -> list[Any]:
        rng = self.rng
        parts: list[Any] = []
        for _ in range(rng.randint(1, 4)):
            roll = rng.random()
            if roll < 0.5:
                parts.append({"type": "text", "text": self.text(1, 3)})
            elif roll < 0.75:
                parts.append(self.image_block())
            elif roll < 0.85:
                parts.append(self.text(1, 2))
            elif roll < 0.93:
                parts.append({"type": "text", "text": ""})
            else:
                parts.append(
                    {"type": "file", "file": {"name": "notes.md", "size": rng.randint(1, 999)}}
                )
        return parts

    # --- messages -----------------------------------------------------------------------

    def usage(self, approx: int) -> dict[str, Any]:
        rng = self.rng
        roll = rng.random()
        if roll < 0.15:
            total = 0
        elif roll < 0.6:
            total = max(approx + rng.randint(-approx // 5 - 1, approx // 5 + 1), 1)
        else:
            total = rng.randint(1, max(approx * 2, 10))
        inp = max(total - rng.randint(0, 200), 0)
        return {
            "code": 0,
            "err_msg": "",
            "prompt": "",
            "task_id": "",
            "model_name": "gpt-4o",
            "total_latency": 0.0,
            "first_token_time": "",
            "request_start_time": "",
            "input_tokens": inp,
            "output_tokens": total - inp,
            "total_tokens": total,
            "cache_tokens": 0,
            "reasoning_tokens": 0,
            "input_cost": 0.0,
            "output_cost": 0.0,
            "total_cost": 0.0,
        }

    def user(self, internal_p: float) -> dict[str, Any]:
        rng = self.rng
        roll = rng.random()
        if roll < internal_p:
            ws = rng.choice(("", "", "\n", "  ", "\r\n", "\u3000"))
            content: Any = ws + rng.choice(INTERNAL_PREFIXES) + "\n" + self.text(1, 3)
        elif roll < internal_p + 0.05:
            content = rng.choice(NEAR_MISS_PREFIXES) + " " + self.text(1, 2)
        elif roll < internal_p + 0.25:
            content = self.list_content()
        elif roll < internal_p + 0.27:
            content = self.data_url()
        else:
            content = self.text(1, 5)
        return {"role": "user", "content": content, "metadata": {}}

    def call_id(self, mode: str, counter: list[int]) -> str | None:
        rng = self.rng
        counter[0] += 1
        if rng.random() < 0.03:
            return None
        if mode == "reuse":
            return f"call_{rng.randint(0, 3)}"
        return f"call_{counter[0]:04d}_{rng.randint(0, 9999)}"

    def tool_round(self, mode: str, counter: list[int]) -> list[dict[str, Any]]:
        """An assistant message with 1-4 (parallel) tool calls and their results."""
        rng = self.rng
        n_calls = rng.choice((1, 1, 1, 2, 3, 4))
        calls = []
        for _ in range(n_calls):
            name = rng.choice(TOOL_NAMES)
            args = {"file_path": rng.choice(("src/app.py", "tests/test_app.py", "README.md"))}
            if name in ("bash", "grep"):
                args = {"command": rng.choice(("pytest -q", "ls -la", "grep -rn retry src"))}
            if rng.random() < 0.2:
                args["note"] = rng.choice(PHRASES_ZH)
            arguments = json.dumps(args, ensure_ascii=rng.random() < 0.5)
            call: dict[str, Any] = {
                "id": self.call_id(mode, counter),
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
            if rng.random() < 0.05:
                call["response_item_id"] = f"item_{rng.randint(0, 999)}"
            calls.append(call)
        assistant: dict[str, Any] = {
            "role": "assistant",
            "content": self.text(0, 2) if rng.random() < 0.6 else "",
            "tool_calls": calls,
            "finish_reason": "null",
        }
        results: list[dict[str, Any]] = []
        order = list(calls)
        if rng.random() < 0.2:
            rng.shuffle(order)
        for call in order:
            if rng.random() < 0.05:
                continue  # a missing result
            data = (
                {"content": self.text(1, 8)} if rng.random() < 0.8 else {"stdout": self.text(1, 3)}
            )
            results.append(
                {
                    "role": "tool",
                    "content": f"success=True data={data!r} error=None",
                    "metadata": {},
                    "tool_call_id": call["id"] if call["id"] is not None else "",
                }
            )
        return [assistant, *results]

    def conversation(self, length: int, knobs: dict[str, Any]) -> list[dict[str, Any]]:
        """About `length` messages, with rounds of user / assistant / tool calls."""
        rng = self.rng
        messages: list[dict[str, Any]] = []
        counter = [0]
        while len(messages) < length:
            roll = rng.random()
            if roll < 0.25:
                messages.append(self.user(knobs["p_internal"]))
            elif roll < 0.65:
                messages.extend(self.tool_round(knobs["id_mode"], counter))
            elif roll < 0.7 and knobs["p_orphan"]:
                messages.append(
                    {
                        "role": "tool",
                        "content": self.text(1, 2),
                        "metadata": {},
                        "tool_call_id": f"orphan_{rng.randint(0, 99)}",
                    }
                )
            else:
                messages.append(
                    {"role": "assistant", "content": self.text(1, 5), "finish_reason": "null"}
                )
        return messages[: max(length, 0)] if rng.random() < 0.5 else messages

    def add_usage(self, messages: list[dict[str, Any]], p_usage: float) -> None:
        """Attach usage records to some assistants (a few marked stale)."""
        rng = self.rng
        running = 0
        for message in messages:
            running += len(json.dumps(message, ensure_ascii=False)) // 4
            if message["role"] != "assistant" or rng.random() >= p_usage:
                continue
            message["usage_metadata"] = self.usage(running + 400)
            if rng.random() < 0.25:
                message["metadata"] = {"context_usage_stale": True}
            elif rng.random() < 0.05:
                message["metadata"] = {"context_usage_stale": False}

    def tools(self) -> list[dict[str, Any]]:
        rng = self.rng
        out = []
        for index in range(rng.choice((0, 1, 3, 6, 6))):
            name = TOOL_NAMES[index % len(TOOL_NAMES)] + ("" if index < 6 else f"_{index}")
            props = {
                f"p{k}": {
                    "type": rng.choice(("string", "integer", "boolean")),
                    "description": self.text(1, 1),
                }
                for k in range(rng.randint(0, 4))
            }
            out.append(
                {
                    "type": "function",
                    "name": name,
                    "description": self.text(1, 2) if rng.random() < 0.9 else "",
                    "parameters": {
                        "type": "object",
                        "properties": props,
                        "required": sorted(props)[:1],
                    },
                }
            )
        return out

    def engine_config(self) -> dict[str, Any]:
        """Which counter a release gets: tiktoken switch, model name, provider."""
        rng = self.rng
        roll = rng.random()
        config: dict[str, Any] = {"enable_tiktoken_counter": rng.random() < 0.6}
        if roll < 0.25:
            config["model_name"] = rng.choice(MODEL_NAMES)
        elif roll < 0.35:
            config["model_provider"] = rng.choice(PROVIDERS)
        elif roll < 0.42:
            config["model_name"] = rng.choice(MODEL_NAMES)
            config["model_provider"] = rng.choice(PROVIDERS)
        return config

    def case(self, index: int) -> dict[str, Any]:
        """One unsteered case (steer.py moves it near a boundary)."""
        rng = self.rng
        knobs: dict[str, Any] = {
            "id_mode": "reuse" if rng.random() < 0.1 else "random",
            "p_internal": rng.choice((0.0, 0.2, 0.5)),
            "p_usage": rng.choice((0.0, 0.0, 0.3, 0.8)),
            "p_orphan": rng.random() < 0.3,
        }
        length = rng.choice((0, 1, 2, 3, 5, 8, 12, 20, 30, 45, 60, 90))
        messages = self.conversation(length, knobs)
        self.add_usage(messages, knobs["p_usage"])
        system = [
            {"role": "system", "content": self.text(1, 6), "metadata": {}}
            for _ in range(rng.choice((0, 1, 2)))
        ]
        processor = rng.choice(PROCESSORS)
        config: dict[str, Any] = {
            "trigger_context_ratio": round(rng.uniform(0.3, 0.95), 3),
            "min_target_context_ratio": round(rng.choice((0.0, rng.uniform(0.01, 0.3))), 4),
        }
        if processor != "DialogueCompressor":
            config["keep_recent_messages"] = rng.choice((0, 0, 1, 2, 4, 6, 10))
        return {
            "id": f"g{self.seed}-{index:05d}",
            "processor": processor,
            "config": config,
            "context_max": rng.randint(200, 60_000),
            "engine_config": self.engine_config(),
            "system_messages": system,
            "messages": messages,
            "tools": self.tools(),
            "generator": {**knobs, "steered_toward": None},
        }
