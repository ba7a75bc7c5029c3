"""openJiuwen's forked compressors (CurrentRound, Dialogue, RoundLevel) as strategies.

They share the span and trigger engine (`inspector.core.engine`), the diagnosis
(`inspector.core.diagnosis`) and the what-if search (`inspector.core.whatif`); this module
only translates between their `Tuning` and each processor's settings model, and builds the
protocol's `Decision`. Must not import anything outside the standard library, pydantic and
`inspector.core`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from inspector.core.artifact import Artifact
from inspector.core.diagnosis import Diagnosis, diagnose
from inspector.core.engine import ContextEngine, Evaluation, PricedContext
from inspector.core.errors import ConfigError
from inspector.core.forked.after import forked_after
from inspector.core.forked.settings import (
    TUNING_TO_SETTINGS,
    CurrentRoundSettings,
    DialogueSettings,
    ForkedSettings,
    RoundLevelSettings,
    settings_from_tuning,
    tuning_from_settings,
)
from inspector.core.regions import region_reason
from inspector.core.releases.counting import CountingChoice, choose_counting
from inspector.core.releases.profiles import profile_for_release
from inspector.core.snapshot import ContextSnapshot
from inspector.core.strategy.after import After
from inspector.core.strategy.base import (
    Decision,
    Family,
    Flip,
    Gauge,
    RegionRange,
    Settings,
    SweepPoint,
)
from inspector.core.strategy.fields import field_named
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import ProcessorKind, Tuning
from inspector.core.whatif import smallest_flips, sweep

_REGION_LABELS = {
    "prefix": "preserved prefix",
    "compress": "to compress",
    "tail": "protected tail",
}


@dataclass
class ForkedPrepared:
    """A snapshot, the release and counter its source tells, and one engine per release
    profile (each pricing the context per token mode on first use)."""

    snapshot: ContextSnapshot
    counters: Mapping[str, TokenCounter]
    counting_note: str
    choice: CountingChoice
    engines: dict[str, ContextEngine] = field(default_factory=dict)

    def engine(self, release: str) -> ContextEngine:
        """The engine counting with `release`'s rules (cached per profile)."""
        profile = profile_for_release(release).profile
        engine = self.engines.get(profile.name)
        if engine is None:
            counters = {
                mode: counter.with_divisors(profile.char_divisor, profile.tail_divisor)
                for mode, counter in self.counters.items()
            }
            engine = ContextEngine(self.snapshot, counters)
            self.engines[profile.name] = engine
        return engine


@dataclass(frozen=True)
class _RegionReasons(Mapping[int, str]):
    """Why each message sits where it does, computed on demand."""

    priced: PricedContext
    evaluation: Evaluation

    def __getitem__(self, index: int) -> str:
        if not 0 <= index < self.priced.n:
            raise KeyError(index)
        return region_reason(self.priced, self.evaluation, index)

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.priced.n))

    def __len__(self) -> int:
        return self.priced.n


