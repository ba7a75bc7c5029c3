"""`inspector rerun SOURCE --base-url URL --model NAME [--api-key-env VAR] [--out DIR] [TUNING] [--json]`.

Re-runs the LLM compaction for one context as openJiuwen would (same request, retries,
wrapping, re-injection and benefit check), writes a dump and debug records in openJiuwen's
schema into --out (never into the source folder), and prints a report or one JSON object.
A dump source is re-run with its recorded prompt and memory-block wrapper. The release
whose rules the run follows (counting, overflow shrink, previews, usage records, default
sampling) is chosen as the forked strategies choose it: `--openjiuwen`, else the release the
source records, else its evidence, else the newest; the counter likewise (`--tokens`).

openJiuwen's standard processors (`--family standard --processor X`, or a snapshot naming
one) are re-run by `inspector.cli.rerun_standard`: their own calls, the inspector's prompt
unless `--prompt-file` gives the real one, `--dry-run` to see the request without sending it.

Exit status: 0 a reply came back and a result was built (applied, or one openJiuwen would
drop for no benefit); 1 the source could not be read; 2 bad usage (flags, missing key
variable, --out inside the source folder, not an LLM compressor); 3 the model call failed
after openJiuwen's retries, or its reply held no usable summary; 4 nothing to compress
under the effective tuning (no call made). The API key is never printed or written.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspector.cli.common import (
    UsageError,
    add_tuning_arguments,
    check_overrides,
    print_json_line,
    tuning_overrides,
)
from inspector.cli.rerun_standard import add_standard_arguments
from inspector.core.artifact import Artifact, LoadError
from inspector.core.compaction import Sampling, release_sampling
from inspector.core.errors import ConfigError
from inspector.core.redact import Masker, escape_controls, shown_name
from inspector.core.releases import CountingChoice, ReleaseProfile
from inspector.core.rerun import Attempt, RerunResult, explain_outcome
from inspector.core.strategy.base import EngineRerun, ScriptRerun, Settings, Strategy, rerun_of
from inspector.core.strategy.registry import all_strategies
from inspector.core.strategy.selection import select
from inspector.core.tuning import Tuning

if TYPE_CHECKING:
    from inspector.llm import EndpointConfig, RerunOptions

EXIT_OK, EXIT_UNREADABLE, EXIT_USAGE, EXIT_MODEL_FAILED, EXIT_NOTHING = 0, 1, 2, 3, 4


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """SOURCE, endpoint flags, prompt and output choices, tuning flags, --json."""
    parser.description = (
        "Re-run the LLM compaction for one context against an OpenAI-compatible endpoint, exactly as "
        "openJiuwen would, and show the context before and after."
    )
    parser.epilog = (
        "exit status: 0 result built, 1 unreadable source, 2 bad usage, 3 model call failed or no "
        "usable summary, 4 nothing to compress. The API key is read from --api-key-env and never shown."
    )
    parser.add_argument(
        "source", metavar="SOURCE", help="a dump, snapshot or message list (one context)"
    )
    _add_endpoint_arguments(parser)
    parser.add_argument(
        "--out", metavar="DIR", help="folder for the new dump (default: the user data folder)"
    )
    parser.add_argument(
        "--id", dest="artifact_id", metavar="ID", help="which context, when SOURCE holds several"
    )
    prompt = parser.add_mutually_exclusive_group()
    prompt.add_argument("--prompt-file", metavar="PATH", help="use this compaction prompt")
    prompt.add_argument(
        "--builtin-prompt",
        action="store_true",
        help="use the inspector's prompt even for a dump source",
    )
    parser.add_argument(
        "--no-tools",
        action="store_true",
        help="leave the agent's tools out of the request (openJiuwen sends them with tool_choice auto)",
    )
    parser.add_argument(
        "--policy",
        choices=("openjiuwen", "status"),
        default="openjiuwen",
        help="retry decisions from openJiuwen's text classification (default) or from status codes",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        metavar="S",
        help="seconds for each HTTP call as a whole (connect, send, the complete reply)",
    )
    parser.add_argument(
        "--temperature",
        type=float,
        metavar="F",
        help="sampling temperature (default: the release's, 0.95 up to 0.1.17.post2, none after)",
    )
    parser.add_argument(
        "--top-p",
        type=float,
        metavar="F",
        help="top_p (default: the release's, 0.1 up to 0.1.17.post2, none after)",
    )
    parser.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="extra request header",
    )
    add_tuning_arguments(parser)
    add_standard_arguments(parser)
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the report")


def _add_endpoint_arguments(parser: argparse.ArgumentParser) -> None:
    """--base-url, --model, --api-key-env, --no-key."""
    parser.add_argument(
        "--base-url",
        metavar="URL",
        help="e.g. https://api.openai.com/v1 (required except with --dry-run)",
    )
    parser.add_argument(
        "--model", required=True, metavar="NAME", help="model name sent in the request"
    )
    parser.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        metavar="VAR",
        help="environment variable holding the key",
    )
    parser.add_argument(
        "--no-key", action="store_true", help="send no Authorization header (local servers)"
    )


def _headers(raw: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in raw:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise UsageError(f"--header {name.strip() or item!r}: expected 'NAME: VALUE'")
        out[name.strip()] = value.strip()
    return out


def _pick(found: list[Artifact], wanted: str | None) -> Artifact:
    if wanted is not None:
        for artifact in found:
            if artifact.id == wanted:
                return artifact
        raise UsageError(
            f"--id {wanted!r}: no context with that id (found: {', '.join(a.id for a in found[:8])})"
        )
    if len(found) > 1:
        dumps = [a for a in found if a.kind == "dump"]
        if len(dumps) == 1:
            return dumps[0]
        listed = ", ".join(a.id for a in found[:8]) + (" ..." if len(found) > 8 else "")
        raise UsageError(f"SOURCE holds {len(found)} contexts; choose one with --id ({listed})")
    return found[0]


def result_json(result: RerunResult) -> dict[str, Any]:
    """The --json object of a re-run (no key, no full messages; the dump holds those)."""
    c = result.compaction
    return {
        "processor": result.identity.processor_type,
        "session_id": result.identity.session_id,
        "context_id": result.identity.context_id,
        "model": result.model,
        "outcome": result.outcome,
        "openjiuwen_would_apply": result.openjiuwen_would_apply,
        "explanation": explain_outcome(result),
        "prompt_source": result.prompt_source,
        "tools_offered": result.include_tools and bool(result.snapshot.tools),
        "policy": result.policy,
        "trigger": {
            "hit": result.evaluation.hit,
            "reason": result.evaluation.reason,
            "total_tokens": result.evaluation.total_tokens,
            "threshold": result.evaluation.threshold,
        },
        "span_first": result.initial_span.counts,
        "span_sent": result.final_span.counts,
        "tokens_before": c.tokens_before if c else None,
        "tokens_after": c.tokens_after if c else None,
        "reduction": c.reduction if c else None,
        "reduction_ratio": c.reduction_ratio if c else None,
        "tokens_after_without_reinjection": c.tokens_after_without_reinjection if c else None,
        "recovered_tokens": c.recovered_tokens if c else None,
        "recovered_files": list(c.reinjection.files) if c else [],
        "messages_after": len(c.new_messages) if c else None,
        "summary": c.summary if c else None,
        "reply_tool_calls": len(result.reply.tool_calls) if result.reply else 0,
        "failure": result.failure_reason,
        "attempts": [_attempt_json(a) for a in result.attempts],
        "findings": [f.to_dict() for f in result.findings],
        "lost": [
            {
                "kind": i.kind,
                "text": i.text,
                "message_index": i.message_index,
                "restored": i.restored,
            }
            for i in result.losses
        ],
        "usage": dict(result.usage) if result.usage else None,
    }


def _attempt_json(attempt: Attempt) -> dict[str, Any]:
    return {
        "number": attempt.number,
        "span": attempt.span.counts,
        "request_messages": attempt.request_messages,
        "status_code": attempt.status_code,
        "transport_failure": attempt.failure.transport if attempt.failure else None,
        "openjiuwen_kind": attempt.openjiuwen_kind,
        "status_kind": attempt.status_kind,
        "action": attempt.action,
        "reason": attempt.reason,
        "budget_ratio": attempt.budget_ratio,
        "delay_seconds": attempt.delay_s,
        "duration_ms": round(attempt.duration_s * 1000, 1),
        "server_message": attempt.failure.error_message if attempt.failure else None,
    }


def _endpoint(args: argparse.Namespace, profile: ReleaseProfile | None = None) -> EndpointConfig:
    """The endpoint the flags describe (timeout checked, headers parsed); sampling values
    not given are the release's defaults."""
    from inspector.llm import EndpointConfig

    if args.timeout <= 0:
        raise UsageError("--timeout: must be > 0 seconds")
    defaults = release_sampling(profile) if profile is not None else Sampling()
    temperature = args.temperature if args.temperature is not None else defaults.temperature
    top_p = args.top_p if args.top_p is not None else defaults.top_p
    return EndpointConfig(
        base_url=args.base_url,
        model=args.model,
        api_key_env=args.api_key_env,
        timeout_s=args.timeout,
        extra_headers=_headers(args.header),
        sampling=Sampling(temperature=temperature, top_p=top_p),
        require_key=not args.no_key,
    )


