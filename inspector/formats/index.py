"""One row of the decision index (`inspector index SOURCE... --out DIR`), declared once.

The index is a Parquet dataset partitioned hive-style by `date` (`date=YYYY-MM-DD/`); each
row is one evaluation the inspector found: a dump, a debug-log evaluation (a run that wrote
no dump), a snapshot or message list, or an unreadable file (`kind="error"`). The Arrow
schema the writer uses is derived from this model's fields (`inspector.index.arrow`), and
`inspector schema index` prints its JSON Schema, so DuckDB, Spark and scripts read one shape.

Decision fields (`hit`, `reason`, `verdict`, `total_tokens`, `threshold`, ...) are the
inspector's own evaluation where a context is known (`evaluated` true) and the artifact's
recorded values otherwise; `recorded_*` and `outcome` are always what the artifact itself
says happened. Must not import anything outside pydantic, the standard library and
`inspector.core`.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

#: Bumped when a column is added, removed or changes meaning: an index written with another
#: version is rebuilt, not mixed.
INDEX_VERSION = 1


class IndexRow(BaseModel):
    """One evaluation in the decision index (one Parquet row)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)

    date: str = Field(
        description="partition: UTC date of `time` (YYYY-MM-DD), else of the file's mtime"
    )
    unit: str = Field(
        description="the group of files indexed together (a `<session>_context` folder, or the "
        "file itself); re-indexed as a whole when one of its files changes"
    )
    source: str = Field(description="absolute path of the file the evaluation came from")
    id: str = Field(description="the artifact's id (a dump's file stem, session/context/proc#n)")
    kind: str = Field(
        description="dump, debug, snapshot, messages, live_window (a window rebuilt from a live "
        "agent, e.g. read back from `inspector watch --json --snapshots`), or error"
    )
    session_id: str | None = None
    context_id: str | None = None
    processor: str | None = Field(default=None, description="openJiuwen's class name")
    family: str | None = Field(default=None, description="forked, standard or hybrid")
    strategy: str | None = Field(default=None, description="the registry's strategy key")
    release_profile: str | None = Field(
        default=None, description="the openJiuwen release profile the decision used"
    )
    openjiuwen_version: str | None = None
    time: float | None = Field(default=None, description="epoch seconds of the evaluation")
    evaluated: bool = Field(
        description="true: the decision fields are the inspector's evaluation of a context; "
        "false: they are the artifact's recorded values"
    )
    hit: bool | None = Field(default=None, description="the trigger fired")
    reason: str | None = Field(default=None, description="openJiuwen's reason word, or ours")
    verdict: str | None = Field(default=None, description="COMPRESSES, DOES NOT COMPRESS, ...")
    outcome: str | None = Field(
        default=None,
        description="recorded: compressed, not_compressed, silent_end, failed, ... (null for a "
        "snapshot)",
    )
    recorded_hit: bool | None = None
    recorded_reason: str | None = None
    total_tokens: int | None = None
    threshold: int | None = None
    context_max: int | None = None
    target_tokens: int | None = None
    min_target_tokens: int | None = None
    tokens_before: int | None = Field(default=None, description="recorded (a dump)")
    tokens_after: int | None = Field(default=None, description="recorded (a dump)")
    reduction: int | None = Field(default=None, description="tokens_before - tokens_after")
    reduction_ratio: float | None = None
    reinjected_tokens: int | None = Field(
        default=None,
        description="tokens of the re-injected <recovered_context> message after compression",
    )
    messages: int | None = Field(default=None, description="messages in the context evaluated")
    retries: int = Field(default=0, description="compression_retry records of the run")
    error_kinds: list[str] = Field(
        default_factory=list, description="the retries' error_type values, in order"
    )
    findings: list[str] = Field(default_factory=list, description="the findings' keys")
    warnings: list[str] = Field(
        default_factory=list, description="keys of the findings with severity warning"
    )
    exact_counting: bool | None = None
    error: str | None = Field(default=None, description="why the file (or context) failed")


#: Column names, in schema order.
INDEX_COLUMNS: tuple[str, ...] = tuple(IndexRow.model_fields)
