"""A persistent cache of per-message token counts, keyed by a hash of what the count depends on.

Reopening a big dump should not tokenize it again: each message's piece count (see
`TokenCounter.piece_tokens`) is stored under a SHA-256 hash of the counter's identity
(mode, exact encoder or not, image override), the role, the content and, for assistant
messages in tiktoken mode, the tool calls. The cache is an SQLite file in WAL mode in the
user's cache folder (`platformdirs.user_cache_dir("context-inspector")`, or
`$CONTEXT_INSPECTOR_CACHE_DIR`, or a folder given explicitly), so concurrent inspectors
can read and write it at once. It is best-effort: a locked, unreadable or corrupt file
never fails a load; a corrupt database is moved aside and rebuilt, an entry that is not a
count is ignored and overwritten.

Valid-looking wrong counts are caught too: the cache records, per counter identity, the
encoder's count of a fixed probe text and a few sample messages (their text and role). On
the first use in a process (`verify`), the probe and up to `RECOUNT` samples are counted
again; a different probe (another encoder), a sample whose stored count differs, or
entries without any sample to check them discard the whole cache, with a notice.

Also here: `compute_pieces`, which counts many messages with both CPU cores (a forked
process pool; tiktoken holds the GIL, so threads do not help), and `price_snapshot_cached`,
the one call a loader or TUI worker needs. Must not import Textual or Rich.
"""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing
import os
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from inspector.core.engine import PricedContext
from inspector.core.messages import Message
from inspector.core.snapshot import ContextSnapshot
from inspector.core.tokens import TokenCounter
from inspector.processes import in_helper

#: Connections a forked process inherited (`TokenCache.after_fork`): held until it exits.
_INHERITED: list[sqlite3.Connection] = []
#: Environment variable naming the cache folder (tests and CI point it at a temp folder).
CACHE_DIR_ENV = "CONTEXT_INSPECTOR_CACHE_DIR"
#: Bump when the counting rules change so old entries are never reused.
KEY_SCHEMA = "piece-v1/cl100k_base-223921b7"
DB_NAME = "token-counts-v1.sqlite3"
_BATCH = 900  # stays under SQLite's default limit of host parameters per statement
_FLUSH_EVERY = 5_000
#: Samples recounted on each open, and kept per counter identity.
RECOUNT = 3
MAX_SAMPLES = 12
_SAMPLE_MAX_CHARS = 4_000
#: The text whose count names the encoder (a changed encoder counts it differently).
PROBE = Message(
    "user", "Context Inspector probe: héllo wörld, 世界 🙂 def f(x): return x**2 <tag/> 12345"
)
#: Below this many characters to count, a process pool costs more than it saves.
PARALLEL_MIN_CHARS = 4_000_000


#: Whole-text counts a cache remembers in memory (`TokenCache.lookup_text`).
_TEXTS_REMEMBERED = 4096


def default_cache_dir() -> Path:
    """$CONTEXT_INSPECTOR_CACHE_DIR, else the platform's user cache folder for the inspector."""
    configured = os.environ.get(CACHE_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("context-inspector"))


def piece_key(counter: TokenCounter, message: Message) -> bytes:
    """16-byte hash (truncated SHA-256) of everything `counter.piece_tokens(message)` depends on."""
    digest = hashlib.sha256()  # hardware-accelerated on most CPUs: twice blake2b's speed here
    digest.update(
        f"{KEY_SCHEMA}\x00{counter.identity}\x00{message.role}\x00".encode("utf-8", "surrogatepass")
    )
    content = message.content
    if isinstance(content, str):
        digest.update(b"s")
        digest.update(content.encode("utf-8", "surrogatepass"))
    else:  # repr of JSON values is deterministic, keeps key order and tells 1, 1.0 and True apart
        digest.update(b"r")
        digest.update(repr(content).encode("utf-8", "surrogatepass"))
    if counter.mode == "tiktoken_cl100k" and message.role == "assistant" and message.tool_calls:
        calls = tuple(
            (c.id, c.type, c.name, c.arguments, c.response_item_id) for c in message.tool_calls
        )
        digest.update(b"\x00c")
        digest.update(repr(calls).encode("utf-8", "surrogatepass"))
    return digest.digest()[:16]


