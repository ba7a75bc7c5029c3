"""`inspector compare SOURCE ... --processors current_round,hybrid,... [--json]`.

The same context under two or more strategies side by side (core.compare), every one
reached through the strategy protocol: any registered processor can be a column, the
tuning flags apply to every strategy that has the field (as in `why`). For a dump, the
recorded processor's column is the dump's real after-context; other columns are replays or
estimates. With --base-url/--model, hybrid's level 3 calls the model for real (through
inspector.llm, imported only then).
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from rich.text import Text

from inspector.cli.common import UsageError, add_tuning_arguments, print_json_line
from inspector.cli.report import add_pin_argument, pins_of
from inspector.cli.run_support import ReportRun
from inspector.core.artifact import Artifact
from inspector.core.compare import (
    CompareEntry,
    CompareOptions,
    artifact_afters,
    column_mode,
    compare_strategies,
    default_names,
    entries_for,
)
from inspector.core.errors import ConfigError
from inspector.core.hybrid import (
    HybridResult,
    Summarizer,
    SummaryRequest,
    run_hybrid_async,
    summary_transcript,
)
from inspector.core.hybrid_strategy import (
    HybridSettings,
    hybrid_after,
    hybrid_config,
    model_fields_given,
)
from inspector.core.pins import recorded_pins
from inspector.core.snapshot import ContextSnapshot
from inspector.core.strategy.after import After
from inspector.core.strategy.registry import resolve, strategy_keys
from inspector.core.tokens import TokenCounter
from inspector.render.compare_report import compare_report
from inspector.render.hybrid_report import hybrid_report
from inspector.render.plain import TerminalSafeConsole

#: The compare command's own hybrid-only flags (kept from before the generated flags) -> field.
HYBRID_FLAGS: dict[str, str] = {
    "preserve_recent_turns": "preserve_recent_turns",
    "turns": "turn_unit",
    "max_tool_output": "max_tool_output_length",
    "reserved_output": "reserved_output_tokens",
    "hybrid_estimator": "estimator",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Sources, --processors, tuning flags, hybrid settings and --json."""
    parser.description = "Compare compression strategies on the same context."
    parser.add_argument(
        "sources", nargs="*", metavar="SOURCE", help="dumps, folders, snapshots, message lists"
    )
    parser.add_argument(
        "--processors",
        metavar="LIST",
        help="comma-separated registry keys or class names: "
        + ", ".join(strategy_keys())
        + " (default: the recorded processor, the others of its family, and hybrid)",
    )
    add_pin_argument(parser)
    add_tuning_arguments(parser)
    group = parser.add_argument_group("hybrid only (spec/hybrid-compressor.md)")
    group.add_argument(
        "--preserve-recent-turns",
        type=int,
        metavar="N",
        help="last N turns never folded (default 5)",
    )
    group.add_argument("--turns", choices=("step", "user"), help="what a turn is (default step)")
    group.add_argument(
        "--max-tool-output", type=int, metavar="N", help="level-1 cap in characters (default 2000)"
    )
    group.add_argument(
        "--reserved-output", type=int, metavar="N", help="tokens kept for the reply (default 4096)"
    )
    group.add_argument(
        "--hybrid-estimator",
        choices=("chars_div_4", "counter"),
        help="water-level estimator: chars_div_4 (the strategy's own) or counter (what-if)",
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


def parse_processors(text: str | None, snapshot: ContextSnapshot) -> list[str]:
    """The strategies to compare (registry keys), validated; default: see `default_names`."""
    if not text:
        from inspector.core.strategy.selection import recorded_strategy

        return default_names(snapshot, recorded_strategy(snapshot))
    names: list[str] = []
    for part in text.split(","):
        if not part.strip():
            continue
        try:
            key = resolve(part, snapshot.family).key
        except ConfigError:
            try:
                key = resolve(part).key
            except ConfigError as error:
                raise UsageError(
                    f"--processors: {error.value!r} is not a processor, must be {error.allowed}"
                ) from None
        if key not in names:
            names.append(key)
    if not names:
        raise UsageError("--processors: give at least one processor")
    return names


def hybrid_changes(args: argparse.Namespace) -> dict[str, Any]:
    """The hybrid-only flags the user gave, by settings field."""
    return {
        field: getattr(args, flag)
        for flag, field in HYBRID_FLAGS.items()
        if getattr(args, flag, None) is not None
    }


def _with_hybrid_flags(entries: list[CompareEntry], changes: dict[str, Any]) -> list[CompareEntry]:
    """Each column with the changes its settings model has a field for (today only the
    hybrid pipeline's)."""
    out = []
    for entry in entries:
        own = {k: v for k, v in changes.items() if k in type(entry.settings).model_fields}
        if own:
            try:
                entry = CompareEntry(entry.strategy, entry.settings.with_(**own), entry.ignored)
            except ConfigError as error:
                raise UsageError(
                    f"{error.field}: {error.value!r} is not allowed, must be {error.allowed}"
                ) from None
        out.append(entry)
    return out


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
    settings: HybridSettings,
    counter: TokenCounter,
    endpoint: Any,
    api_key: str | None,
) -> HybridResult:
    """The pipeline with a real LLM call for level 3 (only made when level 3 is reached)."""
    from inspector.llm.client import ChatClient

    config = hybrid_config(settings, model_fields_given(snapshot, settings))

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
    args.pins = pins_of(args)
    report = ReportRun(args)
    report.warn_inexact()
    console = TerminalSafeConsole(highlight=False)
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
                    Text(
                        f"{artifact.source}: {artifact.id}: no context to compare ({artifact.kind})",
                        "dim",
                    )
                )
            continue
        _compare_one(args, artifact, overrides, report, console)
    return report.exit_status