def _load_one(args: argparse.Namespace) -> Artifact | None:
    """The context to re-run (--id picks among several); None after reporting why there is none."""
    from inspector.sources.loader import load_paths

    found: list[Artifact] = []
    errors: list[LoadError] = []
    for item in load_paths([args.source]):
        if isinstance(item, LoadError):
            errors.append(item)
        elif item.snapshot is not None:
            found.append(item)
    if found:
        return _pick(found, args.artifact_id)
    for problem in errors:
        if args.json:
            print_json_line(problem.to_dict())
        where = f" ({problem.where})" if problem.where else ""
        print(
            f"error: {shown_name(problem.source)}{where}: {escape_controls(problem.error)}",
            file=sys.stderr,
        )
    if not errors:
        print(f"error: {shown_name(args.source)}: no context to re-run in it", file=sys.stderr)
    return None


def _options(
    args: argparse.Namespace, artifact: Artifact, tuning: Tuning, profile: ReleaseProfile
) -> RerunOptions:
    """Prompt, wrapper and names from the artifact and flags; the counter of the tuning's
    mode under the release profile."""
    from inspector.encoding import load_cl100k, make_counters
    from inspector.llm import RerunOptions
    from inspector.llm.inputs import rerun_inputs

    try:
        inputs = rerun_inputs(
            artifact, tuning, prompt_file=args.prompt_file, use_builtin=args.builtin_prompt
        )
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"--prompt-file {args.prompt_file}: cannot read it ({error})") from None
    counters = make_counters(profile)
    if tuning.token_mode == "tiktoken_cl100k" and not counters["tiktoken_cl100k"].exact:
        print(f"warning: {load_cl100k().note}", file=sys.stderr)
    return RerunOptions(
        prompt=inputs.prompt,
        prompt_source=inputs.prompt_source,
        wrapper=inputs.wrapper,
        include_tools=not args.no_tools,
        policy=args.policy,
        counter=counters[tuning.token_mode],
        identity=inputs.identity,
        profile=profile,
    )


