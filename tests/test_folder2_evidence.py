"""A dump's release evidence set when its snapshot is made (`dump_artifact(evidence=...)`,
as the loader does) equals `evidence_for` applied to the artifact made without it, for
every dump of the samples and tests/data, with and without neighbours' facts and an
`llm_request.jsonl` nearby; and a folder load gives every dump the same artifact as
before that change would have (one rule: `sources.evidence.release_evidence`)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from inspector.core.artifact import Artifact
from inspector.core.tokens import TokenCounter
from inspector.sources.dump import ToolLists, looks_like_dump, parse_dump
from inspector.sources.dump_artifact import dump_artifact
from inspector.sources.evidence import (
    dump_objects,
    evidence_for,
    has_own_facts,
    release_evidence,
    with_evidence,
)

ROOT = Path(__file__).resolve().parent.parent
NEIGHBOUR = {
    "event": "span_built",
    "messages_to_compress": [{"idx": 0, "role": "user", "tokens": 3, "preview": "abcdefghij"}],
}


def _dumps() -> list[Any]:
    found = []
    for root in (ROOT / "sample_dumps", ROOT / "tests" / "data"):
        for path in sorted(root.rglob("*Compressor*.json")):
            try:
                document = json.loads(path.read_text(encoding="utf-8"))
            except (ValueError, UnicodeDecodeError):
                continue
            if isinstance(document, dict) and looks_like_dump(document):
                try:
                    found.append(parse_dump(document, str(path)))
                except Exception:  # a broken dump of the corpus: not what is compared here
                    continue
    return found


def _evidence_fields(artifact: Artifact) -> Any:
    snapshot = artifact.snapshot
    evidence = None if snapshot is None else snapshot.release_evidence
    return None if evidence is None else dataclasses.asdict(evidence)


@pytest.mark.parametrize("llm_log", [False, True])
@pytest.mark.parametrize("neighbours", [[], [NEIGHBOUR]])
def test_evidence_set_when_made_equals_evidence_added_after(
    counters: dict[str, TokenCounter], llm_log: bool, neighbours: list[Any]
) -> None:
    dumps = _dumps()
    assert len(dumps) > 20
    with_facts = 0
    for dump in dumps:
        objects = dump_objects(dump.raw)
        try:
            plain = dump_artifact(dump, None, lambda: counters, [], None, ToolLists())
        except Exception:  # a dump the loader refuses: refused alike either way below
            with pytest.raises(Exception):  # noqa: B017
                dump_artifact(dump, None, lambda: counters, [], None, ToolLists(), None)
            continue
        after = evidence_for(plain, objects, lambda: neighbours, llm_log)
        made = dump_artifact(
            dump,
            None,
            lambda: counters,
            [],
            None,
            ToolLists(),
            lambda contexts, objects=objects: release_evidence(  # type: ignore[misc]
                None, contexts, objects, lambda: neighbours, llm_log
            ),
        )
        # what `evidence_for` says it is, spelled with the other two functions
        spelled = with_evidence(
            plain, objects if has_own_facts(plain, objects) else neighbours, llm_log
        )
        assert made == after == spelled
        assert _evidence_fields(made) == _evidence_fields(after) == _evidence_fields(spelled)
        with_facts += _evidence_fields(made) is not None
    assert with_facts > 0
