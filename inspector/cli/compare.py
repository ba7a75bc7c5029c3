"""`inspector compare SOURCE ... --processors current_round,hybrid,... [--json]`.

The same context under two or more strategies side by side (core.compare). For a dump,
the recorded processor's column is the dump's real after-context; other columns are
replays or estimates. With --base-url/--model, hybrid's level 3 calls the model for real
(through inspector.llm, imported only then). `--keep-recent` applies to openJiuwen's processors (messages);
hybrid's window is `--preserve-recent-turns` (turns).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
from typing import Any

from rich.console import Console

from inspector.cli.common import UsageError, add_tuning_arguments, print_json_line
from inspector.cli.run_support import ReportRun
from inspector.core.artifact import Artifact
from inspector.core.compare import CompareOptions, compare_strategies, tuning_for
from inspector.core.errors import ConfigError
from inspector.core.hybrid import (
    HybridResult,
    Summarizer,
    SummaryRequest,
    run_hybrid_async,
    summary_transcript,
)
from inspector.core.hybrid_config import ESTIMATORS, TURN_UNITS, HybridConfig, config_from_tuning
from inspector.core.snapshot import ContextSnapshot
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import PROCESSOR_KINDS, Tuning, apply_overrides, parse_processor
from inspector.render.compare_report import compare_report
from inspector.render.hybrid_report import hybrid_report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Sources, --processors, tuning flags, hybrid settings and --json."""
    parser.description = "Compare compression strategies on the same context."
    parser.add_argument(
        "sources", nargs="*", metavar="SOURCE", help="dumps, folders, snapshots, message lists"
    )
    parser.add_argument(
        "--processors",
        metavar="LIST",
        help="comma-separated: "
        + ",".join(PROCESSOR_KINDS)
        + " (default: the recorded processor and hybrid)",
    )
    add_tuning_arguments(parser, skip=("--context-window",))
    group = parser.add_argument_group("hybrid strategy (spec/hybrid-compressor.md)")
    group.add_argument(
        "--preserve-recent-turns",
        type=int,
        metavar="N",
        help="last N turns never folded (default 5)",
    )
    group.add_argument("--turns", choices=TURN_UNITS, help="what a turn is: step (default) or user")
    group.add_argument(
        "--max-tool-output", type=int, metavar="N", help="level-1 cap in characters (default 2000)"
    )
    group.add_argument(
        "--context-window",
        type=int,
        metavar="N",
        help="the model's declared window (default 128000)",
    )
    group.add_argument(
        "--reserved-output", type=int, metavar="N", help="tokens kept for the reply (default 4096)"
    )
    group.add_argument(
        "--hybrid-estimator",
        choices=ESTIMATORS,
        help="water-level estimator: chars_div_4 (the strategy's own) or counter (what-if: exact counting)",
    )
    parser.add_argument(
        "--summary-tokens",
        type=int,
        default=400,
        metavar="N",
        help="price of an LLM summary that is not run (default 400)",
    )
    llm = parser.add_argument_group(
        "run hybrid level 3 for real (otherwise its summary is priced at --summary-tokens)"
    )
    llm.add_argument(
        "--base-url",
        metavar="URL",
        help="OpenAI-compatible endpoint, e.g. https://api.openai.com/v1",
    )
    llm.add_argument("--model", metavar="NAME", help="model name sent in the request")
    llm.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        metavar="VAR",
        help="environment variable holding the key",
    )
    llm.add_argument(
        "--no-key", action="store_true", help="send no Authorization header (local servers)"
    )
    parser.add_argument(
        "--details", action="store_true", help="also show the hybrid replay message by message"
    )
    parser.add_argument("--json", action="store_true", help="JSON Lines, one object per context")


def parse_processors(text: str | None, recorded: str) -> list[str]:
    """The processors to compare, validated; default: the recorded one and hybrid."""
    if not text:
        first = recorded if recorded != "hybrid" else "current_round"
        return [first, "hybrid"]
    names: list[str] = []
    for part in text.split(","):
        if not part.strip():
            continue
        try:
            kind = parse_processor(part)
        except ConfigError as error:
            raise UsageError(
                f"--processors: {error.value!r} is not a processor, must be {error.allowed}"
            ) from None
        if kind not in names:
            names.append(kind)
    if not names:
        raise UsageError("--processors: give at least one processor")
    return names


def hybrid_config_for(
    args: argparse.Namespace, tuning: Tuning, recorded: frozenset[str]
) -> HybridConfig:
    """Hybrid settings: the tuning's budget and ratio, then the hybrid flags."""
    turns_recorded = tuning.processor == "hybrid" and "keep_recent" in recorded
    config = config_from_tuning(tuning, keep_recent_is_turns=turns_recorded)
    changes: dict[str, Any] = {"placeholder_summary_tokens": args.summary_tokens}
    given: set[str] = set()
    for flag, name in (
        ("preserve_recent_turns", "preserve_recent_turns"),
        ("turns", "turn_unit"),
        ("max_tool_output", "max_tool_output_length"),
        ("context_window", "context_window"),
        ("reserved_output", "reserved_output_tokens"),
        ("hybrid_estimator", "estimator"),
    ):
        value = getattr(args, flag, None)
        if value is not None:
            changes[name] = value
            given.add(name)
    changes["given"] = config.given | given
    try:
        return config.with_(**changes)
    except ConfigError as error:
        raise UsageError(
            f"{error.field}: {error.value!r} is not allowed, must be {error.allowed}"
        ) from None


