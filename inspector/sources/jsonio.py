"""Read a file as JSON documents without ever exhausting memory or recursion.

One file is either one JSON document (a dump, a snapshot, a message list) or JSON Lines
(a debug log, a snapshot corpus, a message stream). Problems become `ReadProblem`s that
say where (a line, or a line/column with its byte offset); nothing here raises on bad
input and nothing is written anywhere. Only regular files are opened (`sources.files`).

`loads_strict` parses with `pydantic_core.from_json` (Rust, ~2-4x faster than the stdlib
decoder) whenever its answer is certainly the stdlib decoder's, and with the stdlib decoder
otherwise, so values and errors stay exactly those of `json` (see `_fast_value`). Must not
import Textual or Rich.
"""

from __future__ import annotations

import io
import json
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_core import from_json

from inspector.sources.files import file_problem, open_regular, os_problem, read_regular
from inspector.sources.jsonstream import bounded_lines

#: Any file above this size is refused (a 1 GB file would need several GB once parsed).
MAX_FILE_BYTES = 512 * 1024**2
#: A single JSON document above this size is refused: it must be held in memory whole.
MAX_DOCUMENT_BYTES = 256 * 1024**2
#: One JSON Lines record above this size is refused (the other lines still load).
MAX_LINE_BYTES = 64 * 1024**2
#: Containers nested deeper than this are refused (openJiuwen's data stays under ~20).
MAX_DEPTH = 200
#: A single document at least this big is parsed with the streaming reader
#: (`jsonstream.load_streaming`: ~2.6x the file at peak instead of ~4x); anything it
#: refuses is read the ordinary way, so results and errors are the same.
STREAM_MIN_BYTES = 32 * 1024**2

#: A file at least this big that plainly is JSON Lines (`_read_lines_streaming`) is read
#: record by record: the file's bytes, its text and its list of lines are never held.
LINES_STREAM_MIN_BYTES = 1 << 20

#: Whether to walk parsed values for nesting deeper than MAX_DEPTH: always, never, or
#: per document (a predicate on the parsed value).
NestingCheck = bool | Callable[[Any], bool]

_SPECIAL_NUMBER_RE = re.compile(r"(?<![\w\"])(-?Infinity|NaN)(?![\w\"])")


@dataclass(frozen=True, slots=True)
class ReadProblem:
    """Why (part of) a file cannot be read, and where."""

    error: str
    where: str | None = None


@dataclass(slots=True)
class ReadResult:
    """The documents of one file with their location, plus at most one problem.

    `documents` holds `(where, value)` pairs: `where` is None for a whole-file document and
    "line N" for a JSON Lines record. `json_lines` tells which of the two shapes the file had.
    """

    documents: list[tuple[str | None, Any]] = field(default_factory=list)
    problem: ReadProblem | None = None
    json_lines: bool = False
    #: Every unreadable JSON Lines record (already summed up in `problem`).
    bad_records: list[ReadProblem] = field(default_factory=list)


class _Rejected(ValueError):
    """A value JSON allows in Python but not in the standard (NaN, Infinity, 1e999)."""


class _Infinite(ValueError):
    """A number literal that overflows a float (1e999)."""


def _reject_constant(name: str) -> Any:
    raise _Rejected(f"{name} is not valid JSON")


def _finite_float(literal: str) -> float:
    """float(literal), refusing one that overflows to infinity (1e999).

    Called by the C parser for non-integer numbers only (rare in openJiuwen's data), so
    it costs next to nothing, unlike a walk over every parsed value.
    """
    value = float(literal)
    if value in (math.inf, -math.inf):
        raise _Infinite("a number is out of range (overflows to infinity)")
    return value


_STRICT_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)

