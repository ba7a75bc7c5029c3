"""`read_regular` reads on the descriptor: every byte of a regular file, whatever its size,
and still refuses anything but a regular file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from inspector.sources.files import NotRegularFile, open_regular, read_regular


@pytest.mark.parametrize("size", [0, 1, 4095, 65536, 65537, 3 * 1024 * 1024 + 7])
def test_every_byte_is_read(tmp_path: Path, size: int) -> None:
    data = os.urandom(size)
    path = tmp_path / "f.json"
    path.write_bytes(data)
    assert read_regular(path) == data
    with open_regular(path) as handle:
        assert handle.read() == data


def test_a_fifo_and_a_folder_are_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFile, match="FIFO"):
        read_regular(fifo)
    with pytest.raises(NotRegularFile, match="folder"):
        read_regular(tmp_path)


def test_a_missing_file_raises_the_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "missing.json")
