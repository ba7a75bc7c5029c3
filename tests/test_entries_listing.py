"""The browser's listing (`inspector.sources.entries`) names exactly what the loader reads.

A real folder with hidden files, a symlinked folder, a symlinked file, a dangling link,
files of other suffixes and nested sessions; the listing must hold the same files as the
loader's scan (`walk_files`), each once, and import no parser.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.sources import dump, files
from inspector.sources.entries import list_entries
from inspector.sources.loader import scan_folder


def _tree(root: Path) -> Path:
    folder = root / "ws"
    logs = folder / "context" / "s1_context" / "compression_logs"
    logs.mkdir(parents=True)
    (logs / "1795975000000_CurrentRoundCompressor_s1.json").write_text("{}")
    (logs / "1795975060000_DialogueCompressor_s1.json").write_text("{}")
    (logs / "notes.txt").write_text("not read")
    (logs / ".hidden.json").write_text("{}")
    (folder / ".cache").mkdir()
    (folder / ".cache" / "x.json").write_text("{}")
    debug = folder / "context" / "s1_context" / "context_debug"
    debug.mkdir()
    (debug / "CurrentRoundCompressor.jsonl").write_text("{}\n")
    (debug / "other.NDJSON").write_text("{}\n")
    outside = root / "outside"
    outside.mkdir()
    (outside / "linked.json").write_text("{}")
    os.symlink(outside, folder / "linked_folder")
    os.symlink(outside / "linked.json", folder / "alias.json")
    os.symlink(root / "nowhere.json", folder / "dangling.json")
    return folder


def test_listing_matches_the_loader_scan(tmp_path: Path) -> None:
    folder = _tree(tmp_path)
    listed = sorted(row.location for row in list_entries([folder]))
    scanned = sorted(str(p) for p in scan_folder(folder) if p.exists())
    assert listed == scanned
    assert not any("/." in p or "linked_folder" in p for p in listed)
    assert any(p.endswith("alias.json") for p in listed)


def test_locations_are_the_loaders_path_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _tree(tmp_path)
    monkeypatch.chdir(folder)
    for given in (".", "./context", "context/"):
        listed = sorted(row.location for row in list_entries([given]))
        assert listed == sorted(str(p) for p in scan_folder(Path(given)) if p.exists())
        assert all(location == str(Path(location)) for location in listed)


def test_a_file_listed_twice_through_a_link_is_one_row(tmp_path: Path) -> None:
    folder = _tree(tmp_path)
    rows = list_entries([folder, tmp_path / "outside" / "linked.json", folder])
    locations = [row.location for row in rows]
    assert len(locations) == len(set(locations))
    # alias.json (a link inside the folder) and the target given alone are one file
    assert sum(1 for p in locations if p.endswith(("alias.json", "linked.json"))) == 1


def test_rows_are_named_from_the_file_name_newest_first(tmp_path: Path) -> None:
    rows = list_entries([_tree(tmp_path)])
    dumps = [row for row in rows if row.kind == "dump"]
    assert [(r.processor, r.timestamp) for r in dumps] == [
        ("DialogueCompressor", 1795975060.0),
        ("CurrentRoundCompressor", 1795975000.0),
    ]
    assert rows[0].path == Path(rows[0].location) and rows[0].name == Path(rows[0].location).name


def test_the_dump_name_rule_is_the_parsers_rule() -> None:
    assert files.DUMP_NAME_RE.pattern == dump.DUMP_NAME_RE.pattern


def test_listing_imports_no_parser(tmp_path: Path) -> None:
    folder = _tree(tmp_path)
    code = (
        "import sys; from inspector.sources.entries import list_entries, entry_details; "
        f"rows = list_entries([{str(folder)!r}]); [entry_details(r) for r in rows]; "
        "print(sorted(m for m in ('pydantic', 'inspector.sources.dump') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
