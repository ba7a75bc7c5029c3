"""Issue 16 (2): a folder scan builds each file's path from its folder's path parsed once;
the paths must be those built from the names one by one (`Path(root) / name`)."""

from __future__ import annotations

import os
from pathlib import Path

from inspector.sources.files import FOLDER_SUFFIXES, walk_files

ROOT = Path(__file__).resolve().parents[1]


def _one_by_one(folder: Path) -> list[Path]:
    found = []
    for root, dirs, names in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if not name.startswith(".") and name.lower().endswith(FOLDER_SUFFIXES):
                found.append(Path(root) / name)
    return found


def test_scanned_paths_equal_paths_built_one_by_one(tmp_path: Path) -> None:
    odd = tmp_path / "odd dir" / "ünï" / "a.b"
    odd.mkdir(parents=True)
    for name in ("x.JSON", "y.jsonl", "z.ndjson", ".hidden.json", "w.txt", "v.json.gz"):
        (odd / name).write_text("{}")
    (tmp_path / "top.json").write_text("{}")
    for folder in (tmp_path, ROOT / "sample_dumps", ROOT / "tests" / "data"):
        found, _ = walk_files(folder, FOLDER_SUFFIXES)
        expected = _one_by_one(folder)
        assert found == expected and [str(p) for p in found] == [str(p) for p in expected]
    assert odd / "x.JSON" in walk_files(tmp_path, FOLDER_SUFFIXES)[0]
