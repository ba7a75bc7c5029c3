"""A cache of whole command outputs, keyed by what the output depends on (issue 16 item 2).

Reopening a big dump with `inspector why --json` should not parse, rebuild and count it
again: the first run's output (its stdout and stderr, in order, and its exit status) is
stored, and a later run with the same key replays it. The key is a SHA-256 of

* the command and every parsed argument (sources as given, tuning overrides, `--pin`,
  flags), so any setting, override or flag that changes the output changes the key;
* the working directory (relative sources print as given) and the resolved path, size,
  `st_mtime_ns`, inode and **content hash** (SHA-256 of the bytes) of every source file:
  a file changed in place with the same size and mtime still gets a new key;
* the inspector's version and a fingerprint of its code (name, size and mtime of every
  `.py` file of the package: the strategy registry, the selection rules and the report
  builder are in there), the strategy registry's lines (with the file of any plugin
  strategy module outside the package), and the token-counting mode (which cl100k encoder, if any, and
  the token cache's key schema).

Only runs that read nothing but explicitly given regular files are cached (no folder,
template, jiuwenswarm home or log, missing file, `--no-mask`): a folder's results depend
on files that come and go. A source that changed while the run read it (size, mtime or
inode differ afterwards) is not stored.

Entries live in `<cache folder>/results/` (the cache folder is $CONTEXT_INSPECTOR_CACHE_DIR
or the user cache folder, as for the token cache), one `.ciresult` file each, written
atomically; never in the folder of a source file or inside a source folder (then nothing
is stored). The folder is bounded (`MAX_BYTES`): after each store the least recently used
entries (by mtime; a hit touches its entry) are deleted. A corrupt, truncated or foreign
file is ignored with a warning on stderr (and replaced by the next store), never a
traceback. Must not import Textual, Rich or the cli package.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import struct
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Bump when the entry format or the key's recipe changes.
FORMAT = "context-inspector-result-v1"
SUBDIR = "results"
SUFFIX = ".ciresult"
#: Total size of the results folder after a store; least recently used entries go first.
MAX_BYTES = 256 * 1024 * 1024
#: Set to a non-empty value other than "0" to bypass the cache (read and write).
DISABLE_ENV = "CONTEXT_INSPECTOR_NO_RESULT_CACHE"
#: Arguments that never change a command's output (`--jobs`: how many processes work).
_IGNORED_ARGS = frozenset({"func", "handler", "jobs"})
_FRAME = struct.Struct(">ccQ")

Event = tuple[str, str, bytes]  # (stream "o"/"e", kind "t" text / "b" bytes, payload)


@dataclass(frozen=True, slots=True)
class FileState:
    """What a source file looked like when it was hashed."""

    given: str
    resolved: str
    size: int
    mtime_ns: int
    inode: int
    sha256: str


@dataclass(frozen=True, slots=True)
class Plan:
    """A cacheable run: its key, its sources' states and the entry's path."""

    key: str
    files: tuple[FileState, ...]
    path: Path


def file_state(given: str) -> FileState | None:
    """Stat and hash one source file (None: not a regular file or unreadable)."""
    import stat as stat_module

    try:
        before = os.stat(given)
        if not stat_module.S_ISREG(before.st_mode):
            return None
        with open(given, "rb") as handle:
            if os.fstat(handle.fileno()).st_ino != before.st_ino:
                return None
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
        resolved = str(Path(given).resolve())
    except (OSError, RuntimeError, ValueError):
        return None
    return FileState(given, resolved, before.st_size, before.st_mtime_ns, before.st_ino, digest)


def _unchanged(state: FileState) -> bool:
    try:
        now = os.stat(state.given)
    except OSError:
        return False
    return (now.st_size, now.st_mtime_ns, now.st_ino) == (
        state.size,
        state.mtime_ns,
        state.inode,
    )


def code_fingerprint() -> str:
    """SHA-256 of the inspector's version and of every package `.py` file's name, size and
    mtime (a changed rule, strategy or report builder changes it)."""
    import inspector

    root = Path(inspector.__file__).resolve().parent
    digest = hashlib.sha256(f"{inspector.__version__}\x00".encode())
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__pycache__")))
        for name in sorted(names):
            if name.endswith(".py"):
                info = os.stat(os.path.join(folder, name))
                rel = os.path.relpath(os.path.join(folder, name), root)
                digest.update(f"{rel}\x00{info.st_size}\x00{info.st_mtime_ns}\x00".encode())
    return digest.hexdigest()


def strategy_identity() -> str:
    """The strategy registry's lines and, for each strategy module outside the package (a
    plugin), its file's size and mtime: the selection depends on them."""
    from inspector.core.strategy import registry

    parts: list[str] = []
    for line in registry.STRATEGIES:
        parts.append(line)
        module_name = line.partition(":")[0]
        if module_name.startswith("inspector."):
            continue  # in code_fingerprint
        module = sys.modules.get(module_name)
        where = getattr(module, "__file__", None) if module is not None else None
        if where is None:
            import importlib.util

            try:
                spec = importlib.util.find_spec(module_name)
            except (ImportError, ValueError):
                spec = None
            where = spec.origin if spec is not None else None
        try:
            info = os.stat(where) if where else None
        except OSError:
            info = None
        parts.append(f"{where}:{info.st_size}:{info.st_mtime_ns}" if info else f"{where}:-")
    return "\x00".join(parts)


