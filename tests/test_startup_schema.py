"""Models built on first use (`defer_build`) publish and validate exactly as models built at
import (issue 16, start cost): `inspector schema NAME` for every name, and the error texts
of bad input, compared with a fresh interpreter in which every model is built eagerly
(pydantic's `ConfigDict` made to drop `defer_build` before `inspector` is imported)."""

from __future__ import annotations

import json
from typing import Any

from inspector.formats import SCHEMA_NAMES
from tests.conftest import fresh_interpreter_json

#: Run in both interpreters: every schema, and the messages of bad input.
_PROBE = """
import contextlib, io, json, sys
from inspector.cli import main
from inspector.core.errors import ConfigError, FormatError
from inspector.core.forked.settings import CurrentRoundSettings
from inspector.core.standard.settings import FullCompactSettings
from inspector.formats import SCHEMA_NAMES, DumpDocument, SnapshotEnvelope, validate
from inspector.formats.debug import parse_debug_record
from inspector.formats.dump import DumpDocument as Dump

complete_at_import = Dump.__pydantic_complete__
out = {"complete_at_import": complete_at_import, "schemas": {}, "errors": []}
for name in SCHEMA_NAMES:
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        main(["schema", name])
    out["schemas"][name] = text.getvalue()
bad = [
    (DumpDocument, {"trigger": "nope"}),
    (DumpDocument, {"trigger": {"total_tokens_before": 1.5}}),
    (DumpDocument, {"timestamp": float("nan")}),
    (SnapshotEnvelope, {"messages": 3}),
    (SnapshotEnvelope, {"context_max": 10 ** 400}),
    (SnapshotEnvelope, []),
]
for model, raw in bad:
    try:
        validate(model, raw)
        out["errors"].append("accepted")
    except FormatError as error:
        out["errors"].append(str(error))
for raw in (
    {"event": "threshold_check", "total_tokens": "x"},
    {"event": "span_built", "messages_to_compress": 1},
):
    try:
        parse_debug_record(raw)
        out["errors"].append("accepted")
    except FormatError as error:
        out["errors"].append(str(error))
for model, changes in (
    (CurrentRoundSettings, {"trigger_context_ratio": 2.0}),
    (CurrentRoundSettings, {"keep_recent_messages": "x"}),
    (CurrentRoundSettings, {"nope": 1}),
    (FullCompactSettings, {"trigger_total_tokens": -1}),
):
    try:
        model().with_(**changes)
        out["errors"].append("accepted")
    except ConfigError as error:
        out["errors"].append(str(error))
print(json.dumps(out))
"""

_EAGER = """
import pydantic
_config = pydantic.ConfigDict
def _eager(**kwargs):
    kwargs.pop("defer_build", None)
    return _config(**kwargs)
pydantic.ConfigDict = _eager
"""


def _probe(prefix: str = "") -> dict[str, Any]:
    return fresh_interpreter_json(prefix + _PROBE)


def test_deferred_models_publish_and_refuse_as_eager_ones() -> None:
    deferred, eager = _probe(), _probe(_EAGER)
    # the two interpreters really differ: one builds at import, the other on first use
    assert deferred["complete_at_import"] is False
    assert eager["complete_at_import"] is True
    assert set(deferred["schemas"]) == set(SCHEMA_NAMES)
    for name in SCHEMA_NAMES:
        assert deferred["schemas"][name] == eager["schemas"][name], name
        assert json.loads(deferred["schemas"][name])["$id"].endswith(":" + name)
    assert deferred["errors"] == eager["errors"]
    assert "accepted" not in deferred["errors"]
