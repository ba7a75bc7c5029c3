"""What a summary lost: file paths, identifiers and error messages of the replaced region
that the summary no longer mentions.

Heuristic by nature: candidates are pulled from message text and tool-call arguments with
regular expressions, then looked up in the summary. A path counts as kept when the summary
holds it or a trailing part of it with at least two components (`src/x/parse.py` keeps
`/work/src/x/parse.py`); files put back by the `<recovered_context>` message are reported
as restored, not lost. Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from inspector.core.messages import Message
from inspector.core.reinjection import message_to_text, parse_jsonish_tool_result

LossKind = Literal["path", "identifier", "error"]
#: Every kind of lost item.
ALL_KINDS: frozenset[LossKind] = frozenset(("path", "identifier", "error"))

_PATH_RE = re.compile(
    r"(?<![\w/.-])((?:/|\./|\.\./|~/)?(?:[\w.-]+/)+[\w.-]*\w\.[A-Za-z0-9]{1,8}|"
    r"/(?:[\w.-]+/)*[\w.-]+)(?![\w/])"
)
_BACKTICK_RE = re.compile(r"`([A-Za-z_][\w.]*)(?:\(\))?`")
_DEF_RE = re.compile(r"\b(?:def|class|function|fn|func)\s+([A-Za-z_]\w*)")
_CALL_RE = re.compile(r"\b([A-Za-z_]\w*_\w*|[a-z]+[A-Z]\w*)\(")
_ERROR_LINE_RE = re.compile(
    r"(?:^|\s)((?:[A-Z]\w*(?:Error|Exception|Failure)|Traceback|FAILED|ERROR|error)\b[:\s][^\n]{0,160})"
)
_ERROR_NAME_RE = re.compile(r"\b([A-Z]\w*(?:Error|Exception|Failure))\b")
_FAILED_TEST_RE = re.compile(r"FAILED\s+(\S+::\S+)")
_COMMON_WORDS = frozenset({"self", "None", "True", "False", "print", "return", "import"})


@dataclass(frozen=True, slots=True)
class LostItem:
    """One thing in the replaced region the summary does not mention."""

    kind: LossKind
    text: str
    #: Index (in the context) of the first message it appears in.
    message_index: int
    #: True when the recovered-context message puts it back (a re-injected file or its content).
    restored: bool = False


def _unescape(text: str) -> str:
    # Tool results often hold a Python repr (`data={'stdout': '...\\n...'}`): undo the escapes
    # so that lines and paths split where they did in the original output. Most texts hold
    # no backslash: one search for it spares two scans of the whole text (a 40 MB tool result).
    if "\\" not in text:
        return text
    return text.replace("\\n", "\n").replace("\\t", "\t")


def _candidates(message: Message) -> list[str]:
    texts = [_unescape(message_to_text(message))]
    texts.extend(_unescape(call.arguments) for call in message.tool_calls)
    return texts


#: The characters a `_PATH_RE` match is made of (each match lies in one run of them).
_RUN_CHARS = r"[\w./~-]"
_RUN_END_RE = re.compile(_RUN_CHARS + "*")
#: At most one slash per this many characters for the run scan (denser: one whole scan;
#: the pattern's scan of a text of words costs about a backtrack per word, so a text of a
#: few hundred characters already pays for the runs' search). Over every corpus here
#: (197,647 texts: bench dumps, samples, references, test data) 64 took 0.74x the time of
#: 256, and 8 to 32 more than 64.
_SLASH_SPACING = 64
#: Words one of which every match of `_ERROR_LINE_RE` holds (at its start, or ending its
#: first word); found by one pattern (`_error_spans`).
_ERROR_WORDS = ("Error", "Exception", "Failure", "Traceback", "FAILED", "ERROR", "error")
_ERROR_WORD_RE = re.compile("|".join(_ERROR_WORDS))
_SEPARATOR_RE = re.compile(r"\s={3,}")
#: Words one of which every match of `_DEF_RE` holds ("function" holds "func").
_DEF_WORDS = ("def", "class", "fn", "func")


def _slash_runs(text: str) -> list[tuple[int, int]]:
    """The maximal runs of `_RUN_CHARS` that hold a slash, as (start, end), in order."""
    runs: list[tuple[int, int]] = []
    at = text.find("/")
    while at >= 0:
        back = 64
        while True:  # the run's start: its end in the reversed text before it, doubling
            low = max(at - back, 0)
            before = _RUN_END_RE.match(text[low:at][::-1])
            length = before.end() if before else 0
            if length < at - low or low == 0:
                break
            back *= 2
        after = _RUN_END_RE.match(text, at)
        end = after.end() if after else at + 1
        runs.append((at - length, end))
        at = text.find("/", end)
    return runs


def _paths(text: str) -> list[str]:
    """Paths in `text`. A text with no slash holds none; one with few slashes is scanned
    only in the runs that hold one (with one character either side, all the pattern's
    look-arounds see), so the matches are those of a scan of the whole text: every match is
    made of `_RUN_CHARS`, holds a slash, and can start only where the character before it is
    not one of them (or after a `~`)."""
    if "/" not in text:
        return []
    if text.count("/") * _SLASH_SPACING > len(text):
        spans: list[tuple[int, int]] = [(0, len(text))]
    else:
        spans = [(max(a - 1, 0), min(b + 1, len(text))) for a, b in _slash_runs(text)]
    found = []
    for low, high in spans:
        piece = text if (low, high) == (0, len(text)) else text[low:high]
        for match in _PATH_RE.finditer(piece):
            path = match.group(1).rstrip(".")
            start = low + match.start()
            if (
                path.count("/") >= 1
                and len(path) > 3
                and "://" not in text[max(start - 3, 0) : start + 3]
            ):
                found.append(path)
    return found


def _identifiers(text: str) -> list[str]:
    names = [
        *(_BACKTICK_RE.findall(text) if "`" in text else ()),
        *(_DEF_RE.findall(text) if any(word in text for word in _DEF_WORDS) else ()),
        *(_CALL_RE.findall(text) if "(" in text else ()),
    ]
    return [n for n in names if len(n) >= 4 and n not in _COMMON_WORDS and "/" not in n]


def _error_spans(text: str) -> list[tuple[int, int]]:
    """Where `_ERROR_LINE_RE` can match in `text`, as (start, end) spans in order: each line
    holding one of `_ERROR_WORDS` (every match starts with one, after the whitespace before
    it: the newline ending the line above, or the text's start) and the line after it (a
    word ending its line is followed by that newline, and the match goes on into the next
    line), spans that touch merged. A scan of each span finds what a scan of the whole text
    finds: no match crosses from one span into another."""
    spans: list[tuple[int, int]] = []
    found = _ERROR_WORD_RE.search(text)
    while found is not None:
        low = max(text.rfind("\n", 0, found.start()), 0)
        line_end = text.find("\n", found.end())
        high = text.find("\n", line_end + 1) if line_end >= 0 else -1
        high = len(text) if high < 0 else high
        if spans and low <= spans[-1][1]:
            spans[-1] = (spans[-1][0], high)
        else:
            spans.append((low, high))
        if line_end < 0:
            break
        found = _ERROR_WORD_RE.search(text, line_end)
    return spans


def _errors(text: str) -> list[str]:
    out = []
    for low, high in _error_spans(text):
        for match in _ERROR_LINE_RE.finditer(text, low, high):
            line = " ".join(match.group(1).split())
            line = _SEPARATOR_RE.split(line, 1)[0].strip()  # pytest's ==== separators end a line
            if line.lower().startswith("error=none") or " " not in line:
                continue
            out.append(line)
    return out


def errors_in(message: Message) -> list[str]:
    """The error lines of one message's text (as `summary_losses` finds them)."""
    return [error for text in _candidates(message) for error in _errors(text)]


