"""Release profiles: the rules that differ between openJiuwen releases, as data.

A `ReleaseProfile` is the set of rules one range of releases shares (measured against the
real library, see `parity_live/`): which counter a context gets from its engine config,
the divisors of every character estimate and of the usage-baseline tail, the divisor of
the `span_built` previews, and what the release writes into files (usage record keys,
`llm_request.jsonl`, the SDK class prefix of retry error messages). Code asks a profile;
it never compares release strings. `RELEASES` maps each release on PyPI to its profile.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from inspector.core.errors import ConfigError
from inspector.core.tokens import EncodeLen, TokenCounter, TokenMode

CounterSelection = Literal["tiktoken_switch", "tokenizer_selector"]

#: ContextEngineConfig fields that make 0.1.18+'s selector skip the default TiktokenCounter.
_MODEL_TARGET_FIELDS = ("model_name", "model_provider", "tokenizer_spec", "tokenizer_registry")


@dataclass(frozen=True, slots=True)
class ReleaseProfile:
    """The rules one range of openJiuwen releases shares."""

    #: Short name: the first release of the range (`0.1.17`, `0.1.18`).
    name: str
    #: Every PyPI release with these rules, oldest first.
    releases: tuple[str, ...]
    #: `tiktoken_switch`: TiktokenCounter when `enable_tiktoken_counter`, else no counter
    #: (len//4). `tokenizer_selector`: TiktokenCounter only when the switch is on and no
    #: model name, provider or tokenizer spec is set; otherwise StringLengthCounter.
    counter_selection: CounterSelection
    #: Divisor of every character fallback (no-counter estimate, TiktokenCounter fallback).
    char_divisor: int
    #: Divisor of the usage-baseline tail (text after the last valid usage record).
    tail_divisor: int
    #: `span_built` preview tokens = max(len(str(content)) // this, 1).
    preview_divisor: int
    #: Keys of a usage record (`usage_metadata`, dump `compression_response.usage.details`).
    usage_record_keys: int
    #: True when every usage record carries `cache_authoritative`.
    writes_cache_authoritative: bool
    #: True when the context-debug folder can hold `llm_request.jsonl`.
    writes_llm_request_log: bool
    #: True when `compression_retry.error_message` starts with the SDK class name.
    error_message_class_prefix: bool

    @property
    def title(self) -> str:
        """`openJiuwen 0.1.18 – 0.1.19.post2`: the releases this profile stands for."""
        first, last = self.releases[0], self.releases[-1]
        return f"openJiuwen {first}" if first == last else f"openJiuwen {first} – {last}"

    @property
    def newest_release(self) -> str:
        """The newest release with these rules."""
        return self.releases[-1]

    def default_token_mode(self, engine_config: Mapping[str, Any] | None = None) -> TokenMode:
        """The counter `ContextEngine.create_context` gives a context with this engine config.

        Assumes no native tokenizer artifact in the local cache (the selector reads it
        offline only); with one, 0.1.18+ would use that model's own tokenizer.
        """
        config = engine_config or {}
        tiktoken_on = bool(config.get("enable_tiktoken_counter", False))
        if self.counter_selection == "tiktoken_switch":
            return "tiktoken_cl100k" if tiktoken_on else "len_div_4"
        model_target = any(config.get(key) for key in _MODEL_TARGET_FIELDS)
        return "tiktoken_cl100k" if tiktoken_on and not model_target else "string_length"

    @property
    def token_modes(self) -> tuple[TokenMode, ...]:
        """The counters a context of this release can have from its engine."""
        if self.counter_selection == "tiktoken_switch":
            return ("tiktoken_cl100k", "len_div_4")
        return ("tiktoken_cl100k", "string_length")

    def counter(
        self,
        mode: TokenMode,
        encode_len: EncodeLen | None = None,
        image_placeholder_tokens: int | None = None,
    ) -> TokenCounter:
        """A TokenCounter in `mode` that follows this profile's divisors."""
        return TokenCounter(
            mode,
            encode_len,
            image_placeholder_tokens,
            char_divisor=self.char_divisor,
            tail_divisor=self.tail_divisor,
        )

    def preview_tokens(self, content: Any) -> int:
        """The `tokens` of a `span_built` preview entry for this content."""
        return max(len(str(content or "")) // self.preview_divisor, 1)


PROFILE_0_1_17 = ReleaseProfile(
    name="0.1.17",
    releases=("0.1.17", "0.1.17.post1", "0.1.17.post2"),
    counter_selection="tiktoken_switch",
    char_divisor=4,
    tail_divisor=4,
    preview_divisor=4,
    usage_record_keys=16,
    writes_cache_authoritative=False,
    writes_llm_request_log=False,
    error_message_class_prefix=False,
)
PROFILE_0_1_18 = ReleaseProfile(
    name="0.1.18",
    releases=("0.1.18", "0.1.18.post1", "0.1.19", "0.1.19.post2"),
    counter_selection="tokenizer_selector",
    char_divisor=3,
    tail_divisor=3,
    preview_divisor=3,
    usage_record_keys=23,
    writes_cache_authoritative=True,
    writes_llm_request_log=True,
    error_message_class_prefix=True,
)
#: Oldest first; the last one is the newest.
PROFILES: tuple[ReleaseProfile, ...] = (PROFILE_0_1_17, PROFILE_0_1_18)
NEWEST_PROFILE = PROFILES[-1]
#: Every measured release and its profile.
RELEASES: dict[str, ReleaseProfile] = {
    release: profile for profile in PROFILES for release in profile.releases
}
#: The oldest release with the forked compressors (0.1.16 has none).
FIRST_FORKED_RELEASE = "0.1.17"

_VERSION_RE = re.compile(r"^\s*v?(\d+)\.(\d+)\.(\d+)(?:\.?post(\d+))?\s*$", re.IGNORECASE)


def release_key(version: str) -> tuple[int, int, int, int]:
    """(major, minor, micro, post) of a release string; ConfigError when it is not one."""
    match = _VERSION_RE.match(version)
    if not match:
        raise ConfigError("openjiuwen_version", version, "a release such as 0.1.19.post2")
    major, minor, micro, post = match.groups()
    return int(major), int(minor), int(micro), int(post or 0)


@dataclass(frozen=True, slots=True)
class ProfileChoice:
    """A profile picked for a release string, and whether that release was measured."""

    profile: ReleaseProfile
    release: str
    measured: bool

    @property
    def note(self) -> str:
        """A sentence saying which rules are used for the release."""
        if self.measured:
            return f"openJiuwen {self.release}: rules of profile {self.profile.name}"
        return (
            f"openJiuwen {self.release} was not measured: assuming the rules of "
            f"{self.profile.title} (profile {self.profile.name})"
        )


def profile_for_release(version: str) -> ProfileChoice:
    """The profile of a release string (`0.1.19.post2`); unmeasured ones take the nearest older.

    ConfigError for malformed strings and for releases before the forked family (0.1.16).
    """
    key = release_key(version)
    normalized = ".".join(str(part) for part in key[:3]) + (f".post{key[3]}" if key[3] else "")
    if normalized in RELEASES:
        return ProfileChoice(RELEASES[normalized], normalized, True)
    if key < release_key(FIRST_FORKED_RELEASE):
        raise ConfigError(
            "openjiuwen_version",
            version,
            f"{FIRST_FORKED_RELEASE} or later (older releases have no forked compressors)",
        )
    older = [release for release in RELEASES if release_key(release) <= key]
    nearest = max(older, key=release_key)
    return ProfileChoice(RELEASES[nearest], normalized, False)


def profile_named(name: str) -> ReleaseProfile:
    """A profile by its short name or by any release string (ConfigError when unknown)."""
    for profile in PROFILES:
        if profile.name == name:
            return profile
    return profile_for_release(name).profile
