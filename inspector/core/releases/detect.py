"""Which openJiuwen release profile wrote an artifact, and the evidence that decided it.

`collect_evidence(objects, file_names)` walks already-parsed JSON (snapshots, dumps, debug
records, `llm_request.jsonl` records) for the facts that tell releases apart;
`detect_release(evidence, recorded=..., override=...)` turns them into a profile plus a
sentence saying why. Order: an override (`--openjiuwen`), then a recorded release string,
then the artifact's own evidence, then the newest profile, saying that nothing told.
Facts, strongest first (all measured on the real releases, see `parity_live/`); a
weaker kind is read only when no stronger kind was found:

* a usage record (`usage_metadata`) with `cache_authoritative` -> 0.1.18+; a 16-key record
  without it -> 0.1.17;
* a dump's `compression_response.usage.details[]` entry with 23 keys -> 0.1.18+, 16 -> 0.1.17;
* a `llm_request.jsonl` file or record -> 0.1.18+;
* a `span_built` preview whose `tokens` equals max(len // 3, 1) but not max(len // 4, 1)
  (or the other way round), for untruncated previews;
* a `compression_retry.error_message` whose SDK status text carries the exception class
  (`... invoke error: RateLimitError: Error code: 429 - ...`) -> 0.1.18+; the status text
  without it (`... invoke error: Error code: 429 - ...`) -> 0.1.17; other texts tell nothing.
  Weakest of all: the reference logs of source commit 4f2c29c3 (0.1.17 rules) have it too.

Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from inspector.core.errors import ConfigError
from inspector.core.releases.profiles import (
    NEWEST_PROFILE,
    PROFILE_0_1_17,
    PROFILE_0_1_18,
    ReleaseProfile,
    profile_for_release,
)

DetectionSource = Literal["override", "recorded", "artifact", "assumed"]
_PREVIEW_LIMIT = 200
#: The OpenAI SDK's status text, and the same text with the SDK class name in front.
_SDK_STATUS_RE = re.compile(r"Error code: \d{3}")
_SDK_CLASS_STATUS_RE = re.compile(r"\b[A-Z][A-Za-z0-9_]*(?:Error|Exception): Error code: \d{3}")
_MAX_ITEMS = 64  # per kind of fact: enough to decide, bounded on huge files
_SPAN_LISTS = ("preserved_prefix", "messages_to_compress", "protected_tail")


@dataclass
class ArtifactEvidence:
    """The facts found in an artifact that differ between releases."""

    usage_records: list[Mapping[str, Any]] = field(default_factory=list)
    usage_details: list[Mapping[str, Any]] = field(default_factory=list)
    has_llm_request_log: bool = False
    #: (preview text, tokens) of `span_built` entries.
    span_previews: list[tuple[str, int]] = field(default_factory=list)
    error_messages: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ReleaseDetection:
    """The profile in use, the release string when known, and why."""

    profile: ReleaseProfile
    release: str | None
    source: DetectionSource
    evidence: str

    @property
    def known(self) -> bool:
        """False when nothing told the release and the newest profile was assumed."""
        return self.source != "assumed"


#: JSON's scalar types: never a list or a mapping, told apart without an ABC check (a
#: folder's full load walks every value of every record).
_SCALARS = frozenset((str, int, float, bool, type(None)))
#: The keys `_record_facts` reads a record's kind from.
_RECORD_KEYS = frozenset(("processor", "event"))


def _walk(value: Any, evidence: ArtifactEvidence, depth: int = 0) -> None:
    if depth > 12:
        return
    kind = type(value)
    if kind is list or (kind is not dict and isinstance(value, list)):
        for item in value:
            kind = type(item)
            if kind in _SCALARS:
                continue
            # a plain object of scalars without a record's kind carries no fact (a
            # span_built entry, the bulk of a debug run's objects): not walked
            if (
                kind is dict
                and _RECORD_KEYS.isdisjoint(item)
                and _SCALARS.issuperset(map(type, item.values()))
            ):
                continue
            _walk(item, evidence, depth + 1)
        return
    if kind is not dict and not isinstance(value, Mapping):
        return
    _record_facts(value, evidence)
    for key, item in value.items():
        if key == "usage_metadata" and isinstance(item, Mapping):
            if len(evidence.usage_records) < _MAX_ITEMS:
                evidence.usage_records.append(item)
        elif key == "compression_response" and isinstance(item, Mapping):
            usage = item.get("usage")
            details = usage.get("details") if isinstance(usage, Mapping) else None
            if isinstance(details, list):
                evidence.usage_details.extend(
                    d for d in details[:_MAX_ITEMS] if isinstance(d, Mapping)
                )
        elif type(item) not in _SCALARS and key not in ("content", "parameters"):
            if isinstance(item, list | Mapping):
                _walk(item, evidence, depth + 1)


def _record_facts(record: Mapping[str, Any], evidence: ArtifactEvidence) -> None:
    """Facts carried by one debug record (`span_built`, `compression_retry`, `llm_request`)."""
    if record.get("processor") == "llm_request":
        evidence.has_llm_request_log = True
    event = record.get("event")
    if event == "span_built":
        previews = evidence.span_previews
        for name in _SPAN_LISTS:
            entries = record.get(name)
            if not isinstance(entries, list):
                continue
            for entry in entries:
                if len(previews) >= _MAX_ITEMS:
                    return  # no more is kept: the rest of the entries cannot add one
                if type(entry) is not dict and not isinstance(entry, Mapping):
                    continue
                preview, tokens = entry.get("preview"), entry.get("tokens")
                if isinstance(preview, str) and isinstance(tokens, int):
                    previews.append((preview, tokens))
    elif event == "compression_retry":
        message = record.get("error_message")
        if isinstance(message, str) and message and len(evidence.error_messages) < _MAX_ITEMS:
            evidence.error_messages.append(message)


def collect_evidence(
    objects: Iterable[Any], file_names: Iterable[str] = (), into: ArtifactEvidence | None = None
) -> ArtifactEvidence:
    """The release facts in parsed JSON objects and a folder's file names."""
    evidence = into or ArtifactEvidence()
    for name in file_names:
        if name.rsplit("/", 1)[-1] == "llm_request.jsonl":
            evidence.has_llm_request_log = True
    for value in objects:
        _walk(value, evidence)
    return evidence