def path_mentioned(path: str, summary: str) -> bool:
    """True when `summary` holds the path or a trailing part of it with >= 2 components."""
    if path in summary:
        return True
    parts = [p for p in path.split("/") if p not in ("", ".", "..", "~")]
    return any("/".join(parts[i:]) in summary for i in range(0, max(len(parts) - 1, 0)))


def error_mentioned(error: str, summary: str) -> bool:
    """True when the summary holds the error line, its exception name, or its failing test id."""
    if error in summary:
        return True
    for pattern in (_FAILED_TEST_RE, _ERROR_NAME_RE):
        match = pattern.search(error)
        if match and match.group(1) in summary:
            return True
    head = error.split(":", 1)[-1].strip()[:40]
    return bool(head) and head in summary


#: `_result_path` by message identity (each entry holds its message, so an id is never
#: reused while cached): a tuning key re-runs the findings, and parsing every tool result
#: of a big context again took seconds. Cleared when it grows past `_PATHS_MAX`.
_paths_memo: dict[int, tuple[Message, str | None]] = {}
_PATHS_MAX = 100_000


def _result_path(message: Message) -> str | None:
    known = _paths_memo.get(id(message))
    if known is not None and known[0] is message:
        return known[1]
    if len(_paths_memo) >= _PATHS_MAX:
        _paths_memo.clear()
    path = _parsed_result_path(message)
    _paths_memo[id(message)] = (message, path)
    return path


def _parsed_result_path(message: Message) -> str | None:
    text = message_to_text(message)
    if "file_path" not in text and "\\" not in text:
        return None  # no escape can spell the key, and it is not there as written
    result = parse_jsonish_tool_result(text)
    path = result.get("file_path") if isinstance(result, dict) else None
    return path if isinstance(path, str) else None


