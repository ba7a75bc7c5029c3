"""Level 1 of the HybridCompressor: ToolOutputTruncator, shape-aware truncation of one tool output.

Branches are tried in this order (our choice; the spec lists the shapes, not an order):
`file_read` (the call's tool name is a read_file-like tool: decided by the tool, not by
sniffing), `json` (the whole text parses as a JSON object or array), `list` (more than
`list_min_lines` lines, nearly all short), `head_tail` (anything else). Outputs at or
under `max_tool_output_length` characters are left alone (branch `none`); non-text
content (block lists) is never cut (branch `not_text`). Every cut output is at most
`max_tool_output_length` characters long.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from inspector.core.hybrid_config import HybridConfig

Branch = Literal["none", "not_text", "file_read", "json", "list", "head_tail"]

#: Tool names treated as "file content from a read_file-like tool" (compared lower-cased).
READ_FILE_TOOLS: frozenset[str] = frozenset(
    {
        "read_file",
        "readfile",
        "read",
        "view",
        "view_file",
        "cat",
        "open_file",
        "file_read",
        "read_text_file",
        "get_file_contents",
        "str_replace_based_edit_tool",
    }
)


@dataclass(frozen=True, slots=True)
class Truncation:
    """What level 1 did to one tool output."""

    branch: Branch
    chars_before: int
    chars_after: int

    @property
    def chars_removed(self) -> int:
        """Characters the cut removed (markers counted as added text)."""
        return max(self.chars_before - self.chars_after, 0)

    @property
    def cut(self) -> bool:
        """True when the output was shortened."""
        return self.branch not in ("none", "not_text")


def is_read_file_tool(name: str | None) -> bool:
    """True for read_file-like tool names (a known name, or one saying read + file)."""
    if not name:
        return False
    low = name.lower()
    return low in READ_FILE_TOOLS or ("read" in low and "file" in low)


def truncate_output(
    content: object, tool_name: str | None, config: HybridConfig
) -> tuple[object, Truncation]:
    """Level 1 on one tool output: the (possibly) shortened content and what happened."""
    if not isinstance(content, str):
        return content, Truncation("not_text", 0, 0)
    cap = config.max_tool_output_length
    size = len(content)
    if size <= cap:
        return content, Truncation("none", size, size)
    if is_read_file_tool(tool_name):
        text, branch = _head_only(content, cap), "file_read"
    else:
        parsed = _parse_json(content)
        if parsed:
            text, branch = _truncate_json(content, cap, config), "json"
        elif _looks_like_list(content, config):
            text, branch = _truncate_list(content, cap, config), "list"
        else:
            text, branch = (
                _head_tail(content, cap, config.head_chars, config.tail_chars),
                "head_tail",
            )
    if len(text) > cap:  # a safety net: never return more than the cap
        text = _head_tail(text, cap, config.head_chars, config.tail_chars)
    return text, Truncation(branch, size, len(text))  # type: ignore[arg-type]


# --- branches ---------------------------------------------------------------------------


def _marker(omitted: int, what: str = "chars") -> str:
    return f"\n…[{omitted} {what} omitted by ToolOutputTruncator]…\n"


def _head_only(text: str, cap: int) -> str:
    probe = f"\n…[{len(text)} chars of file content omitted by ToolOutputTruncator]"
    keep = max(cap - len(probe), 0)
    omitted = len(text) - keep
    note = f"\n…[{omitted} chars of file content omitted by ToolOutputTruncator]"
    keep = max(cap - len(note), 0)
    return text[:keep] + note


def _head_tail(text: str, cap: int, head_chars: int, tail_chars: int) -> str:
    probe = _marker(len(text))
    room = max(cap - len(probe), 0)
    head, tail = head_chars, tail_chars
    if head + tail > room:  # a cap smaller than the defaults scales both parts
        total = max(head + tail, 1)
        head, tail = room * head // total, room * tail // total
    omitted = len(text) - head - tail
    return text[:head] + _marker(omitted) + (text[-tail:] if tail else "")


def _parse_json(text: str) -> bool:
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return False
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict | list)


def _looks_like_list(text: str, config: HybridConfig) -> bool:
    lines = text.split("\n")
    if len(lines) <= config.list_min_lines:
        return False
    short = sum(1 for line in lines if len(line) <= config.list_short_line_chars)
    return short >= 0.9 * len(lines)


def _truncate_list(text: str, cap: int, config: HybridConfig) -> str:
    lines = text.split("\n")
    head, tail = config.list_head_lines, config.list_tail_lines
    omitted = len(lines) - head - tail
    kept_tail = lines[-tail:] if tail else []
    out = "\n".join(lines[:head]) + _marker(omitted, "lines") + "\n".join(kept_tail)
    if len(out) > cap:
        out = _head_tail(text, cap, config.head_chars, config.tail_chars)
    return out


# --- JSON with a closed structure -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Comma:
    pos: int
    container: int  # position of the innermost open bracket
    kind: str  # "[" or "{"


def _scan(text: str) -> tuple[list[_Comma], list[tuple[int, list[int]]]]:
    """Commas outside strings with their container, and safe cut points with the open stack."""
    commas: list[_Comma] = []
    safe: list[tuple[int, list[int]]] = []  # (cut position, stack of open bracket positions)
    stack: list[int] = []
    in_string = escaped = False
    for pos, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char in "[{":
            stack.append(pos)
            safe.append((pos + 1, list(stack)))
        elif char in "]}":
            if stack:
                stack.pop()
        elif char == "," and stack:
            commas.append(_Comma(pos, stack[-1], text[stack[-1]]))
            safe.append((pos, list(stack)))
    return commas, safe


def _truncate_json(text: str, cap: int, config: HybridConfig) -> str:
    """Head and the last `json_tail_chars` characters, brackets balanced.

    Preferred: cut the head and the tail at commas of the same container and put a marker
    element between them, so the result is still valid JSON. Otherwise: the head cut at a
    safe point and closed with the brackets it opened, then a marker, then the raw tail.
    """
    text = text.strip()
    commas, safe = _scan(text)
    tail_start_min = len(text) - config.json_tail_chars
    first_tail_comma: dict[int, _Comma] = {}
    for comma in commas:
        if comma.pos >= tail_start_min and comma.container not in first_tail_comma:
            first_tail_comma[comma.container] = comma
    for comma in reversed(commas):
        tail = first_tail_comma.get(comma.container)
        if tail is None or tail.pos <= comma.pos:
            continue
        omitted = tail.pos - comma.pos
        element = f'"…[{omitted} chars omitted by ToolOutputTruncator]…"'
        if comma.kind == "{":
            element = f'"…truncated…": {element}'
        if comma.pos + 2 + len(element) + len(text) - tail.pos > cap:
            continue
        return text[: comma.pos] + ", " + element + text[tail.pos :]
    tail_text = text[-config.json_tail_chars :] if config.json_tail_chars else ""
    probe = _marker(len(text))
    for cut, stack in reversed(safe):
        closers = "".join("]" if text[p] == "[" else "}" for p in reversed(stack))
        if cut + len(closers) + len(probe) + len(tail_text) <= cap:
            head = text[:cut] + closers
            return head + _marker(len(text) - cut - len(tail_text)) + tail_text
    return _head_tail(text, cap, config.head_chars, config.tail_chars)
