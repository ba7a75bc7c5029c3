"""`rerun` per release profile, against what the real releases sent and kept.

`tests/data/rerun/<release>/<scenario>/` was recorded by `python -m parity_live.rerun_scenarios`:
the real openJiuwen (0.1.17 and 0.1.19.post2, from PyPI, each in its own venv) ran each
scenario against `FakeOpenAI` on 127.0.0.1 (`max_retries=0`); `requests.json` holds every
body it sent, `window.json` the context it kept, and its own dump and debug JSONL. Here
our re-run serves the same replies from the same fake server, with the profile and
counter chosen from the snapshot's recorded release (as `inspector rerun` does), and must
send the same bodies (JSON-equal), keep the same context and write the same dump.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from inspector.core.compaction import release_sampling
from inspector.core.releases import PROFILE_0_1_17, PROFILE_0_1_18
from inspector.core.snapshot import ContextSnapshot, snapshot_from_dict
from inspector.llm import EndpointConfig, RerunHooks, RerunOptions, rerun_compaction, write_rerun
from inspector.llm.inputs import rerun_counting
from tests.llm_reference import normalize_ids
from tests.servers.fake_openai import FakeOpenAI, Reply

DATA = Path(__file__).parent / "data" / "rerun"
RELEASES = ("0.1.17", "0.1.19.post2")
#: A fresh recording of any releases (`python -m parity_live.rerun_scenarios R... --out DIR`)
#: is checked with `RERUN_PARITY_DATA=DIR`; by default the committed corpus.
LIVE = Path(os.environ.get("RERUN_PARITY_DATA") or DATA)
CASES = [
    (release.name, folder)
    for release in sorted(LIVE.iterdir())
    if release.is_dir()
    for folder in sorted(release.iterdir())
]
IDS = [f"{release}-{folder.name}" for release, folder in CASES]
ENV = {"OPENAI_API_KEY": "sk-fake"}


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _snapshot(scenario: dict[str, Any], release: str | None) -> ContextSnapshot:
    name = scenario["name"]
    raw = {k: v for k, v in scenario.items() if k not in ("replies", "name", "base_url")} | {
        "id": name,
        "session_id": f"ojw-scn/{name}",
        "context_id": f"ctx_{name}",
    }
    if release is not None:
        raw["openjiuwen_version"] = release
    return snapshot_from_dict(raw)


async def _rerun(folder: Path, release: str | None, override: str | None = None) -> Any:
    scenario = _read(folder / "scenario.json")
    requests = _read(folder / "requests.json")
    snapshot = _snapshot(scenario, release)
    tuning, choice = rerun_counting(snapshot, snapshot.tuning, release=override)
    prompt = requests[0]["body"]["messages"][-1]["content"]

    async def no_sleep(_: float) -> None:
        return None

    replies = [Reply(**r) for r in scenario["replies"]] or [Reply(content="")]
    with FakeOpenAI(replies) as server:
        endpoint = EndpointConfig(
            server.base_url, "fake-model", timeout_s=5.0, sampling=release_sampling(choice.profile)
        )
        result = await rerun_compaction(
            snapshot,
            tuning,
            endpoint,
            RerunOptions(prompt=prompt, prompt_source="recorded", profile=choice.profile),
            RerunHooks(sleep=no_sleep, env=ENV),
        )
    return result, server, requests


def test_corpus_covers_both_profiles_and_the_shrink() -> None:
    committed = {
        release: sorted(p.name for p in (DATA / release).iterdir()) for release in RELEASES
    }
    assert committed["0.1.17"] == committed["0.1.19.post2"]
    assert len(committed["0.1.17"]) >= 8
    statuses = [
        r["status"]
        for release, names in committed.items()
        for name in names
        for r in _read(DATA / release / name / "requests.json")
    ]
    assert {413, 429, 200} <= set(statuses)
    # the releases really differ where the counter does: the second shrink of the same
    # context keeps 8 context messages under 0.1.19's StringLengthCounter, not 15
    twice = "shrink_413_twice_engine_default"
    sizes = {
        r: [len(x["body"]["messages"]) for x in _read(DATA / r / twice / "requests.json")]
        for r in RELEASES
    }
    assert sizes["0.1.17"] != sizes["0.1.19.post2"]


@pytest.mark.parametrize(("release", "folder"), CASES, ids=IDS)
async def test_request_bodies_equal_the_release(release: str, folder: Path) -> None:
    result, server, recorded = await _rerun(folder, release)
    assert result.profile is (PROFILE_0_1_17 if release.startswith("0.1.17") else PROFILE_0_1_18)
    assert [r.status for r in server.requests] == [r["status"] for r in recorded]
    for ours, theirs in zip(server.requests, recorded, strict=True):
        assert ours.body == theirs["body"]


def _without_insert_ids(value: Any) -> Any:
    """Drop the `context_message_id` the library gives each history message when the
    context is created (our input had none; new messages' random ids are normalised)."""
    if isinstance(value, list):
        return [_without_insert_ids(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: _without_insert_ids(v) for k, v in value.items()}
    metadata = out.get("metadata")
    if isinstance(metadata, dict) and metadata.get("context_message_id") not in (None, "<random>"):
        metadata.pop("context_message_id")
        if not metadata and out.get("role") == "assistant":
            out.pop("metadata")  # our assistant messages carry no empty metadata
    return out


def _message_key(message: dict[str, Any]) -> tuple[Any, ...]:
    calls = message.get("tool_calls") or []
    return (
        message["role"],
        message.get("content"),
        message.get("tool_call_id"),
        tuple(c.get("id") for c in calls),
    )


@pytest.mark.parametrize(("release", "folder"), CASES, ids=IDS)
async def test_new_context_and_dump_equal_the_release(
    release: str, folder: Path, tmp_path: Path
) -> None:
    result, _, _ = await _rerun(folder, release)
    window = _read(folder / "window.json")
    theirs_dump = [p for p in folder.glob("*_*.json") if p.name[0].isdigit()]
    if theirs_dump:
        assert result.outcome == "applied"
        assert result.compaction is not None
        ours = [m.to_dict() for m in result.compaction.after_messages]
    else:
        assert result.outcome in ("no_benefit", "failed")
        ours = [m.to_dict() for m in result.snapshot.messages]
    assert [_message_key(m) for m in ours] == [_message_key(m) for m in window]
    written = write_rerun(result, tmp_path)
    if theirs_dump:
        assert written.dump is not None
        mine = _read(written.dump)
        recorded = _read(theirs_dump[0])
        mine.pop("timestamp")
        recorded.pop("timestamp")
        assert list(mine) == list(recorded)
        assert normalize_ids(mine) == _without_insert_ids(normalize_ids(recorded))
    else:
        assert written.dump is None
    debug = next(folder.glob("*Compressor.jsonl"))
    theirs_log = [json.loads(line) for line in debug.read_text(encoding="utf-8").splitlines()]
    ours_log = [json.loads(line) for line in written.debug_log.read_text().splitlines()]
    strip = lambda r: {k: v for k, v in r.items() if k != "timestamp"}  # noqa: E731
    assert [strip(r) for r in ours_log] == [strip(r) for r in theirs_log]


@pytest.mark.parametrize("name", ["shrink_413_twice_engine_default", "shrink_413_engine_default"])
async def test_the_flag_picks_the_profile_when_the_source_does_not_say(name: str) -> None:
    """No recorded release: `--openjiuwen 0.1.17` re-runs as 0.1.17 does; without it the
    newest profile is used, which is 0.1.19.post2's behaviour."""
    folder = DATA / "0.1.17" / name
    result, server, recorded = await _rerun(folder, None, override="0.1.17")
    assert [r.body for r in server.requests] == [r["body"] for r in recorded]
    newest, server, recorded = await _rerun(DATA / "0.1.19.post2" / name, None)
    assert newest.profile is PROFILE_0_1_18
    assert [r.body for r in server.requests] == [r["body"] for r in recorded]
