"""Re-run a standard processor's model calls for real: drive its script over HTTP.

`rerun_standard` takes the script a standard strategy builds (`core.standard.rerun_script`:
the exact messages of each `Model.invoke`, and what the processor does with each reply),
sends each call as openJiuwen's client does (`POST /chat/completions` with model, messages,
`stream: false`, the release's sampling defaults, no tools), retries failed calls as the
OpenAI SDK does (`max_retries`, openJiuwen's default 3), and returns every request, reply
and the context after. `first_request` is the dry run: the body of the first call, built
without any call being made. The prompts are the inspector's own unless the user gives one
(`standard_prompts`). May import `inspector.core` and httpx; never Textual or Rich.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import httpx

from inspector.core.compaction import Sampling, chat_body
from inspector.core.model_errors import HttpFailure, describe_failure
from inspector.core.rerun import ModelReply
from inspector.core.standard.prepared import StandardPrepared
from inspector.core.standard.rerun_script import (
    CallResult,
    ModelCall,
    RerunEnd,
    Script,
    StandardPrompts,
    sdk_retry_delay,
)
from inspector.llm.client import ChatClient, EndpointConfig
from inspector.llm.errors import ModelCallFailed
from inspector.llm.runner import resolve_api_key

#: openJiuwen's `ModelClientConfig.max_retries` default (the SDK's retries of one call).
DEFAULT_MAX_RETRIES = 3
PROMPT_LABEL = "inspector's prompt, not openJiuwen's"
_PROMPT_FILES = {
    "dialogue": "standard_dialogue_prompt.txt",
    "current_round": "standard_current_round_prompt.txt",
    "current_round_merge": "standard_current_round_merge_prompt.txt",
    "offload": "standard_offload_prompt.txt",
    "full_compact": "standard_full_compact_prompt.txt",
    "round_level": "standard_round_level_prompt.txt",
    "round_level_aggressive": "standard_round_level_aggressive_prompt.txt",
    "round_level_contract": "standard_round_level_contract.txt",
}
#: Which prompt a --prompt-file (or the config's custom_compression_prompt) replaces.
PROMPT_SLOT = {
    "DialogueCompressor": "dialogue",
    "CurrentRoundCompressor": "current_round",
    "MessageSummaryOffloader": "offload",
    "FullCompactProcessor": "full_compact",
    "RoundLevelCompressor": "round_level",
}


_SAMPLING = {"0.1.16": Sampling(), "0.1.17": Sampling()}


def release_sampling(release: str) -> Sampling:
    """openJiuwen's `ModelRequestConfig` defaults: 0.95 / 0.1 up to 0.1.17, none from 0.1.18."""
    return _SAMPLING.get(release, Sampling(temperature=None, top_p=None))


def _builtin(name: str) -> str:
    return resources.files("inspector.llm").joinpath(_PROMPT_FILES[name]).read_text("utf-8")


def standard_prompts(
    processor: str, given: str | None = None, custom: str | None = None
) -> StandardPrompts:
    """Our prompts, with the processor's main prompt replaced by `given` (a --prompt-file)
    or else by `custom` (the config's custom_compression_prompt, which openJiuwen uses)."""
    values = {name: _builtin(name) for name in _PROMPT_FILES}
    slot = PROMPT_SLOT.get(processor)
    source = "inspector"
    if slot is not None and given is not None:
        values[slot], source = given, "file"
    elif slot is not None and custom:
        values[slot], source = custom, "config"
    return StandardPrompts(source=source, **values)


def prompt_label(prompts: StandardPrompts) -> str:
    """Where the prompt came from, in words for the report."""
    return {
        "file": "the prompt file given (--prompt-file)",
        "config": "the config's custom_compression_prompt (openJiuwen uses it)",
    }.get(prompts.source, PROMPT_LABEL)


