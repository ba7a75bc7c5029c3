"""The filesystem boundary: which paths may be opened, opening them, walking folders.

Only regular files are ever opened: a FIFO would block the reader forever, a socket or a
device is no artifact. `file_problem` names what is wrong with a path (a symlink loop, a
dangling link, a FIFO, a socket, a device, no permission) in words for a LoadError;
`open_regular` opens without blocking and refuses anything but a regular file even if the
path changed since it was checked; `walk_files` reports folders it cannot list instead of
passing over them. Nothing here writes. Must not import Textual or Rich.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO


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


def open_regular(path: Path) -> BinaryIO:
    """`path` opened for binary reading, refusing (NotRegularFile) anything but a regular
    file; the open itself never blocks (O_NONBLOCK), so a FIFO swapped in cannot hang it."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        problem = kind_problem(os.fstat(fd).st_mode)
        if problem is not None:
            raise NotRegularFile(errno.EINVAL, problem, str(path))
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path) -> bytes:
    """The whole of a regular file (see `open_regular`)."""
    with open_regular(path) as handle:
        return handle.read()


def walk_files(
    folder: Path, suffixes: tuple[str, ...]
) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Files under `folder` ending in `suffixes` (hidden entries and symlinked folders
    skipped, sorted per folder), and the folders that could not be listed, with why."""
    found: list[Path] = []
    problems: list[tuple[Path, str]] = []

    def unlisted(error: OSError) -> None:
        where = Path(error.filename) if error.filename else folder
        problems.append((where, f"cannot list folder: {os_problem(error)}"))

    for root, dirs, names in os.walk(folder, onerror=unlisted, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if not name.startswith(".") and name.lower().endswith(suffixes):
                found.append(Path(root) / name)
    return found, problems
