"""`x` / `X` copy a standard processor's settings in openJiuwen's config shape: `model` is the
`{"model_name": ...}` mapping the snapshots (and openJiuwen's config classes) hold, in JSON and
in YAML, and the copied JSON config has exactly the keys of a real snapshot's config."""

from __future__ import annotations

import gzip
import json
from typing import Any

from inspector.core.snapshot import snapshot_from_dict
from inspector.core.strategy.selection import select
from inspector.tui.screens.context_launch import processor_config
from tests.conftest import REFERENCE

STANDARD = REFERENCE.parent / "standard" / "cases_0116.jsonl.gz"


def _case() -> dict[str, Any]:
    with gzip.open(STANDARD, "rt") as f:
        for line in f:
            case = json.loads(line)
            if case["processor"] == "DialogueCompressor" and case["config"].get("model"):
                return case
    raise AssertionError("no DialogueCompressor case with a model")


def test_json_copy_has_the_snapshot_config_shape() -> None:
    case = _case()
    settings = select(snapshot_from_dict(case), {}).settings
    copied = json.loads(processor_config("DialogueCompressor", settings, "json"))
    assert copied["processor"] == "DialogueCompressor"
    assert copied["config"]["model"] == case["config"]["model"]  # {"model_name": ...}
    for name, value in case["config"].items():
        assert copied["config"][name] == value


def test_yaml_copy_nests_the_model_name() -> None:
    case = _case()
    settings = select(snapshot_from_dict(case), {}).settings
    text = processor_config("DialogueCompressor", settings)
    name = case["config"]["model"]["model_name"]
    assert f"  model:\n    model_name: {json.dumps(name)}\n" in text
    assert f"  tokens_threshold: {case['config']['tokens_threshold']}\n" in text
