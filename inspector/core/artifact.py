"""What a source yields: an artifact (a context and/or a record of what happened) or a load error.

Every front end (CLI, TUI, watch) consumes these two types only. `Artifact.recorded` is
what the artifact itself says happened: a `DumpRecorded` for a dump, a `DebugRecorded`
for a debug-log run, a `LlmRequestRecorded` for one model call of `llm_request.jsonl`
(frozen, named fields), any mapping for other producers. The typed
records are also read-only mappings holding exactly the keys of the CLI contract's
`recorded` object (`why --json`), so `recorded["tokens_before"]`, `dict(recorded)` and
`recorded_value(...)` keep working.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, KeysView, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from inspector.core.frozen import plain_init
from inspector.core.messages import Message
from inspector.core.snapshot import ContextSnapshot

#: `llm_request`: one record of openJiuwen's `llm_request.jsonl` (0.1.18+), the window sent
#: to the model in one call of a ReActAgent.
ArtifactKind = Literal["snapshot", "messages", "dump", "debug", "llm_request"]


@dataclass(frozen=True, slots=True)
class SpanCounts:
    """Region sizes as an artifact recorded them (None: not recorded)."""

    preserved_prefix: int | None = None
    messages_to_compress: int | None = None
    protected_tail: int | None = None

    @classmethod
    def of(cls, counts: Mapping[str, Any] | None) -> SpanCounts | None:
        """From a `{"preserved_prefix", "messages_to_compress", "protected_tail"}` mapping."""
        if counts is None:
            return None
        return plain_span_counts(
            counts.get("preserved_prefix"),
            counts.get("messages_to_compress"),
            counts.get("protected_tail"),
        )

    def to_dict(self) -> dict[str, int | None]:
        """The JSON object of the CLI contract."""
        return {
            "preserved_prefix": self.preserved_prefix,
            "messages_to_compress": self.messages_to_compress,
            "protected_tail": self.protected_tail,
        }


def _plain(value: Any) -> Any:
    """A field value as plain JSON data (what `why --json` prints)."""
    kind = type(value)
    if value is None or kind is str or kind is int or kind is float or kind is bool:
        return value
    if kind is dict:
        return dict(value)
    if isinstance(value, SpanCounts):
        return value.to_dict()
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    if isinstance(value, Mapping):
        return dict(value)
    return value


#: The types `_plain` gives back as they are (exact types: a subclass goes through it).
_SCALAR_TYPES = frozenset({str, int, float, bool})
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
_FIELD_SETS: dict[type, frozenset[str]] = {}


class Recorded(Mapping[str, Any]):
    """Base of the typed records: a read-only mapping over the dataclass fields.

    Fields named in `OPTIONAL` are left out of the mapping while they are None (the
    contract writes them only when known).
    """

    __slots__ = ()
    OPTIONAL: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def keys_of(cls) -> tuple[str, ...]:
        """Every key a record of this class can hold, in the contract's order."""
        names = _FIELD_NAMES.get(cls)
        if names is None:
            names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]
        return names

    def __getitem__(self, key: str) -> Any:
        names = _FIELD_SETS.get(type(self))
        if names is None:
            names = _FIELD_SETS[type(self)] = frozenset(self.keys_of())
        if key not in names:
            raise KeyError(key)
        value = getattr(self, key)
        kind = type(value)
        if kind is str or kind is int or kind is float or kind is bool:
            return value  # `_plain` of a scalar, without the call
        if value is None and key in self.OPTIONAL:
            raise KeyError(key)
        return _plain(value)

    def get(self, key: str, default: Any = None) -> Any:
        """`Mapping.get` without its exception round trip (findings and stats read a few
        keys of every artifact)."""
        names = _FIELD_SETS.get(type(self))
        if names is None:
            names = _FIELD_SETS[type(self)] = frozenset(self.keys_of())
        if key not in names:
            return default
        value = getattr(self, key)
        if value is None:
            return default if key in self.OPTIONAL else None
        return _plain(value)

    def _present(self) -> list[str]:
        optional = self.OPTIONAL
        return [n for n in self.keys_of() if n not in optional or getattr(self, n) is not None]

    def __iter__(self) -> Iterator[str]:
        return iter(self._present())

    def __len__(self) -> int:
        return len(self._present())

    def keys(self) -> KeysView[str]:
        """The keys, as a view iterating a list (`dict(recorded)` reads it once per line of
        `why --json`: a view over `__iter__` costs a generator step per key)."""
        return _RecordedKeys(self, self._present())

    def to_dict(self) -> dict[str, Any]:
        """The `recorded` object of `why --json` (what `dict(self)` gives, without a lookup
        per key: every line of a log's `why --json` builds one)."""
        optional = self.OPTIONAL
        out: dict[str, Any] = {}
        for name in self.keys_of():  # `_present()`, each field read once
            value = getattr(self, name)
            if value is None:
                if name not in optional:
                    out[name] = None
            elif type(value) in _SCALAR_TYPES:  # `_plain` of a scalar, without the call
                out[name] = value
            else:
                out[name] = _plain(value)
        return out


class _RecordedKeys(KeysView[str]):
    """`Recorded.keys()`: a keys view whose iteration is a list's."""

    __slots__ = ("_names",)

    def __init__(self, mapping: Recorded, names: list[str]) -> None:
        super().__init__(mapping)
        self._names = names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)


