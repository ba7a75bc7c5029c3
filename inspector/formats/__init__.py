"""Every file and wire shape the inspector reads or writes, declared once as pydantic v2 models.

`snapshot` (our interchange format), `dump` (openJiuwen's compression dump), `debug` (a
debug-log record, a union on `event`), `llm_request` (0.1.19's `llm_request.jsonl`
record), `why` (a `why --json` line), `stats` (the `stats --json` line), `compare`,
`sweep` and `rerun` (their `--json` lines), `gateway_frame` and `trajectory` (jiuwenswarm's
live wire) and `index` (one row of the Parquet decision
index). The rules
shared by all of them (unknown keys kept, strict types, NaN and huge integers refused, one
located error) are in `inspector.formats.base`. The bulk message objects stay the slots
dataclasses of `inspector.core.messages`. Must not import anything outside pydantic, the
standard library and `inspector.core`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from inspector.formats.base import FormatModel, format_error, validate
    from inspector.formats.debug import DEBUG_RECORD, DebugRecord, parse_debug_record
    from inspector.formats.dump import DumpDocument
    from inspector.formats.index import IndexRow
    from inspector.formats.live import GATEWAY_FRAME, TrajectoryPage
    from inspector.formats.llm_request import LlmRequestRecord
    from inspector.formats.output import ErrorLine, StatsLine, WhyLine
    from inspector.formats.reports import CompareLine, RerunLine, SweepLine
    from inspector.formats.snapshot import SnapshotEnvelope

#: Each public name -> the submodule defining it: imported on first use (PEP 562), so that
#: a reader of one format (`inspector.formats.dump`) never builds the others' models.
_HOMES: dict[str, str] = {
    "FormatModel": "base",
    "format_error": "base",
    "validate": "base",
    "DEBUG_RECORD": "debug",
    "DebugRecord": "debug",
    "parse_debug_record": "debug",
    "DumpDocument": "dump",
    "IndexRow": "index",
    "GATEWAY_FRAME": "live",
    "TrajectoryPage": "live",
    "LlmRequestRecord": "llm_request",
    "ErrorLine": "output",
    "StatsLine": "output",
    "WhyLine": "output",
    "CompareLine": "reports",
    "RerunLine": "reports",
    "SweepLine": "reports",
    "SnapshotEnvelope": "snapshot",
}

__all__ = [
    "DEBUG_RECORD",
    "GATEWAY_FRAME",
    "TrajectoryPage",
    "CompareLine",
    "RerunLine",
    "SweepLine",
    "SCHEMA_NAMES",
    "DebugRecord",
    "DumpDocument",
    "ErrorLine",
    "FormatModel",
    "IndexRow",
    "LlmRequestRecord",
    "SnapshotEnvelope",
    "StatsLine",
    "WhyLine",
    "format_error",
    "json_schema",
    "parse_debug_record",
    "validate",
]


def __getattr__(name: str) -> Any:
    """A public name, its submodule imported on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


#: Each schema name -> (public name of its model or adapter, description).
_PUBLIC: dict[str, tuple[str, str]] = {
    "snapshot": (
        "SnapshotEnvelope",
        "a context snapshot (one JSON object, or one JSON Lines record)",
    ),
    "dump": ("DumpDocument", "an openJiuwen compression dump"),
    "debug": ("DEBUG_RECORD", "one debug-log (<Processor>.jsonl) record, by its event"),
    "llm_request": ("LlmRequestRecord", "one llm_request.jsonl record (openJiuwen 0.1.19)"),
    "why": ("WhyLine", "one `inspector why --json` line"),
    "stats": ("StatsLine", "the `inspector stats --json` line"),
    "gateway_frame": ("GATEWAY_FRAME", "one jiuwenswarm web-gateway frame, by its type and event"),
    "trajectory": ("TrajectoryPage", "one page of jiuwenswarm's trajectory records API"),
    "compare": ("CompareLine", "one `inspector compare --json` line"),
    "sweep": ("SweepLine", "one `inspector sweep --json` point"),
    "rerun": ("RerunLine", "the `inspector rerun --json` object"),
    "index": ("IndexRow", "one row of the `inspector index` Parquet decision index"),
}

#: The formats `inspector schema NAME` knows, in the order `--help` lists them.
SCHEMA_NAMES: tuple[str, ...] = tuple(_PUBLIC)


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the public format `name` (KeyError: no such format)."""
    from pydantic import TypeAdapter

    target_name, description = _PUBLIC[name]
    target = __getattr__(target_name)
    adapter = target if isinstance(target, TypeAdapter) else TypeAdapter(target)
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:context-inspector:schema:{name}",
        **adapter.json_schema(mode="validation"),
    }
    schema.setdefault("description", description)
    schema["title"] = f"inspector {name}: {description}"
    return schema
