"""`inspector rerun` of dumps the real releases wrote: the release is detected from the dump
(its usage details), the counter is that release's engine default, and the re-run sends
what the release sent, overflow shrink included (`tests/data/rerun`, see
`tests/test_rerun_profiles.py`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import main
from tests.servers.fake_openai import FakeOpenAI, Reply

DATA = Path(__file__).parent / "data" / "rerun"


def _dump(release: str, name: str) -> Path:
    return next(p for p in (DATA / release / name).glob("*_*.json") if p.name[0].isdigit())


def _run(
    release: str, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, dict[str, Any], list[Any]]:
    scenario = json.loads((DATA / release / name / "scenario.json").read_text())
    with FakeOpenAI([Reply(**r) for r in scenario["replies"]]) as server:
        status = main(
            [
                "rerun",
                str(_dump(release, name)),
                "--base-url",
                server.base_url,
                "--model",
                "fake-model",
                "--no-key",
                "--out",
                str(tmp_path / "out"),
                "--json",
                *extra,
            ]
        )
        bodies = [r.body for r in server.requests]
    return status, json.loads(capsys.readouterr().out), bodies


@pytest.mark.parametrize(
    ("release", "profile", "mode", "name"),
    [
        ("0.1.19.post2", "0.1.18", "string_length", "shrink_413_engine_default"),
        ("0.1.17", "0.1.17", "len_div_4", "shrink_413_engine_default"),
        # 0.1.19.post2 kept no dump here: after its second shrink the result had no benefit
        ("0.1.17", "0.1.17", "len_div_4", "shrink_413_twice_engine_default"),
    ],
)
def test_dump_rerun_shrinks_as_its_release(
    release: str,
    profile: str,
    mode: str,
    name: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # keep_recent_messages 0 is the scenario's setting: a dump alone records the span it
    # sent last, and its protected tail (grown by the shrink) reads as the keep window
    status, report, bodies = _run(release, name, tmp_path, capsys, "--keep-recent", "0")
    recorded = json.loads((DATA / release / name / "requests.json").read_text())
    assert status == 0 and report["outcome"] == "applied"
    assert report["release_profile"] == profile and report["token_mode"] == mode
    assert "usage details" in report["version_evidence"]
    assert [len(b["messages"]) for b in bodies] == [len(r["body"]["messages"]) for r in recorded]
    assert bodies == [r["body"] for r in recorded]
    ours = json.loads(Path(report["written"]["dump"]).read_text())
    theirs = json.loads(_dump(release, name).read_text())
    assert ours["span"] == theirs["span"] and ours["benefit"] == theirs["benefit"]
    details = ours["compression_response"]["usage"]["details"][0]
    assert len(details) == (23 if profile == "0.1.18" else 16)


def test_the_flag_overrides_the_detected_release(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 0.1.19 dump re-run under `--openjiuwen 0.1.17` counts with 0.1.17's engine default
    (no counter, len//4) and sends 0.1.17's sampling: a what-if, and the report says so."""
    name = "shrink_413_engine_default"
    status, report, bodies = _run(
        "0.1.19.post2", name, tmp_path, capsys, "--openjiuwen", "0.1.17", "--keep-recent", "0"
    )
    assert status == 0
    assert report["openjiuwen_version"] == "0.1.17" and report["release_profile"] == "0.1.17"
    assert report["version_evidence"] == "set by the user"
    assert report["token_mode"] == "len_div_4"
    assert bodies[0]["temperature"] == 0.95 and bodies[0]["top_p"] == 0.1
    recorded = json.loads((DATA / "0.1.19.post2" / name / "requests.json").read_text())
    assert bodies[0] != recorded[0]["body"]


def test_a_bad_release_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(
        [
            "rerun",
            str(_dump("0.1.17", "compress_tiktoken")),
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "--no-key",
            "--out",
            str(tmp_path / "out"),
            "--openjiuwen",
            "0.1.15",
        ]
    )
    assert status == 2
    assert "openjiuwen" in capsys.readouterr().err.lower()


@pytest.mark.parametrize(
    ("processor", "family"),
    [("hybrid", None), ("MessageOffloader", "standard")],
)
def test_a_strategy_without_rerun_is_a_usage_error_naming_those_with(
    processor: str, family: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The re-run is chosen through the protocol: only strategies with the capability."""
    out = tmp_path / "out"
    extra = ["--family", family] if family else []
    status = main(
        [
            "rerun", str(_dump("0.1.17", "compress_tiktoken")), "--base-url",
            "http://127.0.0.1:9/v1", "--model", "m", "--no-key", "--out", str(out),
            "--processor", processor, *extra,
        ]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert status == 2 and "cannot be re-run" in err
    assert "current_round, dialogue, round_level" in err and "Traceback" not in err
    assert not out.exists()


def test_the_selected_forked_processor_is_the_one_re_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--processor round_level` on a CurrentRound dump re-runs the RoundLevelCompressor."""
    status, record, bodies = _run(
        "0.1.17", "compress_tiktoken", tmp_path, capsys, "--processor", "round_level"
    )
    assert status == 0 and record["processor"] == "RoundLevelCompressor" and bodies
    status, record, _ = _run("0.1.17", "compress_tiktoken", tmp_path, capsys)
    assert status == 0 and record["processor"] == "CurrentRoundCompressor"
