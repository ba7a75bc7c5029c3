"""The JSON the CLI prints (the CLI contract as models): `why --json` lines, `stats --json`,
and the error line every command prints for an unreadable input.

Scripts rely on these keys; the models keep unknown keys, so a line with more keys still
validates. Must not import anything outside pydantic and `inspector.core`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag

from inspector.core.artifact import DebugRecorded, DumpRecorded
from inspector.formats.base import Count, FormatModel, Int, Number


class SpanCounts(FormatModel):
    """Region sizes: preserved prefix, messages to compress, protected tail."""

    preserved_prefix: Count | None = None
    messages_to_compress: Count | None = None
    protected_tail: Count | None = None


class CheckLine(FormatModel):
    """One check of the diagnosis chain."""

    key: str
    title: str
    status: str = Field(description="pass, fail, skip, ...")
    sentence: str
    numbers: dict[str, Any] = Field(default_factory=dict)


class FindingLine(FormatModel):
    """One finding: a pitfall worth a warning."""

    key: str
    kind: str | None = Field(None, description="stable snake_case id (the same as key)")
    severity: str = Field(description="info, warning or problem")
    sentence: str
    fix: str | None = Field(None, description="the change that would avoid it, when one exists")
    numbers: dict[str, Any] = Field(default_factory=dict)


def _recorded_kind(value: Any) -> str:
    if isinstance(value, Mapping):
        if "silent_causes" in value:
            return "debug"
        if "unrecoverable" in value:
            return "dump"
    return "other"


def _recorded_schema(schema: dict[str, Any]) -> None:
    """Make the three kinds of `recorded` exclusive in the JSON Schema, as the reader
    tells them apart: a dump's has `unrecoverable`, a debug run's `silent_causes`."""
    for item in schema.get("oneOf", ()):
        ref = str(item.get("$ref", ""))
        if "DumpRecorded" in ref:
            item["required"] = ["unrecoverable"]
        elif "DebugRecorded" in ref:
            item["required"] = ["silent_causes"]
        else:
            item["not"] = {
                "anyOf": [{"required": ["unrecoverable"]}, {"required": ["silent_causes"]}]
            }


#: `recorded`: what the artifact itself says happened; for a dump and a debug-log run the
#: typed records of `inspector.core.artifact`, for the other kinds an object (often empty).
Recorded = Annotated[
    Annotated[DumpRecorded, Tag("dump")]
    | Annotated[DebugRecorded, Tag("debug")]
    | Annotated[dict[str, Any], Tag("other")],
    Discriminator(_recorded_kind),
    Field(json_schema_extra=_recorded_schema),
]


class WhyLine(FormatModel):
    """One `why --json` line: our evaluation of a context, and what the artifact recorded."""

    source: str
    id: str
    kind: Literal["snapshot", "messages", "dump", "debug", "llm_request"]
    processor: str | None
    hit: bool | None
    reason: str | None
    total_tokens: Int | None
    threshold: Int | None
    target_tokens: Int | None
    min_target_tokens: Int | None
    effective_keep: Int | None
    span: SpanCounts | None
    checks: list[CheckLine]
    findings: list[FindingLine]
    recorded: Recorded
    tuning: dict[str, Any] | None = None
    span_target_tokens: Int | None = None
    exact_counting: bool | None = None


class ErrorLine(FormatModel):
    """The line printed for an input that could not be read."""

    source: str
    error: str
    where: str | None = None


class RatioStats(FormatModel):
    """The distribution of reduction ratios."""

    count: Count
    min: Number | None
    median: Number | None
    mean: Number | None
    max: Number | None
    buckets: dict[str, Count]


class CompressionLine(FormatModel):
    """One compression in the biggest / least effective lists."""

    id: str
    source: str
    processor: str
    session_id: str | None
    tokens_before: Count | None
    tokens_after: Count | None
    reduction: Count | None
    reduction_ratio: Number | None


class StatsLine(FormatModel):
    """The last `stats --json` line."""

    kind: Literal["stats"]
    sources: list[str]
    artifacts: dict[str, Count]
    errors: Count
    by_processor: dict[str, dict[str, Count]]
    compressions: Count
    tokens_before: Count
    tokens_after: Count
    tokens_saved: Count
    reduction_ratio: RatioStats
    not_compressed: dict[str, Count]
    retries_by_error_type: dict[str, dict[str, Count]]
    biggest: list[CompressionLine]
    least_effective: list[CompressionLine]
    findings: dict[str, Count] = Field(
        default_factory=dict, description="findings by kind (absent with --no-findings)"
    )
    findings_by_severity: dict[str, Count] = Field(default_factory=dict)
    finding_severity: dict[str, str] = Field(
        default_factory=dict, description="each kind's most serious severity seen"
    )
    artifacts_with_problems: Count | None = None
