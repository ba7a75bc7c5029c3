"""The decision index on Apache Spark: a DataFrame of units, `mapInArrow` calling our function.

The recipe for an existing cluster (or `local[N]` on one machine): the driver lists the
files and groups them into units (`inspector.index.rows.units`, by name only), a DataFrame
holds one row per unit (`unit`, `paths`), `mapInArrow` runs `index_unit` on each (the
executors need this package installed and the paths readable: a shared or mounted
folder, or object-store paths mounted through FUSE), and the rows are written with
`partitionBy("date")` as the same hive layout `inspector index` writes, so DuckDB reads
both alike. There is no manifest: Spark rewrites the output (`mode("overwrite")`); use
`inspector index` for incremental runs. Imports pyspark (the `spark` extra) only inside
the functions; must not import Textual, Rich, render, tui or cli.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from inspector.index.arrow import PARTITION, file_schema, rows_to_table
from inspector.index.rows import index_unit, units

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession

_SPARK_TYPES = {"string": "STRING", "int64": "BIGINT", "double": "DOUBLE", "bool": "BOOLEAN"}


def spark_ddl() -> str:
    """The row schema as a Spark DDL string (the file schema, then the partition `date`)."""
    columns = []
    for field in file_schema():
        text = str(field.type)
        if text.startswith("list<"):
            kind = f"ARRAY<{_SPARK_TYPES[str(field.type.value_type)]}>"
        else:
            kind = _SPARK_TYPES[text]
        columns.append(f"`{field.name}` {kind}")
    columns.append(f"`{PARTITION}` STRING")
    return ", ".join(columns)


def index_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """`mapInArrow` body: each input row (`unit`, `paths`) indexed, rows as Arrow batches."""
    import pyarrow as pa

    for batch in batches:
        units_column = batch.column("unit").to_pylist()
        paths_column = batch.column("paths").to_pylist()
        for unit, paths in zip(units_column, paths_column, strict=True):
            rows = index_unit(list(paths), unit)
            if not rows:
                continue
            table = rows_to_table(rows)
            table = table.append_column(PARTITION, pa.array([r[PARTITION] for r in rows]))
            yield from table.to_batches()


def index_with_spark(
    spark: SparkSession, sources: Sequence[str], out: str, partitions: int | None = None
) -> int:
    """Index `sources` on Spark into `out` (overwritten); the number of units."""
    from inspector.index.writer import source_files

    grouped = units(source_files(sources))
    data: list[tuple[str, list[str]]] = list(grouped.items())
    frame: Any = spark.createDataFrame(data, "unit STRING, paths ARRAY<STRING>")
    count = partitions or spark.sparkContext.defaultParallelism
    frame = frame.repartition(max(1, min(count, len(data) or 1)))
    rows = frame.mapInArrow(index_batches, spark_ddl())
    rows.write.partitionBy(PARTITION).mode("overwrite").parquet(out)
    return len(data)
