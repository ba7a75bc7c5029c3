"""The facts rules of `inspector.core.hybrid_facts` written the straightforward way (whole-text
regex scans and `ast.literal_eval`, as the module did before its line memo): the reference
the fast scans are checked against in `tests/test_facts_*.py`. Imports only the patterns.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping, Sequence

from inspector.core import hybrid_facts as hf
from inspector.core.hybrid_truncate import is_read_file_tool
from inspector.core.messages import Message


def _flatten(value: object, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, Mapping):
        for item in value.values():
            _flatten(item, out)
    elif isinstance(value, list | tuple):
        for item in value:
            _flatten(item, out)
    elif value is not None and not isinstance(value, bool):
        out.append(str(value))


def tool_output_text(text: str) -> str:
    """The values of a `success=… data=… error=…` output, read with `ast.literal_eval`."""
    match = hf._TOOL_OUTPUT_RE.match(text)
    if match is None:
        return text
    try:
        data = ast.literal_eval(match.group(1).strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return text
    parts: list[str] = []
    _flatten(data, parts)
    error = match.group(2).strip()
    if error and error != "None":
        parts.append(error)
    return "\n".join(parts)


def message_text(message: Message) -> str:
    """All text of a message, tool output read by the reference `tool_output_text`."""
    parts: list[str] = []
    content = message.content
    if isinstance(content, str):
        parts.append(tool_output_text(content) if message.role == "tool" else content)
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
                parts.append(block["text"])
    for call in message.tool_calls:
        parts.append(f"{call.name} {call.arguments}")
    return "\n".join(parts)


def find_paths(text: str) -> dict[str, str]:
    """Every `_PATH_RE` match of the whole text, key -> longest."""
    found: dict[str, str] = {}
    for match in hf._PATH_RE.finditer(text.replace("\\n", "\n")):
        raw = match.group(0)
        key = hf.path_key(raw)
        if len(raw) > len(found.get(key, "")):
            found[key] = raw
    return found


def find_identifiers(text: str) -> set[str]:
    """Every `_IDENT_RE` match of the whole text with its paths blanked."""
    cleaned = hf._PATH_RE.sub(" ", text.replace("\\n", "\n"))
    return {m.group(0) for m in hf._IDENT_RE.finditer(cleaned) if len(m.group(0)) >= 4}


def find_errors(text: str) -> list[str]:
    """Every line of the text holding an `_ERROR_RE` match, noise aside."""
    low = text.lower()
    if not any(word in low for word in hf._ERROR_WORDS):
        return []
    text = text.replace("\\n", "\n")
    out: dict[str, None] = {}
    line_end = -1
    for match in hf._ERROR_RE.finditer(text):
        if match.start() <= line_end:
            continue
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end())
        line_end = end if end >= 0 else len(text)
        line = text[start:line_end]
        if not hf._ERROR_RE.search(hf._ERROR_NOISE_RE.sub("", line)):
            continue
        collapsed = hf._SPACE_RE.sub(" ", line).strip()[: hf._ERROR_LINE_CHARS]
        if collapsed:
            out.setdefault(collapsed)
    return list(out)


def extract_facts(messages: Sequence[Message]) -> hf.Facts:
    """The facts of the messages, one whole-text scan per rule and message."""
    names: dict[str, str] = {}
    for message in messages:
        for call in message.tool_calls:
            if call.id:
                names[call.id] = call.name
    structural = set(names.values())
    paths: dict[str, str] = {}
    identifiers: set[str] = set()
    errors: dict[str, None] = {}
    for message in messages:
        text = message_text(message)
        for key, raw in find_paths(text).items():
            if len(raw) > len(paths.get(key, "")):
                paths[key] = raw
        identifiers |= find_identifiers(text)
        structural |= set(hf._KEY_RE.findall(text))
        for call in message.tool_calls:
            structural |= set(hf._KEY_RE.findall(call.arguments))
        is_file_read = message.role == "tool" and is_read_file_tool(
            names.get(message.tool_call_id or "")
        )
        if message.role != "system" and not is_file_read:
            for line in find_errors(text):
                errors.setdefault(line)
    return hf.Facts(paths, frozenset(identifiers - structural), tuple(errors))


def losses_between(before: hf.Facts, after_messages: Iterable[Message]) -> hf.Losses:
    """What of `before` the whole text after (and its collapsed form) does not hold."""
    after_text = "\n".join(message_text(m) for m in after_messages).replace("\\n", "\n")
    collapsed = hf._SPACE_RE.sub(" ", after_text)
    lost_paths = sorted(raw for key, raw in before.paths.items() if key not in after_text)
    lost_idents = sorted(i for i in before.identifiers if i not in after_text)
    lost_errors = [e for e in before.errors if e not in collapsed]
    return hf.Losses(tuple(lost_paths), tuple(lost_idents), tuple(lost_errors), before.counts)
