"""The filesystem boundary: which paths may be opened, opening them, walking folders.

Only regular files are ever opened: a FIFO would block the reader forever, a socket or a
device is no artifact. `file_problem` names what is wrong with a path (a symlink loop, a
dangling link, a FIFO, a socket, a device, no permission) in words for a LoadError;
`open_regular` opens without blocking and refuses anything but a regular file even if the
path changed since it was checked; `walk_files` reports folders it cannot list instead of
passing over them. Also the path rules the loader and the browser's listing share
(`expand_source`, `FOLDER_SUFFIXES`, `path_identity`, openJiuwen's dump file name rule),
kept here so a listing needs no parser. Nothing here writes. Imports nothing of the
inspector; must not import Textual or Rich.
"""

from __future__ import annotations

import errno
import glob
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

#: openJiuwen's dump file names: `<epoch ms>_<Processor>_<safe session>.json` (the same rule
#: as `inspector.sources.dump.DUMP_NAME_RE`, checked by a test).
DUMP_NAME_RE = re.compile(r"^(\d{10,16})_([A-Za-z0-9_.-]+?Compressor)_(.+)\.json$")
#: File name endings a folder scan reads (explicit file arguments are read whatever their name).
FOLDER_SUFFIXES = (".json", ".jsonl", ".ndjson")
#: Compressed copies of those: a folder scan names each as not read, never skips it silently.
COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz", ".zst", ".zip")


def expand_source(path: str | os.PathLike[str]) -> list[Path]:
    """A source path, with `{session_id}` / `{context_id}` turned into wildcards."""
    text = os.fspath(path)
    if "{session_id}" in text or "{context_id}" in text:
        pattern = glob.escape(text).replace("{session_id}", "*").replace("{context_id}", "*")
        # glob.escape leaves braces alone, so the placeholders are still there to replace
        return sorted(Path(p) for p in glob.glob(pattern))
    return [Path(text)]


def path_identity(path: Path) -> Path:
    """The path resolved (its absolute form when it cannot be: a loop, no permission)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop (Python 3.11)
        return path.absolute()


def folder_identity(file: Path, base: tuple[str, str], plain: bool = False) -> str:
    """`path_identity` of a file `walk_files` found, without resolving every path component:
    the scan does not enter symlinked folders, so only the file itself may be a link.
    `base` is the scanned folder as given and resolved, each ending in a separator ("" for
    "."); `plain`: the file is known to be no link (`scan_files`), so it is not asked."""
    given, resolved = base
    text = str(file)
    if not text.startswith(given) or (not plain and os.path.islink(text)):
        return str(path_identity(file))
    return resolved + text[len(given) :]


def folder_base(target: Path) -> tuple[str, str]:
    """The `base` of `folder_identity` for a scanned folder."""
    given = "" if str(target) == "." else str(target).rstrip(os.sep) + os.sep
    return given, str(path_identity(target)).rstrip(os.sep) + os.sep


class NotRegularFile(OSError):
    """A path that is not a regular file (FIFO, socket, device, folder)."""


_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a folder"),
)


def kind_problem(mode: int) -> str | None:
    """Why a file of this `st_mode` is not read (None: a regular file)."""
    if stat.S_ISREG(mode):
        return None
    for test, kind in _KINDS:
        if test(mode):
            return f"not a regular file but {kind}: skipped, never opened"
    return "not a regular file: skipped, never opened"


def os_problem(error: OSError) -> str:
    """An OSError in plain words."""
    if error.errno == errno.ELOOP:
        return "symlink loop (too many levels of symbolic links)"
    if error.errno == errno.EACCES:
        return "permission denied"
    return f"cannot read: {error.strerror or error}"


def file_problem(path: Path) -> str | None:
    """Why `path` cannot be read as a file, without opening it (None: a regular file)."""
    try:
        info = os.stat(path)
    except OSError as error:
        if error.errno == errno.ENOENT and os.path.islink(path):
            return f"broken symlink (its target {_link_target(path)} does not exist)"
        return os_problem(error)
    except ValueError as error:  # an embedded NUL in a name given on the command line
        return f"cannot read: {error}"
    return kind_problem(info.st_mode)


def _link_target(path: Path) -> str:
    try:
        return repr(os.readlink(path))
    except OSError:
        return "?"


_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def _open_fd(path: Path) -> tuple[int, int]:
    """(descriptor, size) of `path` opened for reading, refusing (NotRegularFile) anything
    but a regular file; the open itself never blocks (O_NONBLOCK)."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        info = os.fstat(fd)
        problem = kind_problem(info.st_mode)
        if problem is not None:
            raise NotRegularFile(errno.EINVAL, problem, str(path))
        return fd, info.st_size
    except BaseException:
        os.close(fd)
        raise


