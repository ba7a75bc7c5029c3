"""Checks and findings: the two kinds of explanation every strategy's decision carries.

A check is one step of a decision (its status, numbers and one sentence); a finding is a
pitfall or fact worth knowing. Must not import anything outside the standard library and
`inspector.core`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

CheckStatus = Literal["pass", "fail", "info", "skip"]
Severity = Literal["info", "warning"]


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
    """A pitfall or fact worth knowing about this context and tuning."""

    key: str
    severity: Severity
    sentence: str
    numbers: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON form for `why --json`."""
        return {
            "key": self.key,
            "severity": self.severity,
            "sentence": self.sentence,
            "numbers": dict(self.numbers),
        }
