"""`inspector rerun` for openJiuwen's standard processors (`--family standard --processor X`).

DialogueCompressor, CurrentRoundCompressor and MessageSummaryOffloader make model calls;
their strategies build the calls as a script (`core.standard.rerun_script`), which this
module sends through `inspector.llm.standard_runner` (or, with `--dry-run`, only shows:
the first request exactly, secrets masked). The prompts are the inspector's own, labelled
so in every output, unless `--prompt-file` (or the snapshot's custom_compression_prompt)
gives the real one. Exit status as `inspector.cli.rerun`: 0 a result was built (completed
or noop), 3 the processor ended `failed`, 4 nothing to re-run (no call would be made).
Never imports Textual.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any

from inspector.cli.common import UsageError, print_json_line
from inspector.core.artifact import Artifact
from inspector.core.compaction import Sampling
from inspector.core.messages import Message
from inspector.core.redact import Masker, escape_controls
from inspector.core.standard.prepared import StandardPrepared
from inspector.core.standard.release import choose_release
from inspector.core.standard.rerun_script import RerunEnd, Script
from inspector.core.strategy.base import ScriptRerun, Settings, Strategy, rerun_of

if TYPE_CHECKING:
    from inspector.llm.standard_runner import CallRecord

EXIT_OK, EXIT_MODEL_FAILED, EXIT_NOTHING = 0, 3, 4


def add_standard_arguments(parser: argparse.ArgumentParser) -> None:
    """--dry-run and --max-retries (the standard family's re-run)."""
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="show exactly what would be sent (secrets masked) and send nothing",
    )
    parser.add_argument(
        "--max-retries",
        type=int,
        default=3,
        metavar="N",
        help="the client's retries of one failed call (standard family; openJiuwen's default 3)",
    )


def _prompt_text(args: argparse.Namespace) -> str | None:
    if args.prompt_file is None:
        return None
    try:
        with open(args.prompt_file, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"--prompt-file {args.prompt_file}: cannot read it ({error})") from None


def _masker() -> Masker:
    masker = getattr(sys.stdout, "masker", None)
    return masker if isinstance(masker, Masker) else Masker()


def message_json(message: Message) -> dict[str, Any]:
    """A message of the context after, as a snapshot line holds it."""
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [c.to_openai() for c in message.tool_calls]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    cls = message.extra.get("openjiuwen_class")
    if isinstance(cls, str):
        out["openjiuwen_class"] = cls
    return out


def _end_json(end: RerunEnd) -> dict[str, Any]:
    return {
        "state": end.state,
        "reason": end.reason,
        "modified": list(end.modified),
        "compact_summary": end.compact_summary,
        "approximations": list(end.approximations),
        "messages_after": [message_json(m) for m in end.messages],
    }


def run_standard(
    args: argparse.Namespace,
    artifact: Artifact,
    strategy: Strategy,
    settings: Settings,
) -> int:
    """Re-run (or with --dry-run show) the standard processor's calls; the exit status."""
    from inspector.encoding import load_cl100k, make_counters
    from inspector.llm.standard_runner import (
        PROMPT_LABEL,
        prompt_label,
        release_sampling,
        standard_prompts,
    )

    assert artifact.snapshot is not None
    rerun = rerun_of(strategy)
    assert isinstance(rerun, ScriptRerun)
    processor = strategy.processor
    release = getattr(settings, "openjiuwen_version", None)
    chosen = choose_release(release if isinstance(release, str) else None).release
    counters = make_counters()
    prepared = strategy.prepare(artifact.snapshot, counters, load_cl100k().note)
    assert isinstance(prepared, StandardPrepared)
    prepared = prepared.for_release(release if isinstance(release, str) else None)
    custom = getattr(settings, "custom_compression_prompt", None)
    prompts = standard_prompts(processor, _prompt_text(args), custom)
    label = prompt_label(prompts)
    decision = strategy.decide(prepared, settings)
    head: dict[str, Any] = {
        "source": artifact.source,
        "id": artifact.id,
        "processor": processor,
        "processor_family": "standard",
        "openjiuwen_version": chosen,
        "prompt_source": prompts.source,
        "prompt": label,
        "trigger": {"hit": decision.hit, "reason": decision.reason},
    }
    sampling = Sampling(
        temperature=args.temperature
        if args.temperature is not None
        else release_sampling(chosen).temperature,
        top_p=args.top_p if args.top_p is not None else release_sampling(chosen).top_p,
    )
    script: Script = rerun.script(prepared, settings, prompts, _handles())
    if args.dry_run:
        return _dry_run(args, head, script, sampling)
    if not decision.hit and not args.json:
        print(
            f"note: under these settings {processor} would not trigger ({decision.reason}); "
            "the re-run is forced",
            file=sys.stderr,
        )
    if prompts.source == "inspector" and not args.json:
        print(f"prompt: {PROMPT_LABEL} (give the real one with --prompt-file)", file=sys.stderr)
    return _run(args, head, prepared, script, sampling)


def _handles() -> Any:
    import uuid

    return lambda: uuid.uuid4().hex


