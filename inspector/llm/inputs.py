"""What a re-run takes from a loaded artifact: prompt, memory-block wrapper, names.

A dump is re-run with the prompt recorded in it (`compression_request.prompt`, read from
the artifact's raw document or, failing that, from its file) and the wrapper found in its
`context_after` (only while the processor is unchanged: the wrapper belongs to it).
Other sources use the inspector's prompt, or a prompt file the user gives.
`rerun_counting` picks the release profile and counter the way the forked strategies do
(`--openjiuwen` / `--tokens` > what the source records > artifact evidence > newest).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.core.artifact import Artifact
from inspector.core.compaction import (
    DumpIdentity,
    MemoryWrapper,
    parse_memory_wrapper,
    processor_type,
)
from inspector.core.releases import CountingChoice, choose_counting, collect_evidence
from inspector.core.rerun import PromptSource
from inspector.core.snapshot import ContextSnapshot
from inspector.core.tuning import Tuning
from inspector.llm.prompts import builtin_prompt, read_prompt_file


@dataclass(frozen=True, slots=True)
class RerunInputs:
    """Prompt (and where it came from), wrapper (None: the processor's default) and names."""

    prompt: str
    prompt_source: PromptSource
    wrapper: MemoryWrapper | None
    identity: DumpIdentity


def recorded_dump_document(artifact: Artifact) -> dict[str, Any] | None:
    """The raw dump object: `artifact.extra["raw"]` when a source kept it, else the file re-read."""
    raw = artifact.extra.get("raw")
    if isinstance(raw, dict):
        return raw
    try:
        document = json.loads(Path(artifact.source).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return document if isinstance(document, dict) else None


def recorded_prompt(artifact: Artifact) -> str | None:
    """The prompt a dump recorded, or None."""
    if artifact.kind != "dump":
        return None
    document = recorded_dump_document(artifact)
    request = document.get("compression_request") if document else None
    prompt = request.get("prompt") if isinstance(request, dict) else None
    return prompt if isinstance(prompt, str) and prompt else None


def artifact_identity(artifact: Artifact, tuning: Tuning) -> DumpIdentity:
    """Processor class of the tuning, and the session and context ids the artifact carries."""
    extra = artifact.snapshot.extra if artifact.snapshot else {}
    session = artifact.session_id or extra.get("session_id")
    context = artifact.context_id or extra.get("context_id")
    return DumpIdentity(
        processor_type(tuning.processor),
        session if isinstance(session, str) and session else "unknown_session",
        context if isinstance(context, str) and context else "unknown_context",
    )


def rerun_inputs(
    artifact: Artifact,
    tuning: Tuning,
    *,
    prompt_file: str | Path | None = None,
    use_builtin: bool = False,
) -> RerunInputs:
    """Choose prompt and wrapper for re-running `artifact` (OSError if prompt_file is unreadable)."""
    wrapper = None
    if (
        artifact.kind == "dump"
        and artifact.snapshot is not None
        and artifact.snapshot.tuning.processor == tuning.processor
    ):
        wrapper = parse_memory_wrapper(artifact.after or ())
    identity = artifact_identity(artifact, tuning)
    if prompt_file is not None:
        return RerunInputs(read_prompt_file(prompt_file), "file", wrapper, identity)
    recorded = None if use_builtin else recorded_prompt(artifact)
    if recorded is not None:
        return RerunInputs(recorded, "recorded", wrapper, identity)
    return RerunInputs(builtin_prompt(), "builtin", wrapper, identity)


def rerun_counting(
    snapshot: ContextSnapshot,
    tuning: Tuning,
    *,
    release: str | None = None,
    token_mode: str | None = None,
    artifact: Artifact | None = None,
) -> tuple[Tuning, CountingChoice]:
    """The tuning to re-run with (its token mode the chosen counter) and the counting choice.

    `release` / `token_mode` are the user's `--openjiuwen` / `--tokens`; a dump artifact's
    raw document adds its evidence (usage details, record keys). ConfigError for a bad
    release string or token mode.
    """
    evidence = None
    if artifact is not None and artifact.kind == "dump":
        document = recorded_dump_document(artifact)
        if document is not None:
            evidence = collect_evidence([document])
    choice = choose_counting(
        snapshot, release_override=release, mode_override=token_mode, evidence=evidence
    )
    if choice.token_mode != tuning.token_mode:
        tuning = tuning.with_(token_mode=choice.token_mode)
    return tuning, choice
