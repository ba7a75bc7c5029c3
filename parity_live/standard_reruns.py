"""Standard-processor re-run scenarios: what a real release sends and the context it keeps.

`STANDARD_RERUNS` are small contexts for DialogueCompressor (blocks JSON, plain-text
fallback, a fenced reply with one block no smaller than its round, a model error),
CurrentRoundCompressor (first stage; first stage and a memory-block merge) and
MessageSummaryOffloader (JSON reply, plain shorter reply), FullCompactProcessor (a
summary reply; a model error and the fallback summary) and RoundLevelCompressor (one
phase; a phase and a merge; a prompt cut to the call budget; no budget at all, so hard
truncation; a plain reply; a model error; empty replies down to hard truncation; a team message re-injected; the get-window hook), each
with the fake server's replies. `record(release, target)` serves each from its own `tests/servers/fake_openai`
server on 127.0.0.1, runs `standard_rerun_runner.py` inside the release's venv, and keeps
per scenario `scenario.json` (input and replies), `requests.json` (each body the library
sent) and `after.json` (the context after). Dialogue and CurrentRound get the inspector's
prompt as `custom_compression_prompt`, and RoundLevel gets our system prompts and contract
lines in place of its own (the runner swaps them in), so their requests are compared byte
for byte; the
merge and offload prompts are openJiuwen's own and are never stored: those message
contents are replaced by a note with their length. `tests/test_standard_rerun_parity.py`
re-runs each with our engine against the same replies. Run:
`python -m parity_live.standard_reruns [RELEASE ...] [--only NAME,NAME]` (default 0.1.16
0.1.17 0.1.19.post2).
Must not import openJiuwen (the project's interpreter runs this; the venv runs the runner).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from inspector.core.standard.rerun_round import memory_block
from inspector.core.standard.rerun_texts import cr_block
from inspector.llm.standard_runner import standard_prompts
from parity_live.venvs import ensure_venv, release_env
from tests.servers.fake_openai import FakeOpenAI, Reply

RUNNER = Path(__file__).with_name("standard_rerun_runner.py")
DEFAULT_RELEASES = ("0.1.16", "0.1.17", "0.1.19.post2")
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "standard_rerun"
#: Stages whose prompt is openJiuwen's text: only the length of their content is kept
#: (for `compact`, only the system message's: the user message is the serialised context).
MASKED_STAGES = ("merge", "offload", "compact")


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def _ids(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each message with a fixed context_message_id (the engine keeps given ids)."""
    return [{**m, "metadata": {"context_message_id": f"m{i}"}} for i, m in enumerate(messages)]


def _round(user: str, calls: list[tuple[str, str, str]], final: str | None) -> list[dict[str, Any]]:
    """A user message, tool calls with their results, then (optionally) the final reply."""
    out: list[dict[str, Any]] = [{"role": "user", "content": user}]
    for call_id, name, result in calls:
        out.append(
            {
                "role": "assistant",
                "content": f"Calling {name}.",
                "tool_calls": [_call(call_id, name, {"path": f"src/{call_id}.py"})],
            }
        )
        out.append({"role": "tool", "content": result, "tool_call_id": call_id})
    if final is not None:
        out.append({"role": "assistant", "content": final})
    return out


_CFG = "[metadata]\nname = demo\nversion = 0.3\n" * 30
_LOG = "FAILED tests/test_a.py::test_x - AssertionError: 3 != 4\n" * 25
_SUMMARY = "setup.cfg names the missing package demo-core; test_x fails on 3 != 4."


def _dialogue(name: str, replies: list[Reply], **config: Any) -> dict[str, Any]:
    messages = [
        *_round(
            "Fix the build.", [("c1", "read_file", _CFG)], "setup.cfg names a missing package."
        ),
        *_round("Run the tests.", [("c2", "run_tests", _LOG)], "One test fails: test_x."),
        {"role": "user", "content": "Fix test_x."},
    ]
    return {
        "name": name,
        "processor": "DialogueCompressor",
        "config": {"tokens_threshold": 300, "compression_target_tokens": 200, **config},
        "messages": _ids(messages),
        "added_from": len(messages) - 1,
        "replies": replies,
    }


