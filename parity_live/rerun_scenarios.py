"""Scripted re-run scenarios: what a real release sends to the model and the context it keeps.

`RERUN_SCENARIOS` are contexts with the fake server's replies (plain compression under
each counter, 413 then 200 with a real shrink, two 413s, 429 then 200, no benefit);
`record_rerun(release, target)` serves each from its own `tests/servers/fake_openai.FakeOpenAI`
on 127.0.0.1 and runs `scenario_runner.py` inside the release's venv (`max_retries=0`), then
keeps per scenario: `scenario.json` (the input and the replies), `requests.json` (every
request body the library sent and the status it got), `window.json` (the context after)
and the library's own dump and debug JSONL. `tests/test_rerun_profiles.py` re-runs each
with our engine against the same fake server and compares. Run:
`python -m parity_live.rerun_scenarios [RELEASE ...] [--out tests/data/rerun]`.
Must not import openJiuwen (the project's interpreter runs this; the venv runs the runner).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from parity_live.scenarios import RATE_LIMIT, SUMMARY, TOO_LARGE, _call, _scenario
from parity_live.venvs import ensure_venv, release_env
from tests.servers.fake_openai import FakeOpenAI, Reply

RUNNER = Path(__file__).with_name("scenario_runner.py")
DEFAULT_RELEASES = ("0.1.17", "0.1.19.post2")
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "rerun"


def _long_round(rounds: int) -> list[dict[str, Any]]:
    """A user request, then `rounds` tool calls with results of ~700 characters each."""
    out: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": "Find why the nightly export is slow and fix it.",
            "metadata": {},
        }
    ]
    for n in range(rounds):
        body = (
            f"[{n}] export step {n}: 读取 {n * 37} 行, query plan uses a sequential scan on "
            f"orders_{n}; cache miss ratio {n * 3 % 17}%. "
        ) * 6
        out.append(
            {
                "role": "assistant",
                "content": f"Step {n}: checking part {n}.",
                "tool_calls": [_call(f"call_{n}", "read_file", {"file_path": f"src/step_{n}.py"})],
            }
        )
        out.append(
            {
                "role": "tool",
                "content": f"success=True data={{'content': {body!r}}} error=None",
                "metadata": {},
                "tool_call_id": f"call_{n}",
            }
        )
    out.append({"role": "assistant", "content": "Now I know where the time goes."})
    return out


def _shrink(name: str, replies: list[Reply], **changes: Any) -> dict[str, Any]:
    """A long current round in a window where the overflow shrink keeps part of the span."""
    base = {
        "messages": _long_round(8),
        "context_max": 6000,
        "config": {
            "trigger_context_ratio": 0.2,
            "min_target_context_ratio": 0.0,
            "keep_recent_messages": 0,
        },
    }
    base.update(changes)
    return _scenario(name, replies, **base)


_BIG = (
    "<state_snapshot>"
    + "The export reads every table twice; keep both passes. " * 120
    + "</state_snapshot>"
)
_TOO_LARGE = Reply(status=413, error=TOO_LARGE)
RERUN_SCENARIOS: list[dict[str, Any]] = [
    _scenario("compress_tiktoken", [Reply(content=SUMMARY)]),
    _scenario(
        "compress_engine_default",
        [Reply(content=SUMMARY)],
        engine_config={},
        config={
            "trigger_context_ratio": 0.2,
            "min_target_context_ratio": 0.0,
            "keep_recent_messages": 0,
        },
    ),
    _shrink("shrink_413_engine_default", [_TOO_LARGE, Reply(content=SUMMARY)], engine_config={}),
    _shrink("shrink_413_tiktoken", [_TOO_LARGE, Reply(content=SUMMARY)]),
    _shrink(
        "shrink_413_twice_engine_default",
        [_TOO_LARGE, _TOO_LARGE, Reply(content=SUMMARY)],
        engine_config={},
    ),
    _shrink(
        "retry_429_engine_default",
        [Reply(status=429, error=RATE_LIMIT), Reply(content=SUMMARY)],
        engine_config={},
    ),
    _shrink("no_benefit_engine_default", [Reply(content=_BIG)], engine_config={}),
    _shrink(
        "round_level_engine_default",
        [Reply(content=SUMMARY)],
        engine_config={},
        processor="RoundLevelCompressor",
        config={
            "trigger_context_ratio": 0.2,
            "min_target_context_ratio": 0.0,
            "keep_recent_messages": 3,
        },
    ),
]


def _plain(scenario: dict[str, Any]) -> dict[str, Any]:
    """The scenario as JSON (replies as dicts)."""
    return {
        **{k: v for k, v in scenario.items() if k != "replies"},
        "replies": [
            {k: v for k, v in dataclasses.asdict(r).items() if k not in ("raw", "delay", "headers")}
            for r in scenario["replies"]
        ],
    }


def record_rerun(release: str, target: Path) -> list[str]:
    """Let `release` run every re-run scenario, each against its own fake server."""
    python = ensure_venv(release)
    servers = {s["name"]: FakeOpenAI(s["replies"]) for s in RERUN_SCENARIOS}
    with tempfile.TemporaryDirectory(prefix="parity-rerun-") as folder:
        for server in servers.values():
            server.start()
        try:
            runs = [
                {
                    **{k: v for k, v in s.items() if k != "replies"},
                    "base_url": servers[s["name"]].base_url,
                }
                for s in RERUN_SCENARIOS
            ]
            source = Path(folder) / "scenarios.json"
            source.write_text(json.dumps(runs), encoding="utf-8")
            done = subprocess.run(
                [str(python), str(RUNNER), str(source), str(Path(folder, "out")), release],
                env=release_env(release),
                cwd=folder,
                capture_output=True,
                text=True,
                check=False,
            )
        finally:
            for server in servers.values():
                server.stop()
        if done.returncode != 0:
            raise SystemExit(
                f"openjiuwen {release} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
            )
        release_dir = target / release
        if release_dir.exists():
            shutil.rmtree(release_dir)
        for scenario in RERUN_SCENARIOS:
            name = scenario["name"]
            shutil.copytree(Path(folder, "out", name), release_dir / name)
            requests = [{"status": r.status, "body": r.body} for r in servers[name].requests]
            _write(release_dir / name / "requests.json", requests)
            _write(release_dir / name / "scenario.json", _plain(scenario))
    return [line for line in done.stdout.splitlines() if line.startswith(release + " ")]


def _write(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Record the given releases (default 0.1.17 and 0.1.19.post2)."""
    parser = argparse.ArgumentParser(prog="python -m parity_live.rerun_scenarios")
    parser.add_argument("releases", nargs="*", default=list(DEFAULT_RELEASES))
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    for release in args.releases:
        for line in record_rerun(release, args.out):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
