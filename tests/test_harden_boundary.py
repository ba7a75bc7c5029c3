"""Near misses of our formats are errors, never skips; error lines always carry error,
source and where; a mistyped first word is a usage error with a suggestion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REFERENCE
from tests.fuzz.harness import run_cli

A = REFERENCE / "a_current_round_plain"


def _near_misses(folder: Path) -> dict[str, str]:
    """File name -> words its error must hold."""
    folder.mkdir()
    records = [
        json.loads(line) for line in (A / "CurrentRoundCompressor.jsonl").read_text().splitlines()
    ]
    snapshot = json.loads((A / "input.json").read_text())
    dump = json.loads(next(A.glob("17*_CurrentRoundCompressor_*.json")).read_text())
    eventless = {k: v for k, v in records[0].items() if k != "event"}
    roleless = [{k: v for k, v in m.items() if k != "role"} for m in snapshot["messages"]]
    cases = {
        "eventless.jsonl": (json.dumps(eventless) + "\n", "without its 'event'"),
        "eventless_object.json": (json.dumps(eventless), "without its 'event'"),
        "roleless.json": (json.dumps(roleless), "without their 'role'"),
        "no_messages.json": (
            json.dumps({k: v for k, v in snapshot.items() if k != "messages"}),
            "without its 'messages'",
        ),
        "wrapped_dump.json": (json.dumps([dump]), "never wrapped"),
        "double_wrapped.json": (json.dumps([[records[0], records[1]]]), "never wrapped"),
        "under_a_key.json": (json.dumps({"data": dump}), "never wrapped"),
        "chat_request.json": (
            json.dumps({"model": "m", "tools": [], "temperature": 0}),
            "without its 'messages'",
        ),
        "bad_event.jsonl": (
            json.dumps({**records[0], "event": 5}) + "\n",
            "'event' must be a string",
        ),
    }
    for name, (text, _) in cases.items():
        (folder / name).write_text(text)
    return {name: words for name, (_, words) in cases.items()}


def test_near_misses_in_a_folder_are_each_one_error(tmp_path: Path) -> None:
    expected = _near_misses(tmp_path / "near")
    run = run_cli(["why", "--json", str(tmp_path / "near")])
    assert run.crash is None and run.code == 1
    errors = {Path(line["source"]).name: line for line in run.lines() if "error" in line}
    assert set(errors) == set(expected)
    for name, words in expected.items():
        assert words in errors[name]["error"], (name, errors[name])
        assert {"error", "source", "where"} <= set(errors[name])


def test_unrelated_json_in_a_folder_is_still_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "package.json").write_text(json.dumps({"name": "x", "version": "1.0", "scripts": {}}))
    (folder / "numbers.json").write_text("[1, 2, 3]")
    (folder / "result.json").write_text((A / "result.json").read_text())
    run = run_cli(["why", "--json", str(folder)])
    assert run.crash is None and run.code == 0 and run.lines() == []


@pytest.mark.parametrize(
    ("word", "hint"), [("whyy", "why"), ("snapshots", "snapshot"), ("statz", "stats")]
)
def test_a_mistyped_command_is_a_usage_error_with_a_hint(word: str, hint: str) -> None:
    run = run_cli([word, "x"])
    assert run.code == 2 and run.crash is None
    assert f"did you mean `inspector {hint}`" in run.stderr.decode()


def test_a_mistyped_command_with_control_characters_is_shown_escaped() -> None:
    run = run_cli(["wh\x1b[2Jy"])
    assert run.code == 2 and b"\x1b" not in run.stderr