def _current_round(name: str, replies: list[Reply], blocks: int = 0) -> dict[str, Any]:
    memory = [
        {"role": "user", "content": str(cr_block(f"Earlier step {n}: read module {n}.").content)}
        for n in range(blocks)
    ]
    messages = [
        *memory,
        *_round(
            "Find why the export is slow.",
            [("c1", "read_file", _CFG), ("c2", "run_tests", _LOG), ("c3", "read_file", _CFG)],
            None,
        ),
        {
            "role": "assistant",
            "content": "Checking the plan.",
            "tool_calls": [_call("c4", "explain", {"sql": "select 1"})],
        },
        {"role": "tool", "content": "Seq Scan on orders", "tool_call_id": "c4"},
    ]
    return {
        "name": name,
        "processor": "CurrentRoundCompressor",
        "config": {
            "tokens_threshold": 300,
            "messages_to_keep": 3,
            "min_selected_tokens_for_compression": 50,
            "accumulated_summary_token_limit": 10,
        },
        "messages": _ids(messages),
        "added_from": len(messages) - 1,
        "replies": replies,
    }


def _offloader(name: str, replies: list[Reply]) -> dict[str, Any]:
    messages = _round("Why does the nightly job fail?", [("c1", "fetch_logs", _LOG * 3)], None)
    return {
        "name": name,
        "processor": "MessageSummaryOffloader",
        "config": {"large_message_threshold": 200},
        "messages": _ids(messages),
        "added_from": len(messages) - 1,
        "replies": replies,
    }


def _full_compact(name: str, replies: list[Reply]) -> dict[str, Any]:
    skill = _call("s1", "read_file", {"file_path": "skills/deploy/SKILL.md"})
    messages = [
        {"role": "user", "content": "Deploy the service."},
        {"role": "assistant", "content": "Reading the skill.", "tool_calls": [skill]},
        {"role": "tool", "content": "# Deploy\nRun make deploy.", "tool_call_id": "s1"},
        {"role": "assistant", "content": "The skill says: make deploy."},
        *_round("Run it.", [("c2", "run_tests", _LOG)], "Deployed; one test fails."),
        *_round("Fix it.", [("c3", "read_file", _CFG)], "Fixed setup.cfg."),
    ]
    return {
        "name": name,
        "processor": "FullCompactProcessor",
        "config": {"trigger_total_tokens": 300, "messages_to_keep": 2},
        "messages": _ids(messages),
        "added_from": len(messages) - 1,
        "replies": replies,
    }


def _round_level(
    name: str, replies: list[Reply], blocks: int = 0, team: bool = False, **config: Any
) -> dict[str, Any]:
    """Earlier memory blocks (level 1; an acknowledgement after the first), two finished
    rounds (the first with a team message sent, when `team`), and the incoming user message,
    kept (keep_recent_messages 1)."""
    memory: list[dict[str, Any]] = []
    for n in range(blocks):
        block = memory_block(f"Step {n}: read module {n}.", "completed_react", _RL_MARKER, 1)
        memory.append({"role": "user", "content": block.content})
        if n == 0:
            memory.append({"role": "assistant", "content": _RL_ACK})
    calls = [("c1", "read_file", _CFG)]
    if team:
        calls.append(("t1", "send_message", "delivered to 2 members"))
    messages = [
        *memory,
        *_round("Fix the build.", calls, "setup.cfg names a missing package."),
        *_round("Run the tests.", [("c2", "run_tests", _LOG)], "One test fails: test_x."),
        {"role": "user", "content": "Fix test_x."},
    ]
    with_ids = _ids(messages)
    for message, raw in zip(with_ids, messages, strict=True):
        if str(raw["content"]).startswith(_RL_MARKER):
            message["metadata"]["compress_level"] = 1
    return {
        "name": name,
        "processor": "RoundLevelCompressor",
        "config": {
            "trigger_context_ratio": 0.001,
            "target_total_tokens": 400,
            "keep_recent_messages": 1,
            **config,
        },
        "messages": with_ids,
        "added_from": len(messages) - 1,
        "replies": replies,
    }


