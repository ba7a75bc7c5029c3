"""Scripted scenarios: make each real release write its dumps and debug logs.

`SCENARIOS` are small contexts with the fake server's replies for each; `record(release,
target)` starts one `tests/servers/fake_openai.FakeOpenAI` per scenario on 127.0.0.1 and
runs `scenario_runner.py` inside the release's venv. What the
library wrote is kept under `target/<scenario>/` (the committed copies under
`tests/data/parity/artifacts/<release>/` are what the detection tests read).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from parity_live.venvs import ensure_venv, release_env
from tests.servers.fake_openai import FakeOpenAI, Reply

RUNNER = Path(__file__).with_name("scenario_runner.py")
SUMMARY = "<state_snapshot>Fixed the retry loop in src/app.py; tests pass.</state_snapshot>"


def _usage(total: int) -> dict[str, Any]:
    return {
        "input_tokens": total - 20,
        "output_tokens": 20,
        "total_tokens": total,
        "model_name": "fake-model",
    }


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def _conversation(with_usage: bool) -> list[dict[str, Any]]:
    """A user request and a round of (parallel) tool calls after it: CurrentRound compresses it."""
    text = (
        "The retry decorator swallows KeyboardInterrupt; 根据日志，问题出在缓存失效时间的计算上。 "
        * 6
    )
    assistant_usage = {"usage_metadata": _usage(1800)} if with_usage else {}
    return [
        {"role": "user", "content": "Please fix the hanging worker in src/app.py.", "metadata": {}},
        {
            "role": "assistant",
            "content": "Let me read the files.",
            "tool_calls": [
                _call("call_a", "read_file", {"file_path": "src/app.py"}),
                _call("call_b", "grep", {"command": "grep -rn retry src"}),
            ],
            **assistant_usage,
        },
        {
            "role": "tool",
            "content": f"success=True data={{'content': {text!r}}} error=None",
            "metadata": {},
            "tool_call_id": "call_a",
        },
        {
            "role": "tool",
            "content": f"success=True data={{'stdout': {text[:200]!r}}} error=None",
            "metadata": {},
            "tool_call_id": "call_b",
        },
        {"role": "assistant", "content": "I found it: " + text, **assistant_usage},
        {
            "role": "user",
            "content": "<system-reminder>\nkeep the public API unchanged",
            "metadata": {},
        },
        {"role": "assistant", "content": "Editing now. " + text[:300]},
    ]


def _scenario(name: str, replies: list[Reply], **changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": name,
        "processor": "CurrentRoundCompressor",
        "config": {
            "trigger_context_ratio": 0.3,
            "min_target_context_ratio": 0.0,
            "keep_recent_messages": 0,
        },
        "context_max": 2000,
        "engine_config": {"enable_tiktoken_counter": True},
        "system_messages": [
            {"role": "system", "content": "You are a coding agent.", "metadata": {}}
        ],
        "messages": _conversation(with_usage=False),
        "tools": [
            {
                "type": "function",
                "name": "read_file",
                "description": "Read a file",
                "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}}},
            }
        ],
        "replies": replies,
    }
    base.update(changes)
    return base


RATE_LIMIT = {
    "message": "Rate limit reached for requests",
    "type": "requests",
    "code": "rate_limit_exceeded",
}
SERVER_ERROR = {
    "message": "The server had an error while processing your request",
    "type": "server_error",
    "code": None,
}
TOO_LARGE = {
    "message": "Request too large: context length exceeded",
    "type": "invalid_request_error",
    "code": "context_length_exceeded",
}
SCENARIOS: list[dict[str, Any]] = [
    _scenario("compress_tiktoken", [Reply(content=SUMMARY)]),
    _scenario("compress_engine_default", [Reply(content=SUMMARY)], engine_config={}),
    _scenario("usage_baseline", [Reply(content=SUMMARY)], messages=_conversation(with_usage=True)),
    _scenario("retry_429", [Reply(status=429, error=RATE_LIMIT), Reply(content=SUMMARY)]),
    _scenario("overflow_413", [Reply(status=413, error=TOO_LARGE), Reply(content=SUMMARY)]),
    _scenario("below_threshold", [], context_max=200_000),
]


def record(release: str, target: Path) -> list[str]:
    """Let `release` run every scenario, each against its own fake server; the runner's lines."""
    python = ensure_venv(release)
    servers = {s["name"]: FakeOpenAI(s["replies"] or [Reply(content=SUMMARY)]) for s in SCENARIOS}
    with tempfile.TemporaryDirectory(prefix="parity-scn-") as folder:
        for server in servers.values():
            server.start()
        try:
            plain = [
                {
                    **{k: v for k, v in s.items() if k != "replies"},
                    "base_url": servers[s["name"]].base_url,
                }
                for s in SCENARIOS
            ]
            source = Path(folder) / "scenarios.json"
            source.write_text(json.dumps(plain), encoding="utf-8")
            done = subprocess.run(
                [str(python), str(RUNNER), str(source), str(target.resolve()), release],
                env=release_env(release),
                cwd=folder,  # the library writes its own logs/ into the working directory
                capture_output=True,
                text=True,
                check=False,
            )
        finally:
            for server in servers.values():
                server.stop()
    if done.returncode != 0:
        raise SystemExit(
            f"openjiuwen {release} scenarios failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    for name, server in servers.items():
        statuses = [request.status for request in server.requests]
        (target / name / "http_statuses.json").write_text(json.dumps(statuses), encoding="utf-8")
    return [line for line in done.stdout.splitlines() if line.startswith(release + " ")]
