"""`inspector schema NAME`: print the JSON Schema of a public format, so users can validate
their own files (snapshot, dump, debug, llm_request, gateway_frame, trajectory, why, stats,
compare, sweep, rerun, index).
Never imports Textual.
"""

from __future__ import annotations

import argparse
import json

from inspector.formats import SCHEMA_NAMES, json_schema


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The format name."""
    parser.description = "Print the JSON Schema of a format the inspector reads or writes."
    parser.add_argument("name", choices=SCHEMA_NAMES, metavar="NAME", help=", ".join(SCHEMA_NAMES))


def run(args: argparse.Namespace) -> int:
    """Print the schema, indented."""
    print(json.dumps(json_schema(args.name), indent=2, ensure_ascii=False))
    return 0
