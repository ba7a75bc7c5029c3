"""`inspector rerun` end to end against a real local server: output, files, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.cli import main
from tests.conftest import REFERENCE
from tests.servers.fake_openai import FakeOpenAI, Reply

SECRET = "sk-cli-tests-SECRET-555"
A = REFERENCE / "a_current_round_plain"
A_DUMP = next(A.glob("17*_CurrentRoundCompressor_*.json"))
A_SCRIPT = json.loads((A / "input.json").read_text())["fake_server_script"]


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


def _rerun(server: FakeOpenAI, *extra: str, source: Path = A_DUMP) -> list[str]:
    return [
        "rerun",
        str(source),
        "--base-url",
        server.base_url,
        "--model",
        "fake-compress-model",
        *extra,
    ]


def test_dump_rerun_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    with FakeOpenAI(A_SCRIPT) as server:
        status = main(_rerun(server, "--out", str(out), "--json"))
        sent = server.requests[0].body
    captured = capsys.readouterr()
    assert status == 0
    report = json.loads(captured.out)
    assert report["kind"] == "dump" and report["outcome"] == "applied"
    assert report["prompt_source"] == "recorded"
    recorded = json.loads(A_DUMP.read_text())
    assert sent["messages"][-1]["content"] == recorded["compression_request"]["prompt"]
    assert (report["tokens_before"], report["tokens_after"]) == (5460, 4047)
    assert report["recovered_files"] and report["attempts"][0]["status_code"] == 200
    dump = Path(report["written"]["dump"])
    assert dump.parent == out and dump.name.endswith(
        "_CurrentRoundCompressor_ojw-ref-a_current_round_plain.json"
    )
    ours = json.loads(dump.read_text())
    assert ours["benefit"] == recorded["benefit"]
    assert (
        ours["context_after"]["messages"][3]["content"]
        == recorded["context_after"]["messages"][3]["content"]
    )
    for text in (
        captured.out,
        captured.err,
        dump.read_text(),
        Path(report["written"]["debug_log"]).read_text(),
    ):
        assert SECRET not in text


def test_snapshot_rerun_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reply = Reply(
        content="<state_snapshot>\nFix parse() in src/tinycal/parse.py\n</state_snapshot>"
    )
    with FakeOpenAI([reply]) as server:
        status = main(_rerun(server, "--out", str(tmp_path), "--no-tools", source=A / "input.json"))
        assert "tools" not in server.requests[0].body
    captured = capsys.readouterr()
    assert status == 0
    assert "COMPRESSED" in captured.out and "before -> after" in captured.out
    assert "what the summary lost" in captured.out
    assert "attempt 1:" in captured.err
    assert SECRET not in captured.out + captured.err


def test_default_out_dir_is_user_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOpenAI(A_SCRIPT) as server:
        assert main(_rerun(server, "--json")) == 0
    written = json.loads(capsys.readouterr().out)["written"]
    assert Path(written["folder"]) == tmp_path / "xdg" / "context-inspector" / "reruns"


def test_model_failure_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    error = {
        "message": "Incorrect API key provided.",
        "type": "invalid_request_error",
        "code": "invalid_api_key",
    }
    with FakeOpenAI([Reply(status=401, error=error)]) as server:
        status = main(_rerun(server, "--out", str(tmp_path)))
    captured = capsys.readouterr()
    assert status == 3
    assert "MODEL CALL FAILED" in captured.out and "API key was refused" in captured.out
    assert "Traceback" not in captured.err


def test_tool_call_only_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    calls = [{"id": "c", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]
    with FakeOpenAI([Reply(content=None, tool_calls=calls)]) as server:
        assert main(_rerun(server, "--out", str(tmp_path), "--json")) == 3
    report = json.loads(capsys.readouterr().out)
    assert report["outcome"] == "empty_summary" and report["reply_tool_calls"] == 1
    assert report["written"]["dump"] is None


def test_usage_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = "http://127.0.0.1:9/v1"
    base = ["rerun", str(A_DUMP), "--base-url", url, "--model", "m"]
    monkeypatch.delenv("OPENAI_API_KEY")
    assert main([*base, "--out", str(tmp_path)]) == 2
    assert "OPENAI_API_KEY is not set" in capsys.readouterr().err
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    assert main([*base, "--out", str(A / "sub")]) == 2
    assert "never writes where it reads" in capsys.readouterr().err
    assert main([*base, "--out", str(tmp_path), "--processor", "hybrid"]) == 2
    assert main([*base, "--out", str(tmp_path), "--trigger-ratio", "2"]) == 2
    assert main(["rerun", str(A_DUMP), "--model", "m"]) == 2  # no --base-url
    assert (
        main(["rerun", str(REFERENCE), "--base-url", url, "--model", "m", "--out", str(tmp_path)])
        == 2
    )
    assert "--id" in capsys.readouterr().err


def test_unreadable_and_nothing_to_compress(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "src" / "bad.json"
    bad.parent.mkdir()
    bad.write_text("{ not json")
    url = "http://127.0.0.1:9/v1"
    assert (
        main(["rerun", str(bad), "--base-url", url, "--model", "m", "--out", str(tmp_path / "o")])
        == 1
    )
    assert "not valid JSON" in capsys.readouterr().err
    args = [
        "rerun",
        str(A / "input.json"),
        "--base-url",
        url,
        "--model",
        "m",
        "--out",
        str(tmp_path / "o"),
    ]
    assert main([*args, "--keep-recent", "15"]) == 4
    assert "nothing to compress" in capsys.readouterr().err


def test_rerun_does_not_import_textual(tmp_path: Path) -> None:
    code = (
        "import sys\nfrom inspector.cli import main\n"
        f"status = main(['rerun', {str(A_DUMP)!r}, '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm', "
        f"'--out', {str(tmp_path)!r}, '--timeout', '0.5', '--json'])\n"
        "assert 'textual' not in sys.modules, 'textual imported'\nprint('status', status)\n"
    )
    env = {**os.environ, "OPENAI_API_KEY": SECRET}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "status 3" in done.stdout  # nothing listens on port 9: connection errors, then give up
    assert SECRET not in done.stdout + done.stderr
