"""Our engine's decision fields for a case, and the comparison with what a release decided.

The counter is never read from the case: our profile predicts it from the case's
`engine_config` (that prediction is itself a compared field, `counter`), then our engine
counts with it. Imports `inspector` only; never openJiuwen.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from inspector.core.engine import PricedContext
from inspector.core.releases import ReleaseProfile
from inspector.core.snapshot import snapshot_from_dict
from inspector.core.tokens import EncodeLen, TokenMode

#: The library's counter class for each of our token modes.
COUNTER_CLASS: dict[TokenMode, str | None] = {
    "tiktoken_cl100k": "TiktokenCounter",
    "string_length": "StringLengthCounter",
    "len_div_4": None,
}


def observed(
    case: dict[str, Any], profile: ReleaseProfile, encode_len: EncodeLen | None
) -> dict[str, Any]:
    """Every decision field as our engine computes it under `profile`."""
    mode = profile.default_token_mode(case.get("engine_config"))
    snapshot = snapshot_from_dict({**case, "token_mode": mode})
    priced = PricedContext.from_snapshot(snapshot, profile.counter(mode, encode_len))
    ev = priced.evaluate(snapshot.tuning)
    return {
        "hit": ev.hit,
        "reason": ev.reason,
        "total_tokens": ev.total_tokens,
        "threshold": ev.threshold,
        "target_tokens": ev.target_tokens,
        "min_target_tokens": ev.min_target_tokens,
        "effective_keep": ev.effective_keep,
        "span": ev.span.counts,
        "per_message_tokens": list(priced.per_message_tokens),
        "per_system_message_tokens": priced.per_system_message_tokens,
        "last_real_user_index": priced.last_real_user_index,
        "usage_tokens_with_tail": priced.usage.value,
        "messages_tokens": priced.messages_tokens,
        "tools_tokens": priced.tools_tokens,
        "span_target_tokens": ev.span_target_tokens,
        "context_max": snapshot.tuning.context_max,
        "counter": COUNTER_CLASS[mode],
    }


def mismatches(
    case: dict[str, Any], profile: ReleaseProfile, encode_len: EncodeLen | None
) -> dict[str, Any]:
    """{field: (ours, the release's)} for every expected field that differs."""
    ours = observed(case, profile, encode_len)
    expected = case["expected"]
    return {k: (ours.get(k), v) for k, v in expected.items() if ours.get(k) != v}


@dataclass
class Agreement:
    """How many cases of one release agree on every field, and which fields differed."""

    release: str
    profile: str
    cases: int = 0
    agreeing: int = 0
    fields: Counter[str] = field(default_factory=Counter)
    examples: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    @property
    def percent(self) -> float:
        """Share of cases agreeing on all fields, in percent."""
        return 100.0 * self.agreeing / self.cases if self.cases else 0.0

    def line(self) -> str:
        """One report line."""
        text = f"{self.release:>14}  profile {self.profile:<7} {self.agreeing:>5}/{self.cases:<5} agree ({self.percent:5.1f} %)"
        if self.fields:
            text += "  differing: " + ", ".join(f"{k} {n}" for k, n in self.fields.most_common())
        return text


def agreement(
    release: str,
    cases: Iterable[dict[str, Any]],
    profile: ReleaseProfile,
    encode_len: EncodeLen | None,
) -> Agreement:
    """Compare every case with our engine under `profile`."""
    result = Agreement(release, profile.name)
    for case in cases:
        result.cases += 1
        diff = mismatches(case, profile, encode_len)
        if not diff:
            result.agreeing += 1
            continue
        result.fields.update(diff.keys())
        if len(result.examples) < 5:
            result.examples.append((case["id"], diff))
    return result