def llm_summarizer(client: Any, model: str) -> Summarizer:
    """Level 3 through the re-run client: the prompt as system message, the middle as a transcript."""

    async def summarize(request: SummaryRequest) -> str:
        """One chat-completions call; the reply's text is the summary."""
        body = {
            "model": model,
            "messages": [
                {"role": "system", "content": request.prompt},
                {"role": "user", "content": summary_transcript(request.messages)},
            ],
            "stream": False,
        }
        reply, _status = await client.complete(body)
        if not reply.content.strip() and reply.tool_calls:
            raise ValueError("the model answered with a tool call instead of a summary")
        return str(reply.content)

    return summarize


def _endpoint(args: argparse.Namespace) -> tuple[Any, str | None] | None:
    """The endpoint and key for a real level 3, or None when --base-url is not given."""
    if not args.base_url:
        if args.model:
            raise UsageError("--model needs --base-url")
        return None
    if not args.model:
        raise UsageError("--base-url needs --model")
    from inspector.llm.client import EndpointConfig
    from inspector.llm.errors import MissingApiKey
    from inspector.llm.runner import resolve_api_key

    endpoint = EndpointConfig(
        args.base_url, args.model, api_key_env=args.api_key_env, require_key=not args.no_key
    )
    try:
        return endpoint, resolve_api_key(endpoint)
    except MissingApiKey as error:
        raise UsageError(str(error)) from None


def run_hybrid_with_llm(
    snapshot: ContextSnapshot,
    config: HybridConfig,
    counter: TokenCounter,
    endpoint: Any,
    api_key: str | None,
) -> HybridResult:
    """The pipeline with a real LLM call for level 3 (only made when level 3 is reached)."""
    from inspector.llm.client import ChatClient

    async def go() -> HybridResult:
        """Open the client, run the pipeline, close the client."""
        async with ChatClient(endpoint, api_key) as client:
            return await run_hybrid_async(
                snapshot, config, counter, llm_summarizer(client, endpoint.model)
            )

    return asyncio.run(go())


def run(args: argparse.Namespace) -> int:
    """Print one comparison per context found (Rich) or JSON Lines; exit 1 if an input was unreadable."""
    if getattr(args, "processor", None):
        raise UsageError("compare takes --processors LIST, not --processor")
    if args.summary_tokens < 0:
        raise UsageError("--summary-tokens: must be >= 0")
    args.endpoint = _endpoint(args)
    report = ReportRun(args)
    report.warn_inexact()
    console = Console(highlight=False)
    overrides = dict(report.overrides)
    for artifact in report.artifacts():
        if artifact.snapshot is None:
            if report.json:
                print_json_line(
                    {
                        "source": artifact.source,
                        "id": artifact.id,
                        "kind": artifact.kind,
                        "skipped": "no context to compare",
                    }
                )
            else:
                console.print(
                    f"[dim]{artifact.source}: {artifact.id}: no context to compare ({artifact.kind})[/dim]"
                )
            continue
        _compare_one(args, artifact, overrides, report, console)
    return report.exit_status


def _compare_one(
    args: argparse.Namespace,
    artifact: Artifact,
    overrides: dict[str, Any],
    report: ReportRun,
    console: Console,
) -> None:
    snapshot = artifact.snapshot
    assert snapshot is not None
    tuning = apply_overrides(snapshot.tuning, overrides)
    snapshot = dataclasses.replace(snapshot, tuning=tuning)
    processors = parse_processors(args.processors, tuning.processor)
    tunings = {}
    for kind in processors:
        if kind != "hybrid":
            chosen = tuning_for(snapshot, kind)
            if "keep_recent" in overrides:
                chosen = chosen.with_(keep_recent=overrides["keep_recent"])
            tunings[kind] = chosen
    config = hybrid_config_for(args, tuning, snapshot.recorded_fields)
    counter = report.counters[tuning.token_mode]
    hybrid_result = None
    if args.endpoint is not None and "hybrid" in processors:
        endpoint, api_key = args.endpoint
        hybrid_result = run_hybrid_with_llm(snapshot, config, counter, endpoint, api_key)
    dump_after = artifact.after if artifact.kind == "dump" else None
    calls = artifact.recorded.get("model_calls") if artifact.recorded else None
    comparison = compare_strategies(
        snapshot,
        processors,
        counter,
        CompareOptions(
            tunings=tunings,
            hybrid_config=config,
            summary_tokens=args.summary_tokens,
            dump_after=dump_after,
            dump_processor=artifact.processor if dump_after is not None else None,
            dump_llm_calls=calls if isinstance(calls, int) else 1,
            hybrid_result=hybrid_result,
        ),
    )
    if report.json:
        out = {"source": artifact.source, "kind": artifact.kind, **comparison.to_dict()}
        print_json_line(out)
        return
    console.print(compare_report(comparison, f"{artifact.source} ({artifact.kind})"))
    if args.details:
        for outcome in comparison.outcomes:
            if outcome.hybrid is not None:
                console.print(hybrid_report(outcome.hybrid, "HybridCompressor replay"))
    console.print()