def text_key(counter: TokenCounter, text: str) -> bytes:
    """16-byte hash of a whole text's count for `counter` (a namespace apart from pieces)."""
    digest = hashlib.sha256()
    digest.update(f"{KEY_SCHEMA}\x00text\x00{counter.identity}\x00".encode())
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.digest()[:16]


class TokenCache:
    """Piece counts on disk (SQLite, WAL), usable as a `PieceStore` of a `TokenCounter`.

    Thread-safe within a process (one connection behind a lock) and safe across
    processes (SQLite locking, WAL, a busy timeout). Writes are buffered; call `flush()`
    (or `close()`) to commit them.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str] | None = None,
        on_notice: Callable[[str], None] | None = None,
    ) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.path = self.directory / DB_NAME
        self._lock = threading.RLock()
        self._connection: sqlite3.Connection | None = None
        self._pending: dict[bytes, int] = {}
        self.disabled_reason: str | None = None
        #: Said once when the cache was discarded (default: a line on stderr).
        self.notices: list[str] = []
        self._on_notice = on_notice or _stderr_notice
        self._verified: set[str] = set()
        #: Samples still to record, per counter identity (filled by `verify`).
        self._sample_room: dict[str, int] = {}
        self._pending_samples: list[tuple[str, str, str]] = []
        self.hits = 0
        self.misses = 0
        #: Whole-text counts seen in this process, by (counter identity, text): a folder's
        #: dumps list the same tools again and again, each an SQLite look-up otherwise.
        self._texts: dict[tuple[str, str], int] = {}

    # --- connection ---------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection | None:
        if self._connection is not None or self.disabled_reason is not None:
            return self._connection
        try:
            self._connection = self._open()
        except sqlite3.OperationalError as error:  # locked, unwritable, I/O: not corruption
            self.disabled_reason = f"token cache unavailable: {error}"
        except sqlite3.DatabaseError:  # "file is not a database", "malformed"
            self._set_aside()
            try:
                self._connection = self._open()
            except (sqlite3.Error, OSError) as error:
                self.disabled_reason = f"token cache unavailable: {error}"
        except OSError as error:
            self.disabled_reason = f"token cache unavailable: {error}"
        return self._connection

    def _open(self) -> sqlite3.Connection:
        self.directory.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(
            self.path, timeout=5.0, check_same_thread=False, isolation_level=None
        )
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.execute(
                "CREATE TABLE IF NOT EXISTS pieces (key BLOB PRIMARY KEY, tokens INTEGER) WITHOUT ROWID"
            )
            connection.execute(
                "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT)"
            )
            connection.execute(
                "CREATE TABLE IF NOT EXISTS samples (identity TEXT, role TEXT, content TEXT)"
            )
            connection.execute("SELECT count(*) FROM (SELECT 1 FROM pieces LIMIT 1)").fetchone()
        except sqlite3.Error:
            connection.close()
            raise
        return connection

    def _set_aside(self) -> None:
        """Move a corrupt database (and its WAL files) out of the way."""
        for suffix in ("", "-wal", "-shm"):
            path = Path(str(self.path) + suffix)
            try:
                if path.exists():
                    path.replace(path.with_name(path.name + ".corrupt"))
            except OSError:
                pass

    def _recover(self, error: sqlite3.Error) -> None:
        """A failed statement: an operational error (locked, I/O) skips this time only;
        corruption closes the connection and moves the file aside, to start again."""
        if isinstance(error, sqlite3.OperationalError) or not isinstance(
            error, sqlite3.DatabaseError
        ):
            return
        if self._connection is not None:
            with contextlib.suppress(sqlite3.Error):
                self._connection.close()
        self._connection = None
        self._set_aside()

    # --- raw access ---------------------------------------------------------------------

    def get_many(self, keys: Iterable[bytes]) -> dict[bytes, int]:
        """Stored counts of those keys that have a valid one."""
        wanted = list(dict.fromkeys(keys))
        found: dict[bytes, int] = {k: self._pending[k] for k in wanted if k in self._pending}
        with self._lock:
            connection = self._connect()
            if connection is None:
                return found
            try:
                for start in range(0, len(wanted), _BATCH):
                    batch = wanted[start : start + _BATCH]
                    marks = ",".join("?" * len(batch))
                    for key, tokens in connection.execute(
                        f"SELECT key, tokens FROM pieces WHERE key IN ({marks})", batch
                    ):
                        if (
                            type(tokens) is int and tokens >= 0
                        ):  # anything else is a corrupt entry: recount
                            found[bytes(key)] = tokens
            except sqlite3.Error as error:
                self._recover(error)
        return found

    def put_many(self, items: Iterable[tuple[bytes, int]]) -> None:
        """Buffer counts for writing; written at the next flush (or when many are pending)."""
        with self._lock:
            self._pending.update(items)
            if len(self._pending) >= _FLUSH_EVERY:
                self.flush()

    def flush(self) -> None:
        """Write pending counts in one transaction (dropped if the file stays locked)."""
        with self._lock:
            if not self._pending and not self._pending_samples:
                return
            connection = self._connect()
            rows = list(self._pending.items())
            samples = list(self._pending_samples)
            self._pending.clear()
            self._pending_samples.clear()
            if connection is None:
                return
            try:
                connection.execute("BEGIN IMMEDIATE")
                connection.executemany(
                    "INSERT OR REPLACE INTO pieces (key, tokens) VALUES (?, ?)", rows
                )
                connection.executemany(
                    "INSERT INTO samples (identity, role, content) VALUES (?, ?, ?)", samples
                )
                connection.execute("COMMIT")
            except sqlite3.Error as error:
                with contextlib.suppress(sqlite3.Error):
                    connection.execute("ROLLBACK")
                self._recover(error)

    def after_fork(self) -> None:
        """In a process forked from the one that made this cache: its own connection from
        the next use on. The parent's is kept, never used nor closed here (closing it could
        checkpoint the parent's log or release what the parent holds), and pending writes
        are the parent's to make."""
        with self._lock:
            if self._connection is not None:
                _INHERITED.append(self._connection)
                self._connection = None
            self._pending.clear()
            self._pending_samples.clear()

    def close(self) -> None:
        """Flush and close the connection (the cache can be used again afterwards)."""
        with self._lock:
            self.flush()
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def __enter__(self) -> TokenCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- PieceStore protocol ------------------------------------------------------------

    def lookup(self, counter: TokenCounter, message: Message) -> int | None:
        """A stored piece count of this message for this counter, or None."""
        self.verify(counter)
        key = piece_key(counter, message)
        value = self.get_many([key]).get(key)
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
        return value

    def save(self, counter: TokenCounter, message: Message, tokens: int) -> None:
        """Remember a computed piece count."""
        self.verify(counter)
        self.put_many([(piece_key(counter, message), tokens)])
        self.add_samples(counter, [message])

    def fill(self, counter: TokenCounter, messages: Sequence[Message]) -> None:
        """`FillStore`: the stored counts of `messages` in batches, the rest counted (both
        cores when it pays, `compute_pieces`) and stored; all seeded into `counter`."""
        warm_counter(counter, messages, self)

    def lookup_text(self, counter: TokenCounter, text: str) -> int | None:
        """A stored count of a whole text (the tool list's pieces), or None."""
        self.verify(counter)
        seen = self._texts.get((counter.identity, text))
        if seen is not None:
            return seen
        key = text_key(counter, text)
        found = self.get_many([key]).get(key)
        if found is not None:
            self._remember_text(counter, text, found)
        return found

    def save_text(self, counter: TokenCounter, text: str, tokens: int) -> None:
        """Remember a whole text's count."""
        self._remember_text(counter, text, tokens)
        self.put_many([(text_key(counter, text), tokens)])

    def _remember_text(self, counter: TokenCounter, text: str, tokens: int) -> None:
        if len(self._texts) >= _TEXTS_REMEMBERED:
            self._texts.clear()
        self._texts[(counter.identity, text)] = tokens

    def prefetch(self, counter: TokenCounter, messages: Sequence[Message]) -> int:
        """Seed `counter`'s memory with every stored count of `messages`; how many were found."""
        self.verify(counter)
        todo = [m for m in messages if not counter.knows(m)]
        keys = [piece_key(counter, m) for m in todo]
        found = self.get_many(keys)
        hits = 0
        for message, key in zip(todo, keys, strict=True):
            value = found.get(key)
            if value is not None:
                counter.remember(message, value)
                hits += 1
        self.hits += hits
        self.misses += len(todo) - hits
        return hits

    # --- verification -------------------------------------------------------------------

    def verify(self, counter: TokenCounter) -> None:
        """Once per counter identity and process: recount the probe and a few samples; any
        mismatch (or entries with nothing to check them) discards the cache with a notice."""
        identity = counter.identity
        if identity in self._verified:
            return
        with self._lock:
            self._verified.add(identity)
            connection = self._connect()
            if connection is None:
                return
            try:
                problem = self._check(connection, counter)
            except sqlite3.Error as error:
                self._recover(error)
                return
            if problem is not None:
                self._discard(connection, problem)
                self._sample_room[identity] = MAX_SAMPLES

    def _check(self, connection: sqlite3.Connection, counter: TokenCounter) -> str | None:
        """Why the stored counts of `counter` cannot be trusted (None: they can)."""
        identity = counter.identity
        probe = str(counter.compute_piece(PROBE))
        row = connection.execute("SELECT value FROM meta WHERE name = ?", (identity,)).fetchone()
        samples = connection.execute(
            "SELECT role, content FROM samples WHERE identity = ? ORDER BY random() LIMIT ?",
            (identity, MAX_SAMPLES),
        ).fetchall()
        self._sample_room[identity] = MAX_SAMPLES - len(samples)
        has_entries = connection.execute("SELECT 1 FROM pieces LIMIT 1").fetchone() is not None
        if row is None:
            known = connection.execute("SELECT 1 FROM meta LIMIT 1").fetchone() is not None
            if has_entries and not known:
                return "its entries carry no encoder identity (an older or altered cache)"
            connection.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (identity, probe))
            return None
        if row[0] != probe:
            return f"the encoder changed ({identity} counts the probe text {probe}, not {row[0]})"
        if has_entries and not samples:
            return "its entries have no sample left to recount"
        for role, content in samples[:RECOUNT]:
            message = Message(str(role), str(content))
            key = piece_key(counter, message)
            stored = self.get_many([key]).get(key)
            if stored is not None and stored != counter.compute_piece(message):
                return f"a recounted entry differs (stored {stored}, counted again differently)"
        return None

    def _discard(self, connection: sqlite3.Connection, why: str) -> None:
        """Empty the cache (every identity: a wrong entry may be anyone's) and say why."""
        self._pending.clear()
        self._texts.clear()
        self._pending_samples.clear()
        try:
            connection.execute("BEGIN IMMEDIATE")
            connection.execute("DELETE FROM pieces")
            connection.execute("DELETE FROM samples")
            connection.execute("DELETE FROM meta")
            connection.execute("COMMIT")
        except sqlite3.Error as error:
            with contextlib.suppress(sqlite3.Error):
                connection.execute("ROLLBACK")
            self._recover(error)
        self._verified.clear()
        notice = f"token cache {self.path} discarded: {why}; counts are recomputed"
        self.notices.append(notice)
        self._on_notice(notice)

    def add_samples(self, counter: TokenCounter, messages: Iterable[Message]) -> None:
        """Keep a few plain-text messages of `counter` to recount on later opens."""
        identity = counter.identity
        room = self._sample_room.get(identity, 0)
        for message in messages:
            if room <= 0:
                break
            content = message.content
            if isinstance(content, str) and 0 < len(content) <= _SAMPLE_MAX_CHARS:
                if not message.tool_calls and _storable(content) and _storable(message.role):
                    self._pending_samples.append((identity, message.role, content))
                    room -= 1
        self._sample_room[identity] = room

    # --- maintenance --------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        """Where the cache is, how many entries and bytes it holds."""
        entries = 0
        with self._lock:
            connection = self._connect() if self.path.exists() else None
            if connection is not None:
                try:
                    entries = int(connection.execute("SELECT count(*) FROM pieces").fetchone()[0])
                except sqlite3.Error as error:
                    self._recover(error)
        size = (
            sum(p.stat().st_size for p in self.directory.glob(DB_NAME + "*") if p.is_file())
            if self.directory.exists()
            else 0
        )
        return {
            "path": str(self.path),
            "entries": entries,
            "bytes": size,
            "disabled": self.disabled_reason,
        }

    def clear(self) -> int:
        """Delete the cache files (including set-aside corrupt ones); bytes freed."""
        with self._lock:
            self._pending.clear()
            self._texts.clear()
            if self._connection is not None:
                self._connection.close()
                self._connection = None
            freed = 0
            if self.directory.exists():
                for path in self.directory.glob(DB_NAME + "*"):
                    try:
                        freed += path.stat().st_size
                        path.unlink()
                    except OSError:
                        pass
            return freed