def _write(result: RerunResult, out_dir: Path, sources: list[str]) -> dict[str, Any]:
    """Write the dump and debug records (masked as the output is; never inside `sources`);
    where they went (or why nothing was written)."""
    from inspector.llm import OutputDirError, write_rerun

    masker = getattr(sys.stdout, "masker", None)
    try:
        written = write_rerun(
            result, out_dir, sources=sources, masker=masker if isinstance(masker, Masker) else None
        )
    except OutputDirError as error:
        print(f"warning: {error}; nothing written", file=sys.stderr)
        return {"folder": None, "dump": None, "debug_log": None, "error": str(error)}
    return {
        "folder": str(written.folder),
        "dump": str(written.dump) if written.dump else None,
        "debug_log": str(written.debug_log),
    }


def counting_json(choice: CountingChoice, release: str | None) -> dict[str, Any]:
    """The release and counter a re-run followed, and why (`--json` keys)."""
    return {
        "openjiuwen_version": release or choice.detection.release or choice.profile.newest_release,
        "release_profile": choice.profile.name,
        "version_evidence": "set by the user" if release else choice.detection.evidence,
        "token_mode": choice.token_mode,
        "counter_evidence": choice.mode_note,
        "exact_counting": choice.exact or (release is not None and choice.mode_source != "assumed"),
    }


