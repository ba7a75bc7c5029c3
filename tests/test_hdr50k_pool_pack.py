"""What a pool helper sends (`pool.packed`) is, field by field, every FileLoad field after
path, group and explicit, each dump as the tuple of its fields (read by `attrgetter`s in
one call each), and `pool.unpacked` gives the load back from it and the job."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

from inspector.sources.classify import FileLoad
from inspector.sources.dump import DumpFile
from inspector.sources.pool import header_job, packed, unpacked
from tests.test_folderstats_pool import _files


def _by_field(load: FileLoad) -> tuple[Any, ...]:
    """`packed` spelled out, one field at a time (the reference)."""
    names = [f.name for f in fields(FileLoad) if f.name not in ("path", "group", "explicit")]
    dump_names = [f.name for f in fields(DumpFile)]
    return tuple(
        [tuple(getattr(dump, n) for n in dump_names) for dump in load.dumps]
        if name == "dumps"
        else getattr(load, name)
        for name in names
    )


def test_a_packed_load_holds_every_field_in_order_and_unpacks_to_itself(tmp_path: Path) -> None:
    seen_dumps = seen_records = 0
    for index, file in enumerate(_files(tmp_path)):
        job = (file, index % 3, index % 2 == 1, 64 * 1024 * 1024)
        load = header_job(job)
        sent = packed(load)
        assert sent == _by_field(load), file
        back = unpacked(sent, job)
        assert back == load and type(back.dumps) is list, file
        assert all(type(dump) is DumpFile for dump in back.dumps)
        seen_dumps += len(load.dumps)
        seen_records += len(load.records)
    assert seen_dumps and seen_records
