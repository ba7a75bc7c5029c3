"""Read the block-YAML subset jiuwenswarm's `config.yaml` is written in (no PyYAML needed).

Handles block mappings and sequences by indentation, `- ` items (scalars or mappings),
inline flow lists (`[ "tool" ]`), quoted and plain scalars (null, booleans, integers,
floats), `# comments`; `${VAR:-default}` placeholders stay as written (the caller resolves them). Anything
else (anchors, multi-line strings, flow mappings) becomes the raw text of its line;
a line that cannot be placed raises `ValueError` with its line number.
Must not import anything outside the standard library.
"""

from __future__ import annotations

import json
import re
from typing import Any

_NUMBER = re.compile(r"[-+]?\d+(\.\d+)?([eE][-+]?\d+)?")


def _strip_comment(line: str) -> str:
    """The line without a trailing `# comment` outside quotes."""
    quote = ""
    for index, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1] in " \t"):
            return line[:index].rstrip()
    return line.rstrip()


def scalar(text: str) -> Any:
    """One YAML scalar: null, bool, int, float, quoted or plain string, flow list."""
    text = text.strip()
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        return [scalar(part) for part in _split_flow(inner)] if inner else []
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        body = text[1:-1]
        if text[0] == '"':
            try:
                return str(json.loads(text))
            except ValueError:
                return body
        return body.replace("''", "'")
    if _NUMBER.fullmatch(text):
        return float(text) if any(c in text for c in ".eE") else int(text)
    return text


def _split_flow(text: str) -> list[str]:
    parts: list[str] = []
    quote, start = "", 0
    for index, char in enumerate(text):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == ",":
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return [p for p in (part.strip() for part in parts) if p]


def _key_value(text: str) -> tuple[str, str] | None:
    """`key: value` split at the first colon followed by a space or the end; None if not."""
    quote = ""
    for index, char in enumerate(text):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"" and index == 0:
            quote = char
        elif char == ":" and (index + 1 == len(text) or text[index + 1] in " \t"):
            key = text[:index].strip()
            if len(key) >= 2 and key[0] == key[-1] and key[0] in "'\"":
                key = key[1:-1]
            return key, text[index + 1 :].strip()
    return None


def load(text: str) -> Any:
    """The document as dicts, lists and scalars."""
    lines: list[tuple[int, int, str]] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = _strip_comment(raw.replace("\t", "    "))
        if line.strip() and not line.lstrip().startswith(("---", "...")):
            lines.append((number, len(line) - len(line.lstrip()), line.strip()))
    value, end = _block(lines, 0, lines[0][1] if lines else 0)
    if end < len(lines):
        raise ValueError(f"line {lines[end][0]}: unexpected indentation")
    return value


def _block(lines: list[tuple[int, int, str]], start: int, indent: int) -> tuple[Any, int]:
    if start >= len(lines):
        return None, start
    if lines[start][2].startswith("- ") or lines[start][2] == "-":
        return _sequence(lines, start, indent)
    return _mapping(lines, start, indent)


def _mapping(lines: list[tuple[int, int, str]], index: int, indent: int) -> tuple[Any, int]:
    out: dict[str, Any] = {}
    while index < len(lines) and lines[index][1] == indent:
        number, _, text = lines[index]
        pair = _key_value(text)
        if pair is None:
            raise ValueError(f"line {number}: expected `key: value`")
        key, rest = pair
        index += 1
        if rest and rest not in ("|", ">", "|-", ">-"):
            out[key] = scalar(rest)
        elif index < len(lines) and lines[index][1] > indent:
            out[key], index = _block(lines, index, lines[index][1])
        elif index < len(lines) and lines[index][1] == indent and lines[index][2].startswith("-"):
            out[key], index = _sequence(lines, index, indent)
        else:
            out[key] = None
    return out, index


def _sequence(lines: list[tuple[int, int, str]], index: int, indent: int) -> tuple[Any, int]:
    out: list[Any] = []
    while index < len(lines) and lines[index][1] == indent and lines[index][2].startswith("-"):
        number, _, text = lines[index]
        rest = text[1:].strip()
        index += 1
        if not rest:
            if index < len(lines) and lines[index][1] > indent:
                item, index = _block(lines, index, lines[index][1])
                out.append(item)
            else:
                out.append(None)
            continue
        if _key_value(rest) is None or rest.startswith(("[", "'", '"')):
            out.append(scalar(rest))
            continue
        # a mapping item: its first key sits after "- ", the others align with it
        inner = indent + (len(text) - len(rest))
        synthetic = [(number, inner, rest)]
        while index < len(lines) and lines[index][1] >= inner:
            synthetic.append(lines[index])
            index += 1
        item, used = _mapping(synthetic, 0, inner)
        if used < len(synthetic):
            raise ValueError(f"line {synthetic[used][0]}: unexpected indentation")
        out.append(item)
    return out, index