#: `bytes.translate` table and deleted bytes of the fast path's guard: digits become "0",
#: "e" and "E" become "e", "[" and "{" become "[", a separator becomes a space, and every
#: other byte (most letters, "+", non-ASCII) is deleted. A number that may overflow to
#: infinity then shows as "0e000" (a digit, then an exponent of 3+ digits) or as a run of
#: `_LONG_DIGITS` zeros, and the brackets count with one `count`, in marks a fraction of
#: the text's size. Deleting bytes only joins marks, never parts them: a text the guard
#: must refuse is always refused; the separators, which part JSON values, words, escapes
#: and hex digits ("3e2f61" is no "0e000"), keep the others from being refused (a refusal
#: costs only the stdlib decoder's time).
_GUARD_SEPARATORS = b' ",:-\\abcdfABCDF'
_GUARD_KEPT = b"0123456789eE[{" + _GUARD_SEPARATORS
_GUARD_TABLE = bytes.maketrans(_GUARD_KEPT, b"0000000000ee[[".ljust(len(_GUARD_KEPT)))
_GUARD_DELETE = bytes(b for b in range(256) if b not in _GUARD_KEPT)
#: A digit and an exponent of 3+ digits (1e308, 1.5E+400, 1e0400): any overflow via the
#: exponent (in JSON an exponent always follows a digit, so "E401" in a text is no match).
_BIG_EXPONENT = b"0e000"
#: A digit run this long: a mantissa that may overflow with an exponent under 100
#: (10**210 * 1e99 > 1.8e308), or an integer past `sys.get_int_max_str_digits` (>= 640);
#: searched by skips, without the count of zeros first that would cost five times that.
_LONG_DIGITS = 210
_DIGIT_RUN = b"0" * _LONG_DIGITS
#: `from_json` refuses nesting past about this many levels (the stdlib decoder then answers).
_FAST_MAX_DEPTH = 256
#: At most this many containers are parsed without checking the stack's room (see `_fast_value`).
_UNPROBED_BRACKETS = 16
#: Frames kept free beyond a value's nesting: the stdlib decoder's own frames and C levels.
_FRAME_MARGIN = 32
#: A text this long whose strings are long (fewer than one quote per `_BYTES_PER_QUOTE`
#: bytes: one huge message) is left to the stdlib decoder, as fast there as from_json
#: and without the guard's pass over its bytes (measured in bench/bench_json_parse.py).
_BIG_TEXT = 1 << 20
_BYTES_PER_QUOTE = 256
_BOM = b"\xef\xbb\xbf"
#: A `_fast_value` answer for "parse this with the stdlib decoder".
_SLOW: Any = object()


def _stack_has_room(levels: int) -> bool:
    """True when the stdlib decoder could nest `levels` containers deep from here without a
    RecursionError (it counts each level against the recursion limit)."""
    deepest = sys.getrecursionlimit() - levels - _FRAME_MARGIN
    if deepest <= 0:
        return False
    try:
        sys._getframe(deepest)
    except ValueError:  # the stack is shallower than that: room enough
        return True
    return False


def _fast_value(data: bytes | str) -> Any:
    """What `from_json` makes of `data` (no BOM) when that is certainly what the stdlib
    decoder gives; `_SLOW` when the stdlib decoder must parse it (its value or its error).

    `from_json` refuses everything the stdlib decoder refuses (malformed text, NaN and
    Infinity with `allow_inf_nan=False`, a BOM, other whitespace, raw control characters,
    invalid UTF-8, integers over 4300 digits, nesting past ~200) except numbers overflowing
    to infinity, which it returns as inf: a text with an exponent of 3+ digits or a
    210-digit run goes to the stdlib decoder (the guard's marks, which also cover a lowered
    integer digit limit). No walk of the value could stand in for that guard: a duplicate
    key may overwrite the infinite value. It refuses lone surrogates (`\\ud800`) that the
    stdlib decoder accepts, and the stdlib decoder refuses nesting it could parse when the
    stack has no room for it: a text of more than `_UNPROBED_BRACKETS` containers is parsed
    fast only with that room. Equal on purpose (tests/test_jsonio_fast.py): duplicate keys
    (the last value, at the first key's place), -0, -0.0, the rounding of long literals.
    Any exception of `from_json` means "ask the stdlib decoder", so every error keeps its
    words.
    """
    if isinstance(data, str):
        if len(data) >= _BIG_TEXT and data.count('"') * _BYTES_PER_QUOTE < len(data):
            return _SLOW
        return _fast_bytes(data.encode("utf-8"))[0]
    return _fast_bytes(data)[0]


