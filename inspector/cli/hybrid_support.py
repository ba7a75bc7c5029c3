"""`--processor hybrid` in `why` and `sweep`: the HybridCompressor replayed instead of openJiuwen's decision.

Each command calls one function per artifact; it returns False when the effective tuning
does not select hybrid, so the command goes on with openJiuwen's path. With hybrid,
`--keep-recent N` means N turns (`preserve_recent_turns`), `--context-max` the engine
budget and `--trigger-ratio` the compression threshold.
"""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from inspector.cli.common import UsageError, print_json_line
from inspector.cli.run_support import ReportRun
from inspector.core.artifact import Artifact
from inspector.core.errors import ConfigError
from inspector.core.hybrid import (
    HYBRID_SWEEP_FIELDS,
    hybrid_decision,
    hybrid_flip_points,
    hybrid_sweep_point_json,
    hybrid_why_json,
    sweep_hybrid,
)
from inspector.core.hybrid_config import HybridConfig, config_from_tuning
from inspector.core.tuning import Tuning, apply_overrides
from inspector.render.hybrid_report import hybrid_report, hybrid_sweep_table


def hybrid_tuning(report: ReportRun, artifact: Artifact) -> Tuning | None:
    """The effective tuning when it selects hybrid, else None."""
    if artifact.snapshot is None:
        return None
    tuning = apply_overrides(artifact.snapshot.tuning, report.overrides)
    return tuning if tuning.processor == "hybrid" else None


def hybrid_config(report: ReportRun, artifact: Artifact, tuning: Tuning) -> HybridConfig:
    """The pipeline's config: keep_recent counts turns when the user or the source set it for hybrid."""
    snapshot = artifact.snapshot
    assert snapshot is not None
    given = "keep_recent" in report.overrides or (
        snapshot.tuning.processor == "hybrid" and "keep_recent" in snapshot.recorded_fields
    )
    return config_from_tuning(tuning, keep_recent_is_turns=True if given else None)


def why_hybrid(report: ReportRun, artifact: Artifact, console: Console) -> bool:
    """Print the hybrid decision for one artifact; False when hybrid is not selected."""
    tuning = hybrid_tuning(report, artifact)
    if tuning is None or artifact.snapshot is None:
        return False
    config = hybrid_config(report, artifact, tuning)
    result = hybrid_decision(artifact.snapshot, config, report.counters[tuning.token_mode])
    if report.json:
        print_json_line(hybrid_why_json(artifact, result, tuning))
    else:
        console.print(hybrid_report(result, f"{artifact.source}: {artifact.id}"))
        console.print()
    return True


def sweep_hybrid_cli(
    args: argparse.Namespace,
    report: ReportRun,
    artifact: Artifact,
    values: list[Any] | None,
    console: Console,
) -> bool:
    """Sweep one parameter through the hybrid pipeline; False when hybrid is not selected."""
    tuning = hybrid_tuning(report, artifact)
    if tuning is None or artifact.snapshot is None:
        return False
    if args.param not in HYBRID_SWEEP_FIELDS:
        raise UsageError(
            f"--param {args.param} does not apply to hybrid; use one of "
            + ", ".join(p for p in HYBRID_SWEEP_FIELDS if p != "max_tool_output_length")
        )
    config = hybrid_config(report, artifact, tuning)
    counter = report.counters[tuning.token_mode]
    try:
        points = sweep_hybrid(artifact.snapshot, config, args.param, values, counter)
    except ConfigError as error:
        raise UsageError(f"--values: {error}") from None
    flips = set(hybrid_flip_points(points))
    if report.json:
        for index, (value, result) in enumerate(points):
            print_json_line(
                hybrid_sweep_point_json(artifact, args.param, value, result, index in flips)
            )
        return True
    current = getattr(config, HYBRID_SWEEP_FIELDS[args.param])
    console.print(hybrid_sweep_table(artifact.id, args.param, points, flips, current))
    return True
