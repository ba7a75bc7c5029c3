"""jiuwenswarm's live wire as models: every sample and captured gateway frame validates
against `inspector schema gateway_frame` and the union, as does the trajectory page; frames
the inspector reads are refused when a field has the wrong type."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from inspector.formats import GATEWAY_FRAME, TrajectoryPage
from inspector.formats.live import CompressionStateFrame, OtherEvent, Request, Response, UsageFrame
from tests.test_formats_schema import _validator

DATA = Path(__file__).parent / "data" / "jiuwenswarm"


def _frames() -> list[tuple[str, dict[str, Any]]]:
    samples = json.loads((DATA / "ws-context-events.json").read_text(encoding="utf-8"))
    found = [(name, frame) for name, frame in samples.items() if not name.startswith("_")]
    captured = json.loads((DATA / "ws-frames.captured-0.2.3.json").read_text(encoding="utf-8"))
    for name, steps in captured.items():
        if isinstance(steps, list):
            found += [(f"{name}[{i}]", s["frame"]) for i, s in enumerate(steps) if "frame" in s]
    return found


def test_every_sample_and_captured_frame_validates() -> None:
    frames = _frames()
    assert len(frames) > 15
    validator = _validator("gateway_frame")
    kinds = set()
    for name, frame in frames:
        assert list(validator.iter_errors(frame)) == [], name
        kinds.add(type(GATEWAY_FRAME.validate_python(frame)))
    assert {CompressionStateFrame, UsageFrame, Request, Response} <= kinds


def test_a_compression_frame_keeps_its_numbers_and_unknown_keys() -> None:
    samples = json.loads((DATA / "ws-context-events.json").read_text(encoding="utf-8"))
    frame = GATEWAY_FRAME.validate_python(samples["compression_state_full_model_dump"])
    assert isinstance(frame, CompressionStateFrame)
    payload = frame.payload
    assert payload.before is not None and payload.after is not None
    assert (payload.before.tokens, payload.after.tokens) == (1200, 300)
    assert payload.compression_usage is not None and payload.compression_usage.calls == 1
    assert payload.extras()["event_type"] == "context.compression_state"


@pytest.mark.parametrize(
    "change",
    [
        {"before": {"tokens": "1200"}},  # text is not a count
        {"before": {"tokens": True}},  # nor is a boolean
        {"duration_ms": float("nan")},
        {"status": None},
    ],
)
def test_a_read_frame_with_a_wrong_type_is_refused(change: dict[str, Any]) -> None:
    samples = json.loads((DATA / "ws-context-events.json").read_text(encoding="utf-8"))
    frame = json.loads(json.dumps(samples["compression_state_completed"]))
    frame["payload"].update(change)
    with pytest.raises(ValidationError):
        GATEWAY_FRAME.validate_python(frame)


def test_an_unknown_event_is_kept_as_other() -> None:
    frame = GATEWAY_FRAME.validate_python({"type": "event", "event": "x.new", "payload": [1]})
    assert isinstance(frame, OtherEvent) and frame.payload == [1]


def test_the_trajectory_page_validates() -> None:
    page = json.loads((DATA / "trajectory-subject-records.main.json").read_text(encoding="utf-8"))
    assert list(_validator("trajectory").iter_errors(page)) == []
    model = TrajectoryPage.model_validate_json(json.dumps(page))
    assert model.records and all(r.record_id for r in model.records)
    broken = {**page, "revision": "27"}
    assert list(_validator("trajectory").iter_errors(broken))
