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

How it stays fast and finds exactly what these rules find: every rule looks at one line
at a time (a path, an identifier or a dict key holds no line break, and the look-arounds
treat a line break as the text's edge), so a text is split into lines and each distinct
line is scanned once and kept (`_LineFacts`, in a bounded memo shared by every call), with
cheap `in` tests deciding which patterns a line needs. The two rules that reach past one
line are kept whole: a text is looked at for errors only when one of its lines holds an
error word, and a dict key followed on a later line by its colon sends the text through
the key pattern whole. A tool output that is a plain repr (strings, integers, True, False,
None, dicts and lists, as Python prints them) is read by `_repr_value`, which gives what
`ast.literal_eval` gives and leaves anything else to it. `losses_between` looks facts up in
the distinct lines of the text after (see `_AfterIndex`).

Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import ast
import bisect
import itertools
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

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


#: A Python string literal as `repr` writes it (quote `{q}`): no line break, NUL or lone
#: surrogate (`ast.literal_eval` refuses those), only the escapes `unicode_escape` reads alike.
_REPR_BODY = (
    r"[^{q}\\\n\r\x00\ud800-\udfff]*+"
    r"(?:\\(?:[\\'\"abfnrtv]|x[0-9A-Fa-f]{{2}}|u[0-9A-Fa-f]{{4}}|U[0-9A-Fa-f]{{8}})"
    r"[^{q}\\\n\r\x00\ud800-\udfff]*+)*+"
)
_REPR_STRINGS = {q: re.compile(q + "(" + _REPR_BODY.format(q=q) + ")" + q) for q in "'\""}
_REPR_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")
_REPR_WORDS = (("True", True), ("False", False), ("None", None))
_REPR_DEPTH = 40


class _NotRepr(Exception):
    """The text is not a plain repr `_repr_value` reads (`ast.literal_eval` decides then)."""


def _repr_container(text: str, at: int, depth: int) -> tuple[object, int]:
    """A dict (string keys) or list at `at` (its opening bracket), and where it ends."""
    close = "}" if text[at] == "{" else "]"
    out_dict: dict[object, object] = {}
    out_list: list[object] = []
    at += 1
    if text.startswith(close, at):
        return (out_dict if close == "}" else out_list), at + 1
    while True:
        value, at = _repr_value(text, at, depth + 1)
        if close == "}":
            if not isinstance(value, str) or not text.startswith(": ", at):
                raise _NotRepr
            out_dict[value], at = _repr_value(text, at + 2, depth + 1)
        else:
            out_list.append(value)
        if text.startswith(", ", at):
            at += 2
        elif text.startswith(close, at):
            return (out_dict if close == "}" else out_list), at + 1
        else:
            raise _NotRepr


def _repr_string_end(text: str, at: int) -> int:
    """Where the string literal opening at `at` closes (its quote not escaped), or -1."""
    quote = text[at]
    pos = at + 1
    while True:
        end = text.find(quote, pos)
        if end < 0:
            return -1
        start = end
        while text[start - 1] == "\\":
            start -= 1
        if (end - start) % 2 == 0:
            return end
        pos = end + 1


def _repr_string(text: str, at: int) -> tuple[str, int]:
    """The string literal at `at` and where it ends. Most tool output has no escape but
    `\\n` and quotes: read with `str` methods; any other goes through `_REPR_STRINGS`."""
    quote = text[at]
    end = _repr_string_end(text, at)
    if end < 0:
        raise _NotRepr
    body = text[at + 1 : end]
    if "\n" in body or "\r" in body or "\x00" in body:
        raise _NotRepr  # a line break or NUL inside a literal: `literal_eval` refuses it
    if not body.isascii():
        try:
            body.encode("utf-16-le")  # a lone surrogate: `literal_eval` cannot encode it
        except UnicodeEncodeError:
            raise _NotRepr from None
    if "\\" not in body:
        return body, end + 1
    value = body.replace("\\n", "\n").replace("\\" + quote, quote)
    if "\\" not in value:  # each backslash was an `\n` or a quote: no other escape, no pair
        return value, end + 1
    match = _REPR_STRINGS[quote].match(text, at)
    if match is None:
        raise _NotRepr
    try:  # escapes of what latin-1 cannot hold are read back as the same character
        value = match.group(1).encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError:
        raise _NotRepr from None
    return value, match.end()


def _repr_value(text: str, at: int, depth: int = 0) -> tuple[object, int]:
    """The value of the plain repr starting at `at`, and where it ends (`_NotRepr` if none)."""
    if depth > _REPR_DEPTH:
        raise _NotRepr
    first = text[at : at + 1]
    if first in ("'", '"'):
        return _repr_string(text, at)
    if first in ("{", "["):
        return _repr_container(text, at, depth)
    for word, constant in _REPR_WORDS:
        if text.startswith(word, at):
            return constant, at + len(word)
    number = _REPR_INT.match(text, at)
    if number is None:
        raise _NotRepr
    return int(number.group(0)), number.end()


def literal_value(source: str) -> object:
    """`ast.literal_eval(source)`, read directly when `source` is a plain repr (fast on the
    megabytes of tool output a big context holds); raises what `literal_eval` raises."""
    try:
        value, end = _repr_value(source, 0)
        if end == len(source):
            return value
    except _NotRepr:
        pass
    return ast.literal_eval(source)


def tool_output_text(text: str) -> str:
    """The values of an openJiuwen `success=… data={…} error=…` tool output, one per line.

    Python-repr escapes (`\\n`, quotes) would otherwise glue lines and keys together; any
    other text is returned unchanged.
    """
    match = _TOOL_OUTPUT_RE.match(text)
    if match is None:
        return text
    try:
        data = literal_value(match.group(1).strip())
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


#: Characters other than A-Z and a-z that `_ERROR_RE`'s case-blind words match (İ, ı, ſ, K):
#: a line without any of them holds an error word in `str.lower()` form whenever it matches.
_CASE_BLIND_LETTERS = "\u0130\u0131\u017f\u212a"


@dataclass(frozen=True, slots=True, eq=False)
class _LineFacts:
    """What one line holds, as the whole-text scans would find it there (compared and
    hashed by identity: the memo gives one object per line text)."""

    #: (key, raw) of each path, in order.
    paths: tuple[tuple[str, str], ...]
    identifiers: frozenset[str]
    #: Dict keys of tool traffic (`_KEY_RE`) the line holds whole.
    keys: frozenset[str]
    #: The lowered line holds one of `_ERROR_WORDS` (the text is then looked at for errors).
    error_word: bool
    #: The line's error message, when the text is looked at for errors.
    error: str | None
    #: The line starts (after blanks) with a colon: a key may end a line before it.
    colon_first: bool


_NO_FACTS = _LineFacts((), frozenset(), frozenset(), False, None, False)


def _error_line(line: str) -> str | None:
    """The line collapsed and cut, when it is an error line (noise such as `error=None` aside)."""
    if _ERROR_RE.search(line) is None or _ERROR_RE.search(_ERROR_NOISE_RE.sub("", line)) is None:
        return None
    return _SPACE_RE.sub(" ", line).strip()[:_ERROR_LINE_CHARS] or None


def _scan_line(line: str) -> _LineFacts:
    """Every fact of one line. Each pattern runs only where an `in` test says it can match:
    a path holds a dot, an identifier an underscore or an upper-case letter, a key a quote
    and a colon."""
    paths: tuple[tuple[str, str], ...] = ()
    cleaned = line
    if "." in line:
        raws = _PATH_RE.findall(line)
        if raws:
            paths = tuple((path_key(raw), raw) for raw in raws)
            cleaned = _PATH_RE.sub(" ", line)
    identifiers: frozenset[str] = frozenset()
    if "_" in cleaned or not cleaned.islower():
        identifiers = frozenset(name for name in _IDENT_RE.findall(cleaned) if len(name) >= 4)
    keys: frozenset[str] = frozenset()
    if ":" in line and ("'" in line or '"' in line):
        keys = frozenset(_KEY_RE.findall(line))
    low = line.lower()
    word = any(w in low for w in _ERROR_WORDS)
    error = None
    if word or any(c in line for c in _CASE_BLIND_LETTERS):
        error = _error_line(line)
    colon = line.lstrip().startswith(":")
    if not (paths or identifiers or keys or word or error or colon):
        return _NO_FACTS
    return _LineFacts(paths, identifiers, keys, word, error, colon)


class _LineMemo:
    """`_scan_line` by line text, shared by every call (a line's facts never change):
    cleared when the lines it keeps pass `MAX_CHARS` characters."""

    MAX_CHARS = 16_000_000

    def __init__(self) -> None:
        self.facts: dict[str, _LineFacts] = {}
        self.chars = 0

    def scan(self, line: str) -> _LineFacts:
        """The facts of a line not in the memo yet, kept."""
        facts = _scan_line(line)
        if self.chars + len(line) > self.MAX_CHARS:
            self.facts.clear()
            self.chars = 0
        self.facts[line] = facts
        self.chars += len(line)
        return facts

    def get(self, line: str) -> _LineFacts:
        """The facts of a line, from the memo or scanned."""
        facts = self.facts.get(line)
        return facts if facts is not None else self.scan(line)


_MEMO = _LineMemo()
_ERROR_OF = operator.attrgetter("error")


def _lines(text: str) -> list[str]:
    """The lines of a text, a literal `\\n` (tool output) counting as a line break."""
    return (text.replace("\\n", "\n") if "\\n" in text else text).split("\n")


class _Scan:
    """Facts of texts, merged in text order. A text's lines become their memo entries (one
    object per distinct line), deduplicated in order: a line seen again adds nothing, and a
    line merged from an earlier text only counts for this text's error and key rules."""

    __slots__ = (
        "paths",
        "identifiers",
        "keys",
        "errors",
        "_merged",
        "_worded",
        "_colons",
        "_failing",
    )

    def __init__(self) -> None:
        self.paths: dict[str, str] = {}
        self.identifiers: set[str] = set()
        self.keys: set[str] = set()
        self.errors: dict[str, None] = {}
        self._merged: set[_LineFacts] = set()
        self._worded: set[_LineFacts] = set()
        self._colons: set[_LineFacts] = set()
        self._failing: set[_LineFacts] = set()

    def _merge(self, facts: _LineFacts) -> None:
        paths = self.paths
        for key, raw in facts.paths:
            if len(raw) > len(paths.get(key, "")):
                paths[key] = raw
        self.identifiers |= facts.identifiers
        self.keys |= facts.keys
        if facts.error_word:
            self._worded.add(facts)
        if facts.colon_first:
            self._colons.add(facts)
        if facts.error is not None:
            self._failing.add(facts)

    def add(self, text: str, errors: bool) -> None:
        """Add the facts of `text` (its error lines only when `errors`)."""
        lines = _lines(text)
        known = dict.fromkeys(map(_MEMO.facts.get, lines))
        if None in known:
            for line in set(lines).difference(_MEMO.facts):
                _MEMO.scan(line)
            known = dict.fromkeys(map(_MEMO.get, lines))
        seen = cast("dict[_LineFacts, None]", known)
        new = list(itertools.filterfalse(self._merged.__contains__, seen))
        if new:
            for facts in new:
                self._merge(facts)
            self._merged.update(new)
        if not self._colons.isdisjoint(seen):  # a key may end a line, its colon start a later one
            self.keys.update(_KEY_RE.findall(text))
        if errors and not self._worded.isdisjoint(seen):
            failing = filter(self._failing.__contains__, seen)
            self.errors.update(dict.fromkeys(map(_ERROR_OF, failing)))


def find_paths(text: str) -> dict[str, str]:
    """File paths in a text, key -> longest form seen."""
    scan = _Scan()
    scan.add(text, errors=False)
    return scan.paths


def find_identifiers(text: str) -> set[str]:
    """Code identifiers in a text, parts of file paths excluded."""
    scan = _Scan()
    scan.add(text, errors=False)
    return scan.identifiers


def find_errors(text: str) -> list[str]:
    """Error lines in a text, collapsed and cut, in order, without repeats."""
    scan = _Scan()
    scan.add(text, errors=True)
    return list(scan.errors)


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
    scan = _Scan()
    for index, message in enumerate(messages):
        if index % CHECK_EVERY == 0 and index:
            if stop is not None and stop():
                raise FactsStopped
            if done is not None:
                done(index)
        is_file_read = message.role == "tool" and is_read_file_tool(
            names.get(message.tool_call_id or "")
        )
        # a tool call's arguments are part of the message text: its keys are found there
        scan.add(message_text(message), errors=message.role != "system" and not is_file_read)
    # tool names and dict keys are the structure of tool traffic, not facts of the task
    structural = set(names.values()) | scan.keys
    return Facts(scan.paths, frozenset(scan.identifiers - structural), tuple(scan.errors))


class _AfterIndex:
    """The text after, for many "does it appear" questions: a fact holding no line break
    appears in the text iff it appears in one of its distinct lines, so it is looked up in
    those (joined by line breaks), not in the whole text. An error line (collapsed: single
    spaces, none at its ends) appears in the collapsed text iff it appears in one collapsed
    line or runs across lines; then the part after its last line break begins a line: a
    sorted list of the lines names the candidates, each checked against the lines before it."""

    def __init__(self, texts: Sequence[str]) -> None:
        self._texts = texts
        self.lines = dict.fromkeys(line for text in texts for line in _lines(text))
        self.joined = "\n".join(self.lines)
        self._collapsed: dict[str, str] | None = None
        self._joined_collapsed = ""
        self._starts: list[str] = []
        self._order: list[str] | None = None
        self._positions: dict[str, list[int]] = {}
        self._whole: str | None = None

    def has(self, fact: str) -> bool:
        """True when the text after holds `fact`."""
        if "\n" in fact:
            return fact in self._whole_text()
        return fact in self.joined

    def has_collapsed(self, error: str) -> bool:
        """True when the whitespace-collapsed text after holds `error`."""
        if _SPACE_RE.sub(" ", error).strip() != error:  # not an error line as found
            return error in _SPACE_RE.sub(" ", self._whole_text())
        if self._collapsed is None:
            self._collapsed = {line: _SPACE_RE.sub(" ", line).strip() for line in self.lines}
            distinct = dict.fromkeys(self._collapsed.values())
            self._joined_collapsed = "\n".join(distinct)
            self._starts = sorted(line for line in distinct if line)
        if error in self._joined_collapsed:
            return True
        return any(
            char == " " and self._spans(error[:at], error[at + 1 :])
            for at, char in enumerate(error)
        )

    def _spans(self, before: str, head: str) -> bool:
        """True when some line begins with `head` and the collapsed text before it (lines
        joined by one space) ends with `before`."""
        index = bisect.bisect_left(self._starts, head)
        while index < len(self._starts) and self._starts[index].startswith(head):
            if self._ends_before(self._starts[index], before):
                return True
            index += 1
        return False

    def _ends_before(self, line: str, before: str) -> bool:
        order, positions = self._line_order()
        for at in positions.get(line, ()):
            back, left = at, ""
            while back > 0 and len(left) < len(before):
                back -= 1
                left = order[back] + (" " + left if left else "")
            if left.endswith(before):
                return True
        return False

    def _line_order(self) -> tuple[list[str], dict[str, list[int]]]:
        """The non-empty collapsed lines of the text after, in order, and where each is."""
        if self._order is None:
            assert self._collapsed is not None
            every = (line for text in self._texts for line in _lines(text))
            self._order = list(filter(None, map(self._collapsed.__getitem__, every)))
            for at, line in enumerate(self._order):
                self._positions.setdefault(line, []).append(at)
        return self._order, self._positions

    def _whole_text(self) -> str:
        if self._whole is None:
            self._whole = "\n".join(self._texts).replace("\\n", "\n")
        return self._whole


def losses_between(before: Facts, after_messages: Iterable[Message]) -> Losses:
    """What of `before` does not appear in the text of `after_messages`."""
    after = _AfterIndex([message_text(m) for m in after_messages])
    lost_paths = sorted(raw for key, raw in before.paths.items() if not after.has(key))
    lost_idents = sorted(i for i in before.identifiers if not after.has(i))
    lost_errors = [e for e in before.errors if not after.has_collapsed(e)]
    return Losses(tuple(lost_paths), tuple(lost_idents), tuple(lost_errors), before.counts)
