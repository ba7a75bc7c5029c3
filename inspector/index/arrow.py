"""The Arrow schema of the decision index, derived from `inspector.formats.index.IndexRow`.

One mapping from the model's field types to Arrow types, so the Parquet files, the JSON
Schema and the rows the indexing function returns cannot drift apart. The partition column
`date` lives in the folder names (`date=YYYY-MM-DD/`), not in the files. Imports pyarrow
(the `index` extra); must not import Textual, Rich, render, tui or cli.
"""

from __future__ import annotations

import types
from collections.abc import Sequence
from typing import Any, Union, get_args, get_origin

import pyarrow as pa

from inspector.formats.index import IndexRow

#: The hive partition column: in the folder names, not in the files.
PARTITION = "date"

_SCALARS: dict[type, pa.DataType] = {
    str: pa.string(),
    int: pa.int64(),
    float: pa.float64(),
    bool: pa.bool_(),
}


def _arrow_type(annotation: Any) -> tuple[pa.DataType, bool]:
    """The Arrow type of a field annotation and whether it may be null."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        inner = [a for a in get_args(annotation) if a is not type(None)]
        if len(inner) != 1:
            raise TypeError(f"unsupported union {annotation!r}")
        return _arrow_type(inner[0])[0], True
    if origin is list:
        (item,) = get_args(annotation)
        return pa.list_(_SCALARS[item]), False
    return _SCALARS[annotation], False


def file_schema() -> pa.Schema:
    """The schema of each Parquet file: every `IndexRow` field except the partition."""
    fields = []
    for name, info in IndexRow.model_fields.items():
        if name == PARTITION:
            continue
        kind, nullable = _arrow_type(info.annotation)
        fields.append(pa.field(name, kind, nullable=nullable or isinstance(kind, pa.ListType)))
    return pa.schema(fields)


def rows_to_table(rows: Sequence[dict[str, Any]]) -> pa.Table:
    """Index rows (dicts of `IndexRow`) as one Arrow table in the file schema."""
    schema = file_schema()
    columns = {name: [row.get(name) for row in rows] for name in schema.names}
    return pa.Table.from_pydict(columns, schema=schema)