class ForkedStrategy:
    """One forked processor: the trigger decision openJiuwen computes, explained."""

    family: ClassVar[Family] = "forked"
    capabilities: ClassVar[frozenset[str]] = frozenset({"rerun"})

    def __init__(
        self,
        key: ProcessorKind,
        processor: str,
        title: str,
        settings_model: type[ForkedSettings],
    ) -> None:
        self.key = key
        self.processor = processor
        self.title = title
        self.settings_model = settings_model

    def __repr__(self) -> str:
        return f"ForkedStrategy({self.key})"

    # --- settings -------------------------------------------------------------------------

    def recorded_settings(self, snapshot: ContextSnapshot) -> ForkedSettings:
        """The recorded tuning; switching from another processor keeps the shared fields and
        takes this processor's default keep window. The release and, when not recorded,
        the counter are what the source tells (`core.releases.choose_counting`)."""
        choice = choose_counting(snapshot, evidence=snapshot.release_evidence)
        tuning = snapshot.tuning
        if "token_mode" not in snapshot.recorded_fields:
            tuning = tuning.with_(token_mode=choice.token_mode)
        if tuning.processor != self.key:
            default_keep = self.settings_model.model_fields.get("keep_recent_messages")
            keep = int(default_keep.default) if default_keep is not None else 0
            tuning = Tuning(
                processor=self.key,
                trigger_ratio=tuning.trigger_ratio,
                min_target_ratio=tuning.min_target_ratio,
                keep_recent=keep,
                context_max=tuning.context_max,
                token_mode=tuning.token_mode,
                tool_boundary=tuning.tool_boundary,
            )
        detection = choice.detection
        release = detection.release or detection.profile.newest_release
        return settings_from_tuning(self.settings_model, tuning, release)

    def assumed_fields(self, snapshot: ContextSnapshot) -> frozenset[str]:
        """Settings fields whose value the source did not record."""
        recorded = {
            TUNING_TO_SETTINGS[name]
            for name in snapshot.recorded_fields
            if name in TUNING_TO_SETTINGS
        }
        if snapshot.tuning.processor != self.key:
            recorded.discard("keep_recent_messages")
        choice = choose_counting(snapshot, evidence=snapshot.release_evidence)
        if choice.detection.known:
            recorded.add("openjiuwen_version")
        if choice.mode_source != "assumed":
            recorded.add("token_mode")
        return frozenset(set(self.settings_model.model_fields) - recorded - {"tool_boundary"})

    def tuning(self, settings: Settings) -> Tuning:
        """The engine's Tuning for these settings."""
        assert isinstance(settings, ForkedSettings)
        return tuning_from_settings(self.key, settings)

    def rerun_tuning(self, settings: Settings) -> Tuning:
        """The tuning `inspector rerun` takes (found by `core.strategy.base.rerun_of`)."""
        return self.tuning(settings)

    # --- deciding -------------------------------------------------------------------------

    def prepare(
        self,
        snapshot: ContextSnapshot,
        counters: Mapping[str, TokenCounter],
        counting_note: str = "",
    ) -> ForkedPrepared:
        """The release evidence of the snapshot; counting happens per profile and token mode
        on first use."""
        return ForkedPrepared(
            snapshot,
            dict(counters),
            counting_note,
            choose_counting(snapshot, evidence=snapshot.release_evidence),
        )

    def counting_key(self, settings: Settings) -> str:
        """The token mode and the release profile."""
        assert isinstance(settings, ForkedSettings)
        return (
            f"{settings.token_mode}@{profile_for_release(settings.openjiuwen_version).profile.name}"
        )

    def decide(
        self, prepared: Any, settings: Settings, artifact: Artifact | None = None
    ) -> Decision:
        """openJiuwen's trigger decision with its checks and findings."""
        assert isinstance(prepared, ForkedPrepared) and isinstance(settings, ForkedSettings)
        tuning = self.tuning(settings)
        engine = prepared.engine(settings.openjiuwen_version)
        release_note = self._release_note(prepared, settings)
        exact_counter = engine.priced(tuning.token_mode).counter.exact
        encoder_note = "" if exact_counter else prepared.counting_note
        note = "; ".join(part for part in (release_note, encoder_note) if part)
        diagnosis = diagnose(engine, tuning, artifact, note)
        return self._decision(prepared, settings, diagnosis)

    @staticmethod
    def _release_known(prepared: ForkedPrepared, settings: ForkedSettings) -> tuple[bool, bool]:
        """Whether the release and the counter are known: told by the source, or set by the
        user (a value other than the assumed one)."""
        choice = prepared.choice
        release = choice.detection.known or "openjiuwen_version" in settings.given
        mode = choice.mode_source != "assumed" or "token_mode" in settings.given
        return release, mode

    def _release_note(self, prepared: ForkedPrepared, settings: ForkedSettings) -> str:
        """What was assumed about the release and the counter ("" when nothing)."""
        release, mode = self._release_known(prepared, settings)
        parts = []
        if not release:
            parts.append(prepared.choice.detection.evidence)
        if not mode:
            parts.append(prepared.choice.mode_note)
        return "; ".join(parts)

    def _decision(
        self, prepared: ForkedPrepared, settings: Settings, diagnosis: Diagnosis
    ) -> Decision:
        ev = diagnosis.evaluation
        assert isinstance(settings, ForkedSettings)
        priced = prepared.engine(settings.openjiuwen_version).priced(ev.tuning.token_mode)
        release_known, mode_known = self._release_known(prepared, settings)
        user_release = "openjiuwen_version" in settings.given
        regions = tuple(
            RegionRange(name, start, end, _REGION_LABELS[name], priced.count_range(start, end))  # type: ignore[arg-type]
            for name, (start, end) in (
                ("prefix", ev.span.prefix),
                ("compress", ev.span.compress),
                ("tail", ev.span.tail),
            )
        )
        tuning = ev.tuning
        return Decision(
            strategy=self.key,
            processor=self.processor,
            family=self.family,
            settings=settings,
            hit=ev.hit,
            reason=ev.reason,
            verdict="COMPRESSES" if ev.hit else "DOES NOT COMPRESS",
            total_tokens=ev.total_tokens,
            threshold=ev.threshold,
            target_tokens=ev.target_tokens,
            min_target_tokens=ev.min_target_tokens,
            effective_keep=ev.effective_keep,
            regions=regions,
            span=ev.span.counts,
            checks=diagnosis.checks,
            findings=diagnosis.findings,
            numbers={
                "tuning": {
                    "processor": tuning.processor,
                    "trigger_ratio": tuning.trigger_ratio,
                    "min_target_ratio": tuning.min_target_ratio,
                    "keep_recent": tuning.keep_recent,
                    "context_max": tuning.context_max,
                    "token_mode": tuning.token_mode,
                    "tool_boundary": tuning.tool_boundary,
                },
                "span_target_tokens": ev.span_target_tokens,
                "min_target_value": ev.min_target_value,
                "used_usage_baseline": ev.used_usage_baseline,
                "openjiuwen_version": settings.openjiuwen_version,
                "release_profile": profile_for_release(settings.openjiuwen_version).profile.name,
                "version_evidence": "set by the user"
                if user_release
                else prepared.choice.detection.evidence,
                "counter_evidence": prepared.choice.mode_note,
            },
            exact_counting=diagnosis.exact_counting and release_known and mode_known,
            counting_note=diagnosis.counting_note,
            message_tokens=tuple(priced.per_message_tokens),
            message_notes=_RegionReasons(priced, ev),
            gauge=Gauge(
                fixed=sum(priced.per_system_message_tokens) + priced.tools_tokens,
                parts=tuple((r.name, r.tokens or 0) for r in regions),
                total=ev.total_tokens,
                threshold=ev.threshold,
                minimum=ev.min_target_value,
                scale=tuning.context_max,
            ),
            native=(priced, ev),
        )

    def after(
        self, prepared: Any, decision: Decision, counter: TokenCounter, summary_tokens: int
    ) -> After:
        """What the decision leaves in the context: the memory block and re-injection,
        estimated (`core.forked.after`)."""
        _priced, evaluation = decision.native
        return forked_after(
            self.key, prepared.snapshot.messages, evaluation, counter, summary_tokens
        )

    # --- what-if --------------------------------------------------------------------------

    def flips(self, prepared: Any, settings: Settings) -> list[Flip]:
        """The smallest single change per parameter (and per other processor) that flips it."""
        assert isinstance(prepared, ForkedPrepared)
        from inspector.core.strategy.registry import get  # the registry imports this module

        out: list[Flip] = []
        assert isinstance(settings, ForkedSettings)
        engine = prepared.engine(settings.openjiuwen_version)
        for flip in smallest_flips(engine, self.tuning(settings)):
            if flip.param == "processor":
                other = get(str(flip.value))
                assert isinstance(other, ForkedStrategy)
                changed: Settings = settings_from_tuning(
                    other.settings_model, flip.tuning, settings.openjiuwen_version
                )
                decision = other.decide(prepared, changed)
                out.append(
                    Flip(
                        "processor",
                        self.key,
                        other.key,
                        changed,
                        decision,
                        flip.sentence,
                        other.key,
                    )
                )
                continue
            name = TUNING_TO_SETTINGS[flip.param]
            changed = settings.with_(**{name: flip.value})
            sentence = flip.sentence.replace(flip.param, name, 1)
            out.append(
                Flip(
                    name,
                    flip.current,
                    flip.value,
                    changed,
                    self.decide(prepared, changed),
                    sentence,
                )
            )
        return out

    def sweep_params(self) -> tuple[str, ...]:
        """Ratios, keep window (where there is one) and context_max."""
        return tuple(
            name
            for name in (
                "trigger_context_ratio",
                "min_target_context_ratio",
                "keep_recent_messages",
                "context_max",
            )
            if name in self.settings_model.model_fields
        )

    def sweep(
        self, prepared: Any, settings: Settings, param: str, values: Sequence[Any] | None
    ) -> list[SweepPoint]:
        """The decision at each value of one parameter."""
        assert isinstance(prepared, ForkedPrepared)
        info = field_named(self.settings_model, param)
        if info.name not in self.sweep_params():
            raise ConfigError("param", param, "one of " + ", ".join(self.sweep_params()))
        short = info.alias or info.name
        assert isinstance(settings, ForkedSettings)
        engine = prepared.engine(settings.openjiuwen_version)
        points = sweep(engine, self.tuning(settings), short, values)
        out = []
        for point in points:
            changed = settings.with_(**{info.name: point.value})
            out.append(SweepPoint(point.value, self.decide(prepared, changed)))
        return out


CURRENT_ROUND = ForkedStrategy(
    "current_round",
    "CurrentRoundCompressor",
    "compresses the current round after the last real user message",
    CurrentRoundSettings,
)
DIALOGUE = ForkedStrategy(
    "dialogue",
    "DialogueCompressor",
    "compresses the dialogue before the last real user message",
    DialogueSettings,
)
ROUND_LEVEL = ForkedStrategy(
    "round_level",
    "RoundLevelCompressor",
    "compresses everything before the kept tail",
    RoundLevelSettings,
)
