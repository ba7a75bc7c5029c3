"""Run INSIDE a release's own venv: standard-processor re-run scenarios through the real path.

argv: scenarios JSON (each with the `base_url` of its own fake OpenAI-compatible server on
127.0.0.1, started by `parity_live.standard_reruns` in the project's interpreter), output
folder. For each scenario: `ContextEngine.create_context` with the one standard processor
(its model client pointing at the fake server, `max_retries=0`), the stored messages as
`history_messages`, then `add_messages(batch)` (the trigger, then the processor's
`on_add_messages`); writes `<output>/<name>/after.json` (the context's messages after, as
`model_dump(mode="json")`). Messages are built by `tests/standard_differential.py`'s
helpers. Standard library + openJiuwen only; never imports `inspector`.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from standard_differential import MODULES, _messages, _offline_cl100k  # noqa: E402


def _config(scenario: dict[str, Any]) -> Any:
    from openjiuwen.core.foundation.llm.schema.config import ModelClientConfig, ModelRequestConfig

    module = importlib.import_module(
        "openjiuwen.core.context_engine.processor." + MODULES[scenario["processor"]]
    )
    config_cls = getattr(module, scenario["processor"] + "Config")
    return config_cls(
        **scenario["config"],
        model=ModelRequestConfig(model="fake-model"),
        model_client=ModelClientConfig(
            client_provider="OpenAI",
            api_key="sk-fake",
            api_base=scenario["base_url"],
            max_retries=0,
            verify_ssl=False,
        ),
    )


def _round_level_prompts(prompts: dict[str, str]) -> None:
    """RoundLevelCompressor with the inspector's system prompts and `[Output Contract]` lines
    in place of its own (it has no prompt field; everything else in its prompt is its own)."""
    from openjiuwen.core.context_engine.processor.compressor import round_level_compressor

    module: Any = round_level_compressor
    module.DEFAULT_ROUND_COMPRESSION_PROMPT = prompts["first"]
    module.DEFAULT_AGGRESSIVE_ROUND_COMPRESSION_PROMPT = prompts["aggressive"]
    cls = module.RoundLevelCompressor
    original = getattr(cls, "_inspector_original", cls._build_compression_user_prompt)

    def with_contract(self: Any, **kwargs: Any) -> str:
        head, sep, _ = original(self, **kwargs).rpartition("\n[Output Contract]\n")
        return head + sep + prompts["contract"].rstrip("\n")

    cls._inspector_original = original
    cls._build_compression_user_prompt = with_contract


async def run(scenario: dict[str, Any], folder: Path) -> dict[str, Any]:
    """One scenario: the context after `add_messages` (or, for a `get_context_window`
    scenario, after `get_context_window` with its system messages)."""
    from openjiuwen.core.context_engine import ContextEngine
    from openjiuwen.core.context_engine.schema.config import ContextEngineConfig

    folder.mkdir(parents=True, exist_ok=True)
    if "round_level_prompts" in scenario:
        _round_level_prompts(scenario["round_level_prompts"])
    messages = _messages(scenario["messages"])
    get_window = scenario.get("hook") == "get_context_window"
    cut = len(messages) if get_window else scenario["added_from"]
    engine = ContextEngine(ContextEngineConfig(**scenario["engine_config"]))
    from openjiuwen.core.session.agent import Session

    ctx = await engine.create_context(
        context_id=f"ctx_{scenario['name']}",
        session=Session(session_id=f"std-rerun-{scenario['name']}"),
        processors=[(scenario["processor"], _config(scenario))],
        history_messages=messages[:cut],
    )
    error = None
    try:
        if get_window:
            await ctx.get_context_window(system_messages=_messages(scenario["system_messages"]))
        else:
            await ctx.add_messages(messages[cut:])
    except Exception as exc:  # the recorded outcome, not a harness failure
        error = f"{type(exc).__name__}: {exc}"
    after = [m.model_dump(mode="json") for m in ctx.get_messages()]
    (folder / "after.json").write_text(
        json.dumps({"error": error, "messages": after}, indent=1, ensure_ascii=False),
        encoding="utf-8",
    )
    return {"messages_after": len(after), "error": error}


async def main(source: str, target: str) -> None:
    """Run every scenario of `source` into `target`."""
    for scenario in json.loads(Path(source).read_text(encoding="utf-8")):
        result = await run(scenario, Path(target) / scenario["name"])
        print(scenario["name"], json.dumps(result), flush=True)


if __name__ == "__main__":
    import logging

    logging.disable(logging.CRITICAL)
    _offline_cl100k()
    asyncio.run(main(*sys.argv[1:3]))