def _usage_vote(evidence: ArtifactEvidence) -> Iterator[tuple[ReleaseProfile, str]]:
    for record in evidence.usage_records:
        if "cache_authoritative" in record:
            yield PROFILE_0_1_18, "usage records carry `cache_authoritative` (written from 0.1.18)"
        elif "total_tokens" in record and len(record) <= PROFILE_0_1_17.usage_record_keys:
            yield PROFILE_0_1_17, "usage records have 16 keys and no `cache_authoritative`"
    for detail in evidence.usage_details:
        if len(detail) >= PROFILE_0_1_18.usage_record_keys or "cache_authoritative" in detail:
            yield PROFILE_0_1_18, "the dump's usage details have 23 keys (0.1.18 and later)"
        elif len(detail) == PROFILE_0_1_17.usage_record_keys:
            yield PROFILE_0_1_17, "the dump's usage details have 16 keys (up to 0.1.17.post2)"


def _other_votes(evidence: ArtifactEvidence) -> Iterator[tuple[ReleaseProfile, str]]:
    if evidence.has_llm_request_log:
        yield PROFILE_0_1_18, "an `llm_request.jsonl` is present (written from 0.1.18)"
    for preview, tokens in evidence.span_previews:
        if len(preview) >= _PREVIEW_LIMIT:
            # truncated: the content is at least 200 characters long, so //3 gives >= 66
            if _PREVIEW_LIMIT // 4 <= tokens < _PREVIEW_LIMIT // 3:
                yield PROFILE_0_1_17, "span_built previews count len // 4 (up to 0.1.17.post2)"
            continue
        by4, by3 = max(len(preview) // 4, 1), max(len(preview) // 3, 1)
        if by3 != by4 and tokens == by3:
            yield PROFILE_0_1_18, "span_built previews count len // 3 (0.1.18 and later)"
        elif by3 != by4 and tokens == by4:
            yield PROFILE_0_1_17, "span_built previews count len // 4 (up to 0.1.17.post2)"


def _error_votes(evidence: ArtifactEvidence) -> Iterator[tuple[ReleaseProfile, str]]:
    """The weakest fact: the class prefix comes from the model client, which changed apart
    from the counting rules (source commit 4f2c29c3 of 0.1.17 already writes it)."""
    for message in evidence.error_messages:
        if _SDK_CLASS_STATUS_RE.search(message):
            yield (
                PROFILE_0_1_18,
                "retry error messages name the SDK exception class (0.1.18 and later)",
            )
        elif _SDK_STATUS_RE.search(message):
            yield (
                PROFILE_0_1_17,
                "retry error messages have no SDK exception class (up to 0.1.17.post2)",
            )


def _from_artifact(evidence: ArtifactEvidence) -> ReleaseDetection | None:
    for votes in (_usage_vote(evidence), _other_votes(evidence), _error_votes(evidence)):
        found: dict[str, tuple[ReleaseProfile, str]] = {}
        for profile, reason in votes:
            found.setdefault(profile.name, (profile, reason))
        if len(found) == 1:
            profile, reason = next(iter(found.values()))
            return ReleaseDetection(profile, None, "artifact", f"{profile.title}: {reason}")
        if len(found) > 1:
            newest = max(found.values(), key=lambda pair: pair[0].releases[-1])
            reasons = "; ".join(reason for _, reason in found.values())
            return ReleaseDetection(
                newest[0],
                None,
                "artifact",
                f"conflicting evidence ({reasons}); using {newest[0].title}",
            )
    return None


def detect_release(
    evidence: ArtifactEvidence | None = None,
    *,
    recorded: str | None = None,
    override: str | None = None,
) -> ReleaseDetection:
    """The release profile to use, and a sentence saying which evidence decided.

    `override` is the user's `--openjiuwen VERSION`; `recorded` a snapshot's
    `openjiuwen_version`. Either may be a release string or a profile name. A malformed or
    pre-0.1.17 string raises ConfigError (for `override`) or is reported and skipped.
    """
    if override is not None:
        choice = profile_for_release(override)
        return ReleaseDetection(
            choice.profile, choice.release, "override", choice.note + " (set by the user)"
        )
    skipped = ""
    if recorded is not None:
        try:
            choice = profile_for_release(recorded)
        except ConfigError as error:
            skipped = f"recorded release ignored ({error}); "
        else:
            return ReleaseDetection(
                choice.profile, choice.release, "recorded", choice.note + " (recorded in the file)"
            )
    found = _from_artifact(evidence) if evidence is not None else None
    if found is not None:
        return ReleaseDetection(found.profile, None, "artifact", skipped + found.evidence)
    return ReleaseDetection(
        NEWEST_PROFILE,
        None,
        "assumed",
        skipped
        + f"nothing in the artifact tells the release: assuming the newest, {NEWEST_PROFILE.title}",
    )
