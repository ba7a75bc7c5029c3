"""Arguments and helpers shared by the subcommands: tuning flags, default sources, output."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspector.core.errors import ConfigError
from inspector.core.tokens import TOKEN_MODES
from inspector.core.tuning import PROCESSOR_KINDS, Tuning, apply_overrides  # noqa: F401 - re-exported

TUNING_FIELDS = (
    "processor",
    "trigger_ratio",
    "min_target_ratio",
    "keep_recent",
    "context_max",
    "token_mode",
    "tool_boundary",
)


class UsageError(Exception):
    """Bad command-line usage (exit status 2)."""


def add_tuning_arguments(parser: argparse.ArgumentParser) -> None:
    """The TUNING flags of the CLI contract; absent flags keep the recorded values."""
    group = parser.add_argument_group("tuning (overrides what the source recorded)")
    group.add_argument("--processor", choices=PROCESSOR_KINDS, help="compressor to evaluate")
    group.add_argument("--trigger-ratio", type=float, metavar="F", help="0 < F < 1")
    group.add_argument("--min-target-ratio", type=float, metavar="F", help="0 <= F < 1")
    group.add_argument("--keep-recent", type=int, metavar="N", help="N >= 0")
    group.add_argument(
        "--no-tool-boundary",
        action="store_true",
        help="what-if: do not keep tool calls with their results (openJiuwen always does)",
    )
    group.add_argument("--context-max", type=int, metavar="N", help="context window tokens, N > 0")
    group.add_argument("--tokens", choices=TOKEN_MODES, dest="token_mode", help="token counter")


def tuning_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The tuning fields the user set on the command line."""
    out: dict[str, Any] = {}
    for name in (
        "processor",
        "trigger_ratio",
        "min_target_ratio",
        "keep_recent",
        "context_max",
        "token_mode",
    ):
        value = getattr(args, name, None)
        if value is not None:
            out[name] = value
    if getattr(args, "no_tool_boundary", False):
        out["tool_boundary"] = False
    return out


def check_overrides(overrides: dict[str, Any]) -> None:
    """Validate flag values up front so a bad one is a usage error naming the flag."""
    try:
        Tuning().with_(**overrides)
    except ConfigError as error:
        flag = "--" + error.field.replace("_", "-")
        raise UsageError(
            f"{flag}: {error.value!r} is not allowed, must be {error.allowed}"
        ) from None


def default_sources(repo_samples: Path | None = None) -> list[str]:
    """No SOURCE given: the openJiuwen env folders that exist, else the bundled sample_dumps."""
    found = [
        os.environ[name]
        for name in ("OPENJIUWEN_COMPRESSION_DUMP_DIR", "OPENJIUWEN_CONTEXT_DEBUG_DIR")
        if os.environ.get(name) and ("{" in os.environ[name] or Path(os.environ[name]).exists())
    ]
    if found:
        return list(dict.fromkeys(found))
    samples = repo_samples or Path(__file__).resolve().parents[2] / "sample_dumps"
    if samples.exists():
        return [str(samples)]
    return ["sample_dumps"]


_LONE_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def print_json_line(obj: Any, stream: Any = None) -> None:
    """One compact JSON object per line (non-ASCII kept), always valid UTF-8.

    A lone surrogate (read from a `"\\ud800"` escape) cannot be encoded as UTF-8: it is
    written as the same JSON escape, so the line still reads back to the same string. The
    line goes out as UTF-8 bytes whatever the stream's own encoding.
    """
    text = json.dumps(obj, ensure_ascii=False, default=str)
    try:
        data = (text + "\n").encode("utf-8")
    except UnicodeEncodeError:
        text = _LONE_SURROGATE_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
        data = (text + "\n").encode("utf-8")
    out = stream or sys.stdout
    binary = getattr(out, "buffer", None)
    if binary is not None:
        out.flush()
        binary.write(data)
        binary.flush()
    else:
        out.write(data.decode("utf-8"))
        out.flush()


def require_sources(sources: Sequence[str]) -> list[str]:
    """Sources given, or the defaults."""
    return list(sources) if sources else default_sources()