def counting_identity() -> str:
    """The token-counting mode: which cl100k encoder (or why none) and the count cache's
    key schema."""
    from inspector.encoding import load_cl100k
    from inspector.sources.cache import KEY_SCHEMA

    status = load_cl100k()
    return f"{KEY_SCHEMA}\x00{status.encode_len is not None}\x00{status.note}"


def _arguments(args: argparse.Namespace) -> list[tuple[str, str]]:
    return sorted((k, repr(v)) for k, v in vars(args).items() if k not in _IGNORED_ARGS)


def _cacheable_source(given: str) -> bool:
    """A regular file that is read on its own (no template, no jiuwenswarm file)."""
    if "{session_id}" in given or "{context_id}" in given or given == "-":
        return False
    path = Path(given)
    if not path.is_file():
        return False
    from inspector.sources.jiuwenswarm import is_swarm_log
    from inspector.sources.jiuwenswarm.home import find_home

    return not is_swarm_log(path) and find_home(path) is None


def _writable_beside(directory: Path, files: Sequence[FileState]) -> bool:
    """False when the cache folder is the folder of a source file (never write there)."""
    try:
        target = directory.resolve()
    except (OSError, RuntimeError):
        return False
    return all(target != Path(f.resolved).parent for f in files)


def plan(command: str, args: argparse.Namespace, directory: Path | None = None) -> Plan | None:
    """The cache key of this run, or None when its output must not be cached."""
    if os.environ.get(DISABLE_ENV, "0") not in ("", "0"):
        return None
    sources = getattr(args, "sources", None)
    if not sources or getattr(args, "no_mask", False):
        return None
    if not all(isinstance(s, str) and _cacheable_source(s) for s in sources):
        return None
    states = [file_state(s) for s in sources]
    if any(s is None for s in states):
        return None
    files = tuple(s for s in states if s is not None)
    if directory is None:
        from inspector.sources.cache import default_cache_dir

        directory = default_cache_dir()
    if not _writable_beside(directory, files):
        return None
    recipe = {
        "format": FORMAT,
        "command": command,
        "args": _arguments(args),
        "cwd": os.getcwd(),
        "files": [_state_list(f) for f in files],
        "code": code_fingerprint(),
        "strategies": strategy_identity(),
        "counting": counting_identity(),
        "python": sys.version,
    }
    key = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()
    return Plan(key, files, directory / SUBDIR / f"{key}{SUFFIX}")


def _state_list(state: FileState) -> list[object]:
    return [state.given, state.resolved, state.size, state.mtime_ns, state.inode, state.sha256]