def _fast_bytes(raw: bytes) -> tuple[Any, int]:
    """`_fast_value` of bytes, with the number of "[" and "{" in them when it answers (the
    guard counts them anyway: `loads_strict_bytes_openings`), else (`_SLOW`, -1)."""
    if len(raw) >= _BIG_TEXT and raw.count(b'"') * _BYTES_PER_QUOTE < len(raw):
        return _SLOW, -1
    # the guard (see `_GUARD_TABLE`): a number that may overflow, or the brackets' count
    marks = raw.translate(_GUARD_TABLE, _GUARD_DELETE)
    if _BIG_EXPONENT in marks or (len(marks) >= _LONG_DIGITS and _DIGIT_RUN in marks):
        return _SLOW, -1
    levels = marks.count(b"[")
    if levels > _UNPROBED_BRACKETS and not _stack_has_room(min(levels, _FAST_MAX_DEPTH)):
        return _SLOW, -1
    try:
        return from_json(raw, allow_inf_nan=False), levels
    except Exception:  # noqa: BLE001 - any refusal: the stdlib decoder says why, in its words
        return _SLOW, -1


def loads_strict(text: str) -> Any:
    """json.loads that refuses NaN, Infinity and numbers overflowing to infinity (parsed by
    `pydantic_core.from_json` where that is certainly the same: `_fast_value`)."""
    if text.startswith("\ufeff"):  # what json.loads says (one decoder made once is faster)
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    try:
        value = _fast_value(text)
    except UnicodeEncodeError:  # lone surrogates in the text: only the stdlib reads them
        value = _SLOW
    if value is _SLOW:
        return _STRICT_DECODER.decode(text)
    return value


def loads_strict_bytes(data: bytes) -> Any:
    """`loads_strict(data.decode("utf-8"))`, the same value or exception
    (UnicodeDecodeError included), without decoding when the fast path answers."""
    if not data.startswith(b"\xef\xbb\xbf"):
        value = _fast_bytes(data)[0]
        if value is not _SLOW:
            return value
    return loads_strict(data.decode("utf-8"))


def loads_strict_bytes_openings(data: bytes) -> tuple[Any, int]:
    """`loads_strict_bytes(data)` and the number of "[" and "{" in `data`: a bound on the
    value's nesting (a value nests no deeper than its text opens containers), so a reader
    that refuses nesting past MAX_DEPTH walks only a value whose text opens more."""
    return loads_strict_bytes_vouched(data)[:2]


#: Every integer in a value the fast path made is below this (the guard's digit runs).
FAST_INT_BOUND = 10 ** (_LONG_DIGITS - 1)


def loads_strict_bytes_vouched(data: bytes) -> tuple[Any, int, bool]:
    """`loads_strict_bytes_openings(data)` and whether the fast path made the value: its
    floats then are finite and its integers under `FAST_INT_BOUND` in magnitude (the guard
    and `from_json`'s refusals), bounds a checker may skip (`debuglog.plainly_valid`)."""
    if not data.startswith(b"\xef\xbb\xbf"):
        value, openings = _fast_bytes(data)
        if value is not _SLOW:
            return value, openings, True
    value = loads_strict(data.decode("utf-8"))
    return value, data.count(b"[") + data.count(b"{"), False


def check_value(value: Any, limit: int = MAX_DEPTH) -> str | None:
    """ "depth" when containers nest deeper than `limit`, "infinite" for a number like 1e999, else None.

    One pass without recursion; float checks are done here rather than by a parse hook
    because a Python callback per number slows the C parser down several times.
    """
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        elif isinstance(item, float) and not math.isfinite(item):
            return "infinite"
        else:
            continue
        if depth > limit:
            return "depth"
        for child in children:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1))
            elif isinstance(child, float) and not math.isfinite(child):
                return "infinite"
    return None


def parsed_too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """True when a value `loads_strict` parsed nests deeper than `limit`: `check_value`'s
    depth part alone (the parser refuses infinite numbers), level by level, in half the time."""
    level = [value] if type(value) is dict or type(value) is list else []
    depth = 1
    while level:
        if depth > limit:
            return True
        deeper: list[Any] = []
        keep = deeper.append
        for item in level:
            for child in item.values() if type(item) is dict else item:
                kind = type(child)
                if kind is dict or kind is list:
                    keep(child)
        level = deeper
        depth += 1
    return False