def request_body(call: ModelCall, model: str, sampling: Sampling) -> dict[str, Any]:
    """The JSON body openJiuwen's client sends for one call (no tools: the processors pass none)."""
    return chat_body(call.messages, model, sampling)


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One HTTP request of the run and what came back (a failed try is a record too)."""

    stage: str
    note: str
    body: Mapping[str, Any]
    try_number: int
    duration_s: float
    status: int | None = None
    reply: ModelReply | None = None
    failure: HttpFailure | None = None
    #: Seconds waited before the next try (None: no retry followed).
    retry_after_s: float | None = None


@dataclass(frozen=True, slots=True)
class StandardRerunResult:
    """Everything a standard re-run produced."""

    processor: str
    release: str
    model: str
    prompt_source: str
    calls: tuple[CallRecord, ...]
    end: RerunEnd
    tokens_before: int
    tokens_after: int
    messages_before: int

    @property
    def saving(self) -> int:
        """Tokens saved (negative: the context grew)."""
        return self.tokens_before - self.tokens_after

    @property
    def saving_ratio(self) -> float:
        """The saving as a share of the tokens before."""
        return self.saving / self.tokens_before if self.tokens_before else 0.0


Sleep = Callable[[float], Awaitable[object]]


@dataclass(frozen=True, slots=True)
class StandardHooks:
    """The outside world: transport, sleep, env, offload handles, a callback per request."""

    transport: httpx.AsyncBaseTransport | None = None
    sleep: Sleep = asyncio.sleep
    env: Mapping[str, str] | None = None
    new_handle: Callable[[], str] = field(default=lambda: uuid.uuid4().hex)
    on_call: Callable[[CallRecord], object] | None = None


def first_request(
    script: Script, model: str, sampling: Sampling
) -> tuple[ModelCall, dict[str, Any]] | RerunEnd:
    """The first call and its body (the dry run), or how the script ends without any call."""
    try:
        call = next(script)
    except StopIteration as stop:
        end = stop.value
        assert isinstance(end, RerunEnd)
        return end
    script.close()
    return call, request_body(call, model, sampling)


async def _send(
    client: ChatClient,
    call: ModelCall,
    body: Mapping[str, Any],
    max_retries: int,
    hooks: StandardHooks,
) -> tuple[list[CallRecord], CallResult]:
    """One call with the SDK's retries; the records and what the processor is given."""
    records: list[CallRecord] = []
    for try_number in range(1, max_retries + 2):
        started = time.perf_counter()
        try:
            reply, status = await client.complete(body)
        except ModelCallFailed as error:
            failure = error.failure
            delay = None
            if try_number <= max_retries:
                delay = sdk_retry_delay(try_number, failure.status_code, failure.transport)
            record = CallRecord(
                call.stage,
                call.note,
                body,
                try_number,
                time.perf_counter() - started,
                status=failure.status_code,
                failure=failure,
                retry_after_s=delay,
            )
            records.append(record)
            if hooks.on_call is not None:
                hooks.on_call(record)
            if delay is None:
                return records, CallResult(error=describe_failure(failure))
            await hooks.sleep(delay)
            continue
        record = CallRecord(
            call.stage, call.note, body, try_number, time.perf_counter() - started, status, reply
        )
        records.append(record)
        if hooks.on_call is not None:
            hooks.on_call(record)
        return records, CallResult(content=reply.content)
    raise AssertionError("unreachable: the last try returns")


async def rerun_standard(
    prep: StandardPrepared,
    script: Script,
    endpoint: EndpointConfig,
    *,
    processor: str,
    prompt_source: str,
    max_retries: int = DEFAULT_MAX_RETRIES,
    hooks: StandardHooks | None = None,
) -> StandardRerunResult:
    """Run the script's calls against the endpoint; the result with the context after.

    Raises MissingApiKey before any call. A failed call never raises: the processor's own
    rule for failures decides (skip, or end `failed`)."""
    hooks = hooks or StandardHooks()
    api_key = resolve_api_key(endpoint, hooks.env)
    records: list[CallRecord] = []
    client = ChatClient(endpoint, api_key, transport=hooks.transport)
    try:
        try:
            call = next(script)
            while True:
                body = request_body(call, endpoint.model, endpoint.sampling)
                sent, result = await _send(client, call, body, max_retries, hooks)
                records.extend(sent)
                call = script.send(result)
        except StopIteration as stop:
            end = stop.value
    finally:
        await client.aclose()
    assert isinstance(end, RerunEnd)
    counter = prep.counter
    return StandardRerunResult(
        processor=processor,
        release=prep.release,
        model=endpoint.model,
        prompt_source=prompt_source,
        calls=tuple(records),
        end=end,
        tokens_before=counter.util_count(prep.messages),
        tokens_after=counter.util_count(end.messages),
        messages_before=len(prep.messages),
    )
