"""Checks and findings: the two kinds of explanation every strategy's decision carries.

A check is one step of a decision (its status, numbers and one sentence); a finding is a
pitfall or fact worth knowing. Must not import anything outside the standard library and
`inspector.core`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

CheckStatus = Literal["pass", "fail", "info", "skip"]
#: info: worth knowing; warning: may do harm; problem: did harm or will (shown first).
Severity = Literal["info", "warning", "problem"]
#: Sort rank of each severity, most serious first.
SEVERITY_RANK: dict[str, int] = {"problem": 0, "warning": 1, "info": 2}


@dataclass(frozen=True, slots=True)
class Check:
    """One step of the trigger decision."""

    key: str
    title: str
    status: CheckStatus
    sentence: str
    numbers: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON form for `why --json`."""
        return {
            "key": self.key,
            "title": self.title,
            "status": self.status,
            "sentence": self.sentence,
            "numbers": dict(self.numbers),
        }


@dataclass(frozen=True, slots=True)
class Finding:
    """A pitfall or fact worth knowing about this context and tuning.

    `key` is the stable snake_case kind (also readable as `kind`); `fix` is the change that
    would avoid it, in words ("" when there is none).
    """

    key: str
    severity: Severity
    sentence: str
    numbers: Mapping[str, Any] = field(default_factory=dict)
    fix: str = ""

    @property
    def kind(self) -> str:
        """The stable snake_case id of the finding (the same as `key`)."""
        return self.key

    def to_dict(self) -> dict[str, Any]:
        """JSON form for `why --json` (`key` kept for old readers, `kind` beside it)."""
        return {
            "key": self.key,
            "kind": self.key,
            "severity": self.severity,
            "sentence": self.sentence,
            "fix": self.fix or None,
            "numbers": dict(self.numbers),
        }


def by_severity(findings: Sequence[Finding]) -> list[Finding]:
    """Findings with problems first, then warnings, then infos (stable within a severity)."""
    return sorted(findings, key=lambda f: SEVERITY_RANK.get(f.severity, 3))