_RL_MARKER = "[ROUND_LEVEL_MEMORY_BLOCK]"
_RL_ACK = "Understood. I have recorded this compressed context."
_RL_BLOCKS = json.dumps(
    {
        "blocks": [
            {"block_id": "block_1", "summary": "setup.cfg names the missing package demo-core."},
            {"block_id": "block_2", "summary": "test_x fails on 3 != 4."},
        ]
    }
)
_RL_MERGE = json.dumps(
    {"blocks": [{"block_id": "merge_1_1", "summary": "Modules 0-1 read; build and tests fixed."}]}
)
_BLOCKS = json.dumps({"blocks": [{"block_id": "react_1", "summary": _SUMMARY}]})
_TWO = (
    "```json\n"
    + json.dumps(
        {
            "blocks": [
                {"block_id": "react_1", "summary": _SUMMARY},
                {"block_id": "react_2", "summary": _LOG * 4},
            ]
        }
    )
    + "\n```"
)
_OFFLOAD = json.dumps(
    {
        "compression_strategy": "extractive",
        "summary": "75 failures of test_x (3 != 4).",
        "offload_data_explanation": {
            "category": "test log",
            "description": "pytest output",
            "inferability": "low",
        },
    }
)
_SERVER_ERROR = {"message": "internal error", "type": "server_error"}

STANDARD_RERUNS: list[dict[str, Any]] = [
    _dialogue("dialogue_blocks", [Reply(content=_BLOCKS)]),
    _dialogue("dialogue_fallback", [Reply(content="The build failed on setup.cfg; fixed.")]),
    _dialogue("dialogue_fenced_partial", [Reply(content=_TWO)], keep_last_round=False),
    _dialogue("dialogue_model_error", [Reply(status=500, error=_SERVER_ERROR)]),
    _current_round("current_round_first", [Reply(content="Read setup.cfg twice; test_x fails.")]),
    _current_round(
        "current_round_merge",
        [Reply(content="Read setup.cfg; test_x fails."), Reply(content="Modules 0-2 read.")],
        blocks=3,
    ),
    _offloader("offload_json", [Reply(content=_OFFLOAD)]),
    _offloader("offload_plain", [Reply(content="test_x fails 75 times on 3 != 4.")]),
    _full_compact(
        "full_compact_summary",
        [Reply(content="<analysis>plan</analysis>\n<summary>Deployed; fixed setup.cfg.</summary>")],
    ),
    _full_compact("full_compact_model_error", [Reply(status=500, error=_SERVER_ERROR)]),
    _round_level("round_level_one_phase", [Reply(content=_RL_BLOCKS)]),
    _round_level(
        "round_level_phases",
        [Reply(content=_RL_BLOCKS), Reply(content=_RL_MERGE)],
        blocks=2,
        target_total_tokens=300,
    ),
    _round_level(
        "round_level_call_budget", [Reply(content=_RL_BLOCKS)], compression_call_max_tokens=700
    ),
    _round_level(
        "round_level_no_budget", [Reply(content=_RL_BLOCKS)], compression_call_max_tokens=60
    ),
    _round_level("round_level_raw_fallback", [Reply(content=_SUMMARY)]),
    _round_level("round_level_model_error", [Reply(status=500, error=_SERVER_ERROR)]),
    _round_level("round_level_empty_reply", [Reply(content="")], target_total_tokens=150),
    _round_level("round_level_team", [Reply(content=_RL_BLOCKS)], team=True),
    {
        **_round_level("round_level_get_window", [Reply(content=_RL_BLOCKS)]),
        "hook": "get_context_window",
        "system_messages": [{"role": "system", "content": "You are a careful coding agent."}],
    },
]


def only(names: list[str]) -> list[dict[str, Any]]:
    """The scenarios named (all when none is)."""
    return [s for s in STANDARD_RERUNS if not names or s["name"] in names]


