"""Mutation kinds applied to real openJiuwen artifacts (copies; the originals are never written).

Each kind takes a parsed JSON document (or JSON Lines records) and a `random.Random` and
returns the bytes of a broken file: a lone surrogate in a string or a key, an integer too big
for a float, the document wrapped in `[...]`, a key removed, a value nested too deeply, a value
of the wrong type. Must not import the inspector.
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

HUGE_INT = 10**400
#: Stands for nesting too deep for `json.dumps`; `_dumps` writes it out as text.
DEEP = "__deep_nesting__"
_DEEP_RE = re.compile(r'"__deep_nesting__(\d+)"')
Path_ = tuple[Any, ...]


def leaf_paths(value: Any, prefix: Path_ = (), limit: int = 8) -> list[Path_]:
    """Paths of every value (containers too), at most `limit` items per list."""
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += leaf_paths(item, prefix + (key,), limit)
    elif isinstance(value, list):
        for index, item in enumerate(value[:limit]):
            out += leaf_paths(item, prefix + (index,), limit)
    return out


def _get(value: Any, path: Path_) -> Any:
    for part in path:
        value = value[part]
    return value


def _set(value: Any, path: Path_, new: Any) -> Any:
    if not path:
        return new
    _get(value, path[:-1])[path[-1]] = new
    return value


def surrogate(doc: Any, rng: random.Random) -> Any:
    """A lone surrogate inside a string value or a key."""
    doc = copy.deepcopy(doc)
    strings = [p for p in leaf_paths(doc) if isinstance(_get(doc, p), str)]
    keys = [p for p in leaf_paths(doc) if p and isinstance(p[-1], str)]
    lone = rng.choice(["\ud800", "\udfff", "\udc80", "\ud83d"])
    if keys and (not strings or rng.random() < 0.3):
        path = rng.choice(keys)
        parent = _get(doc, path[:-1])
        parent[path[-1] + lone] = parent.pop(path[-1])
        return doc
    if not strings:
        return [lone, doc]
    path = rng.choice(strings)
    text = _get(doc, path)
    cut = rng.randint(0, len(text))
    return _set(doc, path, text[:cut] + lone + text[cut:])


def huge_int(doc: Any, rng: random.Random) -> Any:
    """An integer beyond float range in place of a number (or any value)."""
    doc = copy.deepcopy(doc)
    paths = leaf_paths(doc)[1:] or [()]
    numbers = [p for p in paths if isinstance(_get(doc, p), int | float)]
    path = rng.choice(numbers if numbers and rng.random() < 0.8 else paths)
    return _set(doc, path, rng.choice([HUGE_INT, -HUGE_INT, 10**309]))


def wrapper(doc: Any, rng: random.Random) -> Any:
    """The document wrapped in a list (or an object), as a hand edit might."""
    return rng.choice([[doc], [doc, doc], {"data": doc}]) if rng.random() < 0.2 else [doc]


def missing_key(doc: Any, rng: random.Random) -> Any:
    """One key removed somewhere."""
    doc = copy.deepcopy(doc)
    keyed = [p for p in leaf_paths(doc) if p and isinstance(p[-1], str)]
    if not keyed:
        return doc
    path = rng.choice(keyed)
    del _get(doc, path[:-1])[path[-1]]
    return doc


def missing_key_everywhere(doc: Any, rng: random.Random) -> Any:
    """One key name (`role`, `event`, `messages`, ... or any found) removed from every object."""
    doc = copy.deepcopy(doc)
    names = sorted({p[-1] for p in leaf_paths(doc, limit=50) if p and isinstance(p[-1], str)})
    if not names:
        return doc
    favourites = [
        n for n in ("role", "event", "messages", "content", "processor_type") if n in names
    ]
    name = rng.choice(favourites if favourites and rng.random() < 0.6 else names)
    stack = [doc]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            item.pop(name, None)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return doc


def deep_nesting(doc: Any, rng: random.Random) -> Any:
    """A value replaced by lists or objects nested deeper than any reader allows."""
    doc = copy.deepcopy(doc)
    depth = rng.choice([150, 250, 5000])
    paths = leaf_paths(doc)[1:] or [()]
    return _set(doc, rng.choice(paths), f"{DEEP}{depth}")


def type_swap(doc: Any, rng: random.Random) -> Any:
    """A value replaced by one of another JSON type."""
    doc = copy.deepcopy(doc)
    paths = leaf_paths(doc)[1:] or [()]
    new = rng.choice([None, True, -1, 0, 2.5, "", "x", [], {}, [1, "a"], {"role": 5}])
    return _set(doc, rng.choice(paths), new)


KINDS: dict[str, Callable[[Any, random.Random], Any]] = {
    "surrogate": surrogate,
    "huge_int": huge_int,
    "wrapper": wrapper,
    "missing_key": missing_key,
    "missing_key_everywhere": missing_key_everywhere,
    "deep_nesting": deep_nesting,
    "type_swap": type_swap,
}


def _nest(match: re.Match[str]) -> str:
    depth = int(match.group(1))
    return '{"k": [' * (depth // 2) + "1" + "]}" * (depth // 2)


def _dumps(value: Any) -> str:
    return _DEEP_RE.sub(_nest, json.dumps(value, ensure_ascii=True))


def mutate_file(path: Path, kind: str, rng: random.Random) -> bytes:
    """The bytes of `path` with one mutation of `kind` (in one record of a JSON Lines file)."""
    text = path.read_text(encoding="utf-8")
    mutation = KINDS[kind]
    try:
        return (_dumps(mutation(json.loads(text), rng)) + "\n").encode()
    except json.JSONDecodeError:
        pass
    lines = [line for line in text.splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]
    if kind == "missing_key_everywhere":
        return ("\n".join(_dumps(mutation(r, random.Random(0))) for r in records) + "\n").encode()
    index = rng.randrange(len(records))
    out = [_dumps(r) for r in records]
    out[index] = _dumps(mutation(records[index], rng))
    if kind == "wrapper" and rng.random() < 0.3:
        return (_dumps([mutation(r, rng) for r in records]) + "\n").encode()
    return ("\n".join(out) + "\n").encode()
