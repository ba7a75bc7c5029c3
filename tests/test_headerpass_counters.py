"""`stats --no-findings` (a header-level load) never makes the token counters: the loader
gets them on demand (`run_support._CountersOnDemand`), and making them (the token cache's
store, the encoders' registry) was serial work before the first file was read. A run with
findings still makes and uses them, with the same output as counters given up front.
Behaviour only; timings live in bench/."""

from __future__ import annotations

import json

from tests.conftest import fresh_interpreter_json

_PROBE = """
import contextlib, io, json, sys
from inspector.cli import main
out = {}
for args in (["--no-findings"], []):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        main(["stats", "--json", *args, "sample_dumps"])
    out[" ".join(args) or "findings"] = {
        "cache": "inspector.sources.cache" in sys.modules,
        "stats": buf.getvalue(),
    }
print(json.dumps(out))
"""

_EAGER = """
import contextlib, io, json
from inspector.cli import main, run_support
run_support._CountersOnDemand = lambda report: report.counters
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    main(["stats", "--json", "sample_dumps"])
print(json.dumps({"stats": buf.getvalue()}))
"""


def test_header_level_stats_never_make_counters() -> None:
    found = fresh_interpreter_json(_PROBE)
    assert not found["--no-findings"]["cache"]
    assert found["findings"]["cache"]  # the findings count tokens
    assert json.loads(found["--no-findings"]["stats"].splitlines()[-1])["kind"] == "stats"
    eager = fresh_interpreter_json(_EAGER)
    assert found["findings"]["stats"] == eager["stats"]
