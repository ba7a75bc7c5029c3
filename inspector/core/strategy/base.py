"""The one interface every compaction strategy implements, and the values it returns.

A strategy is one processor of one family (and release profile): openJiuwen's forked
compressors, the standard processors, the HybridCompressor. Front ends (CLI, TUI, reports)
only ever talk to this protocol and the registry: they never name a strategy.

The flow is always the same:

    strategy = registry.resolve(name)
    settings = strategy.recorded_settings(snapshot)        # what the source recorded
    settings = settings.with_(trigger_context_ratio=0.6)   # the user's tuning, validated
    prepared = strategy.prepare(snapshot, counters)        # count once (per token mode)
    decision = strategy.decide(prepared, settings)         # microseconds per re-split

Must not import anything outside the standard library, pydantic and `inspector.core`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol, Self, runtime_checkable

from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError

from inspector.core.artifact import Artifact
from inspector.core.checks import Check, Finding
from inspector.core.errors import ConfigError
from inspector.core.snapshot import ContextSnapshot
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import Tuning

#: Region names a strategy may use; each has one style in `render` (and a TCSS class).
RegionName = Literal["prefix", "compress", "tail", "offload", "fold", "summary", "outside"]
Family = Literal["forked", "standard", "hybrid"]


class Settings(BaseModel):
    """Base of every strategy's settings: immutable, strict, unknown fields refused.

    Subclasses declare their fields with openJiuwen's names, defaults and ranges
    (`Field(..., gt=0, lt=1, description=...)`); the Tune panel, the CLI flags, `--help`
    and the JSON Schema are generated from them. `json_schema_extra={"sweep": False}` on a
    field keeps it out of sweeps and flips; `{"what_if": True}` marks a field openJiuwen
    itself cannot set (shown as a what-if).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, defer_build=True)
    #: Fields the user set (a flag, a control, a flip) rather than read from the source.
    _given: frozenset[str] = PrivateAttr(default_factory=frozenset)

    @property
    def given(self) -> frozenset[str]:
        """Fields the user set rather than the source."""
        return self._given

    def with_(self, **changes: Any) -> Self:
        """A validated copy with some fields changed (counted as set by the user);
        ConfigError names the first bad field."""
        if not changes:
            return self
        try:
            changed = self.model_validate({**self.model_dump(), **changes})
        except ValidationError as error:
            raise config_error(error, {**self.model_dump(), **changes}, type(self)) from None
        changed._given = self._given | frozenset(changes)
        return changed

    @classmethod
    def build(cls, values: Mapping[str, Any]) -> Self:
        """Validate a mapping of field values (unknown names refused)."""
        try:
            return cls.model_validate(dict(values))
        except ValidationError as error:
            raise config_error(error, values, cls) from None

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """The tunable fields, in declaration order."""
        return tuple(cls.model_fields)


def config_error(
    error: ValidationError, values: Mapping[str, Any], model: type[BaseModel] | None = None
) -> ConfigError:
    """Our ConfigError (field, value, allowed range in words) from pydantic's first error."""
    first = error.errors()[0]
    name = str(first["loc"][0]) if first.get("loc") else "settings"
    value = values.get(name, first.get("input"))
    info = model.model_fields.get(name) if model is not None else None
    if first["type"] == "extra_forbidden" or info is None:
        return ConfigError(name, value, "a known setting of this processor")
    bounds = {
        key: getattr(item, key)
        for item in info.metadata
        for key in ("gt", "ge", "lt", "le")
        if getattr(item, key, None) is not None
    }
    if info.annotation in (int, float) and bounds:
        kind = "an integer" if info.annotation is int else "a number"
        low = (
            f"{bounds['gt']} < "
            if "gt" in bounds
            else f"{bounds['ge']} <= "
            if "ge" in bounds
            else ""
        )
        high = (
            f" < {bounds['lt']}"
            if "lt" in bounds
            else f" <= {bounds['le']}"
            if "le" in bounds
            else ""
        )
        allowed = f"{kind} with {low}{name}{high}"
    elif info.annotation is int:
        allowed = "an integer"
    elif info.annotation is float:
        allowed = "a number"
    elif info.annotation is bool:
        allowed = "true or false"
    elif first["type"] == "literal_error":
        allowed = "one of " + str((first.get("ctx") or {}).get("expected", "the listed values"))
    else:
        allowed = first["msg"].lower()
    return ConfigError(name, value, allowed)