def _report(
    args: argparse.Namespace,
    artifact: Artifact,
    result: RerunResult,
    written: dict[str, Any],
    counting: dict[str, Any],
) -> None:
    """One JSON object with --json, else the Rich report."""
    if args.json:
        print_json_line(
            {
                "source": artifact.source,
                "id": artifact.id,
                "kind": artifact.kind,
                **result_json(result),
                **counting,
                "written": written,
            }
        )
        return
    print(
        f"rules of openJiuwen {counting['openjiuwen_version']} (profile "
        f"{counting['release_profile']}: {counting['version_evidence']}); "
        f"{counting['counter_evidence']}",
        file=sys.stderr,
    )
    from inspector.render.plain import TerminalSafeConsole
    from inspector.render.rerun_report import rerun_report

    TerminalSafeConsole(highlight=False).print(
        rerun_report(
            _displayed(result),
            source=artifact.source,
            endpoint=args.base_url,
            written=written,
            recorded=artifact.recorded if artifact.kind == "dump" else None,
        )
    )


def _displayed(result: RerunResult) -> RerunResult:
    """The result as the report shows it: the model's text and the server's words with
    control characters escaped (a reply cannot move the cursor or clear the terminal)."""
    compaction = result.compaction
    if compaction is not None:
        compaction = dataclasses.replace(compaction, summary=escape_controls(compaction.summary))
    return dataclasses.replace(
        result,
        compaction=compaction,
        losses=tuple(dataclasses.replace(i, text=escape_controls(i.text)) for i in result.losses),
        failure_reason=escape_controls(result.failure_reason) if result.failure_reason else None,
    )


def _rerunnable(strategy: Strategy) -> bool:
    return rerun_of(strategy) is not None


def _rerun_tuning(artifact: Artifact, overrides: dict[str, Any]) -> Tuning:
    """The selected strategy's re-run tuning (the recorded settings with the user's flags);
    a strategy that cannot be re-run is a usage error naming those that can."""
    assert artifact.snapshot is not None
    selection = select(artifact.snapshot, overrides)
    rerun = rerun_of(selection.strategy)
    if not isinstance(rerun, EngineRerun):
        able = [s.key for s in all_strategies() if _rerunnable(s)]
        raise UsageError(
            f"{selection.strategy.processor} ({selection.strategy.key}) cannot be re-run here: "
            "rerun replays openJiuwen's "
            f"LLM compaction of {', '.join(able)} (--processor)"
        )
    return rerun.tuning(selection.settings)


def _forked_dry_run(
    args: argparse.Namespace,
    artifact: Artifact,
    tuning: Tuning,
    endpoint: EndpointConfig,
    options: RerunOptions,
) -> int:
    """The request a forked re-run's first attempt sends (secrets masked); nothing is sent."""
    import json

    from inspector.core.compaction import request_body
    from inspector.core.engine import PricedContext

    assert artifact.snapshot is not None and options.counter is not None
    evaluation = PricedContext.from_snapshot(artifact.snapshot, options.counter).evaluate(tuning)
    span = evaluation.span
    if span.compress[1] <= span.compress[0]:
        print(
            f"{artifact.source}: nothing to compress ({evaluation.reason}); no request",
            file=sys.stderr,
        )
        return EXIT_NOTHING
    body = request_body(
        artifact.snapshot,
        span,
        options.prompt or "",
        endpoint.model,
        endpoint.sampling,
        options.include_tools,
    )
    head = {"source": artifact.source, "id": artifact.id, "dry_run": True}
    head["prompt_source"] = options.prompt_source
    if args.json:
        print_json_line({**head, "span": span.counts, "request": body})
        return EXIT_OK
    print(f"dry run: {tuning.processor_class}, span {span.counts}, prompt {options.prompt_source}")
    masker = getattr(sys.stdout, "masker", None)
    text = json.dumps(body, ensure_ascii=False, indent=1)
    print(escape_controls(masker.text(text) if isinstance(masker, Masker) else Masker().text(text)))
    return EXIT_OK


