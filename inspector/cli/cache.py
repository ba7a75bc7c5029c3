"""`inspector cache [info|clear] [--dir DIR] [--json]`: the on-disk cache of token counts.

`info` (the default) says where the cache is and how big; `clear` deletes it. The folder
is $CONTEXT_INSPECTOR_CACHE_DIR or the platform's user cache folder, unless --dir is
given. Never imports Textual.
"""

from __future__ import annotations

import argparse

from inspector.cli.common import print_json_line
from inspector.sources.cache import TokenCache


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Action, folder and --json."""
    parser.description = "Show or clear the cache of token counts (reused when a dump is reopened)."
    parser.add_argument("action", nargs="?", choices=("info", "clear"), default="info")
    parser.add_argument(
        "--dir", default=None, metavar="DIR", help="cache folder (default: the user cache folder)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object instead of text")


def _human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"


def run(args: argparse.Namespace) -> int:
    """Print the cache's location and size, or clear it."""
    cache = TokenCache(args.dir)
    if args.action == "clear":
        freed = cache.clear()
        if args.json:
            print_json_line(
                {"kind": "cache", "action": "clear", "path": str(cache.path), "bytes_freed": freed}
            )
        else:
            print(f"cleared {cache.directory} ({_human(freed)} freed)")
        return 0
    info = cache.info()
    cache.close()
    if args.json:
        print_json_line({"kind": "cache", "action": "info", **info})
    else:
        print(f"token cache: {info['path']}")
        print(f"entries: {info['entries']:,}  size: {_human(info['bytes'])}")
        if info["disabled"]:
            print(info["disabled"])
    return 0