def open_regular(path: Path) -> BinaryIO:
    """`path` opened for binary reading, refusing (NotRegularFile) anything but a regular
    file; the open itself never blocks (O_NONBLOCK), so a FIFO swapped in cannot hang it."""
    fd, _ = _open_fd(path)
    try:
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path) -> bytes:
    """The whole of a regular file (see `open_regular`): read to its end on the descriptor,
    without a buffered reader (a folder's small files are read whole, one after another)."""
    fd, size = _open_fd(path)
    try:
        parts = [os.read(fd, size + 1)]
        while parts[-1]:  # a file that grew, or a short read: on to the end
            parts.append(os.read(fd, max(size, 1 << 16)))
        return parts[0] if len(parts) == 2 else b"".join(parts)
    finally:
        os.close(fd)


def walk_files(
    folder: Path, suffixes: tuple[str, ...]
) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Files under `folder` ending in `suffixes` (hidden entries and symlinked folders
    skipped, sorted per folder), and the folders that could not be listed and the
    compressed copies of such files (`x.jsonl.gz`: not read), with why."""
    found, problems = scan_files(folder, suffixes)
    return [file for file, _ in found], problems


def scan_files(
    folder: Path,
    suffixes: tuple[str, ...],
    many: tuple[int, Callable[[], object]] | None = None,
) -> tuple[list[tuple[Path, bool]], list[tuple[Path, str]]]:
    """`walk_files`, each file with whether it is plainly regular: its folder entry says a
    regular file and no symlink, and its folder lets files be looked up (one `os.lstat` per
    folder tells), so `file_problem` would find nothing and it is no link for
    `folder_identity` (the two cost three system calls a file, a third of a 50,000-file
    listing; the entry's type comes free with the listing).

    The walk is `os.walk(folder, followlinks=False)`'s, top-down: a folder's files, then its
    subfolders in name order; a folder that cannot be listed (or fails while listed) is
    reported and passed over. `many` (count, call): `call()` once, as soon as that many
    files are found (work a big folder calls for, started while the walk goes on)."""
    found: list[tuple[Path, bool]] = []
    problems: list[tuple[Path, str]] = []
    pending = [os.fspath(folder)]
    while pending:
        root = pending.pop()
        try:
            with os.scandir(root) as listing:
                entries = [entry for entry in listing if not entry.name.startswith(".")]
        except OSError as error:
            where = Path(error.filename) if error.filename else folder
            problems.append((where, f"cannot list folder: {os_problem(error)}"))
            continue
        entries.sort(key=lambda entry: entry.name)
        here = Path(root)  # parsed once per folder, not once per file
        files: list[tuple[str, os.DirEntry[str]]] = []
        subfolders: list[str] = []
        for entry in entries:
            if _entry_is_dir(entry):
                if not entry.is_symlink():  # os.walk's `islink`, from the entry
                    subfolders.append(os.path.join(root, entry.name))
                continue
            name = entry.name
            lowered = name.lower()
            if lowered.endswith(suffixes):
                files.append((name, entry))
            elif lowered.endswith(COMPRESSED_SUFFIXES) and lowered.rpartition(".")[0].endswith(
                suffixes
            ):
                problems.append((here / name, _compressed_note(name)))
        searchable = bool(files) and _files_reachable(root, files)
        for name, entry in files:
            found.append((here / name, searchable and _entry_is_plain_file(entry)))
        if many is not None and len(found) >= many[0]:
            many[1]()
            many = None
        pending.extend(reversed(subfolders))
    return found, problems


def _entry_is_dir(entry: os.DirEntry[str]) -> bool:
    """`os.walk`'s test: a folder, or a symlink to one (an entry that cannot tell: no)."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def _entry_is_plain_file(entry: os.DirEntry[str]) -> bool:
    """A regular file by its folder entry, not a symlink."""
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def _files_reachable(root: str, files: list[tuple[str, os.DirEntry[str]]]) -> bool:
    """Whether files of folder `root` can be looked up (`os.lstat`: a dangling link is
    found too): a folder listable but not searchable lists names whose every lookup
    fails. Tried on the longest name (the one a path-length limit would stop first)."""
    longest = max((name for name, _ in files), key=len)
    try:
        os.lstat(os.path.join(root, longest))
    except (OSError, ValueError):
        return False
    return True


def _compressed_note(name: str) -> str:
    unpacked = name.rpartition(".")[0]
    return f"compressed file, not read: unpack it first to read it (it would be {unpacked})"
