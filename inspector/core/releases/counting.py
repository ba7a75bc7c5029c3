"""Which release profile and which counter to count a snapshot with, and what was assumed.

`choose_counting(snapshot, ...)` is the one call a strategy or front end needs: it detects
the release (override > recorded `openjiuwen_version` > artifact evidence > newest,
see `detect.py`) and picks the token mode (override > recorded `token_mode` > the counter
the profile's engine gives the recorded `engine_config` > the engine default, assumed).
`exact` is true only when both the release and the counter are known; `note` says what
was assumed. Counters for the choice: `choice.profile.counter(choice.token_mode, encoder)`
(or `inspector.encoding.make_counters(choice.profile)`).
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

from dataclasses import dataclass

from inspector.core.errors import ConfigError
from inspector.core.releases.detect import ArtifactEvidence, ReleaseDetection, detect_release
from inspector.core.releases.profiles import PROFILES, ReleaseProfile
from inspector.core.snapshot import ContextSnapshot
from inspector.core.tokens import TOKEN_MODES, TokenMode

_COUNTER_WORDS: dict[str, str] = {
    "tiktoken_cl100k": "TiktokenCounter (cl100k)",
    "len_div_4": "no counter (character estimate)",
    "string_length": "StringLengthCounter",
}


@dataclass(frozen=True, slots=True)
class CountingChoice:
    """The profile and token mode to count with, where each came from, and what is assumed."""

    detection: ReleaseDetection
    token_mode: TokenMode
    #: `override`, `recorded`, `engine_config` or `assumed`.
    mode_source: str
    mode_note: str

    @property
    def profile(self) -> ReleaseProfile:
        """The release profile in use."""
        return self.detection.profile

    @property
    def exact(self) -> bool:
        """True only when both the release and the counter are known (not assumed)."""
        return self.detection.known and self.mode_source != "assumed"

    @property
    def assumed(self) -> tuple[str, ...]:
        """What was assumed: `openjiuwen_version`, `token_mode` (empty when nothing)."""
        out = []
        if not self.detection.known:
            out.append("openjiuwen_version")
        if self.mode_source == "assumed":
            out.append("token_mode")
        return tuple(out)

    @property
    def note(self) -> str:
        """Two clauses: the release and why, the counter and why."""
        return f"{self.detection.evidence}; {self.mode_note}"


def snapshot_evidence(
    snapshot: ContextSnapshot, base: ArtifactEvidence | None = None
) -> ArtifactEvidence:
    """The release facts a snapshot itself carries (its messages' usage records), added to
    a copy of `base`."""
    evidence = ArtifactEvidence()
    if base is not None:
        evidence.usage_records.extend(base.usage_records)
        evidence.usage_details.extend(base.usage_details)
        evidence.has_llm_request_log = base.has_llm_request_log
        evidence.span_previews.extend(base.span_previews)
        evidence.error_messages.extend(base.error_messages)
    for message in (*snapshot.system_messages, *snapshot.messages):
        if message.usage_metadata is not None and len(evidence.usage_records) < 64:
            evidence.usage_records.append(message.usage_metadata)
    return evidence


def _mode_from(
    snapshot: ContextSnapshot, profile: ReleaseProfile, override: str | None
) -> tuple[TokenMode, str, str]:
    if override is not None:
        mode = _checked_mode(override)
        return mode, "override", f"counting with {_COUNTER_WORDS[mode]} (set by the user)"
    if "token_mode" in snapshot.recorded_fields:
        mode = snapshot.tuning.token_mode
        return mode, "recorded", f"counting with {_COUNTER_WORDS[mode]} (recorded in the file)"
    if snapshot.engine_config:
        mode = profile.default_token_mode(snapshot.engine_config)
        return (
            mode,
            "engine_config",
            f"counting with {_COUNTER_WORDS[mode]}, the counter {profile.title} gives "
            "the recorded engine config",
        )
    mode = profile.default_token_mode({})
    return (
        mode,
        "assumed",
        f"counter not recorded: assuming the engine default of {profile.title}, {_COUNTER_WORDS[mode]}",
    )


def _checked_mode(value: str) -> TokenMode:
    for mode in TOKEN_MODES:
        if value == mode:
            return mode
    raise ConfigError("token_mode", value, "one of " + ", ".join(TOKEN_MODES))


def _from_recorded_mode(detection: ReleaseDetection, mode: TokenMode) -> ReleaseDetection:
    """A recorded counter only some releases give a context tells their range (len_div_4,
    no counter, exists only up to 0.1.17; string_length only from 0.1.18)."""
    if mode in detection.profile.token_modes:
        return detection
    fitting = [profile for profile in PROFILES if mode in profile.token_modes]
    if not fitting:
        return detection
    profile = fitting[-1]
    return ReleaseDetection(
        profile,
        None,
        "artifact",
        f"the recorded counter {_COUNTER_WORDS[mode]} exists only in {profile.title}",
    )


def choose_counting(
    snapshot: ContextSnapshot,
    *,
    release_override: str | None = None,
    mode_override: str | None = None,
    evidence: ArtifactEvidence | None = None,
) -> CountingChoice:
    """The profile and counter for `snapshot` (overrides are the user's flags).

    `evidence` adds what the snapshot's source files tell (a dump's usage details, debug
    records, `llm_request.jsonl`); the snapshot's own usage records are always read.
    A counter the release never gives a context (string_length before 0.1.18) is kept
    (it is what the user asked for) and the note says so.
    """
    merged = snapshot_evidence(snapshot, evidence)
    detection = detect_release(
        merged, recorded=snapshot.openjiuwen_version, override=release_override
    )
    if not detection.known and "token_mode" in snapshot.recorded_fields:
        detection = _from_recorded_mode(detection, snapshot.tuning.token_mode)
    mode, source, note = _mode_from(snapshot, detection.profile, mode_override)
    if mode not in detection.profile.token_modes:
        note += f" ({detection.profile.title} never gives a context this counter: a what-if)"
    return CountingChoice(detection, mode, source, note)
