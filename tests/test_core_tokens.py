"""Table-driven tests of openJiuwen's counting rules: sanitizing, images, both modes, tools."""

from __future__ import annotations

import base64
import struct
import zlib

import pytest

from inspector.core.messages import Message, Tool
from inspector.core.tokens import (
    IMAGE_DATA_URL_PLACEHOLDER,
    TokenCounter,
    image_block_tokens,
    image_dimensions_from_bytes,
    image_tokens_for_size,
    sanitize_text,
    sanitize_value,
    sanitized_content,
    usage_tail_tokens,
)
from tests.conftest import call, msg


def png_bytes(width: int, height: int) -> bytes:
    """A minimal real PNG header (and an empty IDAT) of the given size."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return (
        b"\x89PNG\r\n\x1a\n"
        + struct.pack(">I", len(ihdr))
        + chunk
        + struct.pack(">I", zlib.crc32(chunk))
        + b"\x00\x00\x00\x00IEND\xaeB`\x82"
    )


def data_url(raw: bytes, kind: str = "png") -> str:
    return f"data:image/{kind};base64," + base64.b64encode(raw).decode()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain words", "plain words"),
        ("data:image/png;base64,AAAA", IMAGE_DATA_URL_PLACEHOLDER),
        ("see data:image/png;base64,AAAA= here", f"see {IMAGE_DATA_URL_PLACEHOLDER} here"),
        ("see DATA:IMAGE/JPEG;BASE64,QUJD end", f"see {IMAGE_DATA_URL_PLACEHOLDER} end"),
        ("data:text/plain;base64,AAAA", "data:text/plain;base64,AAAA"),
    ],
)
def test_sanitize_text(text: str, expected: str) -> None:
    assert sanitize_text(text) == expected


def test_sanitize_value_handles_sources_and_image_urls() -> None:
    value = [
        {"type": "image", "source": {"type": "base64", "data": "AAAA"}},
        {"type": "image_url", "image_url": {"url": "https://x/y.png;base64,zzz"}},
        {"url": "data:image/gif;base64,R0lG"},
        {"type": "text", "text": "keep"},
    ]
    cleaned = sanitize_value(value)
    assert cleaned[0]["source"]["data"] == "[image:base64-omitted]"
    assert cleaned[1]["image_url"]["url"] == IMAGE_DATA_URL_PLACEHOLDER
    assert cleaned[2]["url"] == IMAGE_DATA_URL_PLACEHOLDER
    assert cleaned[3] == {"type": "text", "text": "keep"}
    assert value[0]["source"]["data"] == "AAAA", "the input must not be modified"


def test_sanitized_content_of_a_list_uses_default_json_separators() -> None:
    assert sanitized_content([{"type": "text", "text": "é"}]) == '[{"type": "text", "text": "é"}]'


@pytest.mark.parametrize(
    ("width", "height", "tokens"),
    [(1280, 800, 1334), (640, 480, 425), (4000, 3000, 1568), (28, 28, 255), (2048, 4096, 1568)],
)
def test_image_price_by_size(width: int, height: int, tokens: int) -> None:
    assert image_tokens_for_size(width, height) == tokens


def test_image_dimensions_from_headers() -> None:
    assert image_dimensions_from_bytes(png_bytes(321, 123)) == (321, 123)
    assert image_dimensions_from_bytes(b"GIF89a" + struct.pack("<HH", 40, 30)) == (40, 30)
    jpeg = (
        b"\xff\xd8"
        + b"\xff\xe0\x00\x04ab"
        + b"\xff\xc0\x00\x11\x08"
        + struct.pack(">HH", 600, 800)
        + b"\x03"
    )
    assert image_dimensions_from_bytes(jpeg) == (800, 600)
    assert image_dimensions_from_bytes(b"not an image") is None


@pytest.mark.parametrize(
    ("block", "tokens"),
    [
        ({"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}, 1445),
        (
            {
                "type": "image_url",
                "image_url": {"url": "https://example.com/a.png", "detail": "LOW"},
            },
            85,
        ),
        ({"type": "image", "detail": "low"}, 85),
        ({"type": "image_url", "width": 640, "height": 480}, 425),
        ({"type": "image_url", "dimensions": "1280X800"}, 1334),
        ({"type": "image_url", "dimensions": [640, 480]}, 425),
        ({"type": "image_url", "width": 0, "height": 480}, 1445),
        ({"type": "image_url", "image_url": {"url": data_url(png_bytes(1280, 800))}}, 1334),
        ({"type": "image_url", "image_url": data_url(png_bytes(640, 480))}, 425),
        (
            {
                "type": "image",
                "source": {
                    "type": "base64",
                    "data": base64.b64encode(png_bytes(640, 480)).decode(),
                },
            },
            425,
        ),
        ({"type": "image_url", "image_url": {"url": "data:image/png;base64,AAA"}}, 1445),
    ],
)
def test_image_block_tokens(block: dict, tokens: int) -> None:
    assert image_block_tokens(block) == tokens


def test_image_placeholder_override_wins() -> None:
    assert (
        image_block_tokens({"type": "image_url", "width": 640, "height": 480}, placeholder_tokens=7)
        == 7
    )


def test_len_div_4_counts() -> None:
    counter = TokenCounter("len_div_4")
    assert counter.count_messages([]) == 0
    assert counter.message_tokens(msg("user", "abcdefgh")) == 2
    assert counter.message_tokens(msg("assistant", "", tool_calls=[call("c1")])) == 1, (
        "tool calls are not counted"
    )
    assert counter.count_messages([msg("user", "abc"), msg("user", "abcdefgh")]) == 1 + 2
    big_image = data_url(png_bytes(10, 10))
    assert counter.message_tokens(msg("user", big_image)) == len(IMAGE_DATA_URL_PLACEHOLDER) // 4


def test_tiktoken_counts(counters: dict[str, TokenCounter]) -> None:
    counter = counters["tiktoken_cl100k"]
    assert counter.exact
    hello = msg("user", "hello world")
    piece = counter.text_tokens("<|start|>user\nhello world<|end|>")
    assert counter.message_tokens(hello) == piece + 3
    assert counter.count_messages([hello, hello]) == 2 * piece + 3
    with_call = msg("assistant", "", tool_calls=[call("c1", "bash", '{"cmd": "ls"}')])
    calls_json = '[{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\\"cmd\\": \\"ls\\"}"}}]'
    expected = counter.text_tokens("<|start|>assistant\n<|end|>") + counter.text_tokens(calls_json)
    assert counter.piece_tokens(with_call) == expected


def test_tiktoken_list_content_text_is_not_sanitized(counters: dict[str, TokenCounter]) -> None:
    counter = counters["tiktoken_cl100k"]
    url = data_url(png_bytes(4, 4))
    message = msg("user", [{"type": "text", "text": url}, "tail"])
    assert counter.piece_tokens(message) == counter.text_tokens(
        f"<|start|>user\n{url}\ntail<|end|>"
    )


def test_tiktoken_without_encoder_falls_back_to_len_div_4_per_piece() -> None:
    counter = TokenCounter("tiktoken_cl100k", encode_len=None)
    assert not counter.exact
    text = "x" * 40
    assert counter.message_tokens(msg("user", text)) == (17 + 4 + 40) // 4 + 3


def test_tools_in_both_modes(counters: dict[str, TokenCounter]) -> None:
    tools = [
        Tool.from_dict(
            {
                "type": "function",
                "name": "grep",
                "description": None,
                "parameters": {"b": 1, "a": 2},
            }
        )
    ]
    dumped = (
        '{"description": null, "name": "grep", "parameters": {"a": 2, "b": 1}, "type": "function"}'
    )
    assert TokenCounter("len_div_4").count_tools(tools) == len(dumped) // 4
    counter = counters["tiktoken_cl100k"]
    body = '{"name":"grep","description":"","parameters":{"b":1,"a":2}}'
    assert (
        counter.count_tools(tools)
        == counter.text_tokens(f"<|start|>functions.grep:0\n{body}<|end|>") + 3
    )
    assert counter.count_tools([]) == 0


def test_usage_tail_has_no_minimum() -> None:
    assert usage_tail_tokens(msg("user", "")) == 0
    assert usage_tail_tokens(msg("user", "abcdefg")) == 1


def test_cache_counts_equal_content_once(counters: dict[str, TokenCounter]) -> None:
    counter = TokenCounter("tiktoken_cl100k", counters["tiktoken_cl100k"]._encode_len)
    calls: list[str] = []
    base = counters["tiktoken_cl100k"]._encode_len
    assert base is not None

    def counting(text: str) -> int:
        calls.append(text)
        return base(text)

    counter._encode_len = counting
    first = Message.from_dict({"role": "user", "content": "same text", "metadata": {"a": 1}})
    second = Message.from_dict({"role": "user", "content": "same text", "metadata": {"b": 2}})
    assert counter.piece_tokens(first) == counter.piece_tokens(second)
    assert len(calls) == 1
