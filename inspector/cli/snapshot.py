"""`inspector snapshot SOURCE ... [TUNING]`: JSON Lines, one context snapshot per context found.

For a dump this is the rebuilt pre-compression context. Tuning flags are written into the
snapshot. Secrets found in the data are masked (`core.redact`; `--no-mask` keeps them). When the source names them, the
snapshot also carries `session_id`, `context_id` and `timestamp` (the time of the
`threshold_check` it was evaluated at: a debug run's check, a dump's linked check, or a
loaded snapshot's own), so loading it next to the debug log links it to that evaluation.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from inspector.cli.common import add_tuning_arguments, apply_overrides, print_json_line
from inspector.cli.report import add_pin_argument, pins_of
from inspector.cli.run_support import ReportRun
from inspector.core.artifact import Artifact
from inspector.core.pins import recorded_pins
from inspector.core.releases.counting import choose_counting
from inspector.core.snapshot import ContextSnapshot


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Sources and tuning flags."""
    parser.description = "Export each context found as a snapshot (JSON Lines)."
    parser.add_argument("sources", nargs="*", metavar="SOURCE")
    add_pin_argument(parser)
    add_tuning_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Print one snapshot JSON object per context; errors as JSON lines with `error`."""
    args.json = True
    report = ReportRun(args)
    pins = pins_of(args)
    for artifact in report.artifacts():
        if artifact.snapshot is None:
            continue
        record = _exported(artifact.snapshot, report.overrides)
        kept = recorded_pins(artifact.snapshot) if pins is None else pins
        if kept:
            record["pins"] = sorted(i for i in kept if i < len(artifact.snapshot.messages))
        record.update(_evaluation_keys(artifact))
        record["source"] = artifact.source
        record["kind"] = artifact.kind
        print_json_line(record)  # masked there (--no-mask: as it is)
    return report.exit_status


def _exported(snapshot: ContextSnapshot, overrides: dict[str, Any]) -> dict[str, Any]:
    """The snapshot as our interchange format with the user's tuning on top: the family,
    config and engine config kept, the release written when the source told it (or the user
    set it), and the counter only when recorded or set (an assumed one would read back as
    recorded)."""
    tuned = dataclasses.replace(snapshot, tuning=apply_overrides(snapshot.tuning, overrides))
    record: dict[str, Any] = tuned.to_dict()
    if "token_mode" not in snapshot.recorded_fields and "token_mode" not in overrides:
        record.pop("token_mode", None)
    choice = choose_counting(
        snapshot,
        release_override=overrides.get("openjiuwen_version"),
        evidence=snapshot.release_evidence,
    )
    if choice.detection.known:
        record["openjiuwen_version"] = choice.detection.release or choice.detection.profile.name
    return record


def _evaluation_keys(artifact: Artifact) -> dict[str, Any]:
    """`session_id`, `context_id` and the check's `timestamp`, where the artifact knows them."""
    keys: dict[str, Any] = {}
    if artifact.session_id is not None:
        keys["session_id"] = artifact.session_id
    if artifact.context_id is not None:
        keys["context_id"] = artifact.context_id
    when: Any = artifact.timestamp
    if artifact.kind == "dump":
        # a dump's own time is when it was written; the evaluation is its linked check
        check = artifact.recorded.get("threshold_check")
        when = check.get("timestamp") if isinstance(check, dict) else None
    if isinstance(when, int | float) and not isinstance(when, bool):
        keys["timestamp"] = when
    return keys
