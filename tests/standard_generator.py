"""Generate standard-family cases like the reference ones, for the differential check.

Contexts are spliced from the reference cases' message lists (a prefix of one case joined to
a suffix of another, cut at random points, with a random incoming batch), so they keep the
reference's variety (parallel calls, null ids, Offload messages, memory blocks, images,
internal user messages); configs are drawn within openJiuwen's ranges, about half of them
placed exactly on a boundary (measured value -1, 0, +1, measured by our engine: the real
library then decides). Engine configs vary model name (upper case, unknown), window,
mapping and the tiktoken switch.

    python -m tests.standard_generator OUT.jsonl --per 20 --seed 1

The real library fills in `expected` (`tests/standard_differential.py`).
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspector.core.snapshot import snapshot_from_dict
from inspector.core.standard.strategy import for_processor
from inspector.encoding import make_counters
from tests.conftest import SHARED

REFERENCE = SHARED / "reference" / "standard"
VERSIONS = {"0.1.16": "0.1.16", "0.1.17": "0.1.17", "0.1.19": "0.1.19.post2"}
PROCESSORS = {
    "0.1.16": [
        ("DialogueCompressor", "add_messages"),
        ("CurrentRoundCompressor", "add_messages"),
        ("RoundLevelCompressor", "add_messages"),
        ("RoundLevelCompressor", "get_context_window"),
        ("MessageSummaryOffloader", "add_messages"),
        ("MessageOffloader", "add_messages"),
        ("ToolResultBudgetProcessor", "add_messages"),
        ("ToolResultWindowProcessor", "add_messages"),
        ("MicroCompactProcessor", "add_messages"),
        ("FullCompactProcessor", "add_messages"),
        ("ReasoningToolLoopCompactProcessor", "add_messages"),
    ],
}
PROCESSORS["0.1.17"] = PROCESSORS["0.1.16"][:-1]
PROCESSORS["0.1.19"] = PROCESSORS["0.1.16"][:-1]
MODELS = [
    "deepseek-chat",
    "gpt-4o",
    "GPT-4O",
    "gpt-3.5-turbo",
    "qwen-turbo",
    "glm-4",
    "kimi-k2",
    "kimi-k2.5",
    "o3",
    "claude-haiku-4-5",
    "deepseek-v3",
    "my-local-model",
]
TOOLS = ["read_file", "write_file", "bash", "grep", "glob", "web_search", "web_fetch", "edit_file"]
MAX_CHARS = 40_000


def _load_sources(max_chars: int = MAX_CHARS) -> list[dict[str, Any]]:
    out = []
    for path in sorted(REFERENCE.glob("cases_*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                raw = json.loads(line)
                if len(json.dumps(raw["messages"])) <= max_chars:
                    out.append(raw)
    return out


def _near(rng: random.Random, value: int, low: int = 1) -> int:
    """On the boundary half of the time (value -1, 0, +1), else anywhere up to twice it."""
    if rng.random() < 0.55:
        return max(low, value + rng.choice((-1, 0, 1)))
    return max(low, rng.randint(low, max(low, 2 * value + 2)))


def _engine(rng: random.Random, release: str) -> dict[str, Any]:
    engine: dict[str, Any] = {}
    if rng.random() < 0.5:
        engine["model_name"] = rng.choice(MODELS)
    if rng.random() < 0.3:
        engine["context_window_tokens"] = rng.choice([8192, 32000, 64000, 200000])
    if rng.random() < 0.2:
        engine["model_context_window_tokens"] = {"GPT-4O": 50000, "my-local-model": 32768}
    if release != "0.1.16" and rng.random() < 0.5:
        engine["enable_tiktoken_counter"] = True
    return engine


def _messages(rng: random.Random, sources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    first, second = rng.choice(sources)["messages"], rng.choice(sources)["messages"]
    head = first[: rng.randint(0, len(first))]
    tail = second[rng.randint(0, len(second)) :] if rng.random() < 0.5 else []
    return copy.deepcopy(head + tail)


def _loop(rng: random.Random, processor: str) -> list[dict[str, Any]]:
    """Rounds that repeat a reasoning text and tool set (RTL), or one tool many times (Micro)."""
    out: list[dict[str, Any]] = []
    reasoning = rng.choice(
        ["Let me check.", "需要再次读取配置文件确认参数。", "Checking status again"]
    )
    names = rng.sample(["grep", "glob", "read_file", "web_search", "bash"], rng.randint(1, 2))
    for k in range(rng.randint(2, 9)):
        ids = [f"loop_{rng.randrange(10**9):x}_{k}_{j}" for j in range(len(names))]
        text = reasoning if rng.random() < 0.85 else reasoning + " (variant)"
        out.append(
            {
                "role": "assistant",
                "content": "",
                "reasoning_content": text if processor != "MicroCompactProcessor" else "",
                "tool_calls": [
                    {"id": i, "type": "function", "name": n, "arguments": json.dumps({"q": k})}
                    for i, n in zip(ids, names, strict=True)
                ],
            }
        )
        out += [
            {"role": "tool", "content": f"result {k} " * rng.randint(1, 30), "tool_call_id": i}
            for i in ids
        ]
        if rng.random() < 0.15:
            out.append({"role": "user", "content": "continue"})
    if rng.random() < 0.5:
        out.append({"role": "assistant", "content": "done"})
    return out


Measure = Callable[[dict[str, Any]], dict[str, Any]]


def _config_dialogue_compressor(
    rng: random.Random, case: dict[str, Any], measure: Measure, model: dict[str, Any]
) -> dict[str, Any]:
    n = len(case["messages"])
    tokens = measure({"tokens_threshold": 1})["tokens"]
    config: dict[str, Any] = {"tokens_threshold": _near(rng, tokens), "model": model}
    if rng.random() < 0.3:
        config["messages_threshold"] = _near(rng, n)
    if rng.random() < 0.5:
        config["messages_to_keep"] = rng.randint(1, n + 3)
    config["keep_last_round"] = rng.random() < 0.5
    return config


def _config_current_round_compressor(
    rng: random.Random, case: dict[str, Any], measure: Measure, model: dict[str, Any]
) -> dict[str, Any]:
    keep = rng.randint(1, 8)
    details = measure({"messages_to_keep": keep})
    config: dict[str, Any] = {
        "tokens_threshold": _near(rng, details["tokens"]),
        "messages_to_keep": keep,
    }
    config["min_selected_tokens_for_compression"] = _near(rng, details.get("span_tokens") or 50)
    merges = details.get("merge_ranges") or []
    if merges:
        config["accumulated_summary_token_limit"] = _near(rng, merges[0][2])
    config["summary_merge_min_blocks"] = rng.randint(2, 4)
    config["model"] = model
    return config


def _config_round_level_compressor(
    rng: random.Random, case: dict[str, Any], measure: Measure, model: dict[str, Any]
) -> dict[str, Any]:
    config = {"keep_recent_messages": rng.randint(0, 8), "model": model}
    details = measure(config)
    ratio = details["total"] / max(details["budget"], 1)
    if rng.random() < 0.5 and 0 < ratio <= 1:
        config["trigger_context_ratio"] = max(0.001, min(1.0, round(ratio, 3)))
    else:
        config["trigger_context_ratio"] = round(rng.uniform(0.01, 1.0), 3)
    config["target_total_tokens"] = _near(rng, details["total"])
    return config


def _config_message_summary_offloader(
    rng: random.Random, case: dict[str, Any], measure: Measure, model: dict[str, Any]
) -> dict[str, Any]:
    sizes = [e["size"] for e in measure({})["new"]] or [100]
    return {
        "large_message_threshold": _near(rng, rng.choice(sizes)),
        "offload_message_type": rng.sample(["user", "assistant", "tool"], rng.randint(1, 3)),
        "protected_tool_names": rng.sample(
            ["read_file", "grep", "bash:*.md", "read_file:*SKILL.md", "web_fetch"],
            rng.randint(0, 2),
        ),
        "model": model,
    }


def _config_message_offloader(
    rng: random.Random, case: dict[str, Any], measure: Measure, model: dict[str, Any]
) -> dict[str, Any]:
    n = len(case["messages"])
    lengths = [len(m["content"]) for m in case["messages"] if isinstance(m["content"], str)]
    large = _near(rng, rng.choice(lengths or [200]), low=2)
    config: dict[str, Any] = {
        "large_message_threshold": large,
        "trim_size": rng.randint(1, large - 1),
        "offload_message_type": rng.sample(["user", "assistant", "tool"], rng.randint(1, 3)),
        "protected_tool_names": rng.sample(["read_file", "bash:*", "grep"], rng.randint(0, 2)),
        "keep_last_round": rng.random() < 0.5,
    }
    tokens = measure({**config, "tokens_threshold": 1})["tokens"]
    config["tokens_threshold"] = _near(rng, tokens)
    if rng.random() < 0.5:
        config["messages_to_keep"] = rng.randint(1, max(1, n))
    if rng.random() < 0.3:
        config["messages_threshold"] = max(config.get("messages_to_keep", 0) + 1, _near(rng, n))
    return config


def _config_tool_result_budget_processor(
    rng: random.Random, case: dict[str, Any], measure: Measure, model: dict[str, Any]
) -> dict[str, Any]:
    rounds = measure({"tokens_threshold": 1, "large_message_threshold": 2, "trim_size": 1})
    sizes = [r[2] for r in rounds["rounds"]] or [100]
    results = [c[1] for r in rounds["rounds"] for c in r[3]] or [50]
    large = _near(rng, rng.choice(results), low=2)
    return {
        "tokens_threshold": _near(rng, rng.choice(sizes)),
        "large_message_threshold": large,
        "trim_size": rng.randint(1, large - 1),
        "tool_name_allowlist": rng.choice([None, ["glob"], ["read_file", "grep"]]),
    }


def _config_tool_result_window_processor(
    rng: random.Random, case: dict[str, Any], measure: Measure, model: dict[str, Any]
) -> dict[str, Any]:
    config = {
        "tool_names": rng.sample(["_file", "grep", "snapshot", "web_search", "bash"], 2),
        "keep_last_k": rng.randint(1, 5),
        "trim_size": rng.randint(10, 300),
    }
    if rng.random() < 0.5:
        config["min_offload_chars"] = rng.choice([0, 100, 1000])
    return config


def _config_micro_compact_processor(
    rng: random.Random, case: dict[str, Any], measure: Measure, model: dict[str, Any]
) -> dict[str, Any]:
    return {"trigger_threshold": rng.randint(1, 6), "keep_recent_per_tool": rng.randint(0, 5)}


def _config_full_compact_processor(
    rng: random.Random, case: dict[str, Any], measure: Measure, model: dict[str, Any]
) -> dict[str, Any]:
    tokens = measure({"trigger_total_tokens": 1})["tokens"]
    return {
        "trigger_total_tokens": _near(rng, tokens),
        "messages_to_keep": rng.randint(0, 20),
        "keep_tool_message_pairs": rng.random() < 0.7,
    }


def _config_reasoning_tool_loop(
    rng: random.Random, case: dict[str, Any], measure: Measure, model: dict[str, Any]
) -> dict[str, Any]:
    return {
        "enabled": rng.random() < 0.9,
        "consecutive_threshold": rng.randint(2, 5),
        "reasoning_min_chars": rng.randint(1, 12),
        "language": rng.choice(["cn", "en", "zh-CN"]),
    }


ConfigMaker = Callable[[random.Random, dict[str, Any], Measure, dict[str, Any]], dict[str, Any]]
#: One config maker per processor.
CONFIGS: dict[str, ConfigMaker] = {
    "DialogueCompressor": _config_dialogue_compressor,
    "CurrentRoundCompressor": _config_current_round_compressor,
    "RoundLevelCompressor": _config_round_level_compressor,
    "MessageSummaryOffloader": _config_message_summary_offloader,
    "MessageOffloader": _config_message_offloader,
    "ToolResultBudgetProcessor": _config_tool_result_budget_processor,
    "ToolResultWindowProcessor": _config_tool_result_window_processor,
    "MicroCompactProcessor": _config_micro_compact_processor,
    "FullCompactProcessor": _config_full_compact_processor,
    "ReasoningToolLoopCompactProcessor": _config_reasoning_tool_loop,
}


def _config(
    rng: random.Random, processor: str, case: dict[str, Any], measure: Measure
) -> dict[str, Any]:
    """A random config within openJiuwen's ranges, about half on a measured boundary."""
    model = {"model_name": rng.choice(MODELS)}
    return CONFIGS[processor](rng, case, measure, model)