@dataclass(frozen=True, slots=True)
class RegionRange:
    """A half-open range of context-message indices and what the strategy does with them."""

    name: RegionName
    start: int
    end: int
    #: What the region is called in this strategy's words ("preserved prefix", "offloaded").
    label: str
    #: The region's tokens as the strategy counts a list of its messages, when known.
    tokens: int | None = None

    @property
    def size(self) -> int:
        """Messages in the range."""
        return max(self.end - self.start, 0)


@dataclass(frozen=True, slots=True)
class Gauge:
    """The window drawn to scale: the fixed part (system messages and tools) and each part of
    the context in drawing order, with the threshold and minimum marks, all in tokens."""

    fixed: int
    parts: tuple[tuple[RegionName, int], ...]
    total: int
    threshold: int
    #: The minimum-target mark, measured from the start of the "compress" part (0: none).
    minimum: int
    scale: int
    #: Legend words per part where the strategy's differ from the region names.
    labels: Mapping[str, str] = field(default_factory=dict)
    #: A title line above the bar ("the context after the pipeline (estimates)").
    note: str = ""


def region_changes(
    old: Sequence[RegionRange], new: Sequence[RegionRange], count: int
) -> list[range]:
    """Index ranges whose region differs between two decisions (linear in the ranges)."""
    cuts = {0, count}
    for regions in (old, new):
        for region in regions:
            cuts.update((min(region.start, count), min(region.end, count)))
    edges = sorted(cuts)

    def name_at(regions: Sequence[RegionRange], index: int) -> str:
        return next((r.name for r in regions if r.start <= index < r.end), "outside")

    return [
        range(a, b)
        for a, b in zip(edges, edges[1:], strict=False)
        if b > a and name_at(old, a) != name_at(new, a)
    ]


@dataclass(frozen=True, slots=True)
class Decision:
    """One strategy's decision on one context under one set of settings.

    Field names follow the CLI contract (`why --json`). `regions` cover the context messages
    in order (gaps are "outside"); `span` holds the contract's three counts as the processor
    names them. `numbers` carries the strategy's own numbers (thresholds, budgets, water
    levels), added to `why --json` as they are.
    """

    strategy: str
    processor: str
    family: Family
    settings: Settings
    hit: bool
    reason: str
    #: Headline words: "COMPRESSES", "DOES NOT COMPRESS", "OFFLOADS", "STOPS AT LEVEL 1" ...
    verdict: str
    total_tokens: int | None
    threshold: int | None
    target_tokens: int | None
    min_target_tokens: int | None
    effective_keep: int | None
    regions: tuple[RegionRange, ...]
    span: Mapping[str, int]
    checks: tuple[Check, ...]
    findings: tuple[Finding, ...]
    numbers: Mapping[str, Any] = field(default_factory=dict)
    exact_counting: bool = True
    counting_note: str = ""
    #: Per-message sentences (what happened to message i), when the strategy has them.
    message_notes: Mapping[int, str] = field(default_factory=dict)
    #: Per-message short labels for list rows ("cut json -1,234"), when the strategy has them.
    message_labels: Mapping[int, str] = field(default_factory=dict)
    #: Token count of each context message as this decision priced it (for bars), when known.
    message_tokens: tuple[int, ...] | None = None
    #: The window drawn to scale, when the strategy can say it.
    gauge: Gauge | None = None
    #: One line of the strategy's own numbers under the verdict ("" for none).
    summary: str = ""
    #: The strategy's native result, for that strategy's own code only (never read by front ends).
    native: Any = field(default=None, repr=False, compare=False)

    def region_of(self, index: int) -> RegionName:
        """Which region message `index` falls in."""
        for region in self.regions:
            if region.start <= index < region.end:
                return region.name
        return "outside"

    def region_label(self, index: int) -> str:
        """The strategy's word for the region of message `index`."""
        for region in self.regions:
            if region.start <= index < region.end:
                return region.label
        return "outside"


@dataclass(frozen=True, slots=True)
class Flip:
    """Setting `param` from `current` to `value` flips the decision to `decision`."""

    param: str
    current: Any
    value: Any
    settings: Settings
    decision: Decision
    sentence: str
    #: The registry key the flip switches to (a `processor` flip), else None.
    strategy: str | None = None


@dataclass(frozen=True, slots=True)
class SweepPoint:
    """The decision at one value of a swept parameter."""

    value: Any
    decision: Decision


@runtime_checkable
class Prepared(Protocol):
    """A context made ready by one strategy (counted once); opaque to front ends."""

    snapshot: ContextSnapshot


