"""Scripted re-run scenarios: what a real release sends to the model and the context it keeps.

`RERUN_SCENARIOS` are contexts with the fake server's replies (plain compression under
each counter, 413 then 200 with a real shrink, two 413s, 429 then 200, 500 then 200, three
500s, no benefit, a second compression of a context holding the first's memory block,
images in the span (also with a 413 shrink), parallel tool calls across the tail boundary, RoundLevel with
re-injection, DialogueCompressor with and without re-injected reads);
`record_rerun(release, target)` serves each from its own `tests/servers/fake_openai.FakeOpenAI`
on 127.0.0.1 and runs `scenario_runner.py` inside the release's venv (`max_retries=0`), then
keeps per scenario: `scenario.json` (the input and the replies), `requests.json` (every
request body the library sent and the status it got), `window.json` (the context after)
and the library's own dump and debug JSONL. `tests/test_rerun_profiles.py` re-runs each
with our engine against the same fake server and compares. Run:
`python -m parity_live.rerun_scenarios [RELEASE ...] [--out tests/data/rerun] [--only NAME ...]`
(`--only` re-records the named scenarios and leaves the others as they are).
Must not import openJiuwen (the project's interpreter runs this; the venv runs the runner).
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from parity_live.generate import _png
from parity_live.scenarios import (
    RATE_LIMIT,
    SERVER_ERROR,
    SUMMARY,
    TOO_LARGE,
    _call,
    _scenario,
)
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


def _with_images(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Two tool results of the round become list content with an image each."""
    out = [dict(m) for m in messages]
    png = "data:image/png;base64," + base64.b64encode(_png(640, 480)).decode()
    images = [
        {"type": "image_url", "image_url": {"url": png}},
        {"type": "image_url", "image_url": {"url": "https://example.com/shot.png"}},
    ]
    tools = [i for i, m in enumerate(out) if m["role"] == "tool"]
    for index, image in zip(tools[1:3], images, strict=True):
        out[index]["content"] = [{"type": "text", "text": out[index]["content"]}, image]
    return out


def _parallel_tail() -> list[dict[str, Any]]:
    """A round whose last tool calls are parallel, so a tail of 3 starts inside the group."""
    out = _long_round(4)[:-1]
    ids = ["call_p0", "call_p1", "call_p2"]
    out.append(
        {
            "role": "assistant",
            "content": "Reading the three configs at once.",
            "tool_calls": [
                _call(i, "read_file", {"file_path": f"conf/{n}.toml"}) for n, i in enumerate(ids)
            ],
        }
    )
    for n, call_id in enumerate(ids):
        out.append(
            {
                "role": "tool",
                "content": f"success=True data={{'content': 'batch_size = {n * 500}'}} error=None",
                "metadata": {},
                "tool_call_id": call_id,
            }
        )
    out.append({"role": "assistant", "content": "The batch size is the cause."})
    return out


def _dialogue(reads: bool) -> list[dict[str, Any]]:
    """A finished round, then a new user request: DialogueCompressor compresses the first.

    With `reads` the round reads five files, which the compressor re-injects after the
    summary (under 0.1.17's counter the result is no smaller: no benefit)."""
    rounds = _long_round(5)
    for message in rounds:
        if message.get("tool_calls") and not reads:
            n = len(rounds)
            message["tool_calls"] = [
                _call(c["id"], "run_query", {"sql": f"EXPLAIN SELECT * FROM orders_{n}"})
                for c in message["tool_calls"]
            ]
    return rounds + [
        {"role": "user", "content": "Now update the docs to match.", "metadata": {}},
        {"role": "assistant", "content": "Updating docs/export.md."},
    ]


