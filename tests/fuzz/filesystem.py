"""Odd filesystems for the fuzz suite: FIFOs, sockets, symlink loops, dangling links, a
folder nobody may list, names with invalid UTF-8 or terminal escapes. Built in a folder the
caller owns; the real artifacts are only copied."""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

from tests.fuzz.cases import CONTROL

#: Entries that are no readable file, by the name they are made under (bytes: any name).
ODDITIES = (
    b"pipe.json",
    b"socket.json",
    b"loop_a.json",
    b"loop_b.json",
    b"dangling.json",
    b"\x1b[31mred\x07broken.json",
    b"bad\xff\xfename.json",
)
#: Good copies under names a terminal must not see raw.
ODD_GOOD_NAMES = (b"\x1b]0;title\x07good.json", b"good\xffinvalid.json", b"tab\there.json")


def build(folder: Path) -> tuple[list[str], list[str]]:
    """Make the odd folder; (sources that must each be one error line, good sources)."""
    root = os.fsencode(folder)
    os.makedirs(root, exist_ok=True)
    os.mkfifo(os.path.join(root, b"pipe.json"))
    server = socket.socket(socket.AF_UNIX)
    server.bind(os.path.join(root, b"socket.json"))
    server.close()  # the socket file stays
    os.symlink(b"loop_b.json", os.path.join(root, b"loop_a.json"))
    os.symlink(b"loop_a.json", os.path.join(root, b"loop_b.json"))
    os.symlink(b"missing-target.json", os.path.join(root, b"dangling.json"))
    with open(os.path.join(root, b"\x1b[31mred\x07broken.json"), "wb") as handle:
        handle.write(b'{"messages": [{"content": "no role"}]')
    with open(os.path.join(root, b"bad\xff\xfename.json"), "wb") as handle:
        handle.write(b"[1, 2")
    sub = os.path.join(root, b"sub")
    os.makedirs(sub)
    os.symlink(b"..", os.path.join(sub, b"up"))  # a folder loop the scan must not enter
    for name in ODD_GOOD_NAMES:
        shutil.copyfile(CONTROL, os.path.join(root, name))
    broken = [os.fsdecode(os.path.join(root, name)) for name in ODDITIES]
    good = [os.fsdecode(os.path.join(root, name)) for name in ODD_GOOD_NAMES]
    return broken, good