def scenario_input(scenario: dict[str, Any]) -> dict[str, Any]:
    """What the runner gets: the scenario with the inspector's prompts as the processors'
    custom_compression_prompt (Dialogue, CurrentRound) and no replies."""
    out = {k: v for k, v in scenario.items() if k != "replies"}
    out.setdefault("engine_config", {})
    if scenario["processor"] == "RoundLevelCompressor":
        # openJiuwen has no prompt field for it: the runner puts ours in its place
        prompts = standard_prompts("RoundLevelCompressor")
        out["round_level_prompts"] = {
            "first": prompts.round_level,
            "aggressive": prompts.round_level_aggressive,
            "contract": prompts.round_level_contract,
        }
    slot = {"DialogueCompressor": "dialogue", "CurrentRoundCompressor": "current_round"}
    if scenario["processor"] in slot:
        prompts = standard_prompts(scenario["processor"])
        out["config"] = {
            **scenario["config"],
            "custom_compression_prompt": getattr(prompts, slot[scenario["processor"]]),
        }
    return out


def masked_body(body: Any, stage: str | None) -> Any:
    """A request body with openJiuwen's prompt text left out (merge and offload calls)."""
    if stage not in MASKED_STAGES or not isinstance(body, dict):
        return body
    messages = [
        m
        if stage == "compact" and m.get("role") != "system"
        else {**m, "content": f"<openJiuwen's prompt, filled: {len(str(m.get('content')))} chars>"}
        for m in body.get("messages", [])
    ]
    return {**body, "messages": messages}


def _stage(scenario: dict[str, Any], index: int) -> str:
    if scenario["processor"] == "FullCompactProcessor":
        return "compact"
    if scenario["processor"] == "MessageSummaryOffloader":
        return "offload"
    if scenario["processor"] == "CurrentRoundCompressor" and index > 0:
        return "merge"
    return "dialogue" if scenario["processor"] == "DialogueCompressor" else "first_stage"


def record(release: str, target: Path, names: list[str] | None = None) -> list[str]:
    """Let `release` run the scenarios (all, or those named); keep inputs, requests and
    contexts under target (the others recorded before stay)."""
    python = ensure_venv(release)
    chosen = only(names or [])
    servers = {s["name"]: FakeOpenAI(s["replies"]) for s in chosen}
    for server in servers.values():
        server.start()
    with tempfile.TemporaryDirectory(prefix="standard-rerun-") as folder:
        out = Path(folder, "out")
        runs = [{**scenario_input(s), "base_url": servers[s["name"]].base_url} for s in chosen]
        source = Path(folder, "scenarios.json")
        source.write_text(json.dumps(runs), encoding="utf-8")
        try:
            done = subprocess.run(
                [str(python), str(RUNNER), str(source), str(out)],
                env=release_env(release),
                cwd=folder,
                capture_output=True,
                text=True,
                check=False,
                timeout=900,
            )
        finally:
            for server in servers.values():
                server.stop()
        if done.returncode != 0:
            raise SystemExit(f"openjiuwen {release} failed:\n{done.stderr[-3000:]}")
        release_dir = target / release
        if not names and release_dir.exists():
            shutil.rmtree(release_dir)
        for scenario in chosen:
            name = scenario["name"]
            if (release_dir / name).exists():
                shutil.rmtree(release_dir / name)
            shutil.copytree(out / name, release_dir / name)
            requests = [
                {"status": r.status, "body": masked_body(r.body, _stage(scenario, i))}
                for i, r in enumerate(servers[name].requests)
            ]
            _write(release_dir / name / "requests.json", requests)
            plain = {k: v for k, v in scenario.items() if k != "replies"}
            plain["replies"] = [_reply_json(r) for r in scenario["replies"]]
            _write(release_dir / name / "scenario.json", plain)
    return done.stdout.splitlines()


def _reply_json(reply: Reply) -> dict[str, Any]:
    return {"status": reply.status, "content": reply.content, "error": reply.error}


def _write(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str]) -> int:
    """Record each release named (default: 0.1.16, 0.1.17, 0.1.19.post2); `--only a,b`
    re-records the named scenarios only."""
    names: list[str] = []
    if "--only" in argv:
        at = argv.index("--only")
        names = argv[at + 1].split(",")
        argv = argv[:at] + argv[at + 2 :]
    for release in argv or DEFAULT_RELEASES:
        for line in record(release, DEFAULT_OUT, names):
            print(release, line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
