"""The fast facts scans (line memo, repr reader, the after index) find exactly what the
straightforward whole-text scans of `tests/facts_reference.py` find, on generated texts
built from the tricky pieces: unicode (and the letters `str.lower` and case-blind regexes
treat apart), long lines, nested and escaped quotes, Windows paths, overlapping and
repeated matches, literal `\\n`, a dict key whose colon is on a later line."""

from __future__ import annotations

import ast
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core import hybrid_facts as hf
from inspector.core.messages import Message, ToolCall
from tests import facts_reference as ref

PIECES = [
    "src/tinycal/parse.py",
    "/workspace/x/y.kt",
    "./a/../b/c.py",
    "a//b.py",
    "parse.py",
    "x.py.txt",
    "a/b/c/d.e/f.toml",
    "C:\\Users\\dev\\proj\\main.py",
    "src\\win\\path.rs",
    "http://host/a/b.js",
    "_parse_tz",
    "helper_parse_2",
    "camelCaseName",
    "PascalCaseName",
    "AssertionError",
    "ValueError: bad offset",
    "Traceback (most recent call last):",
    "FAILED tests/test_x.py::test_y - AssertionError",
    "error=None",
    "'stderr': ''",
    "0 errors",
    "errors=0",
    "fatal: not a git repo",
    "panic!",
    "faıled",
    "TRACEBACK",
    "TRACEBAC\u212a",
    "FAİLED",
    "errorſ",
    "'file_path': ",
    '"exit_code":',
    "'key'",
    "\n  : 1",
    "\n",
    "\\n",
    "\\\\n",
    "\r",
    "\t",
    "  ",
    " ",
    "\u00a0",
    "\u2028",
    ".",
    "/",
    "-",
    "_",
    ":",
    "'",
    '"',
    "\\'",
    "中文路径/文件.py",
    "请检查",
    "é",
    "😀",
    "𝔘nicode_name",
    "x" * 300,
    "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q",
    "path/" * 30 + "end.py",
]

texts = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=6)), max_size=30).map("".join)

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(texts)
def test_paths_identifiers_errors_of_a_text_match_the_whole_text_scans(text: str) -> None:
    assert list(hf.find_paths(text).items()) == list(ref.find_paths(text).items())
    assert hf.find_identifiers(text) == ref.find_identifiers(text)
    assert hf.find_errors(text) == ref.find_errors(text)


def _repr_values() -> st.SearchStrategy[object]:
    leaves = st.one_of(
        st.lists(st.sampled_from(PIECES), max_size=8).map("".join),
        st.text(max_size=20),
        st.integers(min_value=-(10**20), max_value=10**20),
        st.booleans(),
        st.none(),
        st.floats(allow_nan=False),
    )
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(st.text(max_size=8), children, max_size=4),
            st.tuples(children, children),
        ),
        max_leaves=12,
    )


def _mutations(source: str) -> st.SearchStrategy[str]:
    """The repr itself, cut, or with a piece put in: mostly not a valid literal any more."""
    return st.one_of(
        st.just(source),
        st.integers(0, len(source)).map(lambda cut: source[:cut]),
        st.tuples(st.integers(0, len(source)), st.sampled_from(PIECES + ["\x00", "\ud800"])).map(
            lambda put: source[: put[0]] + put[1] + source[put[0] :]
        ),
    )


@SETTINGS
@given(_repr_values().map(repr).flatmap(_mutations))
def test_the_repr_reader_gives_what_literal_eval_gives(source: str) -> None:
    try:
        expected: object = ast.literal_eval(source)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError) as error:
        expected = type(error)
    try:
        got: object = hf.literal_value(source)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError) as error:
        got = type(error)
    if isinstance(expected, type) and issubclass(expected, Exception):
        assert isinstance(got, type) and issubclass(got, Exception)
    else:
        assert repr(got) == repr(expected)
    output = f"success=True data={source} error=None"
    assert hf.tool_output_text(output) == ref.tool_output_text(output)


