"""Frozen dataclasses built cheaply where many are made (a big folder's load makes 100,000
artifacts, records and runs of each kind).

A frozen dataclass's `__init__` sets each field through `object.__setattr__` (a call per
field, ~1.3 us for an `Artifact`'s 14). `plain_init(cls)` gives a constructor that fills a
mutable twin of `cls` (the same slots, the same base) by plain attribute stores and then
makes it a `cls` by assigning `__class__`, which CPython allows between classes of one
layout: the object is then that class in every way (~0.25 us). It takes every field,
positionally in field order: no defaults, no `__post_init__`, no checks, so callers pass
exactly what the class's own `__init__` would store (a fresh value for a
`default_factory` field). `core.messages` builds its plain messages and tool calls so.
Must not import outside the standard library.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def plain_init(cls: type[T]) -> Callable[..., T]:
    """A constructor of the frozen slotted dataclass `cls` from every field's value,
    positionally in field order (see the module docstring)."""
    names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
    if list(getattr(cls, "__slots__", ())) != names or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: not a slotted dataclass without __post_init__")
    draft = type(f"_{cls.__name__}Draft", cls.__bases__, {"__slots__": tuple(names)})
    stores = "".join(f"    _made_.{name} = {name}\n" for name in names)
    source = (
        f"def make({', '.join(names)}):\n"
        f"    _made_ = _new(_draft)\n{stores}"
        f"    _made_.__class__ = _frozen\n"
        f"    return _made_\n"
    )
    scope: dict[str, Any] = {"_new": object.__new__, "_draft": draft, "_frozen": cls}
    exec(source, scope)  # one store per field, compiled once per class
    make: Callable[..., T] = scope["make"]
    make.__qualname__ = make.__name__ = f"plain_{cls.__name__}"
    make.__doc__ = f"A `{cls.__name__}` from every field's value, in field order."
    return make