def _byte_offset(text: str, char_pos: int) -> int:
    return len(text[:char_pos].encode("utf-8", "surrogatepass"))


def _problem_from_error(error: Exception, text: str, line_label: str | None = None) -> ReadProblem:
    """Turn a json error into words plus a location (line/column and byte, or "line N")."""
    if isinstance(error, RecursionError):
        return ReadProblem(f"JSON nested too deeply (more than {MAX_DEPTH} levels)", line_label)
    if isinstance(error, json.JSONDecodeError):
        if line_label:
            return ReadProblem(f"not valid JSON: {error.msg} (column {error.colno})", line_label)
        offset = _byte_offset(text, error.pos)
        return ReadProblem(
            f"not valid JSON: {error.msg}",
            f"line {error.lineno} column {error.colno} (byte {offset})",
        )
    message = str(error) or type(error).__name__
    match = _SPECIAL_NUMBER_RE.search(text)
    if line_label:
        return ReadProblem(f"not valid JSON: {message}", line_label)
    if match:
        line = text.count("\n", 0, match.start()) + 1
        return ReadProblem(
            f"not valid JSON: {message}", f"line {line} (byte {_byte_offset(text, match.start())})"
        )
    return ReadProblem(f"not valid JSON: {message}", None)


def _parse_one(
    text: str, label: str | None, check_nesting: NestingCheck = True, raw: bytes | None = None
) -> tuple[Any, ReadProblem | None]:
    """`text` parsed, or its problem; `raw`: the UTF-8 bytes `text` was decoded from (with
    the line break still at their end, if any), parsed instead when the fast path answers
    (the text is not encoded again), the text otherwise, for the same value and words."""
    try:
        value, openings = _loads_text(text, raw)
    except _Infinite:
        return None, _value_problem("infinite", label)
    except (ValueError, RecursionError) as error:
        return None, _problem_from_error(error, text, label)
    if (
        (check_nesting is True or (callable(check_nesting) and check_nesting(value)))
        # a value nests no deeper than its text has opening brackets: most need no walk
        and openings > MAX_DEPTH
        and parsed_too_deep(value)
    ):
        return None, _value_problem("depth", label)
    return value, None


def _loads_text(text: str, raw: bytes | None) -> tuple[Any, int]:
    """`loads_strict(text)` and its number of "[" and "{", from `raw` (`_parse_one`) when
    the fast path answers (a line break left at its end is whitespace to the parser)."""
    if raw is not None and not raw.startswith(b"\xef\xbb\xbf"):
        value, openings = _fast_bytes(raw)
        if value is not _SLOW:
            return value, openings
    return loads_strict(text), text.count("[") + text.count("{")


def _value_problem(kind: str | None, label: str | None) -> ReadProblem | None:
    """The problem `check_value`'s answer stands for (None: the value is fine)."""
    if kind == "depth":
        return ReadProblem(f"JSON nested too deeply (more than {MAX_DEPTH} levels)", label)
    if kind == "infinite":
        return ReadProblem(
            "not valid JSON: a number is out of range (overflows to infinity)", label
        )
    return None


def _looks_like_json_lines(lines: list[str]) -> bool:
    """Two or more records, and one of the first few parses alone into an object or array."""
    non_empty = [line for line in lines if line.strip()]
    if len(non_empty) < 2:
        return False
    for line in non_empty[:5]:
        stripped = line.strip()
        if not stripped.startswith(("{", "[")):
            continue
        try:
            value = loads_strict(stripped)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict | list):
            return True
    return False


def _decode(data: bytes) -> tuple[str | None, ReadProblem | None]:
    nul = data.find(b"\x00", 0, 8192)
    if nul >= 0:
        return None, ReadProblem("binary file (NUL bytes), not JSON text", f"byte {nul}")
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as error:
        return None, ReadProblem("not UTF-8 text (binary file?)", f"byte {error.start}")


