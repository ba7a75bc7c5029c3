"""Every way the model call can go wrong, against a real local HTTP server.

Each case is explained in plain words, lands in the timeline, and never raises out of
`rerun_compaction`; backoff sleeps are injected so nothing waits for real.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from inspector.core.errors import ConfigError
from inspector.core.rerun import Attempt, RerunResult, explain_outcome
from inspector.core.snapshot import ContextSnapshot
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import Tuning
from inspector.llm import (
    EndpointConfig,
    MissingApiKey,
    NothingToCompress,
    RerunHooks,
    RerunOptions,
    rerun_compaction,
    write_rerun,
)
from tests.llm_reference import model_scenarios
from tests.servers.fake_openai import FakeOpenAI, Reply

SECRET = "sk-fault-tests-SECRET-987"
ENV = {"OPENAI_API_KEY": SECRET}
SNAPSHOT_TEXT = (
    "<coverage_check>ok</coverage_check>\n<state_snapshot>\n### 1. Goal\n- Fix parse() offsets in "
    "src/tinycal/parse.py.\n</state_snapshot>"
)
OVERFLOW = {
    "message": "maximum context length exceeded",
    "type": "invalid_request_error",
    "code": "context_length_exceeded",
}
RATE = {
    "message": "Rate limit reached for requests per minute.",
    "type": "requests",
    "code": "rate_limit_exceeded",
}


@pytest.fixture(scope="module")
def plain() -> ContextSnapshot:
    """Scenario a's context (CurrentRound, 18 messages, 6 tools)."""
    return next(s for s in model_scenarios() if s.name == "a_current_round_plain").snapshot


async def _rerun(
    snapshot: ContextSnapshot,
    script: list[Reply],
    counters: dict[str, TokenCounter],
    *,
    tuning: Tuning | None = None,
    timeout_s: float = 5.0,
    **kwargs: Any,
) -> tuple[RerunResult, FakeOpenAI, list[float], list[Attempt]]:
    slept: list[float] = []
    seen: list[Attempt] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    tuning = tuning or snapshot.tuning
    with FakeOpenAI(script) as server:
        result = await rerun_compaction(
            snapshot,
            tuning,
            EndpointConfig(server.base_url, "fake-model", timeout_s=timeout_s),
            RerunOptions(counter=counters[tuning.token_mode], **kwargs),
            RerunHooks(sleep=sleep, env=ENV, on_attempt=seen.append),
        )
    assert list(result.attempts) == seen
    assert SECRET not in repr(result)
    return result, server, slept, seen


def _codes(result: RerunResult) -> set[str]:
    return {f.code for f in result.findings}


async def test_200_applies(plain: ContextSnapshot, counters: dict[str, TokenCounter]) -> None:
    result, server, slept, _ = await _rerun(plain, [Reply(content=SNAPSHOT_TEXT)], counters)
    assert result.outcome == "applied"
    assert result.compaction is not None and result.compaction.summary.startswith("### 1. Goal")
    assert result.prompt_source == "builtin" and "<state_snapshot>" in result.prompt
    assert server.requests[0].authorization == f"Bearer {SECRET}"
    assert server.requests[0].path == "/v1/chat/completions"
    assert slept == []
    assert result.usage is not None and result.usage["calls"] == 1
    assert "Compressed" in explain_outcome(result)


async def test_413_then_200_shrinks(
    plain: ContextSnapshot, counters: dict[str, TokenCounter]
) -> None:
    script = [Reply(status=413, error=OVERFLOW), Reply(content=SNAPSHOT_TEXT)]
    result, server, slept, _ = await _rerun(plain, script, counters)
    assert [a.action for a in result.attempts] == ["shrink", "accepted"]
    assert result.attempts[0].budget_ratio == 0.85
    assert result.final_span.compress[1] - result.final_span.compress[0] < 15
    assert len(server.requests[1].body["messages"]) < len(server.requests[0].body["messages"])
    assert result.outcome == "applied" and slept == []