def _compare_one(
    args: argparse.Namespace,
    artifact: Artifact,
    overrides: dict[str, Any],
    report: ReportRun,
    console: TerminalSafeConsole,
) -> None:
    snapshot = artifact.snapshot
    assert snapshot is not None
    selection = report.select(artifact)
    names = parse_processors(args.processors, snapshot)
    try:
        entries = entries_for(snapshot, names, overrides)
    except ConfigError as error:
        raise UsageError(f"{artifact.source}: {error}") from None
    entries = _with_hybrid_flags(entries, hybrid_changes(args))
    settings = selection.settings if selection is not None else entries[0].settings
    counter = report.counters[column_mode(settings, snapshot, report.counters)]
    afters = _recorded_afters(args, artifact, entries, counter)
    pins = recorded_pins(snapshot) if args.pins is None else args.pins
    comparison = compare_strategies(
        snapshot,
        entries,
        report.counters,
        counter,
        CompareOptions(
            summary_tokens=args.summary_tokens,
            afters=afters,
            counting_note=report.counting_note,
            pins=pins,
        ),
    )
    if report.json:
        out = {"source": artifact.source, "kind": artifact.kind, **comparison.to_dict()}
        print_json_line(out)
        return
    console.print(compare_report(comparison, f"{artifact.source} ({artifact.kind})"))
    if args.details:
        for outcome in comparison.outcomes:
            if isinstance(outcome.native, HybridResult):
                console.print(hybrid_report(outcome.native, "HybridCompressor replay"))
    console.print()


def _recorded_afters(
    args: argparse.Namespace,
    artifact: Artifact,
    entries: list[CompareEntry],
    counter: TokenCounter,
) -> dict[str, After]:
    """Results that win over the strategies' own: the dump's after-context for its
    processor, and hybrid run with a real level-3 model."""
    snapshot = artifact.snapshot
    assert snapshot is not None
    afters = artifact_afters(artifact, counter)
    if args.endpoint is not None:
        endpoint, api_key = args.endpoint
        for entry in entries:
            if isinstance(entry.settings, HybridSettings):
                result = run_hybrid_with_llm(snapshot, entry.settings, counter, endpoint, api_key)
                afters[entry.strategy.key] = hybrid_after(result)
    return afters