def read_json_file(
    path: Path,
    max_file_bytes: int = MAX_FILE_BYTES,
    max_document_bytes: int = MAX_DOCUMENT_BYTES,
    stream_min_bytes: int = STREAM_MIN_BYTES,
    check_nesting: NestingCheck = True,
    lines_min_bytes: int = LINES_STREAM_MIN_BYTES,
) -> ReadResult:
    """Read `path` as one JSON document or as JSON Lines; never raises on bad content.

    JSON Lines with some bad lines keep the good ones; the bad ones are summed up in
    one problem naming the first. Files above `max_document_bytes` are only accepted as
    JSON Lines (streamed line by line); files above `max_file_bytes` are refused. A file
    of `stream_min_bytes` or more is first tried with the streaming reader (same value,
    less memory); whatever it refuses is read whole, for the usual result or error.

    `check_nesting=False` skips the walk over every parsed value that refuses nesting
    deeper than MAX_DEPTH (the C parser still refuses nesting past Python's recursion
    limit, as "nested too deeply"); NaN and numbers overflowing to infinity are refused
    by the parser either way. Only for callers that read fixed, shallow keys and never
    recurse into values (header-level loads). A callable decides per parsed document
    (True: walk it). A file of `lines_min_bytes` or more whose first two lines show it is
    JSON Lines is read line by line (`_read_lines_streaming`), a smaller one from its bytes
    (`_lines_of_data`): the same result.
    """
    not_regular = file_problem(path)
    if not_regular is not None:
        return ReadResult(problem=ReadProblem(not_regular))
    try:
        size = path.stat().st_size
    except OSError as error:
        return ReadResult(problem=ReadProblem(os_problem(error)))
    if size == 0:
        return ReadResult(problem=ReadProblem("empty file"))
    if size > max_file_bytes:
        return ReadResult(
            problem=ReadProblem(
                f"file is {_human(size)}, over the {_human(max_file_bytes)} limit: refused "
                "so it cannot exhaust memory (split it or load a smaller part)"
            )
        )
    if size > max_document_bytes:
        return _read_large_json_lines(path, size, max_document_bytes)
    if size >= lines_min_bytes:
        by_line = _read_lines_streaming(path, check_nesting)
        if by_line is not None:
            return by_line
    if size >= stream_min_bytes:
        streamed = _read_streaming(path, check_nesting)
        if streamed is not None:
            return streamed
    try:
        data = read_regular(path)
    except OSError as error:
        return ReadResult(problem=ReadProblem(os_problem(error)))
    by_line = _lines_of_data(data, check_nesting) if size < lines_min_bytes else None
    if by_line is not None:
        return by_line
    whole = _parse_document_bytes(data, check_nesting)
    if whole is not None:
        return whole
    text, problem = _decode(data)
    if problem is not None or text is None:
        return ReadResult(problem=problem)
    if size >= lines_min_bytes:  # a big file's bytes are not held beside its text
        del data
        return parse_json_text(text, check_nesting)
    return parse_json_text(text, check_nesting, data[3:] if data[:3] == b"\xef\xbb\xbf" else data)


def _parse_document_bytes(data: bytes, check_nesting: NestingCheck) -> ReadResult | None:
    """What decoding `data` and `parse_json_text` give when the fast path parses the bytes
    as one document (it then also vouches that they are UTF-8); None otherwise."""
    if data.find(b"\x00", 0, 8192) >= 0:
        return None
    body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data  # as "utf-8-sig" reads it
    value = _fast_value(body)
    if value is _SLOW:
        return None
    if (
        (check_nesting is True or (callable(check_nesting) and check_nesting(value)))
        and body.count(b"[") + body.count(b"{") > MAX_DEPTH
        and parsed_too_deep(value)
    ):
        return ReadResult(problem=_value_problem("depth", None))
    return ReadResult(documents=[(None, value)])