_COVERED = (
    "<coverage_check>All rounds covered: the export scan and the fix.</coverage_check>\n" + SUMMARY
)
_BIG = (
    "<state_snapshot>"
    + "The export reads every table twice; keep both passes. " * 120
    + "</state_snapshot>"
)
_TOO_LARGE = Reply(status=413, error=TOO_LARGE)
_SERVER_ERROR = Reply(status=500, error=SERVER_ERROR)
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
    _shrink("retry_500_engine_default", [_SERVER_ERROR, Reply(content=SUMMARY)], engine_config={}),
    _shrink(
        "retry_500_exhausted_engine_default",
        [_SERVER_ERROR, _SERVER_ERROR, _SERVER_ERROR],
        engine_config={},
    ),
    {
        **_scenario(
            "second_compression_engine_default",
            [Reply(content=SUMMARY.replace("retry loop", "export scan"))],
            engine_config={},
            config={
                "trigger_context_ratio": 0.2,
                "min_target_context_ratio": 0.0,
                "keep_recent_messages": 0,
            },
        ),
        "after": "compress_engine_default",
        "then": _long_round(3)[1:],
    },
    _shrink(
        "images_engine_default",
        [Reply(content=SUMMARY)],
        engine_config={},
        messages=_with_images(_long_round(8)),
    ),
    _shrink(
        "images_tiktoken",
        [Reply(content=SUMMARY)],
        messages=_with_images(_long_round(8)),
    ),
    _shrink(
        "images_413_engine_default",
        [_TOO_LARGE, Reply(content=SUMMARY)],
        engine_config={},
        messages=_with_images(_long_round(8)),
    ),
    _shrink(
        "images_413_tiktoken",
        [_TOO_LARGE, Reply(content=SUMMARY)],
        messages=_with_images(_long_round(8)),
    ),
    _shrink(
        "parallel_tail_engine_default",
        [Reply(content=SUMMARY)],
        engine_config={},
        messages=_parallel_tail(),
        config={
            "trigger_context_ratio": 0.1,
            "min_target_context_ratio": 0.0,
            "keep_recent_messages": 3,
        },
    ),
    _shrink(
        "dialogue_engine_default",
        [Reply(content=_COVERED)],
        engine_config={},
        processor="DialogueCompressor",
        messages=_dialogue(reads=False),
        config={"trigger_context_ratio": 0.1, "min_target_context_ratio": 0.0},
    ),
    _shrink(
        "dialogue_reinjected_engine_default",
        [Reply(content=SUMMARY)],
        engine_config={},
        processor="DialogueCompressor",
        messages=_dialogue(reads=True),
        config={"trigger_context_ratio": 0.1, "min_target_context_ratio": 0.0},
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
        **{k: v for k, v in scenario.items() if k not in ("replies", "after", "then")},
        "replies": [
            {k: v for k, v in dataclasses.asdict(r).items() if k not in ("raw", "delay", "headers")}
            for r in scenario["replies"]
        ],
    }


def _run_batch(
    release: str, scenarios: list[dict[str, Any]], out: Path
) -> tuple[dict[str, FakeOpenAI], list[str]]:
    """Run `scenarios` inside the release's venv, each against its own fake server."""
    python = ensure_venv(release)
    servers = {s["name"]: FakeOpenAI(s["replies"]) for s in scenarios}
    for server in servers.values():
        server.start()
    try:
        runs = [
            {
                **{k: v for k, v in s.items() if k not in ("replies", "after", "then")},
                "base_url": servers[s["name"]].base_url,
            }
            for s in scenarios
        ]
        source = out.parent / f"scenarios-{len(list(out.parent.iterdir()))}.json"
        source.write_text(json.dumps(runs), encoding="utf-8")
        done = subprocess.run(
            [str(python), str(RUNNER), str(source), str(out), release],
            env=release_env(release),
            cwd=out.parent,
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
    return servers, [line for line in done.stdout.splitlines() if line.startswith(release + " ")]


def _without_ids(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The library's kept context as new input: without the ids the context gave it."""
    out = []
    for message in messages:
        metadata = {
            k: v for k, v in (message.get("metadata") or {}).items() if k != "context_message_id"
        }
        out.append({**message, "metadata": metadata})
    return out


def record_rerun(release: str, target: Path, only: list[str] | None = None) -> list[str]:
    """Let `release` run the re-run scenarios (all, or those named in `only`).

    A scenario with `after` starts from the context the release kept after that scenario
    (its `window.json`, without the context's ids) followed by its `then` messages: the
    second of two compressions in a row."""
    chosen = [s for s in RERUN_SCENARIOS if only is None or s["name"] in only]
    by_name = {s["name"]: s for s in RERUN_SCENARIOS}
    firsts = [s for s in chosen if "after" not in s]
    firsts += [
        by_name[s["after"]] for s in chosen if "after" in s and by_name[s["after"]] not in firsts
    ]
    with tempfile.TemporaryDirectory(prefix="parity-rerun-") as folder:
        out = Path(folder, "out")
        out.mkdir()
        servers, lines = _run_batch(release, firsts, out)
        seconds = [
            {
                **s,
                "messages": _without_ids(_read(out / s["after"] / "window.json")) + s["then"],
            }
            for s in chosen
            if "after" in s
        ]
        if seconds:
            more, more_lines = _run_batch(release, seconds, out)
            servers.update(more)
            lines += more_lines
        inputs = {s["name"]: s for s in firsts + seconds}
        release_dir = target / release
        if only is None and release_dir.exists():
            shutil.rmtree(release_dir)
        for scenario in chosen:
            name = scenario["name"]
            if (release_dir / name).exists():
                shutil.rmtree(release_dir / name)
            shutil.copytree(out / name, release_dir / name)
            requests = [{"status": r.status, "body": r.body} for r in servers[name].requests]
            _write(release_dir / name / "requests.json", requests)
            _write(release_dir / name / "scenario.json", _plain(inputs[name]))
    return lines


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _write(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Record the given releases (default 0.1.17 and 0.1.19.post2)."""
    parser = argparse.ArgumentParser(prog="python -m parity_live.rerun_scenarios")
    parser.add_argument("releases", nargs="*", default=list(DEFAULT_RELEASES))
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--only", action="append", help="re-record only this scenario (repeatable)")
    args = parser.parse_args(argv)
    for release in args.releases:
        for line in record_rerun(release, args.out, args.only):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
