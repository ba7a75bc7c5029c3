"""Release profiles of the standard family: which rules a snapshot's `openjiuwen_version` selects.

What differs between 0.1.16, 0.1.17 and 0.1.19 for the standard processors is the engine
around them (spec `standard-processors.md` section 8): the counter a context gets, the
window table and name matching of `resolve_context_max`, and the character estimates.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Release = Literal["0.1.16", "0.1.17", "0.1.19"]
RELEASES: tuple[Release, ...] = ("0.1.16", "0.1.17", "0.1.19")
NEWEST: Release = "0.1.19"
#: Which counter a context has: cl100k, 0.1.19's StringLengthCounter, or none (0.1.17 default).
CounterKind = Literal["tiktoken", "string_length", "none"]
DEFAULT_CONTEXT_MAX = 200_000

_WINDOWS_0116: dict[str, int] = {
    **dict.fromkeys(
        ("glm-5.1", "glm-5", "glm-5-turbo", "glm-4.7", "glm-4.7-flash", "glm-4.7-flashx"), 200000
    ),
    "glm-4-long": 1000000,
    "glm-4": 128000,
    "glm-4-9b-chat-1m": 1048576,
    **dict.fromkeys(("gpt-5.5", "gpt-5.4"), 1050000),
    **dict.fromkeys(("gpt-5.4-mini", "gpt-5.4-nano", "gpt-5", "gpt-5-mini", "gpt-5-nano"), 400000),
    **dict.fromkeys(("gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano"), 1047576),
    **dict.fromkeys(("gpt-4o", "gpt-4o-mini", "gpt-4-turbo"), 128000),
    "gpt-3.5-turbo": 16384,
    **dict.fromkeys(("deepseek-v4-pro", "deepseek-v4-flash"), 1000000),
    "deepseek-v3": 128000,
    "deepseek-chat": 65536,
    **dict.fromkeys(
        (
            "claude-opus-4-7",
            "claude-opus-4-6",
            "claude-sonnet-4-6",
            "claude-opus-4.6",
            "claude-sonnet-4.6",
        ),
        1000000,
    ),
    **dict.fromkeys(("claude-haiku-4-5", "claude-haiku-4.5"), 200000),
    **dict.fromkeys(
        ("gemini-3-pro-preview", "gemini-3-flash-preview", "gemini-2.5-pro", "gemini-2.5-flash"),
        1048576,
    ),
    "llama-4-maverick": 1000000,
    "llama-4-scout": 10000000,
    "qwen3-max": 262144,
    **dict.fromkeys(("qwen3.5-plus", "qwen3.5-flash", "qwen3-coder-plus"), 1000000),
    "qwen3-coder-next": 262144,
    "qwen-max": 262144,
    **dict.fromkeys(("qwen-plus", "qwen-flash"), 1000000),
    "qwen-turbo": 8192,
    "qwen-long": 1000000,
    "kimi-k2.5": 262144,
    **dict.fromkeys(
        ("MiniMax-M2.7", "MiniMax-M2.7-highspeed", "MiniMax-M2.5", "MiniMax-M2.5-highspeed"),
        204800,
    ),
    **dict.fromkeys(("grok-4.3", "grok-4.3-latest", "grok-latest"), 1000000),
}

_WINDOWS_0117: dict[str, int] = {
    "glm-5.2": 1048576,
    **dict.fromkeys(("glm-5.1", "glm-5", "glm-4.7", "glm-4.6"), 204800),
    **dict.fromkeys(("glm-5-turbo", "glm-4.7-flash"), 202752),
    "glm-4.7-flashx": 200000,
    **dict.fromkeys(("glm-4.5", "glm-4.5-air"), 131072),
    "glm-4-long": 1000000,
    "glm-4": 128000,
    "glm-4-9b-chat-1m": 1048576,
    **dict.fromkeys(
        (
            "gpt-5.6-luna",
            "gpt-5.6-luna-pro",
            "gpt-5.6-sol",
            "gpt-5.6-sol-pro",
            "gpt-5.6-terra",
            "gpt-5.6-terra-pro",
            "gpt-5.5",
            "gpt-5.5-pro",
            "gpt-5.4",
            "gpt-5.4-pro",
        ),
        1050000,
    ),
    **dict.fromkeys(
        (
            "gpt-5.4-mini",
            "gpt-5.4-nano",
            "gpt-5.2",
            "gpt-5.1",
            "gpt-5",
            "gpt-5-pro",
            "gpt-5-mini",
            "gpt-5-nano",
        ),
        400000,
    ),
    **dict.fromkeys(("gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano"), 1047576),
    **dict.fromkeys(("gpt-4o", "gpt-4o-mini", "gpt-4-turbo"), 128000),
    "gpt-3.5-turbo": 16385,
    **dict.fromkeys(("o1", "o3", "o3-mini", "o3-pro", "o4-mini"), 200000),
    **dict.fromkeys(("deepseek-v4-pro", "deepseek-v4-flash"), 1048576),
    **dict.fromkeys(
        ("deepseek-v3.2", "deepseek-v3.1-terminus", "deepseek-r1", "deepseek-chat"), 163840
    ),
    "deepseek-v3": 128000,
    **dict.fromkeys(
        (
            "claude-opus-5",
            "claude-opus-4-8",
            "claude-opus-4.8",
            "claude-opus-4-7",
            "claude-opus-4.7",
            "claude-opus-4-6",
            "claude-opus-4.6",
            "claude-sonnet-5",
            "claude-sonnet-4-6",
            "claude-sonnet-4.6",
            "claude-sonnet-4-5",
            "claude-sonnet-4.5",
        ),
        1000000,
    ),
    **dict.fromkeys(
        ("claude-opus-4-5", "claude-opus-4.5", "claude-haiku-4-5", "claude-haiku-4.5"), 200000
    ),
    **dict.fromkeys(
        (
            "gemini-3.6-flash",
            "gemini-3.5-flash",
            "gemini-3.5-flash-lite",
            "gemini-3.1-pro-preview",
            "gemini-3.1-flash-lite",
            "gemini-3-pro-preview",
            "gemini-3-flash-preview",
            "gemini-2.5-pro",
            "gemini-2.5-flash",
            "gemini-2.5-flash-lite",
        ),
        1048576,
    ),
    "llama-4-maverick": 1048576,
    "llama-4-scout": 10000000,
    **dict.fromkeys(
        (
            "qwen3.7-max",
            "qwen3.7-plus",
            "qwen3.7-flash",
            "qwen3.6-plus",
            "qwen3.6-flash",
            "qwen3.5-plus",
            "qwen3.5-flash",
            "qwen3-coder-plus",
            "qwen3-coder-flash",
            "qwen-plus",
            "qwen-flash",
            "qwen-long",
        ),
        1000000,
    ),
    **dict.fromkeys(
        ("qwen3.6-max-preview", "qwen3-max", "qwen3-max-thinking", "qwen3-coder-next", "qwen-max"),
        262144,
    ),
    "qwen-turbo": 8192,
    "kimi-k3": 1048576,
    **dict.fromkeys(
        ("kimi-k2.7-code", "kimi-k2.6", "kimi-k2.5", "kimi-k2-thinking", "kimi-k2-0905"), 262144
    ),
    "kimi-k2": 131072,
    "MiniMax-M3": 1048576,
    **dict.fromkeys(
        (
            "MiniMax-M2.7",
            "MiniMax-M2.7-highspeed",
            "MiniMax-M2.5",
            "MiniMax-M2.5-highspeed",
            "MiniMax-M2.1",
            "MiniMax-M2",
        ),
        204800,
    ),
    "MiniMax-M1": 1000000,
    **dict.fromkeys(("grok-4.20", "grok-4.20-multi-agent"), 2000000),
    "grok-4.5": 500000,
    **dict.fromkeys(("grok-4.3", "grok-4.3-latest"), 1000000),
    "grok-latest": 500000,
}


@dataclass(frozen=True, slots=True)
class ReleaseChoice:
    """The release whose rules apply, and the sentence saying how it was chosen."""

    release: Release
    assumed: bool
    note: str


def choose_release(version: str | None) -> ReleaseChoice:
    """The rules for a recorded `openjiuwen_version` (absent or unknown: the newest, said so)."""
    if version is None or not version.strip():
        return ReleaseChoice(
            NEWEST, True, f"no openjiuwen_version recorded: the rules of {NEWEST} are assumed"
        )
    match = re.match(r"^\s*v?(\d+)\.(\d+)\.(\d+)", version)
    if match is None:
        return ReleaseChoice(
            NEWEST, True, f"openjiuwen_version {version!r} is not a release: {NEWEST} is assumed"
        )
    parts = tuple(int(p) for p in match.groups())
    if parts[:2] == (0, 1) and parts[2] <= 16:
        chosen: Release = "0.1.16"
    elif parts[:2] == (0, 1) and parts[2] == 17:
        chosen = "0.1.17"
    else:
        chosen = "0.1.19"  # 0.1.18 already has 0.1.19's tokenizer selector and //3 estimates
    measured = parts[:2] == (0, 1) and parts[2] in (16, 17, 18, 19)
    note = f"openjiuwen {version}: rules of {chosen}"
    if not measured:
        note += " (this release itself was not measured)"
    return ReleaseChoice(chosen, not measured, note)


def _positive_int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    return value


def _lookup(release: Release, name: str, table: Mapping[str, Any]) -> int | None:
    value = _positive_int(table.get(name))
    if value is not None:
        return value
    if release == "0.1.16":
        return None
    lowered = name.lower()
    for key, candidate in table.items():
        if isinstance(key, str) and key.lower() == lowered:
            found = _positive_int(candidate)
            if found is not None:
                return found
    return None


def window_table(release: Release) -> Mapping[str, int]:
    """The built-in model -> window table of a release."""
    return _WINDOWS_0116 if release == "0.1.16" else _WINDOWS_0117


def resolve_context_max(
    release: Release,
    model_name: str | None,
    fallback: Any,
    mapping: Mapping[str, Any] | None,
) -> int:
    """`ContextUtils.resolve_context_max`: fallback, user mapping, built-in table, 200000."""
    direct = _positive_int(fallback)
    if direct is not None:
        return direct
    if isinstance(model_name, str) and model_name:
        for table in (mapping or {}, window_table(release)):
            found = _lookup(release, model_name, table)
            if found is not None:
                return found
    return DEFAULT_CONTEXT_MAX


@dataclass(frozen=True, slots=True)
class EngineFacts:
    """What the `ContextEngineConfig` (and the add call) tell the processors."""

    release: Release
    model_name: str | None
    context_window_tokens: int | None
    model_context_window_tokens: Mapping[str, Any]
    enable_tiktoken_counter: bool
    call_model_name: str | None

    @classmethod
    def read(
        cls, release: Release, engine: Mapping[str, Any], add_kwargs: Mapping[str, Any]
    ) -> EngineFacts:
        """From a snapshot's `engine_config` and `add_kwargs`."""
        window = _positive_int(engine.get("context_window_tokens"))
        if window is None and release == "0.1.19":
            window = _positive_int(engine.get("model_context_window_tokens_override"))
        mapping = engine.get("model_context_window_tokens")
        name = engine.get("model_name")
        call_name = add_kwargs.get("model_name")
        return cls(
            release=release,
            model_name=name if isinstance(name, str) else None,
            context_window_tokens=window,
            model_context_window_tokens=dict(mapping) if isinstance(mapping, Mapping) else {},
            enable_tiktoken_counter=engine.get("enable_tiktoken_counter") is True,
            call_model_name=call_name if isinstance(call_name, str) else None,
        )

    def counter_kind(self, engine: Mapping[str, Any]) -> CounterKind:
        """The counter `create_context` gives a context in this release (spec section 3.1)."""
        if self.release == "0.1.16":
            return "tiktoken"
        if self.release == "0.1.17":
            return "tiktoken" if self.enable_tiktoken_counter else "none"
        named = any(
            engine.get(key)
            for key in ("model_name", "model_provider", "tokenizer_spec", "tokenizer_registry")
        )
        return "tiktoken" if self.enable_tiktoken_counter and not named else "string_length"

    def event_context_max(self) -> int:
        """The `context_max` of the processor's events (the context's model, not the processor's)."""
        return resolve_context_max(
            self.release,
            self.call_model_name or self.model_name,
            self.context_window_tokens,
            self.model_context_window_tokens,
        )

    def budget(self, model_name: str | None, call_budget: int | None = None) -> int:
        """`budget_guard.effective_context_budget` for a processor's compression-model name."""
        candidates = [
            value
            for value in (self.context_window_tokens, _positive_int(call_budget))
            if value is not None
        ]
        candidates.append(
            resolve_context_max(self.release, model_name, None, self.model_context_window_tokens)
        )
        return min(candidates)
