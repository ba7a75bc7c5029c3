"""Read a pickle as plain data without running any of its code.

openJiuwen's checkpointer stores session state with `pickle`. Unpickling normally imports
and calls whatever the stream names, so a hostile file could run code; here every global
the stream names resolves to `Stub` (our own class), whatever it is: a class becomes a
`Stub` holding its module, name, arguments and state; a function called by the stream
(REDUCE) also gives a `Stub`. Nothing outside this module is imported or called. The result
is turned into dicts, lists and scalars by `plain()`: a stub becomes its state dict (pydantic
models keep their fields under `__dict__`) with `__class__` naming what it was.
Must not import anything outside the standard library.
"""

from __future__ import annotations

import io
import pickle
from typing import Any

#: Largest pickle this reader opens (bytes).
MAX_PICKLE_BYTES = 256 * 1024 * 1024


class Stub:
    """Stands for any object the pickle names: its class path, arguments and state."""

    path: str = "?"
    #: NEWOBJ makes instances without `__init__`: these class defaults stand in.
    args: tuple[Any, ...] = ()
    state: Any = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args

    def __setstate__(self, state: Any) -> None:
        self.state = state

    @property
    def items(self) -> list[Any]:
        """Items appended to it (a list subclass)."""
        return self.__dict__.setdefault("_items", [])

    @property
    def entries(self) -> dict[Any, Any]:
        """Entries set on it (a dict subclass)."""
        return self.__dict__.setdefault("_entries", {})

    def append(self, item: Any) -> None:
        """APPEND on a list subclass."""
        self.items.append(item)

    def extend(self, items: Any) -> None:
        """APPENDS on a list subclass."""
        self.items.extend(items)

    def __setitem__(self, key: Any, value: Any) -> None:
        self.entries[key] = value

    def __repr__(self) -> str:
        return f"Stub({self.path})"


class _Unpickler(pickle.Unpickler):
    """Every global is a fresh subclass of `Stub` named after it: nothing is imported."""

    def __init__(self, stream: io.BytesIO) -> None:
        super().__init__(stream)
        self._classes: dict[str, type[Stub]] = {}

    def find_class(self, module: str, name: str) -> Any:
        path = f"{module}.{name}"
        made = self._classes.get(path)
        if made is None:
            made = self._classes[path] = type("Stub", (Stub,), {"path": path})
        return made


def loads(data: bytes) -> Any:
    """The pickle's objects with every global replaced by a stub; ValueError when unreadable."""
    if len(data) > MAX_PICKLE_BYTES:
        raise ValueError(f"pickle of {len(data):,} bytes is over the limit")
    unpickler = _Unpickler(io.BytesIO(data))
    try:
        return unpickler.load()
    except RecursionError:
        raise ValueError("pickle nested too deeply") from None
    except Exception as error:  # noqa: BLE001 - any failure of a foreign stream is "unreadable"
        raise ValueError(f"unreadable pickle: {type(error).__name__}: {error}") from None


def plain(value: Any, depth: int = 0) -> Any:
    """Dicts, lists and scalars from unpickled data (stubs become their state)."""
    if depth > 200:
        return "…"
    if isinstance(value, Stub):
        return _plain_stub(value, depth)
    if isinstance(value, type) and issubclass(value, Stub):
        return {"__class__": value.path}
    if isinstance(value, dict):
        return {str(plain(k, depth + 1)): plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [plain(v, depth + 1) for v in value]
    if isinstance(value, bytes | bytearray):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return repr(value)


def _plain_stub(stub: Stub, depth: int) -> Any:
    path, args = stub.path, stub.args
    if path == "copyreg._reconstructor" and args and isinstance(args[0], type):
        path = getattr(args[0], "path", path)
    state = stub.state
    if isinstance(state, tuple) and len(state) == 2 and isinstance(state[1], dict):
        # (dict state, slots state) as __reduce_ex__ writes for slotted classes
        base = state[0] if isinstance(state[0], dict) else {}
        state = {**base, **state[1]}
    if isinstance(state, dict) and isinstance(state.get("__dict__"), dict):
        # pydantic v2: {"__dict__": fields, "__pydantic_extra__": ..., ...}
        merged = dict(state["__dict__"])
        extra = state.get("__pydantic_extra__")
        if isinstance(extra, dict):
            merged.update(extra)
        state = merged
    if path == "datetime.datetime" and args and isinstance(args[0], bytes | str):
        return _datetime_text(args[0])
    if path in ("builtins.set", "builtins.frozenset") and args:
        return plain(args[0], depth + 1)
    if state is None:
        if stub.items or stub.entries:
            return plain(stub.items or stub.entries, depth + 1)
        if (
            len(args) == 1
            and isinstance(args[0], str | int | float)
            and not path.startswith("datetime.")
        ):
            return args[0]  # an enum member, a Decimal, a UUID string...
        return {"__class__": path, "args": plain(list(args), depth + 1)}
    out: dict[str, Any] = {"__class__": path}
    if isinstance(state, dict):
        out.update({str(k): plain(v, depth + 1) for k, v in state.items()})
    else:
        out["state"] = plain(state, depth + 1)
    if stub.items:
        out["items"] = plain(stub.items, depth + 1)
    if stub.entries:
        out["entries"] = plain(stub.entries, depth + 1)
    return out


def _datetime_text(payload: bytes | str) -> str:
    """ISO text of a pickled datetime's 10-byte state (timezone not shown)."""
    raw = payload.encode("latin-1") if isinstance(payload, str) else payload
    if len(raw) != 10:
        return "datetime(?)"
    year = raw[0] * 256 + raw[1]
    micro = (raw[7] << 16) | (raw[8] << 8) | raw[9]
    return (
        f"{year:04d}-{raw[2]:02d}-{raw[3]:02d}T{raw[4]:02d}:{raw[5]:02d}:{raw[6]:02d}.{micro:06d}"
    )
