"""Every standard processor as a `Strategy` (the protocol of `inspector.core.strategy.base`).

One class per processor, sharing `StandardStrategy`: settings from the snapshot's `config`
(openJiuwen's field names; keys the config class does not have are ignored, as openJiuwen's
pydantic configs do, and reported), the release from `openjiuwen_version` (absent: the
newest, said in the counting note and a check), the decision from the processor module,
flips and sweeps from `standard.whatif`. Registry lines: `STRATEGY_LINES`. Must not import
anything outside the standard library, pydantic and `inspector.core`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Literal

from inspector.core.artifact import Artifact
from inspector.core.checks import Check, Finding
from inspector.core.errors import ConfigError
from inspector.core.findings import with_findings
from inspector.core.snapshot import ContextSnapshot
from inspector.core.standard import compactors, compressors, offloaders, round_level
from inspector.core.standard import settings as models
from inspector.core.standard.counting import est3
from inspector.core.standard.event import started_state
from inspector.core.standard.prepared import (
    ADD,
    GET,
    Outcome,
    StandardPrepared,
    prepare_standard,
)
from inspector.core.standard.release import Release, choose_release
from inspector.core.standard.rerun_builders import SCRIPT_BUILDERS
from inspector.core.standard.rerun_script import Script, StandardPrompts
from inspector.core.standard.whatif import (
    decisions_at,
    nearest_flip,
    sweep_values,
    sweepable,
)
from inspector.core.strategy.base import (
    Decision,
    Flip,
    Gauge,
    Prepared,
    RegionRange,
    Settings,
    SweepPoint,
)
from inspector.core.tokens import TokenCounter

Evaluator = Callable[[StandardPrepared, Any], Outcome]
_COMPRESS_REGIONS = ("compress", "offload", "fold", "summary")
_FORKED_NAMES = {
    "MessageSummaryOffloader",
    "DialogueCompressor",
    "CurrentRoundCompressor",
    "RoundLevelCompressor",
}


def _model_name(value: Any) -> Any:
    if isinstance(value, Mapping):
        return value.get("model_name") or value.get("model")
    return value


class StandardStrategy:
    """Shared implementation; subclasses set the class attributes."""

    key: ClassVar[str]
    processor: ClassVar[str]
    family: ClassVar[Literal["standard"]] = "standard"
    title: ClassVar[str]
    settings_model: ClassVar[type[Settings]]
    #: "rerun" where the processor's model calls can be re-run (`rerun_script`): set for
    #: each processor `rerun_builders.SCRIPT_BUILDERS` has.
    capabilities: ClassVar[frozenset[str]] = frozenset()
    evaluator: ClassVar[Evaluator]
    #: The hook a snapshot without `hook` is evaluated on.
    default_hook: ClassVar[str] = ADD
    #: Releases that have this processor.
    releases: ClassVar[tuple[Release, ...]] = ("0.1.16", "0.1.17", "0.1.19")
    #: One sentence on the model call that follows a trigger (empty: LLM-free).
    llm_call: ClassVar[str] = ""
    #: The decision compares a token total with a token threshold (a gauge can show it).
    token_gauge: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.processor in SCRIPT_BUILDERS:
            cls.capabilities = cls.capabilities | {"rerun"}

    def rerun_script(
        self,
        prepared: Prepared,
        settings: Settings,
        prompts: StandardPrompts,
        new_handle: Callable[[], str],
    ) -> Script:
        """The processor's model calls for this context and settings (`inspector rerun`)."""
        build = SCRIPT_BUILDERS.get(self.processor)
        if build is None:
            raise ConfigError("processor", self.processor, "a processor whose calls re-run")
        return build(self._prep_for(prepared, settings), settings, prompts, new_handle)

    # --- settings -------------------------------------------------------------------------

    def _config(self, snapshot: ContextSnapshot) -> tuple[dict[str, Any], list[str]]:
        fields = self.settings_model.model_fields
        values: dict[str, Any] = {}
        ignored: list[str] = []
        for key, value in snapshot.config.items():
            if key not in fields:
                ignored.append(key)
                continue
            if key == "model":
                value = _model_name(value)
            if value is None and fields[key].default is not None:
                continue
            values[key] = value
        return values, ignored

    def recorded_settings(self, snapshot: ContextSnapshot) -> Settings:
        """The processor's config as recorded (defaults for the rest; unknown keys ignored),
        and the snapshot's release."""
        values, _ = self._config(snapshot)
        if snapshot.openjiuwen_version is not None:
            values["openjiuwen_version"] = snapshot.openjiuwen_version
        return self.settings_model.build(values)

    def assumed_fields(self, snapshot: ContextSnapshot) -> frozenset[str]:
        """Fields the snapshot's config (and release) did not set."""
        values, _ = self._config(snapshot)
        if snapshot.openjiuwen_version is not None:
            values["openjiuwen_version"] = snapshot.openjiuwen_version
        return frozenset(self.settings_model.model_fields) - frozenset(values)

    def counting_key(self, settings: Settings) -> str:
        """The release whose counter counts (the processor's own fields never change counts)."""
        version = getattr(settings, "openjiuwen_version", None)
        return "standard@" + (choose_release(version).release if version else "snapshot")

    # --- preparing and deciding -----------------------------------------------------------

    def prepare(
        self,
        snapshot: ContextSnapshot,
        counters: Mapping[str, TokenCounter],
        counting_note: str = "",
    ) -> Prepared:
        """Release, counter and hook for this snapshot; counts are memoised as decisions ask.

        `counting_note` (how cl100k is available) is shown when cl100k counting is inexact."""
        return prepare_standard(snapshot, counters, self.default_hook, counting_note)

    def _prep(self, prepared: Prepared) -> StandardPrepared:
        if not isinstance(prepared, StandardPrepared):
            raise ConfigError("prepared", type(prepared).__name__, "a standard-family context")
        return prepared

    def _prep_for(self, prepared: Prepared, settings: Settings) -> StandardPrepared:
        """The prepared context under the settings' release."""
        if not isinstance(settings, self.settings_model):
            raise ConfigError("settings", type(settings).__name__, self.settings_model.__name__)
        return self._prep(prepared).for_release(getattr(settings, "openjiuwen_version", None))

    def outcome(self, prepared: Prepared, settings: Settings) -> Outcome:
        """The processor module's outcome (the reference's `details` included)."""
        return type(self).evaluator(self._prep_for(prepared, settings), settings)

    def decide(
        self, prepared: Prepared, settings: Settings, artifact: Artifact | None = None
    ) -> Decision:
        """The decision with its checks, findings, regions and numbers."""
        prep = self._prep_for(prepared, settings)
        outcome = type(self).evaluator(prep, settings)
        hit, reason, verdict = outcome.hit, outcome.reason, outcome.verdict
        if prep.choice.release not in self.releases:
            hit, reason, verdict = False, "not_in_release", "NOT IN THIS RELEASE"
        checks = (*self._context_checks(prep), *outcome.checks)
        findings = (*self._context_findings(prep), *outcome.findings)
        model = getattr(settings, "model", None)
        numbers: dict[str, Any] = {
            "openjiuwen_release": prep.choice.release,
            "counter": prep.counter.class_name,
            "hook": prep.hook,
            "added_from": prep.added_from if prep.hook == ADD else None,
            **dict(outcome.numbers),
            "details": dict(outcome.details),
            "event_started": self._started(prep, model) if hit else None,
        }
        if hit and self.llm_call:
            numbers["llm_call"] = self.llm_call
        regions = _with_tokens(prep, outcome.regions)
        decision = Decision(
            strategy=self.key,
            processor=self.processor,
            family="standard",
            settings=settings,
            hit=hit,
            reason=reason,
            verdict=verdict,
            total_tokens=outcome.total_tokens,
            threshold=outcome.threshold,
            target_tokens=outcome.target_tokens,
            min_target_tokens=outcome.min_target_tokens,
            effective_keep=outcome.effective_keep,
            regions=regions,
            span=_span(regions),
            checks=checks,
            findings=findings,
            numbers=numbers,
            exact_counting=prep.counter.exact,
            counting_note=self._counting_note(prep),
            message_notes=dict(outcome.message_notes),
            message_tokens=self._message_tokens(prep),
            gauge=self._gauge(prep, outcome, regions),
            summary=_summary(prep, outcome),
            native=outcome,
        )
        return with_findings(decision, prepared.snapshot, artifact)

    def _gauge(
        self, prep: StandardPrepared, outcome: Outcome, regions: Sequence[RegionRange]
    ) -> Gauge | None:
        if not self.token_gauge or outcome.total_tokens is None or outcome.threshold is None:
            return None
        fixed = 0
        window = prep.hook == GET or prep.add_passes_window
        if window and self.processor == "RoundLevelCompressor":
            fixed = prep.counter.window_count(prep.system, (), prep.tools)
        budget = outcome.numbers.get("budget")
        scale = budget if isinstance(budget, int) else 0
        scale = max(scale, outcome.total_tokens, outcome.threshold * 5 // 4, 1)
        return Gauge(
            fixed=fixed,
            parts=tuple((r.name, r.tokens or 0) for r in regions),
            total=outcome.total_tokens,
            threshold=outcome.threshold,
            minimum=outcome.min_target_tokens or 0,
            scale=scale,
            note=f"{self.processor}: absolute token threshold"
            if budget is None
            else f"{self.processor}: threshold from the compression model's budget {budget}",
        )

    def _started(self, prep: StandardPrepared, model: str | None) -> dict[str, Any]:
        key = ("started", model)
        if key not in prep.cache:
            prep.cache[key] = started_state(prep, model)
        return dict(prep.cache[key])

    def _message_tokens(self, prep: StandardPrepared) -> tuple[int, ...]:
        key = ("message_tokens",)
        if key not in prep.cache:
            counter = prep.counter
            if counter.kind == "none":
                prep.cache[key] = tuple(est3(m.content) for m in prep.messages)
            else:
                prep.cache[key] = tuple(counter.piece(m) for m in prep.messages)
        return tuple(prep.cache[key])

    def _counting_note(self, prep: StandardPrepared) -> str:
        parts = [prep.choice.note, f"counter: {prep.counter.class_name}"]
        if not prep.counter.exact:
            parts.append(
                prep.counting_note
                or "cl100k is not available here: each piece counted as characters/4"
            )
        return "; ".join(parts)

    def _context_checks(self, prep: StandardPrepared) -> list[Check]:
        hook_words = (
            f"add hook: {len(prep.stored)} stored + {len(prep.new)} incoming message(s)"
            if prep.hook == ADD
            else "get-window hook: the whole stored context, with system messages and tools"
        )
        if prep.hook_assumed:
            hook_words += " (no hook recorded: assumed"
            hook_words += ", the last message being added)" if prep.hook == ADD else ")"
        release_status: Literal["info", "fail"] = "info"
        release_words = prep.choice.note
        if prep.choice.release not in self.releases:
            release_status = "fail"
            release_words += f"; {self.processor} exists only in {', '.join(self.releases)}"
        return [
            Check("release", "openJiuwen release", release_status, release_words),
            Check(
                "counter",
                "token counter",
                "info",
                f"{prep.counter.class_name} (the counter create_context gives this context in "
                f"{prep.choice.release})",
            ),
            Check("hook", "hook", "info", hook_words),
        ]

    def _context_findings(self, prep: StandardPrepared) -> list[Finding]:
        out: list[Finding] = []
        _, ignored = self._config(prep.snapshot)
        if ignored:
            out.append(
                Finding(
                    "ignored_config_keys",
                    "warning",
                    f"{self.processor}'s config class has no field {', '.join(sorted(ignored))}: "
                    "openJiuwen drops these keys silently (pydantic extra='ignore')",
                    {"keys": sorted(ignored)},
                )
            )
        if prep.choice.release != "0.1.16" and self.processor in _FORKED_NAMES:
            out.append(
                Finding(
                    "forked_name",
                    "info",
                    f"from 0.1.17 the harness activates the forked family, and the name "
                    f"{self.processor} then means the forked class; this is the standard one",
                )
            )
        if not prep.counter.exact:
            out.append(
                Finding(
                    "inexact_counting",
                    "warning",
                    "cl100k is not available: token counts are character estimates",
                )
            )
        return out

    # --- what-if ---------------------------------------------------------------------------

    def _upper_hint(self, prep: StandardPrepared) -> int:
        key = ("upper_hint",)
        if key not in prep.cache:
            tokens = sum(self._message_tokens(prep)) + 3
            prep.cache[key] = max(2 * tokens + 2 * len(prep.messages) + 16, 64)
        return int(prep.cache[key])

    def flips(self, prepared: Prepared, settings: Settings) -> Sequence[Flip]:
        """The nearest single change of each own parameter that flips the trigger."""
        prep = self._prep(prepared)
        base = self.decide(prep, settings)
        out: list[Flip] = []
        for name in self.sweep_params():

            def hit_of(candidate: Settings) -> bool:
                return self.outcome(prep, candidate).hit

            found = nearest_flip(settings, name, hit_of, self._upper_hint(prep))
            if found is None:
                continue
            value, changed = found
            decision = self.decide(prep, changed)
            words = decision.verdict.lower()
            sentence = (
                f"{name} {getattr(settings, name)} -> {value}: {words} "
                f"({decision.reason}; now {base.verdict.lower()})"
            )
            out.append(Flip(name, getattr(settings, name), value, changed, decision, sentence))
        return out

    def sweep_params(self) -> tuple[str, ...]:
        """Numeric and yes/no settings of this processor."""
        return sweepable(self.settings_model)

    def sweep(
        self, prepared: Prepared, settings: Settings, param: str, values: Sequence[Any] | None
    ) -> Sequence[SweepPoint]:
        """The decision at each value of `param` (None: a range around the current value)."""
        prep = self._prep(prepared)
        if param not in self.sweep_params():
            raise ConfigError("param", param, "one of " + ", ".join(self.sweep_params()))
        chosen = (
            list(values)
            if values is not None
            else sweep_values(settings, param, self._upper_hint(prep))
        )
        pairs = decisions_at(
            settings, param, chosen, lambda s: self.decide(prep, s), skip_invalid=values is None
        )
        return [SweepPoint(value, decision) for value, decision in pairs]


def _with_tokens(prep: StandardPrepared, regions: Sequence[RegionRange]) -> tuple[RegionRange, ...]:
    """Each region with its tokens, counted as the processor counts a list of messages."""
    messages = prep.messages
    return tuple(
        dataclasses.replace(r, tokens=prep.counter.util_count(messages[r.start : r.end]))
        for r in regions
    )


def _summary(prep: StandardPrepared, outcome: Outcome) -> str:
    """One line: release, counter, and the compared numbers."""
    words = f"openJiuwen {prep.choice.release} rules, {prep.counter.class_name}"
    if outcome.total_tokens is not None and outcome.threshold is not None:
        words += f"; {outcome.total_tokens} against {outcome.threshold}"
    return words


def _span(regions: Sequence[RegionRange]) -> dict[str, int]:
    first_change = min((r.start for r in regions if r.name in _COMPRESS_REGIONS), default=None)
    prefix = compress = tail = 0
    for region in regions:
        if region.name in _COMPRESS_REGIONS:
            compress += region.size
        elif region.name == "tail":
            tail += region.size
        elif first_change is None or region.start < first_change:
            prefix += region.size
    return {
        "preserved_prefix": prefix,
        "messages_to_compress": compress,
        "protected_tail": tail,
    }


class MessageSummaryOffloaderStrategy(StandardStrategy):
    """MessageSummaryOffloader (LLM summary of each large incoming message)."""

    key = "standard.message_summary_offloader"
    processor = "MessageSummaryOffloader"
    title = "Standard MessageSummaryOffloader: summarise large incoming messages"
    settings_model = models.MessageSummaryOffloaderSettings
    evaluator = offloaders.evaluate_mso
    llm_call = "one summary call per qualifying message (JSON summary + offload explanation)"


class MessageOffloaderStrategy(StandardStrategy):
    """MessageOffloader (trims long messages, no model)."""

    key = "standard.message_offloader"
    processor = "MessageOffloader"
    title = "Standard MessageOffloader: trim long messages past a count or token threshold"
    settings_model = models.MessageOffloaderSettings
    evaluator = offloaders.evaluate_message_offloader
    token_gauge = True


class ToolResultBudgetStrategy(StandardStrategy):
    """ToolResultBudgetProcessor (per-round tool-result budget)."""

    key = "standard.tool_result_budget"
    processor = "ToolResultBudgetProcessor"
    title = "Standard ToolResultBudgetProcessor: offload tool results over a per-round budget"
    settings_model = models.ToolResultBudgetSettings
    evaluator = offloaders.evaluate_tool_result_budget


class ToolResultWindowStrategy(StandardStrategy):
    """ToolResultWindowProcessor (keep the newest k results of some tools)."""

    key = "standard.tool_result_window"
    processor = "ToolResultWindowProcessor"
    title = "Standard ToolResultWindowProcessor: offload older results of chosen tools"
    settings_model = models.ToolResultWindowSettings
    evaluator = offloaders.evaluate_tool_result_window


class DialogueStrategy(StandardStrategy):
    """DialogueCompressor (summarise earlier completed rounds)."""

    key = "standard.dialogue"
    processor = "DialogueCompressor"
    title = "Standard DialogueCompressor: summarise earlier rounds past an absolute token count"
    settings_model = models.DialogueSettings
    evaluator = compressors.evaluate_dialogue
    token_gauge = True
    llm_call = "one call: the context with [Compression Targets] blocks, JSON blocks expected"


class CurrentRoundStrategy(StandardStrategy):
    """CurrentRoundCompressor (summarise the current round's tool work)."""

    key = "standard.current_round"
    processor = "CurrentRoundCompressor"
    title = "Standard CurrentRoundCompressor: summarise the current round past a token count"
    settings_model = models.CurrentRoundSettings
    evaluator = compressors.evaluate_current_round
    token_gauge = True
    llm_call = "one call for the span, one more when a run of memory blocks is merged"


class RoundLevelStrategy(StandardStrategy):
    """RoundLevelCompressor (phased round summaries down to a target)."""

    key = "standard.round_level"
    processor = "RoundLevelCompressor"
    title = "Standard RoundLevelCompressor: phased compression down to target_total_tokens"
    settings_model = models.RoundLevelSettings
    evaluator = round_level.evaluate_round_level
    token_gauge = True
    llm_call = (
        "one call per phase (first pass, repeated merges, two aggressive passes) while over "
        "target, then hard truncation without the model"
    )


class FullCompactStrategy(StandardStrategy):
    """FullCompactProcessor (one summary of the whole conversation)."""

    key = "standard.full_compact"
    processor = "FullCompactProcessor"
    title = "Standard FullCompactProcessor: compact everything but the newest messages"
    settings_model = models.FullCompactSettings
    evaluator = compactors.evaluate_full_compact
    token_gauge = True
    llm_call = "one summary call when a model is configured, else a built-in fallback summary"


class MicroCompactStrategy(StandardStrategy):
    """MicroCompactProcessor (clears old results of chatty tools)."""

    key = "standard.micro_compact"
    processor = "MicroCompactProcessor"
    title = "Standard MicroCompactProcessor: clear old results of search and read tools"
    settings_model = models.MicroCompactSettings
    evaluator = compactors.evaluate_micro_compact


class ReasoningToolLoopStrategy(StandardStrategy):
    """ReasoningToolLoopCompactProcessor (0.1.16: folds repeated reasoning/tool loops)."""

    key = "standard.reasoning_tool_loop"
    processor = "ReasoningToolLoopCompactProcessor"
    title = "Standard ReasoningToolLoopCompactProcessor (0.1.16): fold repeated tool loops"
    settings_model = models.ReasoningToolLoopSettings
    evaluator = compactors.evaluate_reasoning_loop
    releases = ("0.1.16",)


MESSAGE_SUMMARY_OFFLOADER = MessageSummaryOffloaderStrategy()
MESSAGE_OFFLOADER = MessageOffloaderStrategy()
TOOL_RESULT_BUDGET = ToolResultBudgetStrategy()
TOOL_RESULT_WINDOW = ToolResultWindowStrategy()
DIALOGUE = DialogueStrategy()
CURRENT_ROUND = CurrentRoundStrategy()
ROUND_LEVEL = RoundLevelStrategy()
FULL_COMPACT = FullCompactStrategy()
MICRO_COMPACT = MicroCompactStrategy()
REASONING_TOOL_LOOP = ReasoningToolLoopStrategy()

#: The lines for `inspector.core.strategy.registry.STRATEGIES`, in jiuwenswarm's chain order.
STRATEGY_LINES: tuple[str, ...] = tuple(
    f"inspector.core.standard.strategy:{name}"
    for name in (
        "MESSAGE_SUMMARY_OFFLOADER",
        "REASONING_TOOL_LOOP",
        "DIALOGUE",
        "CURRENT_ROUND",
        "ROUND_LEVEL",
        "MESSAGE_OFFLOADER",
        "TOOL_RESULT_BUDGET",
        "TOOL_RESULT_WINDOW",
        "MICRO_COMPACT",
        "FULL_COMPACT",
    )
)

ALL: tuple[StandardStrategy, ...] = (
    MESSAGE_SUMMARY_OFFLOADER,
    REASONING_TOOL_LOOP,
    DIALOGUE,
    CURRENT_ROUND,
    ROUND_LEVEL,
    MESSAGE_OFFLOADER,
    TOOL_RESULT_BUDGET,
    TOOL_RESULT_WINDOW,
    MICRO_COMPACT,
    FULL_COMPACT,
)


def for_processor(name: str) -> StandardStrategy:
    """The standard strategy for an openJiuwen class name or key."""
    for strategy in ALL:
        if name in (strategy.processor, strategy.key):
            return strategy
    raise ConfigError("processor", name, "one of " + ", ".join(s.processor for s in ALL))
