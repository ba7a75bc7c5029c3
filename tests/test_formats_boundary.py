"""The input boundary (issue 15, item 1) for the file readers: every broken artifact is one
located error and never a silent skip, huge integers are refused per field, lone surrogates
are kept and never crash the JSON output, and the rest of the folder is still reported."""

from __future__ import annotations

import copy
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from inspector.cli.common import print_json_line
from inspector.core.artifact import Artifact, DumpRecorded, LoadError
from inspector.sources.loader import Skipped, load_paths
from tests.conftest import REFERENCE, REPO

SCENARIO = REFERENCE / "a_current_round_plain"
DUMP_PATH = next(SCENARIO.glob("*Compressor_*.json"))
HUGE = "1" + "0" * 400


def _dump() -> dict[str, Any]:
    return json.loads(DUMP_PATH.read_text())


def _input() -> dict[str, Any]:
    return json.loads((SCENARIO / "input.json").read_text())


def _log() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (SCENARIO / "CurrentRoundCompressor.jsonl").open()]


def _with_huge(document: Any, marker: int) -> str:
    """`document` as JSON text with the number `marker` replaced by a 401-digit integer."""
    text = json.dumps(document)
    assert text.count(str(marker)) == 1
    return text.replace(str(marker), HUGE)


def _set(document: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    node = document
    parts = path.split(".")
    for part in parts[:-1]:
        node = node[part]
    node[parts[-1]] = value
    return document


def _broken_files() -> dict[str, tuple[str, str, str | None]]:
    """file name -> (its text, words the error must hold, the key its `where` must name)."""
    dump, snapshot, log = _dump(), _input(), _log()
    marker = 987654321987
    files: dict[str, tuple[str, str, str | None]] = {
        "wrapped.json": (json.dumps([dump]), "never wrapped in a list", None),
        "missing_role.json": (
            json.dumps([{"role": "user", "content": "a"}, {"content": "b"}]),
            "messages[1]: a message needs a string 'role'",
            "key messages[1]",
        ),
        "BadEvent.jsonl": (
            json.dumps({"timestamp": 1.0, "event": 3, "processor": "CurrentRoundCompressor"}),
            "'event' must be a string",
            "key event",
        ),
        "chat.json": (
            json.dumps({"model": "gpt-4o", "tools": [], "temperature": 0.2}),
            "a chat request without its 'messages' list",
            None,
        ),
        "role_not_text.json": (json.dumps({"role": 5, "content": "x"}), "'role'", None),
    }
    for name, path in (
        ("1795975300001_CurrentRoundCompressor_cm.json", "trigger.context_max"),
        ("1795975300002_CurrentRoundCompressor_ratio.json", "benefit.reduction_ratio"),
        ("1795975300003_CurrentRoundCompressor_ts.json", "timestamp"),
    ):
        text = _with_huge(_set(copy.deepcopy(dump), path, marker), marker)
        files[name] = (text, "out of range", f"key {path}")
    for name, path in (
        ("snap_cm.json", "context_max"),
        ("snap_ts.json", "timestamp"),
        ("snap_ratio.json", "config.trigger_context_ratio"),
    ):
        text = _with_huge(_set(copy.deepcopy(snapshot), path, marker), marker)
        files[name] = (text, "out of range", f"key {path}")
    records = copy.deepcopy(log)
    records[0]["total_tokens"] = marker
    files["HugeTotal.jsonl"] = (
        "\n".join(json.dumps(r) for r in records).replace(str(marker), HUGE),
        "'total_tokens' is out of range",
        "key total_tokens",
    )
    return files


def _write(folder: Path, files: dict[str, tuple[str, str, str | None]]) -> None:
    folder.mkdir(exist_ok=True)
    for name, (text, _, _) in files.items():
        (folder / name).write_text(text, encoding="utf-8")


@pytest.mark.parametrize("name", sorted(_broken_files()))
def test_each_broken_artifact_is_one_located_error(
    tmp_path: Path, counters: Any, name: str
) -> None:
    files = _broken_files()
    text, words, key = files[name]
    folder = tmp_path / "folder"
    _write(folder, {name: files[name]})
    (folder / DUMP_PATH.name).write_bytes(DUMP_PATH.read_bytes())  # a good file beside it
    skipped: list[Skipped] = []
    results = list(load_paths([folder], counters=counters, skipped=skipped))
    errors = [r for r in results if isinstance(r, LoadError)]
    assert skipped == [] and len(errors) == 1, (errors, skipped)
    assert Path(errors[0].source).name == name and words in errors[0].error
    if key is not None:
        assert errors[0].where is not None and key in errors[0].where
    assert HUGE not in errors[0].error
    assert [r.kind for r in results if isinstance(r, Artifact)] == ["dump"]


def test_a_one_message_json_lines_file_is_a_message_list(tmp_path: Path, counters: Any) -> None:
    (tmp_path / "chat.jsonl").write_text(json.dumps({"role": "user", "content": "hello"}) + "\n")
    skipped: list[Skipped] = []
    results = list(load_paths([tmp_path], counters=counters, skipped=skipped))
    assert skipped == [] and len(results) == 1 and isinstance(results[0], Artifact)
    snapshot = results[0].snapshot
    assert results[0].kind == "messages" and snapshot is not None
    assert [m.content for m in snapshot.messages] == ["hello"]


def test_a_json_lines_record_of_no_format_among_messages_is_reported(
    tmp_path: Path, counters: Any
) -> None:
    lines = [{"role": "user", "content": "a"}, {"role": None, "content": "b"}]
    (tmp_path / "chat.jsonl").write_text("\n".join(json.dumps(line) for line in lines))
    results = list(load_paths([tmp_path], counters=counters))
    errors = [r for r in results if isinstance(r, LoadError)]
    assert len(errors) == 1 and errors[0].where == "line 2" and "'role'" in errors[0].error
    assert [r.kind for r in results if isinstance(r, Artifact)] == ["messages"]


def test_unrelated_json_in_a_folder_is_still_skipped_quietly(tmp_path: Path, counters: Any) -> None:
    (tmp_path / "package.json").write_text(json.dumps({"name": "x", "version": "1.0"}))
    (tmp_path / "list.json").write_text(json.dumps([{"name": "a"}, {"name": "b"}]))
    skipped: list[Skipped] = []
    assert list(load_paths([tmp_path], counters=counters, skipped=skipped)) == []
    assert sorted(Path(s.source).name for s in skipped) == ["list.json", "package.json"]


def test_lone_surrogates_are_kept_and_written_as_valid_utf8_json(tmp_path: Path) -> None:
    snapshot = _input()
    snapshot["messages"][3]["content"] = "SURROGATE"
    snapshot["messages"][4]["role"] = "ROLE"
    text = json.dumps(snapshot).replace("SURROGATE", "a\\ud800b").replace('"ROLE"', '"us\\udfffer"')
    (tmp_path / "snap.json").write_text(text)
    log = _log()
    log[0]["reason"] = "REASON"
    (tmp_path / "CurrentRoundCompressor.jsonl").write_text(
        "\n".join(json.dumps(r) for r in log).replace("REASON", "below\\ud83d")
    )
    [artifact] = [a for a in load_paths([tmp_path / "snap.json"]) if isinstance(a, Artifact)]
    assert artifact.snapshot is not None and artifact.snapshot.messages[3].content == "a\ud800b"
    for command in (["why", "--json"], ["snapshot"], ["stats", "--json"]):
        done = subprocess.run(
            [sys.executable, "-m", "inspector", command[0], str(tmp_path), *command[1:]],
            capture_output=True,
            cwd=REPO,
            timeout=120,
            env={"PYTHONIOENCODING": "ascii", "PATH": "/usr/bin:/bin"},
        )
        assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")
        assert done.returncode == 0, (command, done.stderr)
        lines = [json.loads(line) for line in done.stdout.decode("utf-8").splitlines()]
        assert lines and all("error" not in line for line in lines)
    snapshot_lines = subprocess.run(
        [sys.executable, "-m", "inspector", "snapshot", str(tmp_path / "snap.json")],
        capture_output=True,
        cwd=REPO,
        timeout=120,
    ).stdout.decode("utf-8")
    written = json.loads(snapshot_lines.splitlines()[0])
    assert written["messages"][3]["content"] == "a\ud800b"
    assert written["messages"][4]["role"] == "us\udfffer"


def test_print_json_line_escapes_only_what_utf8_cannot_hold() -> None:
    text_stream = io.StringIO()
    print_json_line({"text": "é\ud800", "key\udfff": 1}, text_stream)
    line = text_stream.getvalue()
    assert line.endswith("\n") and line.encode("utf-8")
    assert json.loads(line) == {"text": "é\ud800", "key\udfff": 1} and "é" in line
    binary = io.BytesIO()
    wrapper = io.TextIOWrapper(binary, encoding="ascii")
    print_json_line({"text": "中文"}, wrapper)
    assert json.loads(binary.getvalue().decode("utf-8")) == {"text": "中文"}


def test_why_json_keeps_the_recorded_keys_of_a_dump(counters: Any) -> None:
    [artifact] = [a for a in load_paths([DUMP_PATH], counters=counters) if isinstance(a, Artifact)]
    assert isinstance(artifact.recorded, DumpRecorded)
    assert artifact.recorded.tokens_before == 5460 and artifact.recorded.reduction == 1413
    assert list(artifact.recorded) == [
        "outcome",
        "span",
        "tokens_before",
        "tokens_after",
        "reduction",
        "reduction_ratio",
        "context_max",
        "target_tokens",
        "retries",
        "messages_before",
        "messages_after",
        "summary_chars",
        "model_calls",
        "span_first_built",
        "inferred",
        "unrecoverable",
    ]