def _message(role: str, text: str, call: str | None, name: str) -> Message:
    if role == "tool":
        content = f"success=True data={ {'output': text}!r} error=None"
        return Message(role="tool", content=content, tool_call_id=call)
    calls = (ToolCall(id=call, name=name, arguments=f'{{"file_path": {text[:40]!r}}}'),)
    return Message(role=role, content=text, tool_calls=calls if call else ())


messages = st.lists(
    st.builds(
        _message,
        st.sampled_from(["system", "user", "assistant", "tool"]),
        texts,
        st.sampled_from([None, "c1", "c2", "c3"]),
        st.sampled_from(["read_file", "bash", "grep", "edit_file"]),
    ),
    max_size=8,
)


@SETTINGS
@given(messages, st.lists(st.integers(0, 7), max_size=8), texts)
def test_facts_and_losses_match_the_whole_text_scans(
    context: list[Message], kept: list[int], summary: str
) -> None:
    facts = hf.extract_facts(context)
    expected = ref.extract_facts(context)
    assert list(facts.paths.items()) == list(expected.paths.items())
    assert facts.identifiers == expected.identifiers
    assert facts.errors == expected.errors
    after = [context[i] for i in kept if i < len(context)]
    after.append(Message(role="user", content=summary))
    assert hf.losses_between(facts, after) == ref.losses_between(facts, after)


@SETTINGS
@given(st.lists(texts, min_size=1, max_size=6), st.lists(texts, max_size=6))
def test_an_error_line_running_across_lines_after_is_found(
    lines: list[str], after: list[str]
) -> None:
    """Errors glued from several lines, and text after that breaks them at other places."""
    source = Message(role="user", content=" ".join(lines) + " ValueError: x")
    facts = hf.extract_facts([source])
    spread = [Message(role="user", content="\n".join(after + lines) + "\nValueError: x")]
    assert hf.losses_between(facts, spread) == ref.losses_between(facts, spread)


def test_hand_made_facts_with_line_breaks_are_looked_up_in_the_whole_text() -> None:
    facts = hf.Facts({"a\nb": "x/a\nb"}, frozenset({"one\ntwo"}), ("two  spaces", " edge", "a\nb"))
    after = [Message(role="user", content="x a\nb one\ntwo two  spaces edge")]
    assert hf.losses_between(facts, after) == ref.losses_between(facts, after)
    lost = hf.losses_between(facts, after)
    # the collapsed text has single spaces only: a double space or a line break is never in it
    assert (lost.file_paths, lost.identifiers) == ((), ())
    assert lost.error_messages == ("two  spaces", "a\nb")


def test_a_small_memo_that_clears_often_finds_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hf._LineMemo, "MAX_CHARS", 40)
    monkeypatch.setattr(hf, "_MEMO", hf._LineMemo())
    text = "\n".join(PIECES) * 2
    assert list(hf.find_paths(text).items()) == list(ref.find_paths(text).items())
    assert hf.find_identifiers(text) == ref.find_identifiers(text)
    assert hf.find_errors(text) == ref.find_errors(text)
    assert len(hf._MEMO.facts) < len(PIECES)


def test_the_case_blind_letters_are_every_non_ascii_letter_the_error_words_match() -> None:
    """A line is looked at for an error only with an error word or one of these letters."""
    everything = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    found = {
        m.group(0)
        for letter in "abcdefghijklmnopqrstuvwxyz"
        for m in re.finditer(f"(?i:{letter})", everything)
        if not m.group(0).isascii()
    }
    assert found == set(hf._CASE_BLIND_LETTERS)


def test_a_key_whose_colon_is_on_a_later_line_is_structure() -> None:
    context = [
        Message(role="user", content="see helper_name here"),
        Message(role="assistant", content="{'helper_name'\n   : 1}"),
    ]
    assert hf.extract_facts(context).identifiers == ref.extract_facts(context).identifiers
    assert "helper_name" not in hf.extract_facts(context).identifiers
