"""A toy strategy used only by the tests: compress everything but the last N messages once
the context holds more than `max_messages`. It proves a new strategy needs no front-end code:
one module and one registry line."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import Field

from inspector.core.artifact import Artifact
from inspector.core.checks import Check
from inspector.core.snapshot import ContextSnapshot
from inspector.core.strategy.base import (
    Decision,
    Family,
    Flip,
    RegionRange,
    Settings,
    SweepPoint,
)
from inspector.core.tokens import TokenCounter


class KeepLastSettings(Settings):
    """Two knobs with their ranges."""

    max_messages: int = Field(8, gt=0, description="Compress when there are more messages.")
    keep_last: int = Field(3, ge=0, description="Messages never compressed at the end.")


@dataclass
class KeepLastPrepared:
    """Nothing to count: the snapshot is enough."""

    snapshot: ContextSnapshot


class KeepLastStrategy:
    """Compress all but the last `keep_last` messages above `max_messages` messages."""

    key: ClassVar[str] = "keep_last"
    processor: ClassVar[str] = "KeepLastCompressor"
    family: ClassVar[Family] = "forked"
    title: ClassVar[str] = "a toy strategy of the tests"
    settings_model: ClassVar[type[Settings]] = KeepLastSettings
    capabilities: ClassVar[frozenset[str]] = frozenset()

    def recorded_settings(self, snapshot: ContextSnapshot) -> KeepLastSettings:
        return KeepLastSettings.build(
            {k: v for k, v in snapshot.config.items() if k in KeepLastSettings.model_fields}
        )

    def assumed_fields(self, snapshot: ContextSnapshot) -> frozenset[str]:
        return frozenset(set(KeepLastSettings.model_fields) - set(snapshot.config))

    def prepare(
        self,
        snapshot: ContextSnapshot,
        counters: Mapping[str, TokenCounter],
        counting_note: str = "",
    ) -> KeepLastPrepared:
        return KeepLastPrepared(snapshot)

    def counting_key(self, settings: Settings) -> str:
        return ""

    def decide(
        self, prepared: Any, settings: Settings, artifact: Artifact | None = None
    ) -> Decision:
        assert isinstance(settings, KeepLastSettings)
        n = len(prepared.snapshot.messages)
        hit = n > settings.max_messages and n > settings.keep_last
        split = max(n - settings.keep_last, 0) if hit else 0
        regions = (
            RegionRange("compress", 0, split, "compressed"),
            RegionRange("tail", split, n, "kept last"),
        )
        check = Check(
            "count",
            "more messages than the limit",
            "pass" if n > settings.max_messages else "fail",
            f"{n} messages against max_messages {settings.max_messages}",
            {"messages": n},
        )
        return Decision(
            strategy=self.key,
            processor=self.processor,
            family=self.family,
            settings=settings,
            hit=hit,
            reason="over_limit" if hit else "under_limit",
            verdict="COMPRESSES" if hit else "DOES NOT COMPRESS",
            total_tokens=n,
            threshold=settings.max_messages + 1,
            target_tokens=None,
            min_target_tokens=None,
            effective_keep=settings.keep_last,
            regions=regions,
            span={
                "preserved_prefix": 0,
                "messages_to_compress": split,
                "protected_tail": n - split,
            },
            checks=(check,),
            findings=(),
            message_tokens=tuple(1 for _ in range(n)),
        )

    def flips(self, prepared: Any, settings: Settings) -> Sequence[Flip]:
        assert isinstance(settings, KeepLastSettings)
        n = len(prepared.snapshot.messages)
        value = n - 1 if n > settings.max_messages else max(n, 2) - 1
        if value < 1 or value == settings.max_messages:
            return ()
        changed = settings.with_(max_messages=value)
        decision = self.decide(prepared, changed)
        sentence = f"max_messages {settings.max_messages} -> {value}: {decision.verdict.lower()}"
        return (Flip("max_messages", settings.max_messages, value, changed, decision, sentence),)

    def sweep_params(self) -> tuple[str, ...]:
        return ("max_messages", "keep_last")

    def sweep(
        self, prepared: Any, settings: Settings, param: str, values: Sequence[Any] | None
    ) -> Sequence[SweepPoint]:
        chosen = list(values) if values is not None else list(range(1, 16))
        return [SweepPoint(v, self.decide(prepared, settings.with_(**{param: v}))) for v in chosen]


KEEP_LAST = KeepLastStrategy()