def _probes(kind: LossKind, item: str) -> tuple[str, ...]:
    """The texts one of which the summary must hold for `item` to count as mentioned
    (`path_mentioned`, `error_mentioned`, or the identifier itself), in the order tried."""
    if kind == "identifier":
        return (item,)
    if kind == "path":
        parts = [p for p in item.split("/") if p not in ("", ".", "..", "~")]
        return (item, *("/".join(parts[i:]) for i in range(0, max(len(parts) - 1, 0))))
    probes = [item]
    for pattern in (_FAILED_TEST_RE, _ERROR_NAME_RE):
        match = pattern.search(item)
        if match:
            probes.append(match.group(1))
    head = item.split(":", 1)[-1].strip()[:40]
    if head:
        probes.append(head)
    return tuple(probes)


#: The last `_first_seen` answer, with the identities of its messages (kept alive with it,
#: so an identity is not reused): a tuning key that leaves the region alone reads it again.
_FirstSeen = dict[tuple[LossKind, str], int]
_last_seen: list[tuple[tuple[int, ...], frozenset[LossKind], tuple[Message, ...], _FirstSeen]] = []


def _first_seen(messages: Sequence[Message], kinds: frozenset[LossKind]) -> _FirstSeen:
    """Each item the messages hold (of the `kinds` asked for), in the order of its first
    appearance, with the offset of the message it first appears in."""
    ids = tuple(map(id, messages))
    for known_ids, known_kinds, _, known in _last_seen:
        if known_kinds == kinds and known_ids == ids:
            return dict(known)
    first: _FirstSeen = {}
    for offset, message in enumerate(messages):
        found = _found_in(message, kinds)
        if found:
            for pair in itertools.filterfalse(first.__contains__, found):
                first[pair] = offset
    _last_seen[:] = [(ids, kinds, tuple(messages), first)]
    return dict(first)


def summary_losses(
    messages: Sequence[Message],
    summary: str,
    start_index: int = 0,
    restored_paths: Iterable[str] = (),
    kinds: frozenset[LossKind] = ALL_KINDS,
) -> list[LostItem]:
    """Paths, identifiers and errors in `messages` (the replaced region) missing from `summary`
    (only the `kinds` asked for: each kind is a scan of every text, made once per message).

    Only an item's first appearance can be reported (a later one is the same item, or one
    with the same first 80 characters), so each distinct item is checked once, in the order
    of first appearance, against the texts that would mention it (`_probes`, kept)."""
    restored = set(restored_paths)
    reported: set[tuple[str, str]] = set()
    lost: list[LostItem] = []
    for (kind, item), offset in _first_seen(messages, kinds).items():
        probes = _probe_memo.get((kind, item))
        if probes is None:
            probes = _probe_memo[(kind, item)] = _probes(kind, item)
        if any(probe in summary for probe in probes):
            continue
        key = (kind, item[:80])
        if key in reported:
            continue
        reported.add(key)
        is_restored = False
        if kind != "error" and restored:
            message = messages[offset]
            is_restored = message.role == "tool" and _result_path(message) in restored
            is_restored = is_restored or (kind == "path" and item in restored)
        lost.append(LostItem(kind, item, start_index + offset, is_restored))
    return lost


#: `_probes` by item (a tuning key checks the same items against another summary).
_probe_memo: dict[tuple[LossKind, str], tuple[str, ...]] = {}

#: `_found_in` by (message identity, kinds): what a message holds does not change with the
#: tuning, and scanning every text of a big context again on each key took seconds.
_found_memo: dict[
    tuple[int, frozenset[LossKind]], tuple[Message, dict[tuple[LossKind, str], None]]
] = {}


def _found_in(message: Message, kinds: frozenset[LossKind]) -> dict[tuple[LossKind, str], None]:
    """The distinct paths, identifiers and error lines of `message` (of the `kinds` asked
    for), in the order its texts first hold them."""
    key = (id(message), kinds)
    known = _found_memo.get(key)
    if known is not None and known[0] is message:
        return known[1]
    found: list[tuple[LossKind, str]] = []
    for text in _candidates(message):
        found.extend(("path", path) for path in (_paths(text) if "path" in kinds else ()))
        if "identifier" in kinds:
            found.extend(("identifier", name) for name in _identifiers(text))
        if "error" in kinds and message.role in ("tool", "assistant", "user"):
            found.extend(("error", error) for error in _errors(text))
    if len(_found_memo) >= _PATHS_MAX:
        _found_memo.clear()
        _probe_memo.clear()
    distinct = dict.fromkeys(found)
    _found_memo[key] = (message, distinct)
    return distinct
