"""Generate `sample_dumps/`: realistic openJiuwen output, built in code, deterministic.

Run `python -m tools.samples sample_dumps` (or `make samples`, or
`scripts/make_sample_dumps.py`). Each session is an agent conversation built message by
message; before every model call the compressor's trigger is evaluated with the core
engine and written as openJiuwen writes it (`threshold_check`, `span_built`,
`compression_retry` in `<Processor>.jsonl`; a dump per applied compression), so every
number in the folder is what our engine says for the context it came from. Model
failures are scripted per evaluation. Layout: `<workspace>/context/<session>_context/
{compression_logs,context_debug}/`, as openJiuwen lays it out with a workspace. Beside
those, `<session>_context/inspector_snapshots.jsonl` holds, for every evaluation that wrote
no dump, the exact context it was evaluated on as a context snapshot carrying
`session_id`, `context_id` and the check's `timestamp` (what `inspector snapshot` exports
for a debug run), so the loader gives every debug artifact its context.
This package writes files only into the folder it is given. It is a file generator, not
runtime code: it lives outside `inspector/` and is not installed with the package.

Modules: `common` (constants, model errors, tools, images, usage records), `session`
(`Session`, the scripted conversation and its records), `sessions` (the five sessions),
`generate` (`generate`, `main`, the folder README).
"""

from __future__ import annotations

from tools.samples.common import SNAPSHOTS_FILE
from tools.samples.generate import generate, main
from tools.samples.sessions import SESSIONS

__all__ = ["SESSIONS", "SNAPSHOTS_FILE", "generate", "main"]
