"""`core.frozen.plain_init`: a constructor equal to the frozen dataclass's own `__init__`.

Every class built that way in the load (artifacts, records, runs, dumps, refs) is checked:
the object is of the class itself, equal to the one its `__init__` makes from the same
values, as frozen, and as picklable (a helper process sends dumps' fields).
"""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any

import pytest

from inspector.core.artifact import (
    Artifact,
    DebugRecorded,
    DumpRecorded,
    SpanCounts,
    plain_artifact,
    plain_debug_recorded,
    plain_dump_recorded,
    plain_span_counts,
)
from inspector.core.frozen import plain_init
from inspector.core.timeline import DebugRecord, DumpRef, EvaluationRun
from inspector.sources.dump import DumpFile, plain_dump

CLASSES: list[tuple[type[Any], Any]] = [
    (SpanCounts, plain_span_counts),
    (DumpRecorded, plain_dump_recorded),
    (DebugRecorded, plain_debug_recorded),
    (Artifact, plain_artifact),
    (DumpFile, plain_dump),
    (DebugRecord, plain_init(DebugRecord)),
    (DumpRef, plain_init(DumpRef)),
    (EvaluationRun, plain_init(EvaluationRun)),
]


def _values(cls: type[Any]) -> list[Any]:
    """A distinct value per field (strings: every field holds something)."""
    return [f"{f.name}-value" for f in dataclasses.fields(cls)]


@pytest.mark.parametrize(("cls", "make"), CLASSES, ids=[c.__name__ for c, _ in CLASSES])
def test_plain_init_equals_the_dataclass_init(cls: type[Any], make: Any) -> None:
    values = _values(cls)
    plain, usual = make(*values), cls(*values)
    assert type(plain) is cls
    for f in dataclasses.fields(cls):
        assert getattr(plain, f.name) is getattr(usual, f.name)
    assert repr(plain) == repr(usual)
    if cls.__eq__ is not object.__eq__:
        assert plain == usual
    with pytest.raises(dataclasses.FrozenInstanceError):
        plain.__setattr__(dataclasses.fields(cls)[0].name, None)
    assert type(pickle.loads(pickle.dumps(plain))) is cls


@pytest.mark.parametrize(("cls", "make"), CLASSES, ids=[c.__name__ for c, _ in CLASSES])
def test_plain_init_takes_keywords_and_wants_every_field(cls: type[Any], make: Any) -> None:
    names = [f.name for f in dataclasses.fields(cls)]
    values = _values(cls)
    assert repr(make(**dict(zip(names, values, strict=True)))) == repr(cls(*values))
    with pytest.raises(TypeError):
        make(*values[:-1])


def test_plain_init_refuses_what_it_cannot_build() -> None:
    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        value: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        value: int

        def __post_init__(self) -> None:
            raise ValueError(self.value)

    for cls in (NoSlots, Checked, dict):
        with pytest.raises(TypeError):
            plain_init(cls)