async def test_429_twice_then_200_backs_off(
    plain: ContextSnapshot, counters: dict[str, TokenCounter]
) -> None:
    script = [
        Reply(status=429, error=RATE),
        Reply(status=429, error=RATE),
        Reply(content=SNAPSHOT_TEXT),
    ]
    result, server, slept, _ = await _rerun(plain, script, counters)
    assert slept == [0.05, 0.1]
    assert [a.action for a in result.attempts] == ["backoff", "backoff", "accepted"]
    assert all(a.openjiuwen_kind == a.status_kind == "rate_limit" for a in result.attempts[:2])
    assert server.requests[0].body == server.requests[2].body  # same span retried
    assert result.outcome == "applied"


async def test_429_three_times_gives_up(
    plain: ContextSnapshot, counters: dict[str, TokenCounter]
) -> None:
    result, server, slept, _ = await _rerun(plain, [Reply(status=429, error=RATE)], counters)
    assert len(server.requests) == 3 and slept == [0.05, 0.1]
    assert result.outcome == "failed"
    assert "gave up after 2 retries" in (result.failure_reason or "")
    assert result.attempts[-1].reason is None  # openJiuwen writes no record for this one


async def test_401_stops_at_once(plain: ContextSnapshot, counters: dict[str, TokenCounter]) -> None:
    error = {
        "message": "Incorrect API key provided: sk-****.",
        "type": "invalid_request_error",
        "code": "invalid_api_key",
    }
    result, server, slept, _ = await _rerun(plain, [Reply(status=401, error=error)], counters)
    assert len(server.requests) == 1 and slept == []
    assert result.outcome == "failed"
    assert result.attempts[0].openjiuwen_kind == "authentication"
    assert "API key was refused" in (result.failure_reason or "")
    assert "not retried" in (result.failure_reason or "")


async def test_500_retried_as_server_error(
    plain: ContextSnapshot, counters: dict[str, TokenCounter]
) -> None:
    error = {
        "message": "The server had an error while processing your request.",
        "type": "server_error",
    }
    result, server, slept, _ = await _rerun(plain, [Reply(status=500, error=error)], counters)
    assert len(server.requests) == 3 and slept == [0.05, 0.1]
    assert {a.openjiuwen_kind for a in result.attempts} == {"server_unstable"}
    assert result.outcome == "failed" and "server error" in (result.failure_reason or "")


async def test_timeout(plain: ContextSnapshot, counters: dict[str, TokenCounter]) -> None:
    script = [Reply(content=SNAPSHOT_TEXT, delay=0.6), Reply(content=SNAPSHOT_TEXT)]
    result, _, slept, _ = await _rerun(plain, script, counters, timeout_s=0.15)
    first = result.attempts[0]
    assert first.failure is not None and first.failure.transport == "timeout"
    assert first.openjiuwen_kind == first.status_kind == "timeout"
    assert first.action == "backoff" and slept == [0.05]
    assert result.outcome == "applied"


async def test_malformed_json(plain: ContextSnapshot, counters: dict[str, TokenCounter]) -> None:
    result, server, _, _ = await _rerun(plain, [Reply(raw=b'{"choices": [ not json')], counters)
    assert len(server.requests) == 3  # openJiuwen sees an unknown error: transient, retried twice
    assert (
        result.attempts[0].failure is not None
        and result.attempts[0].failure.transport == "malformed"
    )
    assert result.outcome == "failed"
    assert "not valid JSON" in (result.failure_reason or "")


async def test_empty_reply(
    plain: ContextSnapshot, counters: dict[str, TokenCounter], tmp_path: Path
) -> None:
    result, _, _, _ = await _rerun(plain, [Reply(content="")], counters)
    assert result.outcome == "empty_summary" and result.compaction is None
    assert "empty_reply" in _codes(result)
    assert "silently skip" in explain_outcome(result)
    assert write_rerun(result, tmp_path).dump is None


async def test_tool_call_only_reply(
    plain: ContextSnapshot, counters: dict[str, TokenCounter]
) -> None:
    calls = [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]
    result, server, _, _ = await _rerun(plain, [Reply(content=None, tool_calls=calls)], counters)
    assert result.outcome == "empty_summary"
    assert {"tool_call_only_reply", "tools_offered"} <= _codes(result)
    assert server.requests[0].body["tool_choice"] == "auto"


