"""Prototype: the first screen of a huge compression dump without parsing all of it.

openJiuwen writes a dump's small header keys (processor_type, session_id, context_id,
trigger, span) before `compression_request`, whose `messages_sent_to_model` array holds
nearly all the bytes. `read_head` streams the file through an incremental UTF-8 decoder
and `json.JSONDecoder.raw_decode`, reads the header, then decodes array elements one at a
time and stops after `rows` context messages: time and memory depend on the rows shown,
not on the file size. Proposed for inspector/sources (a `DumpHead` the folder browser and
the TUI's first paint can use while the full load runs in a worker).

The whole-document streaming reader that started here is now
`inspector.sources.jsonstream.load_streaming` (used by `jsonio.read_json_file` for files
of 32 MB and more); it is re-exported under its old name.
"""

from __future__ import annotations

import codecs
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from inspector.core.messages import Message
from inspector.sources.jsonstream import load_streaming

__all__ = ["DumpHead", "load_streaming", "read_head"]

_CHUNK = 256 * 1024
_WHITESPACE = " \t\n\r"


@dataclass
class DumpHead:
    """Header keys read so far, the first context messages, and how many bytes that took."""

    header: dict[str, Any] = field(default_factory=dict)
    system_messages: list[Message] = field(default_factory=list)
    rows: list[Message] = field(default_factory=list)
    bytes_read: int = 0


class _Stream:
    """A text window over a binary file, refilled on demand."""

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self.text = ""
        self.pos = 0
        self.bytes_read = 0
        self.eof = False
        self.json = json.JSONDecoder()

    def _refill(self, at_least: int = _CHUNK) -> bool:
        if self.eof:
            return False
        chunk = self.handle.read(max(at_least, _CHUNK))
        self.bytes_read += len(chunk)
        if not chunk:
            self.eof = True
        self.text = self.text[self.pos :] + self.decoder.decode(chunk, final=not chunk)
        self.pos = 0
        return True

    def peek(self) -> str:
        """The next non-blank character ('' at the end)."""
        while True:
            while self.pos < len(self.text) and self.text[self.pos] in _WHITESPACE:
                self.pos += 1
            if self.pos < len(self.text):
                return self.text[self.pos]
            if not self._refill():
                return ""

    def take(self, expected: str) -> None:
        """Consume one expected structural character."""
        if self.peek() != expected:
            raise ValueError(f"expected {expected!r} at byte ~{self.bytes_read}")
        self.pos += 1

    def value(self) -> Any:
        """Decode one complete JSON value, reading more of the file as needed."""
        self.peek()
        while True:
            try:
                value, end = self.json.raw_decode(self.text, self.pos)
            except json.JSONDecodeError:
                # Incomplete value: read as much again as is buffered, so a value of size S
                # costs O(S) re-parsing in total, not O(S^2 / chunk).
                if not self._refill(len(self.text) - self.pos):
                    raise
                continue
            if end == len(self.text) and not self.eof:  # a number may continue in the next chunk
                self._refill()
                continue
            self.pos = end
            return value


def read_head(path: Path, rows: int = 50) -> DumpHead:
    """Header keys and the first `rows` context messages of a compression dump."""
    head = DumpHead()
    with path.open("rb") as handle:
        stream = _Stream(handle)
        stream.take("{")
        while stream.peek() == '"':
            key = stream.value()
            stream.take(":")
            if key != "compression_request" or stream.peek() != "{":
                head.header[key] = stream.value()
            else:
                _read_request(stream, head, rows)
                break
            if stream.peek() == ",":
                stream.take(",")
        head.bytes_read = stream.bytes_read
    return head


def _read_request(stream: _Stream, head: DumpHead, rows: int) -> None:
    request: dict[str, Any] = {}
    head.header["compression_request"] = request
    stream.take("{")
    while stream.peek() == '"':
        key = stream.value()
        stream.take(":")
        if key == "messages_sent_to_model" and stream.peek() == "[":
            stream.take("[")
            system_count = request.get("system_messages_count") or 0
            while stream.peek() == "{" and len(head.rows) < rows:
                message = Message.from_dict(stream.value())
                if len(head.system_messages) < system_count:
                    head.system_messages.append(message)
                else:
                    head.rows.append(message)
                if stream.peek() == ",":
                    stream.take(",")
            return
        request[key] = stream.value()
        if stream.peek() == ",":
            stream.take(",")
