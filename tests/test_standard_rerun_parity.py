"""Our standard re-run against what the real openJiuwen sent and kept (recorded corpus).

`tests/data/standard_rerun/<release>/<scenario>/` was written by
`python -m parity_live.standard_reruns`: the real release ran each scenario against a
scripted server on 127.0.0.1. Here our engine runs the same scenario against a new
scripted server with the same replies; every request body it sends must equal the one the
release sent (the merge and offload calls carry openJiuwen's own prompt, which is never
stored: for those the roles, keys and sampling are compared), and the context after must
equal the release's (role, content, tool_call_id; offload handles are random uuids).
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from inspector.core.snapshot import snapshot_from_dict
from inspector.core.strategy import registry
from inspector.core.strategy.base import ScriptRerun, rerun_of
from inspector.encoding import make_counters
from inspector.llm import EndpointConfig
from inspector.llm.standard_runner import (
    StandardHooks,
    release_sampling,
    rerun_standard,
    standard_prompts,
)
from parity_live.standard_reruns import masked_body, scenario_input
from tests.servers.fake_openai import FakeOpenAI, Reply

CORPUS = Path(__file__).parent / "data" / "standard_rerun"
CASES = sorted(p for p in CORPUS.glob("*/*") if p.is_dir())
_RELEASE = {"0.1.16": "0.1.16", "0.1.17": "0.1.17", "0.1.19.post2": "0.1.19"}
_HANDLE = re.compile(r"handle=[0-9a-f]{32}")
_FILLED = re.compile(r"filled: \d+ chars")


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _shape(messages: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [
        (m["role"], _HANDLE.sub("handle=H", str(m.get("content"))), m.get("tool_call_id"))
        for m in messages
    ]


def _run(case: Path) -> tuple[list[dict[str, Any]], Any]:
    """Our re-run of a recorded scenario; the bodies our server received and the result."""
    scenario = _read(case / "scenario.json")
    given = scenario_input({**scenario, "replies": []})
    snapshot = snapshot_from_dict(
        {
            **given,
            "processor_family": "standard",
            "openjiuwen_version": _RELEASE[case.parent.name],
            "hook": scenario.get("hook", "add_messages"),
            "system_messages": scenario.get("system_messages", []),
            "tools": [],
        }
    )
    strategy = registry.resolve(scenario["processor"], "standard")
    rerun = rerun_of(strategy)
    assert isinstance(rerun, ScriptRerun)
    settings = strategy.recorded_settings(snapshot)
    prepared = strategy.prepare(snapshot, make_counters(), "")
    custom = getattr(settings, "custom_compression_prompt", None)
    prompts = standard_prompts(strategy.processor, None, custom)
    script = rerun.script(prepared, settings, prompts, lambda: "0" * 32)
    replies = [
        Reply(status=r["status"], content=r["content"], error=r["error"])
        for r in scenario["replies"]
    ]
    with FakeOpenAI(replies) as server:
        endpoint = EndpointConfig(
            server.base_url,
            "fake-model",
            sampling=release_sampling(_RELEASE[case.parent.name]),
            require_key=False,
        )
        result = asyncio.run(
            rerun_standard(
                prepared,  # type: ignore[arg-type]
                script,
                endpoint,
                processor=strategy.processor,
                prompt_source=prompts.source,
                max_retries=0,
                hooks=StandardHooks(env={}),
            )
        )
        bodies = [r.body for r in server.requests]
    return bodies, result


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_requests_and_context_after_match_the_release(case: Path) -> None:
    """Same requests, same number of calls, same context after, as the real release."""
    recorded = _read(case / "requests.json")
    after = _read(case / "after.json")
    bodies, result = _run(case)
    stages = [c.stage for c in result.calls]
    ours = [
        masked_body(b, "offload" if s.startswith("offload") else s)
        for b, s in zip(bodies, stages, strict=True)
    ]
    assert _sized(ours) == _sized([r["body"] for r in recorded])
    assert after["error"] is None
    assert _shape([_plain(m) for m in result.end.messages]) == _shape(after["messages"])


def _sized(bodies: list[Any]) -> Any:
    """Bodies with the length of a masked prompt left out (their prompt is not ours)."""
    return json.loads(_FILLED.sub("filled: N chars", json.dumps(bodies, ensure_ascii=False)))


def _plain(message: Any) -> dict[str, Any]:
    return {
        "role": message.role,
        "content": message.content,
        "tool_call_id": message.tool_call_id,
    }


def test_the_corpus_covers_three_releases_and_every_scripted_outcome() -> None:
    """The recorded corpus is there (an empty glob would make the test above vacuous)."""
    releases = {p.parent.name for p in CASES}
    assert releases >= {"0.1.16"}
    names = {p.name for p in CASES}
    assert {"dialogue_blocks", "dialogue_fallback", "current_round_merge", "offload_json"} <= names
    round_level = {
        "round_level_one_phase",
        "round_level_phases",
        "round_level_call_budget",
        "round_level_no_budget",
        "round_level_raw_fallback",
        "round_level_model_error",
        "round_level_empty_reply",
        "round_level_get_window",
        "round_level_team",
    }
    for release in ("0.1.16", "0.1.17", "0.1.19.post2"):
        assert round_level <= {p.name for p in CASES if p.parent.name == release}
