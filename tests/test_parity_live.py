"""Our engine against corpora the real openJiuwen releases decided (offline), and the harness.

`tests/data/parity/openjiuwen-<release>.jsonl.gz` were written by `python -m parity_live
corpus`: random realistic contexts (steered near decision boundaries) decided by the newest
release of each profile inside its own venv. Every decision field must agree, the counter
the release picked included (our profile predicts it from the case's engine config).
`make parity-live` reruns the whole differential live on fresh cases.
"""

from __future__ import annotations

import gzip
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from inspector.core.releases import PROFILE_0_1_17, PROFILE_0_1_18, profile_for_release
from inspector.core.tokens import TokenCounter
from parity_live.compare import agreement, mismatches, observed
from parity_live.generate import Generator
from parity_live.steer import steer
from parity_live.venvs import RELEASES, ensure_venv, venv_dir

CORPUS_DIR = Path(__file__).parent / "data" / "parity"
CORPORA = sorted(CORPUS_DIR.glob("openjiuwen-*.jsonl.gz"))


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in gzip.decompress(path.read_bytes()).decode().splitlines()]


CASES = {path.name: _read(path) for path in CORPORA}


def _encode_len(counters: dict[str, TokenCounter]) -> Any:
    return counters["tiktoken_cl100k"]._encode_len  # the offline cl100k encoder


def test_one_corpus_per_profile() -> None:
    releases = {path.name.removeprefix("openjiuwen-").removesuffix(".jsonl.gz") for path in CORPORA}
    assert {profile_for_release(r).profile.name for r in releases} == {"0.1.17", "0.1.18"}
    for name, cases in CASES.items():
        assert len(cases) >= 600, name
        assert {c["openjiuwen_version"] for c in cases} == {
            name.removeprefix("openjiuwen-").removesuffix(".jsonl.gz")
        }


@pytest.mark.parametrize("name", sorted(CASES))
def test_corpus_covers_what_matters(name: str) -> None:
    cases = CASES[name]
    expected = [c["expected"] for c in cases]
    reasons = Counter(e["reason"] for e in expected)
    assert set(reasons) == {
        "below_threshold",
        "no_compressible_span",
        "target_below_min",
        "reached_threshold",
    }
    assert min(reasons.values()) >= 30
    counters = Counter(e["counter"] for e in expected)
    assert len(counters) == 2 and min(counters.values()) >= 100
    assert sum(e["usage_tokens_with_tail"] is not None for e in expected) >= 100
    near = sum(
        abs(e["total_tokens"] - e["threshold"]) <= 3
        or (
            e["min_target_tokens"] is not None
            and abs(e["target_tokens"] - e["min_target_tokens"]) <= 3
        )
        for e in expected
    )
    assert near >= len(cases) * 0.45
    assert sum(isinstance(m["content"], list) for c in cases for m in c["messages"]) >= 100
    assert sum(len(m.get("tool_calls") or []) > 1 for c in cases for m in c["messages"]) >= 100


@pytest.mark.parametrize("name", sorted(CASES))
def test_engine_agrees_with_the_release_on_every_field(name: str, counters) -> None:
    cases = CASES[name]
    profile = profile_for_release(cases[0]["openjiuwen_version"]).profile
    encode_len = _encode_len(counters)
    bad = {}
    for case in cases:
        diff = mismatches(case, profile, encode_len)
        if diff:
            bad[case["id"]] = diff
    assert not bad, f"{len(bad)} of {len(cases)} cases differ, e.g. {next(iter(bad.items()))}"


@pytest.mark.parametrize(
    ("name", "other"),
    [
        ("openjiuwen-0.1.17.post2.jsonl.gz", PROFILE_0_1_18),
        ("openjiuwen-0.1.19.post2.jsonl.gz", PROFILE_0_1_17),
    ],
)
def test_the_other_profile_disagrees(name: str, other, counters) -> None:
    """The corpora tell the profiles apart: the wrong rules get many decisions wrong."""
    result = agreement("x", CASES[name], other, _encode_len(counters))
    assert result.agreeing < result.cases * 0.5
    assert result.fields["reason"] >= 50
    assert result.fields["counter"] >= 200


def test_observed_predicts_the_counter_from_the_engine_config(counters) -> None:
    case = CASES["openjiuwen-0.1.19.post2.jsonl.gz"][0]
    tiktoken = {**case, "engine_config": {"enable_tiktoken_counter": True}}
    named = {**case, "engine_config": {"enable_tiktoken_counter": True, "model_name": "gpt-4o"}}
    enc = _encode_len(counters)
    assert observed(tiktoken, PROFILE_0_1_18, enc)["counter"] == "TiktokenCounter"
    assert observed(named, PROFILE_0_1_18, enc)["counter"] == "StringLengthCounter"
    assert observed(named, PROFILE_0_1_17, enc)["counter"] == "TiktokenCounter"


# --- the harness itself (offline parts) -----------------------------------------------------


def test_generator_is_deterministic_and_varied() -> None:
    def cases(seed: int) -> list[dict[str, Any]]:
        generator = Generator(seed)
        return [generator.case(i) for i in range(40)]

    first, again, other = cases(5), cases(5), cases(6)
    assert first == again
    assert first != other
    processors = Counter(c["processor"] for c in first)
    assert len(processors) == 3
    roles = Counter(m["role"] for c in first for m in c["messages"])
    assert {"user", "assistant", "tool"} <= set(roles)


@pytest.mark.parametrize("profile", [PROFILE_0_1_17, PROFILE_0_1_18])
def test_steering_lands_on_the_boundary_under_the_profile(profile, counters) -> None:
    rng, generator = random.Random(3), Generator(9)
    enc = _encode_len(counters)
    landed = 0
    for index in range(60):
        case = steer(generator.case(index), rng, enc, profile)
        if case["generator"]["steered_toward"] != "threshold_boundary":
            continue
        ours = observed(case, profile, enc)
        assert abs(ours["total_tokens"] - ours["threshold"]) <= 3 or ours["threshold"] == 1
        landed += 1
    assert landed >= 15


def test_ensure_venv_reuses_a_ready_environment(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CONTEXT_INSPECTOR_CACHE", str(tmp_path))
    folder = venv_dir("0.1.19")
    assert folder == tmp_path / "openjiuwen-0.1.19"
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "python").write_text("")
    (folder / ".parity-ready").write_text("0.1.19\n")
    assert ensure_venv("0.1.19", log=False) == folder / "bin" / "python"
    assert RELEASES == (
        "0.1.17", "0.1.17.post1", "0.1.17.post2", "0.1.18", "0.1.18.post1", "0.1.19", "0.1.19.post2"
    )  # fmt: skip
