"""`rerun` and `compare` against real misbehaving servers on 127.0.0.1: every call ends by its
deadline with one classified failure, nothing is written outside --out, no secret is shown."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.conftest import REFERENCE
from tests.fuzz.harness import run_cli, tree_state
from tests.fuzz.hostile import HostileServer, body, drip, echo, endless

KEY = "sk-hardenKEY0123456789SECRETabcdef"
HEADER_VALUE = "hdr-value-SECRET-42"
A = REFERENCE / "a_current_round_plain"
A_DUMP = next(A.glob("17*_CurrentRoundCompressor_*.json"))


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HARDEN_KEY", KEY)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


def _rerun(server: HostileServer, out: Path, *extra: str, source: Path = A_DUMP) -> list[str]:
    return [
        "rerun",
        str(source),
        "--base-url",
        server.base_url,
        "--model",
        "m",
        "--api-key-env",
        "HARDEN_KEY",
        "--header",
        f"X-Custom: {HEADER_VALUE}",
        "--out",
        str(out),
        *extra,
    ]


def _no_secret(*texts: bytes | str) -> None:
    for text in texts:
        data = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        assert KEY not in data and HEADER_VALUE not in data
        assert "hardenKEY" not in data


def _written(out: Path) -> list[Path]:
    return sorted(p for p in out.rglob("*") if p.is_file()) if out.exists() else []


def test_a_dripping_body_ends_at_the_deadline(tmp_path: Path) -> None:
    with HostileServer(drip(0.05)) as server:
        started = time.monotonic()
        run = run_cli(_rerun(server, tmp_path / "out", "--timeout", "0.6", "--json"), 30)
        elapsed = time.monotonic() - started
    assert run.crash is None and not run.hung
    report = run.lines()[0]
    assert run.code == 3 and report["outcome"] == "failed"
    kinds = {a["transport_failure"] for a in report["attempts"]}
    assert kinds == {"timeout"}
    # each call ends at its 0.6 s deadline although the body never stops dripping (the
    # server would take 500 s); openJiuwen retries a timeout twice
    assert all(a["duration_ms"] < 900 for a in report["attempts"]), report["attempts"]
    assert len(report["attempts"]) <= 3 and elapsed < 15, elapsed
    assert not [p for p in _written(tmp_path / "out") if p.suffix == ".json"]


def test_an_endless_body_is_capped(tmp_path: Path) -> None:
    with HostileServer(endless()) as server:
        run = run_cli(_rerun(server, tmp_path / "out", "--timeout", "20", "--json"), 60)
    assert run.crash is None and not run.hung
    report = run.lines()[0]
    assert run.code == 3
    assert report["attempts"][0]["transport_failure"] == "malformed"
    assert "limit" in report["failure"] or "limit" in json.dumps(report["attempts"])


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        (
            '{"choices": [{"message": {"content": "<s>x</s>"}}], "usage": {"prompt_tokens": NaN}}',
            "NaN",
        ),
        (
            '{"choices": [{"message": {"content": "x"}}], "usage": {"total_tokens": 1e999}}',
            "infinity",
        ),
        ('{"choices": [{"message": {"content": 5}}]}', "not a string"),
        (
            '{"choices": [{"message": {"content": "x"}}], "usage": '
            + "[" * 5000
            + "]" * 5000
            + "}",
            "nests",
        ),
        ('{"error": {"message": "quota exhausted for org-77"}}', "quota exhausted for org-77"),
    ],
)
def test_a_bad_reply_is_one_classified_failure(tmp_path: Path, reply: str, words: str) -> None:
    out = tmp_path / "out"
    with HostileServer(body(reply)) as server:
        run = run_cli(_rerun(server, out, "--timeout", "5", "--json"))
        text_run = run_cli(_rerun(server, out, "--timeout", "5"))
    assert run.crash is None and text_run.crash is None, run.crash or text_run.crash
    report = run.lines()[0]
    assert run.code == 3 and report["outcome"] == "failed"
    assert words in json.dumps(report), report["failure"]
    assert words in text_run.stderr.decode() + text_run.stdout.decode()
    assert not [p for p in _written(out) if p.suffix == ".json"]  # no dump from a bad reply


def test_an_echoing_server_never_shows_the_key_or_headers(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with HostileServer(echo()) as server:
        run = run_cli(_rerun(server, out, "--timeout", "5", "--json"))
        text_run = run_cli(_rerun(server, out, "--timeout", "5"))
        assert any(KEY.encode() in r for r in server.requests)  # the server did see it
    assert run.crash is None and text_run.crash is None
    assert run.code == 3
    assert "bad key" in run.stdout.decode()  # the server's words are shown, masked
    _no_secret(run.stdout, run.stderr, text_run.stdout, text_run.stderr)
    assert b"\x1b[2J" not in text_run.stdout + text_run.stderr
    assert b"\x1b[31m" not in text_run.stdout + text_run.stderr
    for path in _written(out):
        _no_secret(path.read_bytes())


@pytest.mark.parametrize("json_out", [True, False])
def test_compare_with_an_echoing_server_shows_no_key(json_out: bool) -> None:
    source = REFERENCE / "k_long_coding_session" / "input.json"
    with HostileServer(echo("500 Internal Server Error")) as server:
        run = run_cli(
            [
                "compare",
                str(source),
                "--processors",
                "hybrid",
                "--context-max",
                "1900",
                "--preserve-recent-turns",
                "3",
                "--base-url",
                server.base_url,
                "--model",
                "m",
                "--api-key-env",
                "HARDEN_KEY",
                *(["--json"] if json_out else []),
            ]
        )
        assert server.requests and KEY.encode() in server.requests[0]  # it was sent, and echoed
    assert run.crash is None and not run.hung
    if json_out:
        assert "level3_error" in run.stdout.decode()
    _no_secret(run.stdout, run.stderr)


def _snapshot_with_session(folder: Path, session: str) -> Path:
    document = json.loads((A / "input.json").read_text())
    document["session_id"] = session
    document["context_id"] = session
    path = folder / "input.json"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize("session", ["..", ".", "../..", "./../x", ".hidden"])
def test_session_ids_never_leave_out(tmp_path: Path, session: str) -> None:
    from tests.fuzz.hostile import body as reply_body

    source_dir = tmp_path / "src" / "a" / "b"
    source_dir.mkdir(parents=True)
    source = _snapshot_with_session(source_dir, session)
    out = tmp_path / "src" / "a" / "b" / "runs"  # refused: inside the source folder
    good = '{"choices": [{"message": {"content": "<state_snapshot>done</state_snapshot>"}}]}'
    before = tree_state(tmp_path / "src")
    with HostileServer(reply_body(good)) as server:
        refused = run_cli(_rerun(server, out, "--no-tools", source=source))
        elsewhere = tmp_path / "out" / "{session_id}" / "{context_id}"
        run = run_cli(_rerun(server, elsewhere, "--no-tools", "--json", source=source))
    assert refused.code == 2 and refused.crash is None
    assert run.crash is None, run.crash
    assert tree_state(tmp_path / "src") == before
    written = run.lines()[0]["written"]
    for key in ("folder", "dump", "debug_log"):
        if written.get(key):
            path = Path(written[key]).resolve()
            assert (tmp_path / "out").resolve() in path.parents, path
            assert ".." not in Path(written[key]).parts


def test_a_symlinked_debug_log_in_out_is_not_followed(tmp_path: Path) -> None:
    source_dir = tmp_path / "src"
    source_dir.mkdir()
    source = _snapshot_with_session(source_dir, "s1")
    target = source_dir / "CurrentRoundCompressor.jsonl"
    target.write_text("")
    out = tmp_path / "out"
    out.mkdir()
    (out / "CurrentRoundCompressor.jsonl").symlink_to(target)
    before = tree_state(source_dir)
    good = '{"choices": [{"message": {"content": "<state_snapshot>done</state_snapshot>"}}]}'
    with HostileServer(body(good)) as server:
        run = run_cli(_rerun(server, out, "--no-tools", "--json", source=source))
    assert run.crash is None, run.crash
    assert tree_state(source_dir) == before
    assert target.read_text() == ""
    assert "symlink" in (run.stderr.decode() + run.stdout.decode())
