"""The decision index: every evaluation found in many sources as rows of one Parquet dataset.

`rows` holds the pure per-unit function (paths in, `IndexRow` dicts out; picklable, so a
process pool or Spark runs it), `arrow` the Arrow schema derived from
`inspector.formats.index`, `writer` the incremental, hive-partitioned dataset writer, and
`spark` the Apache Spark (local mode or a cluster) recipe. Must not import Textual, Rich,
render, tui or cli; pyarrow is imported by `arrow` and `writer` only, pyspark by `spark` only.
"""