async def test_no_tools_switch(plain: ContextSnapshot, counters: dict[str, TokenCounter]) -> None:
    result, server, _, _ = await _rerun(
        plain, [Reply(content=SNAPSHOT_TEXT)], counters, include_tools=False
    )
    assert "tools" not in server.requests[0].body and "tool_choice" not in server.requests[0].body
    assert "tools_offered" not in _codes(result)


async def test_reply_without_state_snapshot(
    plain: ContextSnapshot, counters: dict[str, TokenCounter]
) -> None:
    text = "The agent was fixing parse() in src/tinycal/parse.py."
    result, _, _, _ = await _rerun(plain, [Reply(content=text)], counters)
    assert result.compaction is not None and result.compaction.summary == text
    assert "no_state_snapshot" in _codes(result)


async def test_429_misclassified_as_overflow(counters: dict[str, TokenCounter]) -> None:
    g3 = next(s for s in model_scenarios() if s.name.startswith("g3_"))
    script = [Reply.from_script(r) for r in g3.raw["fake_server_script"]]
    result, _, slept, _ = await _rerun(g3.snapshot, script, counters, prompt=g3.prompt)
    first = result.attempts[0]
    assert (first.openjiuwen_kind, first.status_kind, first.action) == (
        "context_overflow",
        "rate_limit",
        "shrink",
    )
    assert "misclassified_error" in _codes(result) and slept == []
    # the status-code policy waits and retries the same span instead of shrinking it
    fixed, server, slept, _ = await _rerun(
        g3.snapshot, script, counters, prompt=g3.prompt, policy="status"
    )
    assert fixed.attempts[0].action == "backoff" and slept == [0.05]
    assert server.requests[0].body == server.requests[1].body


async def test_overflow_exhausted_and_no_smaller_span(counters: dict[str, TokenCounter]) -> None:
    for name, spans, reason in (
        ("f2_", [16, 15, 7, 5], "retry_budget_exhausted"),
        ("f3_", [1], "no_smaller_span"),
    ):
        scenario = next(s for s in model_scenarios() if s.name.startswith(name))
        script = [Reply.from_script(r) for r in scenario.raw["fake_server_script"]]
        result, _, _, _ = await _rerun(scenario.snapshot, script, counters, prompt=scenario.prompt)
        assert [a.span.counts["messages_to_compress"] for a in result.attempts] == spans
        assert result.attempts[-1].reason == reason and result.outcome == "failed"


async def test_f_shrinks_16_15_7(counters: dict[str, TokenCounter]) -> None:
    f = next(s for s in model_scenarios() if s.name.startswith("f_overflow"))
    script = [Reply.from_script(r) for r in f.raw["fake_server_script"]]
    result, _, _, _ = await _rerun(f.snapshot, script, counters, prompt=f.prompt)
    assert [a.span.counts["messages_to_compress"] for a in result.attempts] == [16, 15, 7]
    assert [a.budget_ratio for a in result.attempts[:2]] == [0.85, 0.65]
    assert "orphan_tool_result" in _codes(result)


async def test_connection_refused(
    plain: ContextSnapshot, counters: dict[str, TokenCounter]
) -> None:
    server = FakeOpenAI([Reply()]).start()
    url = server.base_url
    server.stop()
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    result = await rerun_compaction(
        plain,
        plain.tuning,
        EndpointConfig(url, "m", timeout_s=2),
        RerunOptions(counter=counters["tiktoken_cl100k"]),
        RerunHooks(sleep=sleep, env=ENV),
    )
    assert result.outcome == "failed" and slept == [0.05, 0.1]
    assert "could not connect" in (result.failure_reason or "")


