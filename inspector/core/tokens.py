"""Token counting exactly as openJiuwen's forked compressors count.

Three modes: `tiktoken_cl100k` (openJiuwen's TiktokenCounter, cl100k_base), `len_div_4`
(no counter: character estimates) and `string_length` (the StringLengthCounter of
openJiuwen 0.1.18 and later: code points of the serialized text // 3). The encoder is
injected as a function `str -> int` so this module does no I/O; `inspector.encoding`
loads it. Without an encoder the tiktoken mode counts each piece as len(piece)//d, as
openJiuwen's counter does when its encoding fails to load; callers must say so
(`TokenCounter.exact` is False).

What differs between releases is passed in as two divisors (see `inspector.core.releases`):
`char_divisor` for every character fallback (the no-counter estimate, TiktokenCounter's own
fallback) and `tail_divisor` for the text after a usage baseline; 4 and 4 up to 0.1.17,
3 and 3 from 0.1.18.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Protocol

from inspector.core.messages import Message, Tool, is_mapping

TokenMode = Literal["tiktoken_cl100k", "len_div_4", "string_length"]
TOKEN_MODES: tuple[TokenMode, ...] = ("tiktoken_cl100k", "len_div_4", "string_length")
#: The StringLengthCounter's divisor (code points per token); fixed in every release that has it.
STRING_LENGTH_DIVISOR = 3

IMAGE_DATA_URL_PLACEHOLDER = "[image:data-url-omitted]"
IMAGE_BASE64_PLACEHOLDER = "[image:base64-omitted]"
_DATA_URL_RE = re.compile(r"data:image/[^;]+;base64,[A-Za-z0-9+/=]+", re.IGNORECASE)
_DIMENSIONS_RE = re.compile(r"^\s*(\d+)\s*[xX]\s*(\d+)\s*$")
_B64_MAX_CHARS = 87_360
_NO_DIMENSION_IMAGE_TOKENS = 1445
_LOW_DETAIL_IMAGE_TOKENS = 85
#: Added once per `count_messages` / `count_tools` call in tiktoken mode.
CALL_OVERHEAD = 3
#: Tool tuples a counter remembers the count of (`TokenCounter.count_tools`).
TOOL_TUPLES_KEPT = 256

EncodeLen = Callable[[str], int]


# --- sanitizing -------------------------------------------------------------------------


def sanitize_text(text: str) -> str:
    """Replace image data URLs in a string by a placeholder (openJiuwen's rule)."""
    # Every match contains ";" and "64," (no case variants), so most texts skip the
    # slower case-insensitive regex scan.
    if ";" not in text or "64," not in text:
        return text
    if text.startswith("data:image/") and ";base64," in text:
        return IMAGE_DATA_URL_PLACEHOLDER
    return _DATA_URL_RE.sub(IMAGE_DATA_URL_PLACEHOLDER, text)


def sanitize_value(value: Any) -> Any:
    """Recursively clean a JSON value of image payloads (strings, lists, dicts)."""
    if isinstance(value, str):
        return sanitize_text(value)
    if isinstance(value, list):
        return [sanitize_value(item) for item in value]
    if is_mapping(value):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if (
                key in ("data", "data_url", "url")
                and isinstance(item, str)
                and item.startswith("data:image/")
            ):
                out[key] = IMAGE_DATA_URL_PLACEHOLDER
            elif key == "source" and isinstance(item, Mapping):
                copy = dict(item)
                if copy.get("type") == "base64" and isinstance(copy.get("data"), str):
                    copy["data"] = IMAGE_BASE64_PLACEHOLDER
                out[key] = sanitize_value(copy)
            elif key == "image_url" and isinstance(item, Mapping):
                copy = dict(item)
                url = copy.get("url")
                if isinstance(url, str) and (url.startswith("data:image/") or "base64," in url):
                    copy["url"] = IMAGE_DATA_URL_PLACEHOLDER
                out[key] = sanitize_value(copy)
            else:
                out[key] = sanitize_value(item)
        return out
    return value


def sanitized_content(content: Any) -> str:
    """Content as the text openJiuwen measures: sanitized string, or JSON of cleaned blocks."""
    if isinstance(content, str):
        return sanitize_text(content)
    try:
        return json.dumps(sanitize_value(content), ensure_ascii=False)
    except (TypeError, ValueError):
        return str(content)


# --- images ---------------------------------------------------------------------------


def _lenient_b64decode(payload: str) -> bytes | None:
    """Decode like Python's non-validating b64decode; None on a padding error."""
    cleaned = re.sub(r"[^A-Za-z0-9+/=]", "", payload)
    try:
        return base64.b64decode(cleaned)
    except (binascii.Error, ValueError):
        return None


def image_dimensions_from_bytes(data: bytes) -> tuple[int, int] | None:
    """Width and height from a PNG, JPEG or GIF header, or None."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24 and data[12:16] == b"IHDR":
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        return int.from_bytes(data[6:8], "little"), int.from_bytes(data[8:10], "little")
    if data[:2] == b"\xff\xd8":
        pos = 2
        while pos + 4 <= len(data):
            if data[pos] != 0xFF:
                pos += 1
                continue
            marker = data[pos + 1]
            if marker == 0xFF:
                pos += 1
                continue
            if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
                pos += 2
                continue
            if marker == 0xD9:
                return None
            length = int.from_bytes(data[pos + 2 : pos + 4], "big")
            if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                if pos + 9 > len(data):
                    return None
                height = int.from_bytes(data[pos + 5 : pos + 7], "big")
                width = int.from_bytes(data[pos + 7 : pos + 9], "big")
                return width, height
            if length < 2:
                return None
            pos += 2 + length
    return None


def _positive_int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if value > 0 else None


def _block_dimensions(block: Mapping[str, Any]) -> tuple[int, int] | None:
    width, height = _positive_int(block.get("width")), _positive_int(block.get("height"))
    if width and height:
        return width, height
    dims = block.get("dimensions")
    if isinstance(dims, str):
        match = _DIMENSIONS_RE.match(dims)
        if match:
            w, h = int(match.group(1)), int(match.group(2))
            return (w, h) if w > 0 and h > 0 else None
    elif isinstance(dims, list | tuple) and len(dims) == 2:
        w2, h2 = _positive_int(dims[0]), _positive_int(dims[1])
        if w2 and h2:
            return w2, h2
    payload: str | None = None
    image_url = block.get("image_url")
    url = image_url.get("url") if isinstance(image_url, Mapping) else image_url
    if isinstance(url, str) and url.startswith("data:"):
        _, _, payload = url.partition("base64,")
        if "base64," not in url:
            payload = None
    if payload is None:
        source = block.get("source")
        if isinstance(source, Mapping) and isinstance(source.get("data"), str):
            payload = source["data"]
    if payload is None:
        return None
    data = _lenient_b64decode(payload[:_B64_MAX_CHARS])
    if not data:
        return None
    found = image_dimensions_from_bytes(data)
    if found and found[0] > 0 and found[1] > 0:
        return found
    return None


def image_tokens_for_size(width: int, height: int) -> int:
    """max(OpenAI tile price, Claude patch price) for an image of this size."""
    w, h = float(width), float(height)
    longest = max(w, h)
    if longest > 2048:
        scale = 2048 / longest
        w, h = w * scale, h * scale
    shortest = min(w, h)
    if shortest > 768:
        scale = 768 / shortest
        w, h = w * scale, h * scale
    openai = 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)
    claude = min(math.ceil(width / 28) * math.ceil(height / 28), 1568)
    return max(openai, claude)


def image_block_tokens(block: Mapping[str, Any], placeholder_tokens: int | None = None) -> int:
    """Tokens of one image block: env override, low detail, size, or the flat 1445."""
    if placeholder_tokens is not None and placeholder_tokens > 0:
        return placeholder_tokens
    image_url = block.get("image_url")
    detail: Any = None
    if isinstance(image_url, Mapping) and isinstance(image_url.get("detail"), str):
        detail = image_url["detail"]
    elif isinstance(block.get("detail"), str):
        detail = block["detail"]
    if isinstance(detail, str) and detail.lower() == "low":
        return _LOW_DETAIL_IMAGE_TOKENS
    dims = _block_dimensions(block)
    if dims is None:
        return _NO_DIMENSION_IMAGE_TOKENS
    return image_tokens_for_size(*dims)


def is_image_block(block: Any) -> bool:
    """True for a content block openJiuwen prices as an image."""
    return is_mapping(block) and (
        block.get("type") in ("image_url", "image") or "image_url" in block or "image" in block
    )


# --- the counter ---------------------------------------------------------------------------


class PieceStore(Protocol):
    """A persistent memo of piece counts (the on-disk token cache), injected by a caller.

    `lookup` returns a stored count or None; `save` records a newly computed one. Keys are
    the store's business; they must cover `counter.identity` and the message's role,
    content and (in tiktoken mode, for assistants) tool calls.
    """

    def lookup(self, counter: TokenCounter, message: Message) -> int | None:
        """A stored count, or None."""
        ...

    def save(self, counter: TokenCounter, message: Message, tokens: int) -> None:
        """Record a computed count."""
        ...


class FillStore(Protocol):
    """Optional extension of a `PieceStore`: many counts made known at once.

    `TokenCounter.pieces` hands a store that has `fill` the messages of a big context it
    does not know yet (at least `FILL_MIN` of them): the store looks them up in batches and
    counts the rest, on every core when that pays, and seeds the counter (`remember`).
    """

    def fill(self, counter: TokenCounter, messages: Sequence[Message]) -> None:
        """Make the counter know the piece count of every one of `messages`."""
        ...


#: A context with this many messages a counter does not know is counted through its
#: store's `fill` (`FillStore`) first: message by message, a first open of a
#: 20,000-message dump counted on one core.
FILL_MIN = 256


class TextStore(Protocol):
    """Optional extension of a `PieceStore`: counts of whole texts (the tool list's pieces).

    A store that has these two methods also keeps `count_tools`' texts, so a reopen whose
    counts are all stored never needs the encoder.
    """

    def lookup_text(self, counter: TokenCounter, text: str) -> int | None:
        """A stored count of `text` for this counter, or None."""
        ...

    def save_text(self, counter: TokenCounter, text: str, tokens: int) -> None:
        """Record a computed text count."""
        ...


class TokenCounter:
    """Counts messages and tools in one mode; caches per-message counts by content.

    `piece_tokens(m)` is what one message adds inside a list count (no call overhead);
    `count_messages(list)` is openJiuwen's list count; `message_tokens(m)` is the count
    of a one-message list (includes the +3 in tiktoken mode).
    """

    def __init__(
        self,
        mode: TokenMode,
        encode_len: EncodeLen | None = None,
        image_placeholder_tokens: int | None = None,
        *,
        char_divisor: int = 4,
        tail_divisor: int = 4,
    ) -> None:
        if char_divisor < 1 or tail_divisor < 1:
            raise ValueError("divisors must be >= 1")
        self.mode: TokenMode = mode
        self._encode_len = encode_len
        self._image_placeholder = image_placeholder_tokens
        #: Every character fallback divides by this (4 up to 0.1.17, 3 from 0.1.18).
        self.char_divisor = char_divisor
        #: The usage-baseline tail divides by this (4 up to 0.1.17, 3 from 0.1.18).
        self.tail_divisor = tail_divisor
        self._piece_cache: dict[tuple[Any, ...], int] = {}
        #: Optional persistent memo consulted on an in-memory miss (see `PieceStore`).
        self.store: PieceStore | None = None
        #: The same counter with other releases' divisors (`with_divisors`), made once.
        self._derived: dict[tuple[int, int], TokenCounter] = {}
        #: id of a tool tuple counted -> (that tuple, held so the id stays its own; count).
        self._tool_counts: dict[int, tuple[tuple[Tool, ...], int]] = {}
        #: The message tuple last counted whole, with its pieces (`pieces`), until read once.
        self._last_pieces: tuple[tuple[Message, ...], tuple[int, ...]] | None = None

    def with_divisors(self, char_divisor: int, tail_divisor: int) -> TokenCounter:
        """The same counter (mode, encoder, image pricing, persistent store) with another
        release's divisors; itself when they are already these."""
        if (char_divisor, tail_divisor) == (self.char_divisor, self.tail_divisor):
            return self
        known = self._derived.get((char_divisor, tail_divisor))
        if known is not None:
            return known
        other = TokenCounter(
            self.mode,
            self._encode_len,
            self._image_placeholder,
            char_divisor=char_divisor,
            tail_divisor=tail_divisor,
        )
        other.store = self.store
        # kept, so its counts (cached by content) serve every later context too
        self._derived[(char_divisor, tail_divisor)] = other
        return other

    @property
    def exact(self) -> bool:
        """False when tiktoken mode runs without an encoder (len//d of each piece)."""
        return self.mode != "tiktoken_cl100k" or self._encode_len is not None

    def text_tokens(self, text: str) -> int:
        """Tokens of one string in this mode (tiktoken: len//d without an encoder or on
        lone surrogates; string_length: len//3)."""
        if self.mode == "string_length":
            return len(text) // STRING_LENGTH_DIVISOR
        if self._encode_len is None:
            return len(text) // self.char_divisor
        try:
            return self._encode_len(text)
        except (UnicodeEncodeError, ValueError):
            return len(text) // self.char_divisor

    def usage_tail_tokens(self, message: Message) -> int:
        """What one message after the usage baseline adds: len(sanitized)//d, no minimum."""
        return usage_tail_tokens(message, self.tail_divisor)

    def _cache_key(self, message: Message) -> tuple[Any, ...]:
        content = message.content
        content_key: Any = content if isinstance(content, str) else _freeze(content)
        calls_key: Any = ()
        if self.mode != "len_div_4" and message.role == "assistant" and message.tool_calls:
            calls_key = tuple(
                (c.id, c.type, c.name, c.arguments, c.response_item_id) for c in message.tool_calls
            )
        return (message.role, content_key, calls_key)

    def piece_tokens(self, message: Message) -> int:
        """What this message adds to a list count (cached by role, content and tool calls)."""
        key = self._cache_key(message)
        cached = self._piece_cache.get(key)
        if cached is not None:
            return cached
        store = self.store
        stored = store.lookup(self, message) if store is not None else None
        if stored is not None:
            self._piece_cache[key] = stored
            return stored
        value = self.compute_piece(message)
        self._piece_cache[key] = value
        if store is not None:
            store.save(self, message, value)
        return value

    def compute_piece(self, message: Message) -> int:
        """`piece_tokens` without any cache (what worker processes run)."""
        if self.mode == "len_div_4":
            return max(len(sanitized_content(message.content)) // self.char_divisor, 1)
        if self.mode == "string_length":
            return string_length_piece(message)
        return self._tiktoken_piece(message)

    def remember(self, message: Message, tokens: int) -> None:
        """Seed the in-memory cache with a piece count known from elsewhere (a store, a worker)."""
        self._piece_cache[self._cache_key(message)] = tokens
        self._last_pieces = None  # a count it holds may be this one

    def pieces(self, messages: Sequence[Message]) -> list[int]:
        """`[piece_tokens(m) for m in messages]`, a big context's unknown messages counted
        through the store's `fill` first (`FillStore`). A tuple is remembered until it is
        asked for again (then forgotten, so no context is held long): a dump's rebuilt
        context is counted to infer its token mode, then priced, the same tuple both times."""
        last = self._last_pieces
        if last is not None and last[0] is messages:
            self._last_pieces = None
            return list(last[1])
        fill = getattr(self.store, "fill", None) if len(messages) >= FILL_MIN else None
        if fill is None:
            found = [self.piece_tokens(m) for m in messages]
        else:  # each message's key made once, for the unknown ones and for their counts
            known = self._piece_cache
            keys = [self._cache_key(m) for m in messages]
            unknown = [m for m, key in zip(messages, keys, strict=True) if key not in known]
            if len(unknown) >= FILL_MIN:
                fill(self, unknown)
            found = [
                known[key] if key in known else self.piece_tokens(m)
                for m, key in zip(messages, keys, strict=True)
            ]
        if type(messages) is tuple:
            self._last_pieces = (messages, tuple(found))
        return found

    def knows(self, message: Message) -> bool:
        """True when `piece_tokens(message)` would be answered from memory."""
        return self._cache_key(message) in self._piece_cache

    @property
    def image_placeholder_tokens(self) -> int | None:
        """The flat image price override this counter was made with (None: priced by size)."""
        return self._image_placeholder

    @property
    def identity(self) -> str:
        """What a piece count depends on besides the message: mode, encoder, image override."""
        encoder = "exact" if self.exact else f"len{self.char_divisor}-fallback"
        base = f"{self.mode}/{encoder}/{self._image_placeholder or 0}"
        # A piece count depends on the character divisor (len_div_4 always, tiktoken on its
        # fallback); only a non-default one is named, so 0.1.17's cache keys stay as they were.
        if self.char_divisor != 4 and self.mode != "string_length":
            return f"{base}/c{self.char_divisor}"
        return base

    def _tiktoken_piece(self, message: Message) -> int:
        content = message.content
        block_tokens = 0
        if isinstance(content, list):
            texts: list[str] = []
            for part in content:
                if is_image_block(part):
                    block_tokens += image_block_tokens(part, self._image_placeholder)
                elif is_mapping(part) and (part.get("type") == "text" or "text" in part):
                    texts.append(str(part.get("text") or ""))
                elif is_mapping(part):
                    dumped = json.dumps(
                        sanitize_value(part), ensure_ascii=False, separators=(",", ":")
                    )
                    block_tokens += self.text_tokens(dumped)
                elif isinstance(part, str):
                    texts.append(part)
            text = "\n".join(texts)
        else:
            text = sanitized_content(content)
        total = block_tokens + self.text_tokens(f"<|start|>{message.role}\n{text}<|end|>")
        if message.role == "assistant" and message.tool_calls:
            calls = [c.to_openai() for c in message.tool_calls]
            total += self.text_tokens(json.dumps(calls, ensure_ascii=False))
        return total

    @property
    def overhead(self) -> int:
        """The per-call constant of a non-empty list count in this mode."""
        return 0 if self.mode == "len_div_4" else CALL_OVERHEAD

    def message_tokens(self, message: Message) -> int:
        """Count of a list holding just this message."""
        return self.piece_tokens(message) + self.overhead

    def count_messages(self, messages: Sequence[Message]) -> int:
        """openJiuwen's count of a message list (0 for an empty list)."""
        if not messages:
            return 0
        return sum(self.pieces(messages)) + self.overhead

    def count_tools(self, tools: Sequence[Tool]) -> int:
        """openJiuwen's count of the tool list in this mode (0 for none); a tuple counted
        before is answered from memory (a folder's dumps share a few tool lists: the
        loader gives equal lists one tuple)."""
        if not tools:
            return 0
        if type(tools) is not tuple:
            return self.compute_tools(tools)
        known = self._tool_counts.get(id(tools))
        if known is not None and known[0] is tools:
            return known[1]
        value = self.compute_tools(tools)
        if len(self._tool_counts) >= TOOL_TUPLES_KEPT:
            self._tool_counts.clear()
        self._tool_counts[id(tools)] = (tools, value)
        return value

    def compute_tools(self, tools: Sequence[Tool]) -> int:
        """`count_tools` without its memory of tuples counted before."""
        if not tools:
            return 0
        if self.mode == "len_div_4":
            total = 0
            for tool in tools:
                dumped = json.dumps(tool.to_dict(), ensure_ascii=False, sort_keys=True)
                total += max(len(dumped) // self.char_divisor, 1)
            return total
        total = 0
        for index, tool in enumerate(tools):
            body = json.dumps(
                {
                    "name": tool.name,
                    "description": tool.description or "",
                    "parameters": tool.parameters,
                },
                ensure_ascii=False,
                separators=(",", ":"),
            )
            total += self._stored_text_tokens(
                f"<|start|>functions.{tool.name}:{index}\n{body}<|end|>"
            )
        return total + CALL_OVERHEAD

    def _stored_text_tokens(self, text: str) -> int:
        """`text_tokens`, answered from the store when it keeps texts (see `TextStore`)."""
        store = self.store
        lookup = getattr(store, "lookup_text", None)
        if lookup is not None:
            stored = lookup(self, text)
            if stored is not None:
                return int(stored)
        value = self.text_tokens(text)
        save = getattr(store, "save_text", None)
        if save is not None:
            save(self, text, value)
        return value


def usage_tail_tokens(message: Message, divisor: int = 4) -> int:
    """What one message after the usage baseline adds: len(sanitized)//divisor, no minimum."""
    return len(sanitized_content(message.content)) // divisor


def string_length_text(content: Any) -> str:
    """The text StringLengthCounter measures: sanitized string, or list parts joined by newlines.

    A string part is kept as is (not sanitized); a dict part gives its `text`, else its
    `type` (so an image block is the word `image_url`); other parts are skipped.
    """
    if isinstance(content, str):
        return sanitize_text(content)
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif is_mapping(part):
                parts.append(str(part.get("text") or part.get("type") or ""))
        return "\n".join(parts)
    return str(content or "")


def flat_tool_calls_json(message: Message) -> str:
    """`json.dumps` of the tool calls in openJiuwen's flat model form, nulls kept."""
    calls = [
        {
            "id": c.id,
            "type": c.type,
            "name": c.name,
            "arguments": c.arguments,
            "index": None,  # never serialized by openJiuwen, so never known here
            "response_item_id": c.response_item_id,
        }
        for c in message.tool_calls
    ]
    return json.dumps(calls, ensure_ascii=False)


def string_length_piece(message: Message) -> int:
    """What one message adds inside a StringLengthCounter list count (no +3)."""
    text = string_length_text(message.content)
    total = len(f"<|start|>{message.role}\n{text}<|end|>") // STRING_LENGTH_DIVISOR
    if message.role == "assistant" and message.tool_calls:
        total += len(flat_tool_calls_json(message)) // STRING_LENGTH_DIVISOR
    return total


def _freeze(value: Any) -> Any:
    """A hashable stand-in for a JSON value, for cache keys."""
    if isinstance(value, Mapping):
        return tuple((k, _freeze(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return ("__list__",) + tuple(_freeze(v) for v in value)
    return value