def _storable(text: str) -> bool:
    """True when SQLite can store the text (no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _stderr_notice(text: str) -> None:
    print(f"note: {text}", file=sys.stderr)


# --- counting many messages ---------------------------------------------------------------

_FORK_JOB: tuple[TokenCounter, Sequence[Message]] | None = None


def _count_slice(bounds: tuple[int, int]) -> list[int]:
    """Worker: piece counts of messages[start:end] of the job inherited through fork."""
    assert _FORK_JOB is not None
    counter, messages = _FORK_JOB
    return [counter.compute_piece(m) for m in messages[bounds[0] : bounds[1]]]


def _count_fresh(job: tuple[str, int | None, Sequence[Message]]) -> tuple[str, list[int]]:
    """Worker in a fresh interpreter: build the counter for the mode, count, say which counter."""
    from inspector.encoding import load_cl100k

    mode, placeholder, messages = job
    encode_len = load_cl100k().encode_len if mode == "tiktoken_cl100k" else None
    counter = TokenCounter(mode, encode_len, placeholder)  # type: ignore[arg-type]
    return counter.identity, [counter.compute_piece(m) for m in messages]


def _content_size(message: Message) -> int:
    content = message.content
    return len(content) if isinstance(content, str) else 1_000


def _balanced_slices(messages: Sequence[Message], parts: int) -> list[tuple[int, int]]:
    sizes = [_content_size(m) + 50 for m in messages]
    share = sum(sizes) / parts
    slices: list[tuple[int, int]] = []
    start, running = 0, 0.0
    for index, size in enumerate(sizes):
        running += size
        if running >= share and len(slices) < parts - 1:
            slices.append((start, index + 1))
            start, running = index + 1, 0.0
    slices.append((start, len(messages)))
    return [s for s in slices if s[1] > s[0]]


def compute_pieces(
    counter: TokenCounter, messages: Sequence[Message], workers: int | None = None
) -> list[int]:
    """Piece counts of `messages` (uncached), split over `workers` processes.

    `workers=None` uses every CPU when the work is big enough (PARALLEL_MIN_CHARS).
    Processes are forked (they inherit the messages and the loaded encoder) when this
    process has a single thread; with other threads alive (the TUI) forking is unsafe, so
    fresh interpreters are used for jobs three times bigger, and results are only taken
    when their counter has the same identity. Otherwise, on any pool failure, and in a
    helper of `processes.spread`, counts in this process.
    """
    if in_helper():  # a helper of `processes.spread`: the other cores are the others'
        workers = 1
    size = sum(_content_size(m) for m in messages)
    methods = multiprocessing.get_all_start_methods()
    can_fork = "fork" in methods and threading.active_count() == 1
    if workers is None:
        needed = PARALLEL_MIN_CHARS if can_fork else 3 * PARALLEL_MIN_CHARS
        workers = (os.cpu_count() or 1) if size >= needed else 1
    if workers <= 1 or len(messages) < 2:
        return [counter.compute_piece(m) for m in messages]
    slices = _balanced_slices(messages, workers * 4)
    try:
        if can_fork:
            return _fork_pool(counter, messages, slices, workers)
        method = "forkserver" if "forkserver" in methods else "spawn"
        jobs = [(counter.mode, counter.image_placeholder_tokens, messages[a:b]) for a, b in slices]
        with multiprocessing.get_context(method).Pool(workers) as pool:
            parts = pool.map(_count_fresh, jobs, chunksize=1)
        if all(identity == counter.identity for identity, _ in parts):
            return [value for _, part in parts for value in part]
    except (OSError, RuntimeError, ImportError):
        pass
    return [counter.compute_piece(m) for m in messages]


def _fork_pool(
    counter: TokenCounter, messages: Sequence[Message], slices: list[tuple[int, int]], workers: int
) -> list[int]:
    global _FORK_JOB
    if counter.mode == "tiktoken_cl100k":
        counter.text_tokens(" ")  # build a lazy encoder once here, not once per worker
    _FORK_JOB = (counter, messages)
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            parts = pool.map(_count_slice, slices, chunksize=1)
    finally:
        _FORK_JOB = None
    return [value for part in parts for value in part]


def cached_counters(cache: TokenCache | None = None) -> dict[str, TokenCounter]:
    """`make_counters()` whose cl100k counter looks counts up in (and adds them to) `cache`.

    Pass the result as `counters=` to `load_paths` and to `ContextEngine`, and call
    `cache.flush()` after a load (or `close()` at exit). len//4 counting is cheaper than a
    lookup, so only the cl100k counter gets the store.
    """
    from inspector.encoding import make_counters

    counters = make_counters()
    counters["tiktoken_cl100k"].store = cache if cache is not None else TokenCache()
    return counters


def warm_counter(
    counter: TokenCounter,
    messages: Sequence[Message],
    cache: TokenCache | None = None,
    workers: int | None = None,
) -> int:
    """Make `counter` know every piece count of `messages`; how many had to be computed.

    Stored counts come from `cache` in batches; the rest are counted with
    `compute_pieces` (both cores when it pays), remembered and written back (buffered:
    the caller flushes). Afterwards `PricedContext` or `ContextEngine` over these messages
    counts nothing itself.
    """
    todo = [m for m in messages if not counter.knows(m)]
    keys: list[bytes] = []
    if cache is not None:
        cache.verify(counter)
    if cache is not None and todo:
        wanted = [piece_key(counter, m) for m in todo]
        found = cache.get_many(wanted)
        missing: list[Message] = []
        for message, key in zip(todo, wanted, strict=True):
            value = found.get(key)
            if value is None:
                missing.append(message)
                keys.append(key)
            else:
                counter.remember(message, value)
        cache.hits += len(todo) - len(missing)
        cache.misses += len(missing)
        todo = missing
    if todo:
        values = compute_pieces(counter, todo, workers)
        for message, value in zip(todo, values, strict=True):
            counter.remember(message, value)
        if cache is not None:
            cache.put_many(zip(keys, values, strict=True))
            cache.add_samples(counter, todo)
    return len(todo)


def price_snapshot_cached(
    snapshot: ContextSnapshot,
    counter: TokenCounter,
    cache: TokenCache | None = None,
    workers: int | None = None,
) -> PricedContext:
    """`PricedContext.from_snapshot`, reusing stored counts and storing new ones.

    Looks every message up in `cache` in batches, counts the rest with `compute_pieces`
    (both cores when it pays), seeds `counter` and writes the new counts back. Results
    are identical to the uncached path; only the time differs.
    """
    warm_counter(counter, [*snapshot.system_messages, *snapshot.messages], cache, workers)
    previous = counter.store
    if cache is not None and previous is None:
        counter.store = cache  # the tool list's texts: stored too (see TextStore)
    try:
        return PricedContext.from_snapshot(snapshot, counter)
    finally:
        counter.store = previous
        if cache is not None:
            cache.flush()
