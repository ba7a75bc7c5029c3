"""Parse one big JSON document from a file without holding its whole text in memory.

`json.loads(path.read_bytes())` needs the file's bytes, then the whole text as one `str`
(4 bytes per character as soon as one non-BMP character is in it, 2 for Chinese), then
the parsed objects: about 4x the file at its peak. `load_streaming` reads the file
through an incremental UTF-8 decoder, walks the top `depth` levels of containers member
by member and decodes everything below them with `json.JSONDecoder.raw_decode` from a
small text window, so only the parsed objects and a window of a few hundred KB exist.

It returns exactly what `json.loads` returns for a valid document (same values, same key
order, the last of duplicate keys) or raises `StreamFallback` for *anything* else
(malformed or truncated JSON, NaN/Infinity, bytes that are not UTF-8, deep nesting, extra
data such as JSON Lines). It never builds an error message itself: the caller
(`jsonio.read_json_file`) then reads the file the ordinary way, which gives the usual
error with its line, column and byte offset (or parses it as JSON Lines). Must not import
Textual or Rich.
"""

from __future__ import annotations

import codecs
import json
import math
import os
import sys
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any, BinaryIO

from inspector.sources.files import open_regular

#: Bytes read per refill of the text window.
CHUNK_BYTES = 256 * 1024
#: Optional hook of the caller's thread (a context variable, None by default): called after
#: each chunk `load_streaming` reads, with (path, bytes read so far, file size). The TUI
#: shows a big file's load progress with it; an exception it raises (the TUI's cancel, a
#: BaseException) leaves the read as it is.
READ_PROGRESS: ContextVar[Callable[[Path, int, int], None] | None] = ContextVar(
    "read_progress", default=None
)
#: How many container levels are walked member by member (dump -> request -> messages).
WALK_DEPTH = 3
#: A value deeper down that is still incomplete with this much text buffered is walked
#: member by member too, and a string that big is decoded piece by piece: one huge tool
#: message never needs its JSON text, the window's copies and the value at once.
BIG_VALUE_CHARS = 1024 * 1024
#: A piece of a long string ends before the last backslash within this many characters
#: (an escape is at most 6, a surrogate pair 12): it then ends on a whole escape.
_ESCAPE_MARGIN = 16
#: How far back from the window's end a cut free of escapes is looked for before the
#: string is read the ordinary way (dense escapes).
_CUT_SEARCH_CHARS = 4096
_WHITESPACE = " \t\n\r"  # JSON's whitespace, nothing more


class StreamFallback(Exception):  # noqa: N818 - a signal, not an error shown to anyone
    """The streaming reader gives up; read the file whole to get the ordinary result."""


def _refuse_constant(name: str) -> Any:
    raise StreamFallback(f"{name} is not valid JSON")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if value in (math.inf, -math.inf):
        raise StreamFallback("a number overflows to infinity")
    return value


def _is_number(value: Any) -> bool:
    return type(value) is int or type(value) is float


def _cut_number(text: str, end: int) -> bool:
    """True when a number decoded up to `end` may be the head of a longer one split at the
    window's end: only an unfinished fraction or exponent (".", "e", "e+") follows it."""
    rest = text[end:]
    return len(rest) <= 2 and all(c in ".eE+-" for c in rest)


class _Window:
    """A text window over a binary file, refilled on demand."""

    def __init__(
        self, handle: BinaryIO, chunk_bytes: int, big_chars: int = BIG_VALUE_CHARS
    ) -> None:
        self.handle = handle
        self.chunk_bytes = chunk_bytes
        self.big_chars = big_chars
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self.text = ""
        self.pos = 0
        self.eof = False
        self.json = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)
        #: Called with the bytes read so far after each chunk (see `READ_PROGRESS`).
        self.progress: Callable[[int], None] | None = None
        self.read = 0

    def refill(self, at_least: int = 0) -> bool:
        """Append at least `at_least` (and one chunk of) more bytes; False at the end."""
        if self.eof:
            return False
        chunk = self.handle.read(max(at_least, self.chunk_bytes))
        if not chunk:
            self.eof = True
        if self.progress is not None:
            self.read += len(chunk)
            self.progress(self.read)
        try:
            decoded = self.decoder.decode(chunk, final=not chunk)
        except UnicodeDecodeError as error:
            raise StreamFallback("not UTF-8") from error
        self.text = self.text[self.pos :] + decoded
        self.pos = 0
        return True

    def peek(self) -> str:
        """The next non-whitespace character ('' at the end of the file)."""
        while True:
            text, pos = self.text, self.pos
            while pos < len(text) and text[pos] in _WHITESPACE:
                pos += 1
            self.pos = pos
            if pos < len(text):
                return text[pos]
            if not self.refill():
                return ""

    def take(self, expected: str) -> None:
        """Consume one structural character (after whitespace) or give up."""
        if self.peek() != expected:
            raise StreamFallback(f"expected {expected!r}")
        self.pos += 1

    def value(self) -> Any:
        """Decode one complete JSON value at the current position, reading more as needed."""
        opener = self.peek()
        while True:
            try:
                value, end = self.json.raw_decode(self.text, self.pos)
            except json.JSONDecodeError:
                if len(self.text) - self.pos >= self.big_chars:
                    if opener in ("{", "["):
                        return _walk(self, 1)
                    if opener == '"':
                        return self.long_string()
                # Incomplete (or bad) value: read as much again as is buffered, so a value
                # of size S costs O(S) re-parsing in total, not O(S^2 / chunk).
                if not self.refill(len(self.text) - self.pos):
                    raise StreamFallback("not valid JSON") from None
                continue
            except RecursionError:
                raise StreamFallback("nested too deeply") from None
            if not self.eof and (
                end == len(self.text) or (_is_number(value) and _cut_number(self.text, end))
            ):
                # a number may go on in the next chunk ("12" + "34", "0." + "5", "1e" + "9"):
                # decode it again with more text
                self.refill()
                continue
            self.pos = end
            return value

    def long_string(self) -> str:
        """The string at the current position decoded piece by piece, the window's text
        dropped as it is decoded. Each piece ends on a whole escape (`_safe_cut`), so the
        pieces joined are what decoding the string at once gives; where no such cut is
        found (dense escapes) the window grows until one is, or the string ends.

        Each piece is appended to one string held by a single local (`decoded +=`), which
        CPython's specialized in-place add grows in place (a `realloc`, for a big string an
        `mremap`): the decoded pieces and the joined string never exist side by side.
        Under a tracer or profiler that specialization is off and `+=` would copy the
        whole string per piece, so the pieces are then joined once at the end instead."""
        if sys.gettrace() is not None or sys.getprofile() is not None:
            return "".join(self._string_pieces())
        decoded = ""
        for piece in self._string_pieces():
            decoded += piece
        return decoded

    def _string_pieces(self) -> Iterator[str]:
        """The decoded pieces of the string at the current position (`long_string`)."""
        start = self.pos + 1
        while True:
            close = _closing_quote(self.text, start)
            if close >= 0:
                piece = self.text[start:close]
                self.pos = close + 1
                yield self._decode_piece(piece)
                return
            cut = _safe_cut(self.text, start, len(self.text))
            if cut > start:
                piece = self.text[start:cut]
                self.text, self.pos, start = self.text[cut:], 0, 0
                yield self._decode_piece(piece)
                more = self.refill()
            else:
                shift = self.pos
                more = self.refill(len(self.text) - self.pos)
                start -= shift
            if not more:
                raise StreamFallback("unterminated string")

    def _decode_piece(self, piece: str) -> str:
        try:
            text, _ = json.decoder.scanstring(piece + '"', 0, True)  # type: ignore[attr-defined]
        except (json.JSONDecodeError, ValueError):
            raise StreamFallback("not a valid string") from None
        return text  # type: ignore[no-any-return]