@dataclass(frozen=True, slots=True, eq=False)
class DumpRecorded(Recorded):
    """What a compression dump recorded (plus the linked run's check and retries)."""

    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"threshold_check", "stale_usage"})

    outcome: str = "compressed"
    span: SpanCounts = field(default_factory=SpanCounts)
    tokens_before: int | None = None
    tokens_after: int | None = None
    reduction: int | None = None
    reduction_ratio: float | None = None
    context_max: int | None = None
    target_tokens: int | None = None
    #: The linked run's compression_retry records, in order.
    retries: tuple[Mapping[str, Any], ...] = ()
    messages_before: int | None = None
    messages_after: int | None = None
    summary_chars: int | None = None
    model_calls: int | None = None
    #: The span first built (the linked span_built record), before any overflow shrink.
    span_first_built: SpanCounts | None = None
    #: Tuning values inferred from the dump: name -> {"value", "from"}.
    inferred: Mapping[str, Any] = field(default_factory=dict)
    #: What the dump cannot give back, in words.
    unrecoverable: tuple[str, ...] = ()
    #: The linked threshold_check record, as logged.
    threshold_check: Mapping[str, Any] | None = None
    #: How the kept usage records' stale flags were chosen.
    stale_usage: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True, eq=False)
class DebugRecorded(Recorded):
    """What a debug-log run recorded: the check's reason and numbers, retries, outcome."""

    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"duplicate_records"})

    #: The run's threshold_check record, as logged (None: the run has none).
    threshold_check: Mapping[str, Any] | None = None
    reason: str | None = None
    hit: bool | None = None
    total_tokens: int | None = None
    threshold: int | None = None
    context_max: int | None = None
    target_tokens: int | None = None
    min_target_tokens: int | None = None
    retries: tuple[Mapping[str, Any], ...] = ()
    #: compressed, not_compressed, failed, silent_end, ...
    outcome: str | None = None
    span: SpanCounts | None = None
    silent_causes: tuple[str, ...] = ()
    other_events: tuple[Mapping[str, Any], ...] = ()
    line: int | None = None
    #: Records logged twice (a log appended to itself, or a copy beside it): read once.
    duplicate_records: int | None = None


@dataclass(frozen=True, slots=True, eq=False)
class LlmRequestRecorded(Recorded):
    """Which model call a `llm_request.jsonl` record is, and what it logged about it."""

    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"statistic", "usage_report"})

    event: str = "pre_call"
    sequence: int | None = None
    request_id: str | None = None
    model: str | None = None
    provider: str | None = None
    context_window_tokens: int | None = None
    message_count: int | None = None
    system_message_count: int | None = None
    context_message_count: int | None = None
    tool_count: int | None = None
    #: The window statistic and usage report as logged.
    statistic: Mapping[str, Any] | None = None
    usage_report: Any = None
    #: The compressor evaluations of this call (same session and context, after the
    #: previous call): processor, run index, outcome, reason, time.
    evaluations: tuple[Mapping[str, Any], ...] = ()
    #: Tuning values taken from the one compressor evaluation of this call: name ->
    #: {"value", "from"}.
    inferred: Mapping[str, Any] = field(default_factory=dict)
    line: int | None = None


@dataclass(frozen=True, slots=True)
class Artifact:
    """One thing found in a source: a snapshot, a message list, a dump or a debug-log session.

    `snapshot` is the context to evaluate (for a dump: the rebuilt pre-compression context;
    None when no context is available, e.g. a debug log alone). `recorded` holds what the
    artifact itself says happened (CLI contract: for a dump its span counts, tokens
    before/after, reduction; for a debug log the last threshold_check, retries, outcome):
    a `DumpRecorded` or `DebugRecorded` from the file sources.
    """

    source: str
    id: str
    kind: ArtifactKind
    snapshot: ContextSnapshot | None
    recorded: Mapping[str, Any] = field(default_factory=dict)
    processor: str | None = None
    session_id: str | None = None
    context_id: str | None = None
    timestamp: float | None = None
    #: For a dump: the context after compression, as written by openJiuwen.
    after: tuple[Message, ...] | None = None
    #: For a dump: the summary the model wrote (what a re-run of about the same region costs).
    summary: str | None = None
    #: Token mode the source recorded or implies, when known (for a mode-mismatch finding).
    recorded_token_mode: str | None = None
    #: Free-form extras a source wants to keep (raw records, timeline entries, ...).
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: For a header-level dump of an on-demand load (`extra["header_only"]`): gives what a
    #: full load gives for it, the whole artifact or the error that stops its rebuild
    #: (reads the file again). None for every other artifact, which is whole already.
    whole: Callable[[], LoadResult] | None = field(default=None, compare=False, repr=False)


#: Constructors taking every field (`core.frozen.plain_init`): a big folder's load makes
#: 100,000 artifacts and records, each otherwise a call per field.
plain_span_counts = plain_init(SpanCounts)
plain_dump_recorded = plain_init(DumpRecorded)
plain_debug_recorded = plain_init(DebugRecorded)
plain_artifact = plain_init(Artifact)


def recorded_value(recorded: Mapping[str, Any], *names: str) -> Any:
    """The first non-null value among dotted `names` ("span.protected_tail") in a recorded mapping.

    Kept for readers of mappings from other producers; a typed record's keys are fixed
    (`DumpRecorded`, `DebugRecorded`), so one name suffices for them.
    """
    for name in names:
        value: Any = recorded
        for part in name.split("."):
            if not isinstance(value, Mapping) or part not in value:
                value = None
                break
            value = value[part]
        if value is not None:
            return value
    return None


@dataclass(frozen=True, slots=True)
class LoadError:
    """One unreadable file or record: where it is and why, in plain words."""

    source: str
    error: str
    where: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON line the CLI prints for it."""
        return {"source": self.source, "error": self.error, "where": self.where}


LoadResult = Artifact | LoadError


def made_whole(result: LoadResult) -> LoadResult:
    """`result` itself, or for a header-level artifact of an on-demand load what its
    `whole()` gives (its file read again: the whole artifact or a LoadError)."""
    if isinstance(result, Artifact) and result.whole is not None:
        return result.whole()
    return result