class Strategy(Protocol):
    """What every strategy provides. Implementations live in `inspector.core.<family>` packages
    and are listed once in `inspector.core.strategy.registry`."""

    #: Registry key, stable in files and on the command line ("current_round", "hybrid", ...).
    key: ClassVar[str]
    #: openJiuwen's class name (or the strategy's own name).
    processor: ClassVar[str]
    family: ClassVar[Family]
    #: One line for menus and help.
    title: ClassVar[str]
    settings_model: ClassVar[type[Settings]]
    #: What else the strategy supports: "rerun" (openJiuwen's real compaction can be re-run).
    capabilities: ClassVar[frozenset[str]]

    def recorded_settings(self, snapshot: ContextSnapshot) -> Settings:
        """The settings the source recorded for this strategy (defaults for the rest)."""
        ...

    def assumed_fields(self, snapshot: ContextSnapshot) -> frozenset[str]:
        """Fields of `recorded_settings` the source did not record (defaults or inferred)."""
        ...

    def prepare(
        self,
        snapshot: ContextSnapshot,
        counters: Mapping[str, TokenCounter],
        counting_note: str = "",
    ) -> Prepared:
        """Count the context once so that `decide` is cheap for any settings.

        `counters` maps each token mode to its counter; `counting_note` says how exact cl100k
        counting is available (shown when it is not)."""
        ...

    def counting_key(self, settings: Settings) -> str:
        """What of the settings decides how the context is counted (token mode, release):
        the first decision for a new key counts every message, later ones are cheap."""
        ...

    def decide(
        self, prepared: Prepared, settings: Settings, artifact: Artifact | None = None
    ) -> Decision:
        """The decision, checks and findings for these settings (`artifact`: what was recorded)."""
        ...

    def flips(self, prepared: Prepared, settings: Settings) -> Sequence[Flip]:
        """The smallest single change per parameter that flips the decision."""
        ...

    def sweep_params(self) -> tuple[str, ...]:
        """Fields that can be swept."""
        ...

    def sweep(
        self, prepared: Prepared, settings: Settings, param: str, values: Sequence[Any] | None
    ) -> Sequence[SweepPoint]:
        """The decision at each value of `param` (None: a sensible range around the current)."""
        ...


class ScriptBuilder(Protocol):
    """`rerun_script(prepared, settings, prompts, new_handle)`: the processor's model calls as
    a generator script (`core.standard.rerun_script.Script`, typed there: this module cannot
    import the standard family)."""

    def __call__(
        self, prepared: Prepared, settings: Settings, prompts: Any, new_handle: Callable[[], str]
    ) -> Any:
        """The script for this context, settings and prompts."""
        ...


@runtime_checkable
class _RerunsByTuning(Protocol):
    def rerun_tuning(self, settings: Settings) -> Tuning: ...


@runtime_checkable
class _RerunsByScript(Protocol):
    def rerun_script(
        self, prepared: Prepared, settings: Settings, prompts: Any, new_handle: Callable[[], str]
    ) -> Any: ...


@dataclass(frozen=True, slots=True)
class EngineRerun:
    """Re-run through the compaction engine: openJiuwen's forked LLM compaction under the
    tuning `tuning(settings)` gives (`inspector.llm.rerun_compaction`)."""

    tuning: Callable[[Settings], Tuning]


@dataclass(frozen=True, slots=True)
class ScriptRerun:
    """Re-run as the processor's own model calls, a script (`inspector.llm.standard_runner`)."""

    script: ScriptBuilder


#: How a strategy re-runs openJiuwen's real compaction (the "rerun" capability): a strategy
#: implements `rerun_tuning(settings)` (the engine way) or `rerun_script(...)` (the script way).
Rerun = EngineRerun | ScriptRerun


def rerun_of(strategy: object) -> Rerun | None:
    """How the strategy re-runs, or None when it cannot be re-run."""
    capabilities: frozenset[str] = getattr(strategy, "capabilities", frozenset())
    if "rerun" not in capabilities:
        return None
    if isinstance(strategy, _RerunsByScript):
        return ScriptRerun(strategy.rerun_script)
    if isinstance(strategy, _RerunsByTuning):
        return EngineRerun(strategy.rerun_tuning)
    return None


def flip_indices(points: Sequence[SweepPoint]) -> list[int]:
    """Indices where the decision (hit, reason, verdict) differs from the previous point."""
    return [
        i
        for i in range(1, len(points))
        if (points[i].decision.hit, points[i].decision.reason, points[i].decision.verdict)
        != (
            points[i - 1].decision.hit,
            points[i - 1].decision.reason,
            points[i - 1].decision.verdict,
        )
    ]