def _closing_quote(text: str, start: int) -> int:
    """Index of the quote that ends a string whose body starts at `start` (-1: not yet)."""
    at = text.find('"', start)
    while at >= 0:
        backslashes = 0
        while at - backslashes - 1 >= start and text[at - backslashes - 1] == "\\":
            backslashes += 1
        if backslashes % 2 == 0:
            return at
        at = text.find('"', at + 1)
    return -1


def _safe_cut(text: str, start: int, end: int) -> int:
    """A position at most `end` where a string body starting at `start` may be cut: the
    `_ESCAPE_MARGIN` characters before it hold no backslash (`start`: none found)."""
    cut = end - _ESCAPE_MARGIN
    lowest = max(start, end - _CUT_SEARCH_CHARS)
    while cut - _ESCAPE_MARGIN >= lowest:
        backslash = text.rfind("\\", cut - _ESCAPE_MARGIN, cut)
        if backslash < 0:
            return cut
        cut = backslash
    return start


def _walk(window: _Window, depth: int) -> Any:
    opener = window.peek()
    if depth <= 0 or opener not in ("{", "["):
        return window.value()
    window.pos += 1
    if opener == "{":
        obj: dict[str, Any] = {}
        if window.peek() == "}":
            window.pos += 1
            return obj
        while True:
            if window.peek() != '"':
                raise StreamFallback("expected a key")
            key = window.value()
            window.take(":")
            obj[key] = _walk(window, depth - 1)
            following = window.peek()
            window.pos += 1
            if following == "}":
                return obj
            if following != ",":
                raise StreamFallback("expected ',' or '}'")
    items: list[Any] = []
    if window.peek() == "]":
        window.pos += 1
        return items
    while True:
        items.append(_walk(window, depth - 1))
        following = window.peek()
        window.pos += 1
        if following == "]":
            return items
        if following != ",":
            raise StreamFallback("expected ',' or ']'")


def load_streaming(
    path: Path,
    depth: int = WALK_DEPTH,
    chunk_bytes: int = CHUNK_BYTES,
    big_chars: int = BIG_VALUE_CHARS,
) -> Any:
    """The value `json.loads(path.read_bytes())` gives, with far less peak memory.

    Raises `StreamFallback` for any input `json.loads` would refuse (and for input it
    accepts only as non-standard JSON: NaN, Infinity), and `OSError` when the file cannot
    be read. Nesting deeper than the C parser's recursion limit also falls back; the
    caller checks depth and infinite numbers on the value as for any parsed document.
    """
    hook = READ_PROGRESS.get()
    with open_regular(path) as handle:
        window = _Window(handle, max(chunk_bytes, 1), max(big_chars, 1))
        if hook is not None:
            size = os.fstat(handle.fileno()).st_size
            window.progress = lambda done: hook(path, done, size)
        try:
            value = _walk(window, depth)
        except RecursionError:
            raise StreamFallback("nested too deeply") from None
        except ValueError as error:  # a parse hook's own ValueError, never expected
            raise StreamFallback(str(error)) from None
        if window.peek() != "":
            raise StreamFallback("extra data after the JSON document")
        return value


def bounded_lines(handle: Any, max_line_bytes: int) -> Iterator[bytes | None]:
    """Lines of a binary file; None for a line over max_line_bytes (skipped, not held)."""
    while True:
        line = handle.readline(max_line_bytes + 1)
        if not line:
            return
        if len(line) > max_line_bytes and not line.endswith(b"\n"):
            while True:
                rest = handle.readline(max_line_bytes)
                if not rest or rest.endswith(b"\n"):
                    break
            yield None
            continue
        yield line