async def test_mock_transport_injection(
    plain: ContextSnapshot, counters: dict[str, TokenCounter]
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        assert body["messages"][-1]["role"] == "user"
        return httpx.Response(
            200, json={"choices": [{"message": {"role": "assistant", "content": SNAPSHOT_TEXT}}]}
        )

    result = await rerun_compaction(
        plain,
        plain.tuning,
        EndpointConfig("http://model.invalid/v1", "m"),
        RerunOptions(counter=counters["tiktoken_cl100k"]),
        RerunHooks(transport=httpx.MockTransport(handler), env=ENV),
    )
    assert result.outcome == "applied" and result.usage is None


async def test_errors_before_any_call(
    plain: ContextSnapshot, counters: dict[str, TokenCounter]
) -> None:
    endpoint = EndpointConfig("http://127.0.0.1:9/v1", "m")
    with pytest.raises(MissingApiKey) as missing:
        await rerun_compaction(
            plain,
            plain.tuning,
            endpoint,
            RerunOptions(counter=counters["tiktoken_cl100k"]),
            RerunHooks(env={}),
        )
    assert "OPENAI_API_KEY" in str(missing.value)
    with pytest.raises(NothingToCompress):
        await rerun_compaction(
            plain,
            plain.tuning.with_(keep_recent=15),
            endpoint,
            RerunOptions(counter=counters["tiktoken_cl100k"]),
            RerunHooks(env=ENV),
        )
    with pytest.raises(ConfigError):
        await rerun_compaction(
            plain,
            plain.tuning.with_(processor="hybrid"),
            endpoint,
            RerunOptions(counter=counters["tiktoken_cl100k"]),
            RerunHooks(env=ENV),
        )


def test_endpoint_repr_hides_headers() -> None:
    endpoint = EndpointConfig("http://x/v1", "m", extra_headers={"X-Api-Token": "hidden-value"})
    assert "hidden-value" not in repr(endpoint)


async def test_key_echoed_by_server_is_redacted(
    plain: ContextSnapshot, counters: dict[str, TokenCounter]
) -> None:
    error = {"message": f"Bearer {SECRET} is not allowed here", "code": "invalid_api_key"}
    result, _, _, _ = await _rerun(plain, [Reply(status=403, error=error)], counters)
    assert result.outcome == "failed"
    assert SECRET not in (result.failure_reason or "") and SECRET not in (
        result.attempts[0].error_text or ""
    )
    assert "***" in (result.failure_reason or "")


async def test_cancel_stops_the_call(
    plain: ContextSnapshot, counters: dict[str, TokenCounter]
) -> None:
    import asyncio

    with FakeOpenAI([Reply(content=SNAPSHOT_TEXT, delay=1.0)]) as server:
        task = asyncio.create_task(
            rerun_compaction(
                plain,
                plain.tuning,
                EndpointConfig(server.base_url, "m", timeout_s=5),
                RerunOptions(counter=counters["tiktoken_cl100k"]),
                RerunHooks(env=ENV),
            )
        )
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


def test_rerun_inputs_from_loaded_artifacts(tmp_path: Path) -> None:
    from inspector.core.artifact import Artifact
    from inspector.llm import builtin_prompt, rerun_inputs
    from inspector.sources.loader import load_paths
    from tests.conftest import REFERENCE

    folder = REFERENCE / "j_round_level_compressor"
    dump_path = next(folder.glob("17*.json"))
    dump = next(a for a in load_paths([dump_path]) if isinstance(a, Artifact))
    assert dump.kind == "dump" and dump.snapshot is not None
    inputs = rerun_inputs(dump, dump.snapshot.tuning)
    recorded = json.loads(dump_path.read_text())
    assert (
        inputs.prompt == recorded["compression_request"]["prompt"]
        and inputs.prompt_source == "recorded"
    )
    assert inputs.wrapper is not None and inputs.wrapper.tag == "memory_block_round"
    assert inputs.identity.session_id == recorded["session_id"]
    other = rerun_inputs(dump, dump.snapshot.tuning.with_(processor="dialogue"))
    assert other.wrapper is None  # the recorded wrapper belongs to RoundLevel
    assert rerun_inputs(dump, dump.snapshot.tuning, use_builtin=True).prompt == builtin_prompt()
    prompt_file = tmp_path / "p.txt"
    prompt_file.write_text("mine", encoding="utf-8")
    assert rerun_inputs(dump, dump.snapshot.tuning, prompt_file=prompt_file).prompt_source == "file"
    snap = next(a for a in load_paths([folder / "input.json"]) if isinstance(a, Artifact))
    assert rerun_inputs(snap, snap.snapshot.tuning).prompt_source == "builtin"  # type: ignore[union-attr]
