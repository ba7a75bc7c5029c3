"""Every finding function, once, with the kinds it raises and the families it applies to.

`run_findings` runs them in order on one `FindingInput`; a new finding is one line here.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

from inspector.core.checks import Finding, by_severity
from inspector.core.findings.base import FindingInput, FindingSpec
from inspector.core.findings.dump_names import dump_name_loses_session
from inspector.core.findings.files import (
    earlier_restore_dropped,
    reinjected_path_gone,
    stale_reinjected_file,
)
from inspector.core.findings.loss import summary_lost_active
from inspector.core.findings.request import request_without_tool_results
from inspector.core.findings.savings import compaction_savings
from inspector.core.findings.turns import list_content_user_turn
from inspector.core.findings.usage import usage_baseline_hides_context, window_mismatch

_FORKED = frozenset({"forked"})

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec(
        "stale_reinjected_file", stale_reinjected_file, ("stale_reinjected_file",), _FORKED
    ),
    FindingSpec("reinjected_path_gone", reinjected_path_gone, ("reinjected_path_gone",), _FORKED),
    FindingSpec(
        "request_without_tool_results",
        request_without_tool_results,
        ("request_without_tool_results",),
        _FORKED,
    ),
    FindingSpec(
        "earlier_restore_dropped", earlier_restore_dropped, ("earlier_restore_dropped",), _FORKED
    ),
    FindingSpec(
        "usage_baseline_hides_context",
        usage_baseline_hides_context,
        ("usage_baseline_hides_context",),
    ),
    FindingSpec(
        "list_content_user_turn", list_content_user_turn, ("list_content_user_turn",), _FORKED
    ),
    FindingSpec(
        "dump_name_loses_session",
        dump_name_loses_session,
        ("dump_name_session_changed", "dump_name_session_cut"),
    ),
    FindingSpec(
        "compaction_savings",
        compaction_savings,
        (
            "compaction_grows_context",
            "reinjection_cancels_saving",
            "compaction_costs_more_than_it_saves",
        ),
    ),
    FindingSpec("window_mismatch", window_mismatch, ("window_mismatch",)),
    FindingSpec("summary_lost_active", summary_lost_active, ("summary_lost_active",), _FORKED),
)

#: Every kind a registered function can raise, plus the folder-level collision.
KINDS: tuple[str, ...] = (
    *(kind for spec in FINDINGS for kind in spec.kinds),
    "dump_name_collision",
)


#: Kinds about what an applied compaction did (shown beside the before/after view).
COMPACTION_KINDS: frozenset[str] = frozenset(
    {
        "stale_reinjected_file",
        "reinjected_path_gone",
        "request_without_tool_results",
        "earlier_restore_dropped",
        "compaction_grows_context",
        "reinjection_cancels_saving",
        "compaction_costs_more_than_it_saves",
        "summary_lost_active",
        "orphan_tool_result_after",
        "reinjection_share",
    }
)


def run_findings(inp: FindingInput) -> list[Finding]:
    """Every registered finding that applies to the input's family, problems first.

    A finding that cannot be evaluated on this input (a recorded number that contradicts the
    context, say) becomes a visible `finding_not_evaluated` warning naming it and the error,
    never a traceback that would lose the rest of the report."""
    found: list[Finding] = []
    for spec in FINDINGS:
        if inp.family not in spec.families:
            continue
        try:
            found.extend(spec.function(inp))
        except (IndexError, KeyError, TypeError, ValueError, ArithmeticError) as error:
            name = getattr(spec.function, "__name__", "a finding")
            found.append(
                Finding(
                    "finding_not_evaluated",
                    "warning",
                    f"{name} could not be evaluated on this input "
                    f"({type(error).__name__}: {error}); the other findings stand",
                    {"finding": name, "error": type(error).__name__},
                )
            )
    return by_severity(found)