def generate(per: int, seed: int, max_chars: int = MAX_CHARS) -> list[dict[str, Any]]:
    """`per` cases for each release, processor and hook (sources up to `max_chars` of JSON)."""
    rng = random.Random(seed)
    sources = _load_sources(max_chars)
    counters = make_counters()
    out: list[dict[str, Any]] = []
    for release, pairs in PROCESSORS.items():
        for processor, hook in pairs:
            for k in range(per):
                messages = _messages(rng, sources)
                if processor in ("MicroCompactProcessor", "ReasoningToolLoopCompactProcessor"):
                    if rng.random() < 0.6:
                        messages += _loop(rng, processor)
                donor = rng.choice(sources)
                window = processor == "RoundLevelCompressor"  # the only one that counts them
                case: dict[str, Any] = {
                    "id": f"gen-{release}-{processor}{'@get' if hook != 'add_messages' else ''}-{k:04d}",
                    "processor": processor,
                    "processor_family": "standard",
                    "openjiuwen_version": VERSIONS[release],
                    "hook": hook,
                    "added_from": len(messages)
                    if hook != "add_messages"
                    else rng.randint(max(0, len(messages) - 6), len(messages)),
                    "engine_config": _engine(rng, release),
                    "add_kwargs": {},
                    "system_messages": donor["system_messages"]
                    if window and rng.random() < 0.7
                    else [],
                    "messages": messages,
                    "tools": donor["tools"] if window and rng.random() < 0.7 else [],
                }
                if rng.random() < 0.2:
                    case["add_kwargs"]["model_name"] = rng.choice(MODELS)
                if (
                    processor == "RoundLevelCompressor"
                    and hook == "add_messages"
                    and rng.random() < 0.2
                ):
                    case["add_kwargs"]["pass_system_and_tools"] = True

                def measure(
                    config: dict[str, Any], case: dict[str, Any] = case, name: str = processor
                ) -> dict[str, Any]:
                    snapshot = snapshot_from_dict({**case, "config": config})
                    strategy = for_processor(name)
                    prepared = strategy.prepare(snapshot, counters)
                    settings = strategy.recorded_settings(snapshot)
                    return dict(strategy.outcome(prepared, settings).details)

                case["config"] = _config(rng, processor, case, measure)
                out.append(case)
    return out


def main(argv: list[str] | None = None) -> int:
    """Write generated cases (without `expected`) as JSON Lines."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--per", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-chars", type=int, default=MAX_CHARS)
    args = parser.parse_args(argv)
    cases = generate(args.per, args.seed, args.max_chars)
    with args.out.open("w", encoding="utf-8") as handle:
        for case in cases:
            handle.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(f"{len(cases)} cases -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
