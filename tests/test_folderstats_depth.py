"""A dump read the short way (`classify._dump_the_short_way`, one read and one parse, no
classification chain) refuses nesting past MAX_DEPTH as the long way does, whatever
decides which dumps are walked for it; nesting within the limit loads. Behaviour only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.core.artifact import Artifact, LoadError
from inspector.sources.jsonio import MAX_DEPTH
from inspector.sources.loader import load_paths

SAMPLES = Path(__file__).resolve().parents[1] / "sample_dumps"


def _dump_with(tmp_path: Path, depth: int, *, explicit: bool) -> list[object]:
    """The full load of a sample dump carrying an extra key nested `depth` levels deep."""
    source = sorted(SAMPLES.rglob("*Compressor_*.json"))[0]
    text = source.read_text()
    deep = "[" * (depth - 1) + "]" * (depth - 1)  # under the dump's own object: depth levels
    document = text.rstrip()[:-1].rstrip() + f', "deep": {deep}}}'
    json.loads(document)
    target = tmp_path / source.name
    target.write_text(document)
    return list(load_paths([target if explicit else tmp_path]))


@pytest.mark.parametrize("explicit", [False, True], ids=["in-a-folder", "named"])
@pytest.mark.parametrize("depth", [MAX_DEPTH - 10, MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 40])
def test_a_dump_nested_past_the_limit_is_refused(
    tmp_path: Path, depth: int, explicit: bool
) -> None:
    results = _dump_with(tmp_path, depth, explicit=explicit)
    errors = [r for r in results if isinstance(r, LoadError)]
    dumps = [r for r in results if isinstance(r, Artifact) and r.kind == "dump"]
    if depth > MAX_DEPTH:
        assert not dumps
        assert [e.error for e in errors] == [
            f"JSON nested too deeply (more than {MAX_DEPTH} levels)"
        ]
    else:
        assert not errors and len(dumps) == 1
        assert dumps[0].snapshot is not None