def _dry_run(
    args: argparse.Namespace, head: dict[str, Any], script: Any, sampling: Sampling
) -> int:
    """Show the first request exactly (masked); nothing is sent."""
    from inspector.llm.standard_runner import first_request

    first = first_request(script, args.model, sampling)
    masker = _masker()
    if isinstance(first, RerunEnd):
        if args.json:
            print_json_line({**head, "dry_run": True, "request": None, "reason": first.reason})
        print(f"{head['source']}: {first.reason}", file=sys.stderr)
        return EXIT_NOTHING
    call, body = first
    if args.json:
        print_json_line(
            {**head, "dry_run": True, "stage": call.stage, "note": call.note, "request": body}
        )
        return EXIT_OK
    import json

    print(f"dry run: {head['processor']} (openJiuwen {head['openjiuwen_version']} rules)")
    print(f"prompt: {head['prompt']}")
    print(
        f"first call: {call.stage} ({call.note}); POST {args.base_url or '<base url>'}/chat/completions"
    )
    print(escape_controls(masker.text(json.dumps(body, ensure_ascii=False, indent=1))))
    later = head["processor"] == "RoundLevelCompressor"  # more phases while over target
    if later or call.stage.startswith("offload") or call.stage == "first_stage":
        print("later calls depend on the replies and are not shown")
    return EXIT_OK


def _run(
    args: argparse.Namespace,
    head: dict[str, Any],
    prepared: StandardPrepared,
    script: Any,
    sampling: Sampling,
) -> int:
    """Send every call; print the report or one JSON object."""
    from inspector.llm import EndpointConfig, MissingApiKey
    from inspector.llm.standard_runner import StandardHooks, rerun_standard

    if not args.base_url:
        raise UsageError("--base-url is required (except with --dry-run)")
    if args.timeout <= 0:
        raise UsageError("--timeout: must be > 0 seconds")
    if args.max_retries < 0:
        raise UsageError("--max-retries: must be >= 0")
    endpoint = EndpointConfig(
        base_url=args.base_url,
        model=args.model,
        api_key_env=args.api_key_env,
        timeout_s=args.timeout,
        sampling=sampling,
        require_key=not args.no_key,
    )

    try:
        result = asyncio.run(
            rerun_standard(
                prepared,
                script,
                endpoint,
                processor=str(head["processor"]),
                prompt_source=str(head["prompt_source"]),
                max_retries=args.max_retries,
                hooks=StandardHooks(on_call=_progress if not args.json else None),
            )
        )
    except MissingApiKey as error:
        raise UsageError(str(error)) from None
    if result.end.state == "nothing":
        if args.json:
            print_json_line({**head, "outcome": "nothing_to_compress", "error": result.end.reason})
        print(f"{head['source']}: {result.end.reason}", file=sys.stderr)
        return EXIT_NOTHING
    payload = {
        **head,
        "model": result.model,
        "outcome": result.end.state,
        "calls": [_call_json(c) for c in result.calls],
        "tokens_before": result.tokens_before,
        "tokens_after": result.tokens_after,
        "saving": result.saving,
        "saving_ratio": round(result.saving_ratio, 4),
        "messages_before": result.messages_before,
        **_end_json(result.end),
    }
    if args.json:
        print_json_line(payload)
    else:
        _print_report(payload)
    return EXIT_MODEL_FAILED if result.end.state == "failed" else EXIT_OK


def _progress(record: CallRecord) -> None:
    """One stderr line per request."""
    failure = record.failure
    what = (
        f"HTTP {record.status}"
        if failure is None
        else str(failure.status_code or failure.transport)
    )
    retry = f", retrying after {record.retry_after_s:g} s" if record.retry_after_s else ""
    print(f"call {record.stage} try {record.try_number}: {what}{retry}", file=sys.stderr)


def _call_json(record: CallRecord) -> dict[str, Any]:
    """One request of the run in --json (the reply text and usage, no request body)."""
    return {
        "stage": record.stage,
        "try": record.try_number,
        "status": record.status,
        "failure": record.failure.transport if record.failure else None,
        "retry_after_s": record.retry_after_s,
        "reply": record.reply.content if record.reply else None,
        "usage": dict(record.reply.usage) if record.reply and record.reply.usage else None,
    }


def _print_report(payload: dict[str, Any]) -> None:
    """The plain-text report of a standard re-run (escaped: a reply cannot drive the terminal)."""
    lines = [
        f"{payload['processor']} re-run (openJiuwen {payload['openjiuwen_version']} rules), "
        f"model {payload['model']}",
        f"prompt: {payload['prompt']}",
        f"calls: {len(payload['calls'])}",
        f"outcome: {payload['outcome']}: {payload['reason']}",
        f"tokens: {payload['tokens_before']} -> {payload['tokens_after']} "
        f"(saves {payload['saving']}, {payload['saving_ratio']:.1%}); messages "
        f"{payload['messages_before']} -> {len(payload['messages_after'])}",
    ]
    if payload["modified"]:
        lines.append(f"replaced indices: {payload['modified']}")
    for note in payload["approximations"]:
        lines.append(f"approximated: {note}")
    if payload["compact_summary"]:
        lines.append("summary:")
        lines.append(payload["compact_summary"])
    print(escape_controls(_masker().text("\n".join(lines))))
