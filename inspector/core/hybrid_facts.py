"""Facts worth keeping in a context: file paths, identifiers and error messages.

Used by the HybridCompressor's rule summary (files touched, errors seen) and by the
strategy comparison (what each strategy loses: present before, absent after). The rules
are heuristics, documented here:

* a **file path** has a slash and ends in an extension starting with a letter
  (`src/tinycal/parse.py`, `/workspace/x/y.kt`), or is a bare name with a known source
  extension (`parse.py`). Its key is the last two components (`tinycal/parse.py`); a path
  survives when its key appears in the text after.
* tool outputs in openJiuwen's `success=… data={…} error=…` form are read as their values
  (the Python repr parsed with `ast.literal_eval`), so escapes do not glue lines together.
* an **identifier** is snake_case with an underscore (`_parse_tz`, `helper_parse_2`),
  camelCase, or PascalCase with two humps (`AssertionError`); parts of file paths, tool
  names and dict keys of tool traffic (`file_path`, `exit_code`) are not identifiers. It survives when it appears anywhere in the text after.
* an **error message** is a line (literal `\\n` in tool output counts as a line break) with
  Traceback/Error/Exception/failed/fatal/panic, from user or assistant text or from a
  tool result other than a file read (source code read from a file is not an error seen).
  `error=None` and empty `stderr` do not count. Lines are whitespace-collapsed and cut to
  160 characters; one survives when it appears in the (collapsed) text after.

Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from inspector.core.hybrid_truncate import is_read_file_tool
from inspector.core.messages import Message

_EXTENSIONS = (
    "py|pyi|js|jsx|mjs|ts|tsx|kt|kts|java|go|rs|rb|php|c|h|cc|cpp|hpp|cs|swift|m|scala|md|rst|"
    "txt|json|jsonl|yaml|yml|toml|ini|cfg|conf|sh|bash|html|css|xml|gradle|lock|sql|csv|ipynb"
)
_PATH_RE = re.compile(
    r"(?<![\w/.\-])(?:\.{0,2}/)?(?:[\w.\-]+/)+[\w.\-]*[A-Za-z0-9_]\.[A-Za-z][A-Za-z0-9]{0,7}\b"
    rf"|(?<![\w/.\-])[\w\-]+\.(?:{_EXTENSIONS})\b"
)
_IDENT_RE = re.compile(
    r"(?<![\w.])(?:[A-Za-z_][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+"
    r"|[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+"
    r"|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+)(?![\w])"
)
_ERROR_RE = re.compile(
    r"(?i:\b(?:traceback|errors?|exception|failed|failure|fatal|panic)\b)|\b[A-Z]\w*?(?:Error|Exception)\b"
)
_ERROR_NOISE_RE = re.compile(
    r"error=None|'stderr': ''|\"stderr\": \"\"|\b0 (?:errors?|failed|failures?)\b|\berrors?=0\b",
    re.IGNORECASE,
)
_TOOL_OUTPUT_RE = re.compile(r"^success=(?:True|False) data=(.*) error=(.*)$", re.DOTALL)
_KEY_RE = re.compile(r"['\"]([A-Za-z_]\w*)['\"]\s*:")
_ERROR_WORDS = ("traceback", "error", "exception", "fail", "fatal", "panic")
_SPACE_RE = re.compile(r"\s+")
_ERROR_LINE_CHARS = 160


#: How often (in messages) `extract_facts` asks whether to stop and reports progress.
CHECK_EVERY = 200


@dataclass(frozen=True, slots=True)
class Facts:
    """Paths (key -> longest form seen), identifiers and error lines found in some messages."""

    paths: Mapping[str, str]
    identifiers: frozenset[str]
    errors: tuple[str, ...]

    @property
    def counts(self) -> dict[str, int]:
        """How many of each kind."""
        return {
            "file_paths": len(self.paths),
            "identifiers": len(self.identifiers),
            "error_messages": len(self.errors),
        }


@dataclass(frozen=True, slots=True)
class Losses:
    """Facts present before and absent after, sorted for stable output."""

    file_paths: tuple[str, ...]
    identifiers: tuple[str, ...]
    error_messages: tuple[str, ...]
    before: Mapping[str, int]

    @property
    def counts(self) -> dict[str, int]:
        """How many of each kind were lost."""
        return {
            "file_paths": len(self.file_paths),
            "identifiers": len(self.identifiers),
            "error_messages": len(self.error_messages),
        }

    def to_dict(self, limit: int | None = None) -> dict[str, object]:
        """JSON form: counts, counts before, and the lost items (at most `limit` each)."""
        return {
            "counts": self.counts,
            "before": dict(self.before),
            "file_paths": list(self.file_paths[:limit]),
            "identifiers": list(self.identifiers[:limit]),
            "error_messages": list(self.error_messages[:limit]),
        }


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
    """The values of an openJiuwen `success=… data={…} error=…` tool output, one per line.

    Python-repr escapes (`\\n`, quotes) would otherwise glue lines and keys together; any
    other text is returned unchanged.
    """
    match = _TOOL_OUTPUT_RE.match(text)
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
    """All text of a message: content strings and text blocks, plus tool-call names and arguments."""
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


def path_key(path: str) -> str:
    """The last two components of a path (its identity for survival checks)."""
    parts = [p for p in path.split("/") if p and p not in (".", "..")]
    return "/".join(parts[-2:]) if parts else path


def find_paths(text: str) -> dict[str, str]:
    """File paths in a text, key -> longest form seen."""
    found: dict[str, str] = {}
    for match in _PATH_RE.finditer(text.replace("\\n", "\n")):
        raw = match.group(0)
        key = path_key(raw)
        if len(raw) > len(found.get(key, "")):
            found[key] = raw
    return found


def find_identifiers(text: str) -> set[str]:
    """Code identifiers in a text, parts of file paths excluded."""
    cleaned = _PATH_RE.sub(" ", text.replace("\\n", "\n"))
    return {m.group(0) for m in _IDENT_RE.finditer(cleaned) if len(m.group(0)) >= 4}


def find_errors(text: str) -> list[str]:
    """Error lines in a text, collapsed and cut, in order, without repeats."""
    low = text.lower()
    if not any(word in low for word in _ERROR_WORDS):
        return []  # a cheap test first: most outputs have no error word at all
    text = text.replace("\\n", "\n")
    out: dict[str, None] = {}
    line_end = -1
    for match in _ERROR_RE.finditer(text):  # only lines with a candidate are looked at
        if match.start() <= line_end:
            continue  # this line was already looked at
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end())
        line_end = end if end >= 0 else len(text)
        line = text[start:line_end]
        if not _ERROR_RE.search(_ERROR_NOISE_RE.sub("", line)):
            continue
        collapsed = _SPACE_RE.sub(" ", line).strip()[:_ERROR_LINE_CHARS]
        if collapsed:
            out.setdefault(collapsed)
    return list(out)


def _call_names(messages: Sequence[Message]) -> dict[str, str]:
    names: dict[str, str] = {}
    for message in messages:
        for call in message.tool_calls:
            if call.id:
                names[call.id] = call.name
    return names


class FactsStopped(Exception):
    """`extract_facts` was asked to stop (its `stop` returned True) before it finished."""


def extract_facts(
    messages: Sequence[Message],
    stop: Callable[[], bool] | None = None,
    done: Callable[[int], None] | None = None,
) -> Facts:
    """The paths, identifiers and error lines of these messages. `stop` is asked every
    `CHECK_EVERY` messages (True raises `FactsStopped`), `done` is told how many are read."""
    names = _call_names(messages)
    structural = set(names.values())
    paths: dict[str, str] = {}
    identifiers: set[str] = set()
    errors: dict[str, None] = {}
    for index, message in enumerate(messages):
        if index % CHECK_EVERY == 0 and index:
            if stop is not None and stop():
                raise FactsStopped
            if done is not None:
                done(index)
        text = message_text(message)
        for key, raw in find_paths(text).items():
            if len(raw) > len(paths.get(key, "")):
                paths[key] = raw
        identifiers |= find_identifiers(text)
        structural |= set(_KEY_RE.findall(text))
        for call in message.tool_calls:
            structural |= set(_KEY_RE.findall(call.arguments))
        is_file_read = message.role == "tool" and is_read_file_tool(
            names.get(message.tool_call_id or "")
        )
        if message.role != "system" and not is_file_read:
            for line in find_errors(text):
                errors.setdefault(line)
    # tool names and dict keys are the structure of tool traffic, not facts of the task
    return Facts(paths, frozenset(identifiers - structural), tuple(errors))


def losses_between(before: Facts, after_messages: Iterable[Message]) -> Losses:
    """What of `before` does not appear in the text of `after_messages`."""
    after_text = "\n".join(message_text(m) for m in after_messages).replace("\\n", "\n")
    collapsed = _SPACE_RE.sub(" ", after_text)
    lost_paths = sorted(raw for key, raw in before.paths.items() if key not in after_text)
    lost_idents = sorted(i for i in before.identifiers if i not in after_text)
    lost_errors = [e for e in before.errors if e not in collapsed]
    return Losses(tuple(lost_paths), tuple(lost_idents), tuple(lost_errors), before.counts)
