"""The `why --json` object of the CLI contract, built from any strategy's `Decision`.

The one builder: every strategy's decision prints through it. Must not import anything
outside the standard library, pydantic and `inspector.core`.
"""

from __future__ import annotations

from typing import Any

from inspector.core.artifact import Artifact, Recorded
from inspector.core.strategy.base import Decision, SweepPoint

_CONTRACT_KEYS = (
    "hit",
    "reason",
    "total_tokens",
    "threshold",
    "target_tokens",
    "min_target_tokens",
    "effective_keep",
)


#: The decision fields of a line without a context, in the contract's order.
_NO_DECISION: dict[str, None] = dict.fromkeys((*_CONTRACT_KEYS, "span"))


def why_json(artifact: Artifact, decision: Decision | None) -> dict[str, Any]:
    """One line of `why --json`: the contract's keys (null without a context), then the
    strategy's own numbers."""
    out: dict[str, Any] = {
        "source": artifact.source,
        "id": artifact.id,
        "kind": artifact.kind,
        "processor": decision.processor if decision else artifact.processor,
    }
    if decision is None:  # no context (a debug run alone): the contract's nulls
        out.update(_NO_DECISION)
        out["checks"], out["findings"] = [], []
    else:
        for key in _CONTRACT_KEYS:
            out[key] = getattr(decision, key)
        out["span"] = dict(decision.span)
        out["checks"] = [c.to_dict() for c in decision.checks]
        out["findings"] = [f.to_dict() for f in decision.findings]
    recorded = artifact.recorded
    out["recorded"] = recorded.to_dict() if isinstance(recorded, Recorded) else dict(recorded)
    if decision is not None:
        out["strategy"] = decision.strategy
        out["family"] = decision.family
        out["verdict"] = decision.verdict
        out["settings"] = decision.settings.model_dump()
        out["regions"] = [
            {"name": r.name, "label": r.label, "start": r.start, "end": r.end, "tokens": r.tokens}
            for r in decision.regions
        ]
        for key, value in decision.numbers.items():
            out.setdefault(key, value)
        out["exact_counting"] = decision.exact_counting
    return out


def sweep_point_json(
    artifact: Artifact, param: str, point: SweepPoint, flip: bool
) -> dict[str, Any]:
    """One point of `sweep --json`."""
    decision = point.decision
    out: dict[str, Any] = {
        "source": artifact.source,
        "id": artifact.id,
        "param": param,
        "value": point.value,
        "hit": decision.hit,
        "reason": decision.reason,
        "verdict": decision.verdict,
        "total_tokens": decision.total_tokens,
        "threshold": decision.threshold,
        "target_tokens": decision.numbers.get("span_target_tokens", decision.target_tokens),
        "min_target_tokens": decision.numbers.get("min_target_value", decision.min_target_tokens),
        "span": dict(decision.span),
        "flip": flip,
    }
    for key, value in decision.numbers.items():
        if isinstance(value, str | int | float | bool) or value is None:
            out.setdefault(key, value)
    return out