def _read_streaming(path: Path, check_nesting: NestingCheck = True) -> ReadResult | None:
    """The streaming reader's result, or None when the file must be read whole."""
    from inspector.sources.jsonstream import StreamFallback, load_streaming

    try:
        value = load_streaming(path)
    except (StreamFallback, OSError, MemoryError):
        return None
    if (
        check_nesting is True or (callable(check_nesting) and check_nesting(value))
    ) and parsed_too_deep(value):
        return ReadResult(problem=_value_problem("depth", None))
    return ReadResult(documents=[(None, value)])


def _read_lines_streaming(path: Path, check_nesting: NestingCheck = True) -> ReadResult | None:
    """What `parse_json_text` makes of the file's text, read line by line, when the file
    plainly is JSON Lines; None (read it whole) otherwise.

    Plainly: no NUL in its first 8 KB, no byte-order mark, a first line that is one JSON
    object on its own and a second line that is not blank. The whole text then cannot be
    one document and `_looks_like_json_lines` holds, so the whole-file reader would take
    the lines of `str.splitlines` one by one: so does this, splitting each line read
    (at `\n`) the same way. Invalid UTF-8 anywhere refuses the file as the whole-file
    reader does (same byte offset); a read error leaves it to that reader.
    """
    try:
        with open_regular(path) as handle:
            head = handle.read(8192)
            if b"\x00" in head or head.startswith(b"\xef\xbb\xbf"):
                return None
            handle.seek(0)
            return _lines_of(handle, check_nesting)
    except (OSError, MemoryError):
        return None


def _lines_of_data(data: bytes, check_nesting: NestingCheck) -> ReadResult | None:
    """`_read_lines_streaming` of a small file's bytes when its second line holds more than
    whitespace: no attempts at the whole text as one document (a third of a log's reading
    time). Without a second line it may be one document, parsed once, whole."""
    first_end = data.find(b"\n")
    second_end = data.find(b"\n", first_end + 1)
    second = data[first_end + 1 : second_end if second_end > first_end else None]
    # (bytes.strip strips less than str.strip: on a line it keeps, `_lines_of` decides)
    if first_end < 0 or not second.strip() or b"\x00" in data[:8192] or data[:3] == _BOM:
        return None
    return _lines_of(io.BytesIO(data), check_nesting)


def _lines_of(handle: Any, check_nesting: NestingCheck) -> ReadResult | None:
    """The JSON Lines result of an open file (see `_read_lines_streaming`)."""
    result = ReadResult(json_lines=True)
    bad: list[ReadProblem] = []
    number = offset = 0
    for raw in iter(handle.readline, b""):
        try:
            pieces = raw.decode("utf-8").splitlines()
        except UnicodeDecodeError as error:
            return ReadResult(
                problem=ReadProblem("not UTF-8 text (binary file?)", f"byte {offset + error.start}")
            )
        offset += len(raw)
        if number == 0 and not _opens_json_lines(pieces, check_nesting):
            return None
        if number == 1 and not pieces[0].strip():
            return None  # a blank second line: the whole-file reader decides
        whole = raw if len(pieces) == 1 else None  # the line's bytes are its one piece's
        for line in pieces:
            number += 1
            _take_line(result, bad, number, line, check_nesting, whole)
    if number < 2:
        return None
    result.problem = summarize_problems(bad)
    result.bad_records = bad
    return result


def _take_line(
    result: ReadResult,
    bad: list[ReadProblem],
    number: int,
    line: str,
    check_nesting: NestingCheck,
    raw: bytes | None = None,
) -> None:
    """One line of a JSON Lines file: its record into `result`, or its problem into `bad`
    (blank lines are skipped); both readers, whole-text and line by line, use it. `raw`:
    the line's bytes, when known (`_parse_one`)."""
    if not line.strip():
        return
    label = f"line {number}"
    if len(line) > MAX_LINE_BYTES:
        bad.append(ReadProblem(f"record is over the {_human(MAX_LINE_BYTES)} line limit", label))
        return
    record, problem = _parse_one(line, label, check_nesting, raw)
    if problem is not None:
        bad.append(problem)
    else:
        result.documents.append((label, record))


def _opens_json_lines(pieces: list[str], check_nesting: NestingCheck) -> bool:
    """True when the file's first line (`pieces`: its `splitlines`) is one JSON object alone."""
    if len(pieces) != 1 or len(pieces[0]) > MAX_LINE_BYTES:
        return False
    value, problem = _parse_one(pieces[0], "line 1", check_nesting)
    return problem is None and type(value) is dict


