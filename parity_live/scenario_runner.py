"""Run INSIDE a release's own venv: scripted scenarios through the real public path.

argv: scenarios JSON (each with the `base_url` of its own fake OpenAI-compatible server,
started on 127.0.0.1 by the harness in the project's interpreter), output folder, release. For each
scenario: `ContextEngine.create_context` with one forked processor whose model client
points at the fake server (`max_retries=0`), then `get_context_window(system_messages,
tools)`; the library writes its dump and debug JSONL into `<output>/<scenario>/`, the
runner adds `result.json` and `window.json` (the context messages of the window: the new
context after a compression). Standard library + openJiuwen only; never imports `inspector`.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from openjiuwen.core.context_engine import ContextEngine, ContextEngineConfig
from openjiuwen.core.foundation.llm import ModelClientConfig, ModelRequestConfig
from openjiuwen.core.foundation.tool import ToolInfo
from openjiuwen.core.session.agent import Session

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner import _CONFIGS, _message  # noqa: E402  (same folder, same venv)


async def run(scenario: dict[str, Any], folder: Path) -> dict[str, Any]:
    """One scenario; returns what came back from get_context_window."""
    folder.mkdir(parents=True, exist_ok=True)
    config = _CONFIGS[scenario["processor"]](
        **scenario["config"],
        model=ModelRequestConfig(model="fake-model"),
        model_client=ModelClientConfig(
            client_provider="OpenAI",
            api_key="sk-fake",
            api_base=scenario["base_url"],
            max_retries=0,
        ),
        enable_compression_dump=True,
        compression_dump_dir=str(folder),
    )
    engine = ContextEngine(
        ContextEngineConfig(
            context_window_tokens=scenario["context_max"], **scenario["engine_config"]
        )
    )
    context = await engine.create_context(
        context_id=f"ctx_{scenario['name']}",
        session=Session(session_id=f"ojw-scn/{scenario['name']}"),
        processors=[(scenario["processor"], config)],
        history_messages=[_message(m) for m in scenario["messages"]],
    )
    window = await context.get_context_window(
        system_messages=[_message(m) for m in scenario["system_messages"]],
        tools=[ToolInfo(**t) for t in scenario["tools"]],
    )
    result = {
        "messages_before": len(scenario["messages"]),
        "messages_after": len(window.context_messages),
        "files": sorted(p.name for p in folder.iterdir()),
    }
    (folder / "result.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    window_messages = [
        m.model_dump(mode="json", exclude_none=True) for m in window.context_messages
    ]
    (folder / "window.json").write_text(json.dumps(window_messages, indent=1), encoding="utf-8")
    return result


async def main(source: str, target: str, release: str) -> None:
    """Run every scenario of `source` into `target`."""
    scenarios = json.loads(Path(source).read_text(encoding="utf-8"))
    for scenario in scenarios:
        result = await run(scenario, Path(target) / scenario["name"])
        print(release, scenario["name"], json.dumps(result), flush=True)


if __name__ == "__main__":
    import logging

    logging.disable(logging.CRITICAL)
    asyncio.run(main(*sys.argv[1:4]))
