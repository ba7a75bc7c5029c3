"""Request and result parity with openJiuwen, against a real local HTTP server.

For every reference scenario that called the model: the scenario's scripted replies are
served by `FakeOpenAI`; our request bodies must equal the recorded ones (JSON-equal), and
the dump we write must equal openJiuwen's apart from random ids and times. Scenarios
openJiuwen dropped or gave up on must end the same way, with the same debug records.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from inspector.core.releases import PROFILE_0_1_17
from inspector.core.tokens import TokenCounter
from inspector.llm import RerunHooks, RerunOptions, rerun_compaction, write_rerun
from tests.llm_reference import Scenario, model_scenarios, normalize_ids
from tests.servers.fake_openai import FakeOpenAI

SCENARIOS = model_scenarios()
ENV = {"OPENAI_API_KEY": "sk-test-parity-SECRET-123"}
#: The reference scenarios were written by an openJiuwen source snapshot between the PyPI
#: releases: 0.1.17's counting, previews and 16-key usage records, but the SDK class name
#: in error texts (which PyPI has only from 0.1.18), joined by the openai 2.x SDK.
REFERENCE_PROFILE = dataclasses.replace(
    PROFILE_0_1_17, name="reference", releases=("reference",), error_message_class_prefix=True
)

EXPECTED_OUTCOME = {
    "f2_overflow_413_exhausted": "failed",
    "f3_overflow_no_smaller_span": "failed",
    "g2_transient_429_exhausted": "failed",
    "h2_auth_401": "failed",
    "h4_model_replies_with_tool_call": "empty_summary",
    "h_no_benefit_rollback": "no_benefit",
    "h3_reinjection_defeats_compression": "no_benefit",
}


def test_reference_scenarios_found() -> None:
    assert len(SCENARIOS) >= 19
    assert sum(1 for s in SCENARIOS if s.dump is not None) >= 12


async def _run(
    scenario: Scenario, counters: dict[str, TokenCounter]
) -> tuple[Any, FakeOpenAI, list[float]]:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    snapshot = scenario.snapshot
    with FakeOpenAI(scenario.raw["fake_server_script"]) as server:
        result = await rerun_compaction(
            snapshot,
            snapshot.tuning,
            scenario.endpoint(server.base_url),
            RerunOptions(
                prompt=scenario.prompt,
                prompt_source="recorded",
                counter=counters[snapshot.tuning.token_mode],
                identity=scenario.identity,
                profile=REFERENCE_PROFILE,
                sdk_errors="2",
            ),
            RerunHooks(sleep=sleep, env=ENV),
        )
    return result, server, slept


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
async def test_request_parity(scenario: Scenario, counters: dict[str, TokenCounter]) -> None:
    result, server, _ = await _run(scenario, counters)
    assert len(server.requests) == len(scenario.requests)
    for ours, recorded in zip(server.requests, scenario.requests, strict=True):
        assert ours.path == recorded["path"]
        assert ours.had_authorization_header
        assert ours.authorization == "Bearer " + ENV["OPENAI_API_KEY"]
        assert ours.body == recorded["body"]
        assert ours.status == recorded["response_status"]
    assert [a.status_code for a in result.attempts] == [
        r["response_status"] for r in scenario.requests
    ]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
async def test_result_parity(
    scenario: Scenario, counters: dict[str, TokenCounter], tmp_path: Path
) -> None:
    result, _, slept = await _run(scenario, counters)
    written = write_rerun(result, tmp_path)
    if scenario.dump is None:
        assert result.outcome == EXPECTED_OUTCOME[scenario.name]
        assert written.dump is None
    else:
        assert result.outcome == "applied"
        assert written.dump is not None
        assert written.dump.name.endswith(
            f"_{scenario.dump['processor_type']}_{scenario.identity.session_id.replace('/', '-')}.json"
        )
        ours = json.loads(written.dump.read_text(encoding="utf-8"))
        assert list(ours) == list(scenario.dump)
        theirs = dict(scenario.dump)
        ours.pop("timestamp")
        theirs.pop("timestamp")
        assert normalize_ids(ours) == normalize_ids(theirs)
    # benefit numbers of dropped results (README: h 10847 vs 3160, h3 2624 vs 2591)
    if scenario.name == "h_no_benefit_rollback":
        assert result.compaction is not None
        assert (result.compaction.tokens_after, result.compaction.tokens_before) == (10847, 3160)
    if scenario.name == "h3_reinjection_defeats_compression":
        assert result.compaction is not None
        assert (result.compaction.tokens_before, result.compaction.tokens_after) == (2591, 2624)
        assert result.compaction.reinjection_defeated_benefit
    # debug records: same events, reasons and fields as openJiuwen's JSONL
    ours_log = [json.loads(line) for line in written.debug_log.read_text().splitlines()]
    assert [_record_key(r) for r in ours_log] == [_record_key(r) for r in scenario.debug]
    expected_sleep = [
        r["delay_seconds"] for r in scenario.debug if r.get("reason") == "transient_backoff"
    ]
    assert slept == expected_sleep


def _record_key(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != "timestamp"}


def test_secret_never_written(tmp_path: Path, counters: dict[str, TokenCounter]) -> None:
    import asyncio

    for scenario in SCENARIOS:
        if scenario.name not in (
            "a_current_round_plain",
            "h2_auth_401",
            "g3_429_misclassified_as_overflow",
        ):
            continue
        result, _, _ = asyncio.run(_run(scenario, counters))
        write_rerun(result, tmp_path)
        assert ENV["OPENAI_API_KEY"] not in repr(result)
    for file in tmp_path.iterdir():
        assert ENV["OPENAI_API_KEY"] not in file.read_text(encoding="utf-8")