# --- entries on disk ----------------------------------------------------------------------


def _warn(text: str) -> None:
    print(f"warning: result cache: {text}", file=sys.stderr)


def read_entry(path: Path, key: str) -> tuple[int, list[Event]] | None:
    """The stored exit status and output events, or None (missing; corrupt or foreign
    with a warning)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        _warn(f"cannot read {path}: {error.strerror or error}; ignored")
        return None
    try:
        return _decode(data, key)
    except (ValueError, KeyError, TypeError, struct.error, UnicodeDecodeError) as error:
        _warn(f"ignoring {path}: {error}")
        return None


def _decode(data: bytes, key: str) -> tuple[int, list[Event]]:
    newline = data.find(b"\n")
    if newline < 0:
        raise ValueError("no header line (not a result cache file)")
    header = json.loads(data[:newline])
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError("not a result cache file of this version")
    if header.get("key") != key:
        raise ValueError("its key does not match its name")
    body = data[newline + 1 :]
    if hashlib.sha256(body).hexdigest() != header.get("body_sha256"):
        raise ValueError("its checksum does not match (truncated or corrupt)")
    events: list[Event] = []
    offset = 0
    while offset < len(body):
        stream, kind, length = _FRAME.unpack_from(body, offset)
        offset += _FRAME.size
        payload = body[offset : offset + length]
        offset += length
        events.append((stream.decode(), kind.decode(), payload))
    status = header["status"]
    if not isinstance(status, int) or len(events) != header.get("events"):
        raise ValueError("its header does not match its contents")
    return status, events


def _encode(key: str, status: int, events: Sequence[Event]) -> bytes:
    body = b"".join(_FRAME.pack(s.encode(), k.encode(), len(p)) + p for s, k, p in events)
    header = {
        "format": FORMAT,
        "key": key,
        "status": status,
        "events": len(events),
        "body_sha256": hashlib.sha256(body).hexdigest(),
    }
    return json.dumps(header).encode() + b"\n" + body


def write_entry(path: Path, key: str, status: int, events: Sequence[Event]) -> None:
    """Store an entry atomically, then evict down to `MAX_BYTES`; failures only warn."""
    data = _encode(key, status, events)
    if len(data) > MAX_BYTES // 4:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(prefix=".tmp-", suffix=SUFFIX, dir=path.parent)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    except OSError as error:
        _warn(f"cannot store in {path.parent}: {error.strerror or error}")
        return
    evict(path.parent, MAX_BYTES)


def evict(folder: Path, max_bytes: int) -> int:
    """Delete the least recently used entries until the folder holds at most `max_bytes`;
    the number deleted."""
    entries: list[tuple[int, int, Path]] = []
    try:
        for item in os.scandir(folder):
            if item.name.endswith(SUFFIX) and item.is_file(follow_symlinks=False):
                info = item.stat(follow_symlinks=False)
                entries.append((info.st_mtime_ns, info.st_size, Path(item.path)))
    except OSError:
        return 0
    total = sum(size for _, size, _ in entries)
    deleted = 0
    for _, size, path in sorted(entries, key=lambda e: e[0]):
        if total <= max_bytes:
            break
        try:
            path.unlink()
        except OSError:
            continue
        total -= size
        deleted += 1
    return deleted


def usage(directory: Path) -> tuple[int, int]:
    """Stored results under `directory` (the cache folder): entries and bytes."""
    entries = size = 0
    folder = directory / SUBDIR
    if folder.is_dir():
        for item in folder.iterdir():
            if item.name.endswith(SUFFIX) and item.is_file() and not item.is_symlink():
                with contextlib.suppress(OSError):
                    size += item.stat().st_size
                    entries += 1
    return entries, size


def clear(directory: Path | None = None) -> int:
    """Delete every stored result (for `inspector cache clear`); bytes freed."""
    if directory is None:
        from inspector.sources.cache import default_cache_dir

        directory = default_cache_dir()
    freed = 0
    folder = directory / SUBDIR
    if folder.is_dir():
        for item in folder.iterdir():
            if item.name.endswith(SUFFIX) and item.is_file() and not item.is_symlink():
                with contextlib.suppress(OSError):
                    size = item.stat().st_size
                    item.unlink()
                    freed += size
    return freed


# --- recording and replaying a run's output -----------------------------------------------


class _Events(list[Event]):
    """A run's recorded output. Recording stops, and the run is not stored, once it holds
    more than a stored entry may (`MAX_BYTES // 4`, what `write_entry` refuses): a big
    log's `why --json` would otherwise keep its whole output in memory only to drop it."""

    def __init__(self, limit: int = MAX_BYTES // 4) -> None:
        super().__init__()
        self.size = 0
        self.limit = limit
        self.full = False

    def append(self, event: Event) -> None:
        """Record one write, unless the limit was passed."""
        if self.full:
            return
        self.size += len(event[2])
        if self.size > self.limit:
            self.full = True
            self.clear()
            return
        super().append(event)


class _Recorder:
    """A text stream that passes everything to `inner` and records it (its `buffer` too)."""

    def __init__(self, inner: Any, stream: str, events: list[Event]) -> None:
        self._inner = inner
        self._stream = stream
        self._events = events
        binary = getattr(inner, "buffer", None)
        self.buffer = _BinaryRecorder(binary, stream, events) if binary is not None else None

    def write(self, text: str) -> int:
        """Record (masked as the stream masks it, so no secret is stored), then write."""
        mask = getattr(getattr(self._inner, "masker", None), "text", None)
        kept = mask(text) if callable(mask) else text
        self._events.append((self._stream, "t", kept.encode("utf-8", "surrogatepass")))
        return int(self._inner.write(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _BinaryRecorder:
    def __init__(self, inner: Any, stream: str, events: list[Event]) -> None:
        self._inner = inner
        self._stream = stream
        self._events = events

    def write(self, data: bytes) -> int:
        """Record, then write."""
        self._events.append((self._stream, "b", bytes(data)))
        return int(self._inner.write(data))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def replay(events: Sequence[Event]) -> None:
    """Write recorded output to today's sys.stdout / sys.stderr, in the recorded order."""
    for stream, kind, payload in events:
        out = sys.stdout if stream == "o" else sys.stderr
        binary = getattr(out, "buffer", None) if kind == "b" else None
        if binary is not None:
            out.flush()
            binary.write(payload)
            binary.flush()
        else:
            out.write(payload.decode("utf-8", "surrogatepass"))
    sys.stdout.flush()
    sys.stderr.flush()


@contextlib.contextmanager
def _recording(events: list[Event]) -> Iterator[None]:
    saved = sys.stdout, sys.stderr
    sys.stdout = _Recorder(saved[0], "o", events)  # type: ignore[assignment]
    sys.stderr = _Recorder(saved[1], "e", events)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def cached_run(
    command: str,
    args: argparse.Namespace,
    run: Callable[[argparse.Namespace], int],
    directory: Path | None = None,
) -> int:
    """`run(args)`, or its stored output replayed when a run with the same key was stored.

    Only `--json` runs are cached (a text report depends on the terminal). The output is
    passed through while it is recorded; it is stored when the run returned, printed
    something on stdout and no source changed meanwhile.
    """
    found = plan(command, args, directory) if getattr(args, "json", False) else None
    if found is None:
        return run(args)
    entry = read_entry(found.path, found.key)
    if entry is not None:
        status, stored = entry
        with contextlib.suppress(OSError):
            os.utime(found.path)  # most recently used
        replay(stored)
        return status
    events = _Events()
    with _recording(events):
        status = run(args)
    if events.full:
        return status
    # nothing on stdout: nothing worth replaying (and a writer that bypassed sys.stdout
    # would otherwise be replayed as silence)
    printed = any(stream == "o" and payload for stream, _, payload in events)
    if printed and all(_unchanged(f) for f in found.files):
        write_entry(found.path, found.key, status, events)
    return status
