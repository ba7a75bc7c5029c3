"""`inspector stats SOURCE ... [--json]`: what compressed, how well, and why the rest did not.

Counts per processor and outcome, the reduction-ratio distribution, tokens saved, reasons
of non-compression, retries by error type, the biggest and least effective compressions,
and the findings by kind (each context is rebuilt and diagnosed under its recorded
settings; `--no-findings` keeps the fast header-level load and leaves them out). The
findings are imported only when an artifact may have some (streamed logs have none).
`--json` prints JSON Lines: one line per unreadable input (with `error`), then one stats
object (`"kind": "stats"`). Never imports Textual.
"""

from __future__ import annotations

import argparse
from typing import Any

from inspector.cli.common import add_jobs_argument, check_jobs, print_json_line
from inspector.cli.run_support import ReportRun
from inspector.core.artifact import Artifact
from inspector.core.checks import Finding
from inspector.core.stats import DebugRunTally, compute_stats, count_findings
from inspector.sources.debugstream import streamable, tally_debug_runs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Sources and --json."""
    parser.description = "Statistics over dumps and debug logs."
    parser.add_argument("sources", nargs="*", metavar="SOURCE", help="dumps, logs, folders")
    parser.add_argument("--json", action="store_true", help="JSON Lines instead of a report")
    parser.add_argument(
        "--no-findings",
        action="store_true",
        help="skip the findings (no context is rebuilt or counted: much faster on big folders)",
    )
    add_jobs_argument(parser, "finding", memory=True)


def _found(report: ReportRun, artifact: Artifact) -> list[Finding]:
    """An artifact's findings: its decision's, else those of what it recorded alone. A debug
    run without a context (nothing but its records) gives none, so none are looked for
    (`tests/test_logs_stats_fast.py` holds `run_findings` to that)."""
    if artifact.snapshot is None and artifact.kind == "debug" and artifact.after is None:
        return []
    from inspector.core.findings import FindingInput, run_findings

    evaluated = report.evaluate(artifact)
    if evaluated.decision is not None:
        return list(evaluated.decision.findings)
    return run_findings(FindingInput(snapshot=None, artifact=artifact))


def _findings(artifacts: list[Artifact], found: list[list[Finding]]) -> dict[str, Any]:
    """Findings counted by kind: each artifact's (`found`, in order), plus the folder-level ones."""
    from inspector.core.findings import folder_findings

    per_artifact = dict(enumerate(found))
    positions = {id(a): i for i, a in enumerate(artifacts)}
    for artifact, finding in folder_findings(artifacts):
        per_artifact[positions[id(artifact)]].append(finding)
    return count_findings(per_artifact.values())


def _streamed(report: ReportRun) -> dict[str, Any] | None:
    """Stats and findings in one pass over the runs of streamed debug logs (None when the
    sources are not streamed: `debugstream.streamable`), counted from each run's records
    (`DebugRunTally.add_alone`, no run made); each load error reported as there. A
    streamed run has no context, so no finding (`_found`), and logs alone hold no dump, so
    no folder finding."""
    logs = streamable(report.sources, report.stream_min_bytes)
    if logs is None:
        return None
    tally = DebugRunTally()
    for log in logs:
        for error in tally_debug_runs(log, tally.add_alone):
            report.report_error(error)
    stats = tally.stats()
    stats.update(count_findings([[]] * tally.count))
    return stats


def _header_stats(report: ReportRun) -> dict[str, Any]:
    """`compute_stats` over the header-level load, the cyclic collector off throughout
    (`pool.gc_paused`; imported here, with the loader, not at `stats` start-up).

    The load keeps what it reads until its results are made, and makes 100,000 small
    objects a second: each young collection would walk them, and the listing of a
    50,000-file folder alone set off three full ones (0.1 s in all). A short process:
    the few cycles it leaves wait for the collector to run again, at the latest at exit."""
    from inspector.sources.pool import gc_paused

    with gc_paused():
        return compute_stats(report.artifacts())


def run(args: argparse.Namespace) -> int:
    """Load every source, compute the statistics, print them."""
    check_jobs(args, "stats")
    with_findings = not getattr(args, "no_findings", False)
    # without findings, stats reads only what each artifact recorded: nothing is rebuilt
    report = ReportRun(args, contexts=with_findings)
    streamed = _streamed(report) if with_findings else None
    if streamed is not None:
        stats = streamed
    elif with_findings:
        # each context decided on `--jobs` processes, once every file is loaded
        pairs = list(report.spread(lambda artifact: _found(report, artifact)))
        artifacts = [artifact for artifact, _ in pairs]
        stats = compute_stats(artifacts)
        stats.update(_findings(artifacts, [found for _, found in pairs]))
    else:
        # one pass over the artifacts as they load (a streamed debug log is never held whole)
        stats = _header_stats(report)
    # the errors are counted during the pass over the artifacts
    stats["errors"] = report.errors
    if report.json:
        print_json_line({"kind": "stats", "sources": report.sources, **stats})
    else:
        from inspector.render.plain import TerminalSafeConsole
        from inspector.render.stats_report import stats_report

        TerminalSafeConsole().print(stats_report(stats, report.sources))
    return report.exit_status
