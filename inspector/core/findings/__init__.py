"""Diagnosis that names what went wrong: findings for the pitfalls real compactions hit.

Pure functions over a context, its decision and, where known, the dump, debug run or
re-run (`FindingInput`); each returns `Finding`s with a severity (info / warning /
problem), a stable kind, one sentence naming the facts and the change that avoids it.
`with_findings` adds them to any strategy's `Decision`; `folder_findings` are the ones that
need a whole folder (dump-name collisions). Must not import anything outside the standard
library and `inspector.core`.
"""

from __future__ import annotations

from inspector.core.findings.base import FindingInput, facts_of, predict_reinjected
from inspector.core.findings.decision import folder_findings, input_of_decision, with_findings
from inspector.core.findings.registry import COMPACTION_KINDS, FINDINGS, KINDS, run_findings

__all__ = [
    "COMPACTION_KINDS",
    "FINDINGS",
    "KINDS",
    "FindingInput",
    "facts_of",
    "folder_findings",
    "input_of_decision",
    "predict_reinjected",
    "run_findings",
    "with_findings",
]
