"""A tuning key re-runs the findings: the summary-loss scan of a message (its paths,
identifiers and error lines, and a tool result's file path) is made once per message and
kept, so the second scan reads no text again and finds exactly what the first found."""

from __future__ import annotations

import pytest

import inspector.core.summary_loss as summary_loss
from inspector.core.messages import Message
from inspector.core.summary_loss import ALL_KINDS, summary_losses


def _messages() -> list[Message]:
    return [
        Message(role="user", content="Fix `parse_offset` in src/tinycal/tz.py please"),
        Message(
            role="tool",
            content="success=True data={'file_path': 'src/tinycal/tz.py', 'content': 'def "
            "parse_offset(x): ...'}",
            tool_call_id="c1",
        ),
        Message(role="tool", content="Traceback: ValueError: bad offset +05:45", tool_call_id="c2"),
    ]


def test_a_second_scan_reads_no_text_and_finds_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    messages = _messages()
    first = summary_losses(messages, "nothing here", 0, ["src/tinycal/tz.py"], ALL_KINDS)
    assert {item.kind for item in first} == {"path", "identifier", "error"}
    scans: list[str] = []
    real = summary_loss._paths
    monkeypatch.setattr(summary_loss, "_paths", lambda text: scans.append(text) or real(text))
    again = summary_losses(messages, "nothing here", 0, ["src/tinycal/tz.py"], ALL_KINDS)
    assert again == first and scans == []
    # another summary is checked against the same facts: what it names is not lost
    told = summary_losses(messages, "src/tinycal/tz.py", 0, (), ALL_KINDS)
    assert not [i for i in told if i.kind == "path"] and scans == []
    # a new message (a new identity) is scanned
    fresh = [Message(role="user", content=m.content) for m in messages[:1]]
    assert summary_losses(fresh, "", 0, (), ALL_KINDS) and scans


@pytest.mark.parametrize(
    "text",
    [
        "plain text, no escape at all: src/a/b.py",
        "data={'stdout': 'line one\\nsrc/pkg/mod.py:3: error\\tE1'}",
        "a lone backslash \\ and a path C:\\\\dir\\\\file.txt",
        "tab only\\tthen src/x/y.py",
        "",
    ],
)
def test_unescape_answers_what_both_replacements_give(text: str) -> None:
    """The backslash check (which spares a 40 MB tool result two scans) is a shortcut only:
    the answer is the two replacements' for texts with and without a backslash."""
    assert summary_loss._unescape(text) == text.replace("\\n", "\n").replace("\\t", "\t")