def _check_base_url(args: argparse.Namespace) -> None:
    """--base-url is needed unless --dry-run (then an empty one stands in)."""
    if args.base_url is None and not args.dry_run:
        raise UsageError("--base-url is required (except with --dry-run)")
    args.base_url = args.base_url or ""


def _standard(artifact: Artifact, overrides: dict[str, Any]) -> tuple[Strategy, Settings] | None:
    """The selected standard strategy that re-runs, its settings and processor; None for
    the other strategies."""
    assert artifact.snapshot is not None
    try:
        selection = select(artifact.snapshot, overrides)
    except ConfigError as error:
        raise UsageError(str(error)) from None
    if not isinstance(rerun_of(selection.strategy), ScriptRerun):
        return None
    return selection.strategy, selection.settings


def run(args: argparse.Namespace) -> int:
    """Load, re-run, write, report; exit status as in the module docstring."""
    from inspector.llm import (
        MissingApiKey,
        NothingToCompress,
        OutputDirError,
        RerunHooks,
        check_out_dir,
        default_out_dir,
        rerun_compaction,
    )
    from inspector.llm.inputs import rerun_counting

    overrides = tuning_overrides(args)
    check_overrides(overrides)
    _check_base_url(args)
    _endpoint(args)  # flag errors before anything is read
    out_dir = Path(args.out).expanduser() if args.out else default_out_dir()
    try:
        check_out_dir(out_dir, [args.source])
    except OutputDirError as error:
        raise UsageError(str(error)) from None
    artifact = _load_one(args)
    if artifact is None or artifact.snapshot is None:
        return EXIT_UNREADABLE
    release = overrides.get("openjiuwen_version")
    standard = _standard(artifact, overrides)
    if standard is not None:
        from inspector.cli.rerun_standard import run_standard

        return run_standard(args, artifact, *standard)
    try:
        tuning = _rerun_tuning(artifact, overrides)
        tuning, choice = rerun_counting(
            artifact.snapshot,
            tuning,
            release=release,
            token_mode=overrides.get("token_mode"),
            artifact=artifact,
        )
    except ConfigError as error:
        raise UsageError(str(error)) from None
    endpoint = _endpoint(args, choice.profile)
    options = _options(args, artifact, tuning, choice.profile)
    if args.dry_run:
        return _forked_dry_run(args, artifact, tuning, endpoint, options)

    def progress(attempt: Attempt) -> None:
        if not args.json:
            print(escape_controls(attempt.describe()), file=sys.stderr)

    try:
        result = asyncio.run(
            rerun_compaction(
                artifact.snapshot, tuning, endpoint, options, RerunHooks(on_attempt=progress)
            )
        )
    except MissingApiKey as error:
        raise UsageError(str(error)) from None
    except ConfigError as error:
        raise UsageError(
            f"--processor: {error}; rerun supports openJiuwen's LLM compressors"
        ) from None
    except NothingToCompress as error:
        if args.json:
            print_json_line(
                {
                    "source": artifact.source,
                    "id": artifact.id,
                    "outcome": "nothing_to_compress",
                    "error": str(error),
                }
            )
        print(f"{artifact.source}: {error}; no model call was made", file=sys.stderr)
        return EXIT_NOTHING
    written = _write(result, out_dir, [args.source])
    _report(args, artifact, result, written, counting_json(choice, release))
    return EXIT_OK if result.outcome in ("applied", "no_benefit") else EXIT_MODEL_FAILED