def parse_json_text(
    text: str, check_nesting: NestingCheck = True, data: bytes | None = None
) -> ReadResult:
    """Parse decoded text as one JSON document or JSON Lines (see `read_json_file`).
    `data`: the UTF-8 bytes `text` was decoded from (without a BOM), when held: JSON Lines
    are then parsed from their bytes (`_byte_lines`)."""
    if not text.strip():
        return ReadResult(problem=ReadProblem("empty file (only whitespace)"))
    value, problem = _parse_one(text, None, check_nesting)
    if problem is None:
        return ReadResult(documents=[(None, value)])
    lines = text.splitlines()
    if not _looks_like_json_lines(lines):
        return ReadResult(problem=problem)
    result = ReadResult(json_lines=True)
    bad: list[ReadProblem] = []
    pieces = _byte_lines(data, lines)
    for number, line in enumerate(lines, start=1):
        raw = pieces[number - 1] if pieces is not None else None
        _take_line(result, bad, number, line, check_nesting, raw)
    result.problem = summarize_problems(bad)
    result.bad_records = bad
    return result


def _byte_lines(data: bytes | None, lines: list[str]) -> list[bytes] | None:
    """The bytes of each of `lines` (the `str.splitlines` of `data` decoded; a "\\r" may be
    left at their end) when `data` breaks lines at "\\n" (or "\\r\\n") alone, as a log does;
    else None. `str.splitlines` breaks where `bytes.split(b"\\n")` does and at more ("\\r",
    "\\x0c", "\\u2028"...): as many pieces as lines means no other break, piece for line."""
    if data is None:
        return None
    pieces = data.split(b"\n")
    if data.endswith(b"\n"):
        pieces.pop()
    return pieces if len(pieces) == len(lines) else None


def _read_large_json_lines(path: Path, size: int, max_document_bytes: int) -> ReadResult:
    """Stream a big file line by line; refuse it unless it is JSON Lines."""
    result = ReadResult(json_lines=True)
    bad: list[ReadProblem] = []
    try:
        with open_regular(path) as handle:
            for number, raw in enumerate(bounded_lines(handle, MAX_LINE_BYTES), start=1):
                label = f"line {number}"
                if raw is None:
                    bad.append(
                        ReadProblem(
                            f"record is over the {_human(MAX_LINE_BYTES)} line limit", label
                        )
                    )
                    if number == 1:
                        break
                    continue
                if not raw.strip():
                    continue
                text, problem = _decode(raw)
                if problem is not None or text is None:
                    bad.append(ReadProblem(problem.error if problem else "unreadable", label))
                else:
                    record, line_problem = _parse_one(text, label)
                    if line_problem is not None:
                        bad.append(line_problem)
                    else:
                        result.documents.append((label, record))
                if number == 1 and bad:
                    break
    except OSError as error:
        return ReadResult(problem=ReadProblem(f"cannot read: {error.strerror or error}"))
    if not result.documents:
        return ReadResult(
            problem=ReadProblem(
                f"file is {_human(size)}: a single JSON document over {_human(max_document_bytes)} "
                "is refused so it cannot exhaust memory (only JSON Lines are streamed)"
            )
        )
    result.problem = summarize_problems(bad)
    result.bad_records = bad
    return result


def summarize_problems(bad: list[ReadProblem]) -> ReadProblem | None:
    """One problem for a file: the only one, or a count naming the first (by line)."""
    if not bad:
        return None
    first = min(bad, key=lambda p: _line_number(p.where))
    if len(bad) == 1:
        return first
    return ReadProblem(f"{len(bad)} records cannot be read; first: {first.error}", first.where)


def _line_number(where: str | None) -> int:
    if where and where.startswith("line "):
        head = where.split()[1]
        if head.isdigit():
            return int(head)
    return 0


def _human(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    value = float(size)
    for unit in ("KB", "MB", "GB"):
        value /= 1024
        if value < 1024 or unit == "GB":
            break
    return f"{value:.1f} {unit}"
