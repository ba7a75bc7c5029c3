"""A follower's scan asks for each folder's group once and knows each file by one Path.

`FileFollower.poll` used to ask `_group_of` for every file (a walk up its parents) and to
find each file's signature by comparing a new Path with the stored one part by part: a
50,000-file folder's first scan (the browser primes its follower with it, before its load)
took ~1 s, half of that in those two. Now a group is asked for once per folder and each file
is known by the Path object first seen for it (`_interned`); the groups must be what
`_group_of` says for every file, whatever the layout.
"""

from __future__ import annotations

import json
from pathlib import Path

from inspector.core.live_events import NewArtifact, SourceRemoved
from inspector.sources.follow import FileFollower


def _write(path: Path, value: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def _layout(root: Path) -> list[Path]:
    """A session folder (dumps and a debug log), a file beside a session's subfolders, loose
    files in the root and in a plain subfolder, and a second session in a deeper folder."""
    dump = {"processor_type": "CurrentRoundCompressor", "trigger": {}}
    return [
        _write(root / "s1_context" / "compression_logs" / "1795900000000_X_s1.json", dump),
        _write(root / "s1_context" / "compression_logs" / "1795900001000_X_s1.json", dump),
        _write(root / "s1_context" / "context_debug" / "CurrentRoundCompressor.jsonl", {}),
        _write(root / "s1_context" / "inspector_snapshots.jsonl", {}),
        _write(root / "loose.json", {"messages": []}),
        _write(root / "plain" / "a.json", {"messages": []}),
        _write(root / "plain" / "b.json", {"messages": []}),
        _write(root / "deep" / "s2" / "compression_logs" / "1795900002000_X_s2.json", dump),
    ]


def test_every_file_is_in_the_group_group_of_gives_it(tmp_path: Path) -> None:
    files = _layout(tmp_path)
    alone = _write(tmp_path.parent / f"{tmp_path.name}-alone.json", {"messages": []})
    follower = FileFollower([tmp_path, alone], include_existing=False, notify=False)
    follower.poll()
    assert sorted(follower._file_group) == sorted([*files, alone])
    for path, group in follower._file_group.items():
        root = alone if path == alone else tmp_path
        expected = (path, False) if path == alone else follower._group_of(path, root)
        assert (group, follower._groups[group].is_folder) == expected, path
    # the session folders hold their files; loose and plain files are each their own group
    assert follower._file_group[files[3]] == tmp_path / "s1_context"
    assert follower._file_group[files[7]] == tmp_path / "deep" / "s2"
    assert follower._file_group[files[5]] == files[5] != follower._file_group[files[6]]


def test_each_file_keeps_one_path_object_and_forgets_it_when_gone(tmp_path: Path) -> None:
    files = _layout(tmp_path)
    follower = FileFollower([tmp_path], include_existing=False, notify=False)
    follower.poll()
    first = {str(path): path for path in follower._signatures}
    assert follower.poll() == []  # nothing changed
    assert all(first[str(path)] is path for path in follower._signatures)
    files[6].unlink()
    assert [e.source for e in follower.poll() if isinstance(e, SourceRemoved)] == [str(files[6])]
    assert str(files[6]) not in follower._interned
    _write(files[6], {"messages": [{"role": "user", "content": "again"}]})
    added = [e.artifact.source for e in follower.poll() if isinstance(e, NewArtifact)]
    assert added == [str(files[6])]  # a new file again, under a new Path object
    assert str(files[6]) in follower._interned and files[6] in follower._signatures
