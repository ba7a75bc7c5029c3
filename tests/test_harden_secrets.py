"""Planted secrets of every kind a scanner finds appear in no output of any command, nor in
a re-run's files; `--no-mask` shows them (so they really were in the data)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from inspector.core.redact import Masker, mask_secrets, mask_text
from tests.conftest import REFERENCE
from tests.fuzz.harness import run_cli
from tests.fuzz.hostile import HostileServer, body
from tests.harden_secrets import PLANTED, SECRET_PARTS, leaks

A = REFERENCE / "a_current_round_plain"


def _planted_folder(folder: Path) -> Path:
    """Copies of real files with every kind of secret in content, tool-call arguments,
    secret-named fields, a dump's prompt and a debug record's fields."""
    folder.mkdir()
    snapshot = json.loads((A / "input.json").read_text())
    for kind, text in PLANTED.items():
        call = {
            "id": f"call_{kind}",
            "type": "function",
            "function": {
                "name": "login",
                "arguments": json.dumps({"note": text, "password": "FAKEtoolSECRETpw"}),
            },
        }
        snapshot["messages"] += [
            {"role": "user", "content": f"{kind}: {text}"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{kind}", "content": text},
        ]
    snapshot["api_key"] = "FAKEopenaiSECRET-field"
    snapshot["metadata"] = {"client_secret": "FAKEdbSECRET-field", "x": PLANTED["jwt"]}
    (folder / "input.json").write_text(json.dumps(snapshot))
    dump_path = next(A.glob("17*_CurrentRoundCompressor_*.json"))
    dump = json.loads(dump_path.read_text())
    dump["compression_request"]["prompt"] += "\n" + "\n".join(PLANTED.values())
    (folder / dump_path.name).write_text(json.dumps(dump))
    lines = (A / "CurrentRoundCompressor.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    record["reason"] = PLANTED["bearer"] + " " + PLANTED["url_password"]
    record["authorization"] = "Bearer FAKEbearerSECRET-field"
    (folder / "CurrentRoundCompressor.jsonl").write_text(
        "\n".join([json.dumps(record), *lines[1:]]) + "\n"
    )
    return folder


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_each_kind_is_masked_in_text_and_in_json_text(kind: str) -> None:
    text = PLANTED[kind]
    assert leaks(text), "the planted text holds a secret"
    assert not leaks(mask_text(text))
    nested = json.dumps({"a": text, "b": json.dumps({"args": text})})
    masked = mask_text(nested)
    json.loads(masked)  # masking JSON text keeps it valid JSON
    assert not leaks(masked)
    assert not leaks(json.dumps(mask_secrets({"messages": [{"content": text}]})))


def test_ordinary_data_is_left_alone() -> None:
    plain = {
        "token_mode": "tiktoken_cl100k",
        "total_tokens": 5120,
        "max_tokens": 100,
        "content": "The key idea: sort first. Tokens: 40. See https://example.com/a:b",
    }
    assert mask_secrets(plain) == plain


def test_literals_are_masked_also_json_escaped() -> None:
    masker = Masker(['se"cret-literal-1'])
    assert "cret-literal" not in masker.text(json.dumps({"echo": 'se"cret-literal-1'}))


COMMANDS = (
    ["why", "--json"],
    ["why"],
    ["snapshot"],
    ["stats", "--json"],
    ["stats"],
    ["compare", "--processors", "current_round,hybrid", "--json"],
    ["compare", "--processors", "current_round,hybrid"],
    ["watch", "--once", "--json"],
    ["sweep", "--param", "trigger_ratio", "--json"],
    ["report", "--format", "md"],
    ["report", "--format", "html"],
)


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_no_command_prints_a_planted_secret(tmp_path: Path, command: list[str]) -> None:
    folder = _planted_folder(tmp_path / "planted")
    source = folder / "input.json" if command[0] in ("sweep", "report") else folder
    run = run_cli([*command, str(source)], 120)
    assert run.crash is None and not run.hung, run.crash
    assert run.stdout, run.stderr
    assert leaks(run.stdout) == [] and leaks(run.stderr) == []


def test_no_mask_shows_them(tmp_path: Path) -> None:
    folder = _planted_folder(tmp_path / "planted")
    run = run_cli(["snapshot", "--no-mask", str(folder)])
    assert set(leaks(run.stdout)) == set(SECRET_PARTS)


def test_a_rerun_writes_no_planted_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _planted_folder(tmp_path / "planted")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    reply = json.dumps(
        {
            "choices": [
                {
                    "message": {
                        "content": "<state_snapshot>"
                        + PLANTED["password_line"]
                        + " "
                        + PLANTED["openai"]
                        + "</state_snapshot>"
                    }
                }
            ]
        }
    )
    out = tmp_path / "out"
    with HostileServer(body(reply)) as server:
        run = run_cli(
            [
                "rerun",
                str(folder / "input.json"),
                "--base-url",
                server.base_url,
                "--model",
                "m",
                "--no-key",
                "--no-tools",
                "--out",
                str(out),
                "--json",
            ]
        )
    assert run.crash is None, run.crash
    assert run.lines()[0]["outcome"] in ("applied", "no_benefit")
    files = [p for p in out.rglob("*") if p.is_file()]
    assert files
    for path in files:
        assert leaks(path.read_bytes()) == [], path
    assert leaks(run.stdout) == [] and leaks(run.stderr) == []
    shutil.rmtree(out)
