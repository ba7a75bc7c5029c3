"""Constants and small builders shared by the sample sessions: names, model errors, tools, images, usage.

Part of the sample-dump generator (`tools.samples`), not of the runtime package."""

import base64
import struct
import zlib
from typing import Any

from inspector.core.messages import Tool

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
