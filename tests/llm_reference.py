"""Helpers shared by the llm tests: the openJiuwen reference scenarios as snapshots."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.core.compaction import DumpIdentity, Sampling, processor_type
from inspector.core.snapshot import ContextSnapshot, snapshot_from_dict
from inspector.llm import EndpointConfig
from tests.conftest import REFERENCE


@dataclass
class Scenario:
    """One reference scenario that called the model."""

    name: str
    folder: Path
    raw: dict[str, Any]
    requests: list[dict[str, Any]]
    dump: dict[str, Any] | None
    debug: list[dict[str, Any]]

    @property
    def snapshot(self) -> ContextSnapshot:
        """The context before compression, from input.json."""
        return snapshot_from_dict(self.raw, default_id=self.name)

    @property
    def prompt(self) -> str:
        """The prompt openJiuwen sent (the last message of the first request)."""
        return str(self.requests[0]["body"]["messages"][-1]["content"])

    @property
    def identity(self) -> DumpIdentity:
        """Processor, raw session id and context id of the run."""
        return DumpIdentity(
            processor_type(self.snapshot.tuning.processor),
            self.raw["session_id"],
            self.raw["context_id"],
        )

    def endpoint(self, base_url: str) -> EndpointConfig:
        """The endpoint with the scenario's model name and sampling values."""
        model = self.raw["config"]["model"]
        return EndpointConfig(
            base_url,
            model["model_name"],
            timeout_s=5.0,
            sampling=Sampling(
                model.get("temperature"),
                model.get("top_p"),
                model.get("max_tokens"),
                model.get("stop"),
            ),
        )


def model_scenarios() -> list[Scenario]:
    """Every scenario whose http_requests.json holds at least one request."""
    out = []
    for folder in sorted(p for p in REFERENCE.iterdir() if p.is_dir()):
        requests_file = folder / "http_requests.json"
        if not requests_file.exists():
            continue
        requests = json.loads(requests_file.read_text())
        if not requests:
            continue
        dumps = sorted(folder.rglob("17*_*.json"))
        debug = []
        for log in folder.rglob("*.jsonl"):
            debug = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
        out.append(
            Scenario(
                folder.name,
                folder,
                json.loads((folder / "input.json").read_text()),
                requests,
                json.loads(dumps[0].read_text()) if dumps else None,
                debug,
            )
        )
    return out


def normalize_ids(value: Any) -> Any:
    """Blank the random ids of messages the compressor creates (memory, recovered context)."""
    if isinstance(value, list):
        return [normalize_ids(v) for v in value]
    if isinstance(value, dict):
        out = {k: normalize_ids(v) for k, v in value.items()}
        content = out.get("content")
        if (
            out.get("role") == "user"
            and isinstance(content, str)
            and content.startswith(("<memory_block", "<recovered_context>"))
            and isinstance(out.get("metadata"), dict)
        ):
            out["metadata"] = {**out["metadata"], "context_message_id": "<random>"}
        return out
    return value
