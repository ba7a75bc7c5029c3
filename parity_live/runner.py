"""Run INSIDE a release's own venv: let the real openJiuwen decide each case.

Reads cases (our snapshot format, JSON Lines) from argv[1], writes them back with an
`expected` key (the parity corpus's shape plus `counter`) and `token_mode` set from the
counter the release picked, to argv[2]. Per case, exactly the public path a host uses:
`ContextEngine(ContextEngineConfig(...)).create_context(...)` with one forked processor
(after `processor.forked.activate()`), a real agent `Session`, history messages built as
library objects; then the window `get_context_window` would build
(`_get_window_messages` + `ContextWindow`) is handed to the processor's own
`trigger_get_context_window`, so no model is ever called. hit/reason/total/threshold/
target/min target come from the debug record the library wrote; the other fields from
library functions (`_build_span`, `adjust_keep_recent_for_tool_boundaries`,
`count_usage_tokens_with_tail`, the context's counter). Standard library + openJiuwen only;
never imports `inspector`.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from openjiuwen.core.context_engine import ContextEngine, ContextEngineConfig
from openjiuwen.core.context_engine.base import ContextWindow
from openjiuwen.core.context_engine.processor import forked
from openjiuwen.core.context_engine.processor.forked.compressor import base as compressor_base
from openjiuwen.core.context_engine.processor.forked.compressor.support import (
    util as compressor_util,
)
from openjiuwen.core.foundation.llm import (
    AssistantMessage,
    ModelClientConfig,
    ModelRequestConfig,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from openjiuwen.core.foundation.tool import ToolInfo
from openjiuwen.core.session.agent import Session

forked.activate()
_CONFIGS = {
    "CurrentRoundCompressor": forked.CurrentRoundCompressorConfig,
    "DialogueCompressor": forked.DialogueCompressorConfig,
    "RoundLevelCompressor": forked.RoundLevelCompressorConfig,
}
_COUNTER_MODES = {
    "TiktokenCounter": "tiktoken_cl100k",
    "StringLengthCounter": "string_length",
    None: "len_div_4",
}


def _message(raw: dict[str, Any]) -> Any:
    role = raw["role"]
    common: dict[str, Any] = {
        "content": raw.get("content", ""),
        "metadata": dict(raw.get("metadata") or {}),
    }
    if raw.get("name") is not None:
        common["name"] = raw["name"]
    if role == "system":
        return SystemMessage(**common)
    if role == "user":
        return UserMessage(**common)
    if role == "tool":
        return ToolMessage(tool_call_id=raw.get("tool_call_id") or "", **common)
    calls = []
    for call in raw.get("tool_calls") or []:
        flat = {
            "id": call.get("id"),
            "type": call.get("type", "function"),
            "name": call["function"]["name"],
            "arguments": call["function"]["arguments"],
        }
        if call.get("response_item_id") is not None:
            flat["response_item_id"] = call["response_item_id"]
        calls.append(flat)
    extra: dict[str, Any] = {}
    if calls:
        extra["tool_calls"] = calls
    if raw.get("usage_metadata") is not None:
        extra["usage_metadata"] = raw["usage_metadata"]
    return AssistantMessage(**common, **extra)


def _processor_config(case: dict[str, Any], folder: str) -> Any:
    values = dict(case["config"])
    return _CONFIGS[case["processor"]](
        **values,
        model=ModelRequestConfig(model="fake-model"),
        model_client=ModelClientConfig(
            client_provider="OpenAI",
            api_key="unused",
            api_base="http://127.0.0.1:9/v1",
            max_retries=0,
        ),
        enable_compression_dump=True,
        compression_dump_dir=folder,
    )


def _last_record(folder: str, processor: str) -> dict[str, Any]:
    lines = (Path(folder) / f"{processor}.jsonl").read_text(encoding="utf-8").splitlines()
    return json.loads(lines[-1])


async def decide(case: dict[str, Any], index: int) -> dict[str, Any]:
    """The library's decision fields for one case."""
    with tempfile.TemporaryDirectory(prefix="ojw-parity-") as folder:
        engine = ContextEngine(
            ContextEngineConfig(
                context_window_tokens=case["context_max"], **case.get("engine_config", {})
            )
        )
        context = await engine.create_context(
            context_id=f"ctx_{index}",
            session=Session(session_id=f"parity/{case['id']}"),
            processors=[(case["processor"], _processor_config(case, folder))],
            history_messages=[_message(m) for m in case["messages"]],
        )
        processor = context._processors[0]  # noqa: SLF001 - the one processor we configured
        system = [_message(m) for m in case["system_messages"]]
        tools = [ToolInfo(**t) for t in case["tools"]]
        system, messages = context._get_window_messages(system, None, None)  # noqa: SLF001
        window = ContextWindow(system_messages=system, context_messages=messages, tools=tools)
        hit = await processor.trigger_get_context_window(context, window)
        record = _last_record(folder, case["processor"])
        return _expected(case, context, processor, window, hit, record)


def _expected(
    case: dict[str, Any],
    context: Any,
    processor: Any,
    window: Any,
    hit: bool,
    record: dict[str, Any],
) -> dict[str, Any]:
    messages = list(window.context_messages)
    system = list(window.system_messages)
    span = processor._build_span(messages)  # noqa: SLF001
    last_user = compressor_base.find_last_real_user_message_index(messages)
    if case["processor"] == "DialogueCompressor":
        keep = None if last_user < 0 else len(messages) - last_user
    else:
        keep = case["config"].get("keep_recent_messages", 0)
    counter = context.token_counter()
    count = processor._count_messages_tokens  # noqa: SLF001
    return {
        "hit": hit,
        "reason": record["reason"],
        "total_tokens": record["total_tokens"],
        "threshold": record["threshold"],
        "target_tokens": record.get("target_tokens"),
        "min_target_tokens": record.get("min_target_tokens"),
        "effective_keep": None
        if keep is None
        else compressor_base.adjust_keep_recent_for_tool_boundaries(messages, keep),
        "span": {
            "preserved_prefix": len(span.preserved_prefix),
            "messages_to_compress": len(span.messages_to_compress),
            "protected_tail": len(span.protected_tail),
        },
        "per_message_tokens": [count([m], context) for m in messages],
        "context_max": record["context_max"],
        "last_real_user_index": last_user,
        "usage_tokens_with_tail": compressor_util.count_usage_tokens_with_tail(system + messages),
        "messages_tokens": count(system + messages, context),
        "tools_tokens": processor._count_tools_tokens(list(window.tools), context),  # noqa: SLF001
        "per_system_message_tokens": [count([m], context) for m in system],
        "span_target_tokens": count(list(span.messages_to_compress), context),
        "counter": None if counter is None else type(counter).__name__,
    }


async def main(source: str, target: str, version: str) -> None:
    """Decide every case of `source` and write them with `expected` to `target`."""
    out = []
    for index, line in enumerate(Path(source).read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        case = json.loads(line)
        expected = await decide(case, index)
        case["expected"] = expected
        case["token_mode"] = _COUNTER_MODES.get(expected["counter"], expected["counter"])
        case["openjiuwen_version"] = version
        out.append(json.dumps(case, ensure_ascii=True))
    Path(target).write_text("\n".join(out) + "\n", encoding="utf-8")


if __name__ == "__main__":
    import logging

    logging.disable(logging.CRITICAL)
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
