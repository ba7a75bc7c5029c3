"""`inspector cache [info|clear] [--dir DIR] [--json]`: the on-disk caches.

The token counts of messages (`sources.cache`) and the whole `why --json` results of
unchanged files (`sources.result_cache`, in its `results/` subfolder). `info` (the default)
says where they are and how big; `clear` deletes both. The folder
is $CONTEXT_INSPECTOR_CACHE_DIR or the platform's user cache folder, unless --dir is
given. Never imports Textual.
"""

from __future__ import annotations

import argparse

from inspector.cli.common import print_json_line
from inspector.sources import result_cache
from inspector.sources.cache import TokenCache


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Action, folder and --json."""
    parser.description = (
        "Show or clear the caches: token counts and whole why --json results "
        "(reused when an unchanged file is reopened)."
    )
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
        results_freed = result_cache.clear(cache.directory)
        freed = cache.clear() + results_freed
        if args.json:
            print_json_line(
                {
                    "kind": "cache",
                    "action": "clear",
                    "path": str(cache.path),
                    "bytes_freed": freed,
                    "result_bytes_freed": results_freed,
                }
            )
        else:
            print(f"cleared {cache.directory} ({_human(freed)} freed)")
        return 0
    info = cache.info()
    cache.close()
    entries, size = result_cache.usage(cache.directory)
    folder = str(cache.directory / result_cache.SUBDIR)
    results = {"path": folder, "entries": entries, "bytes": size}
    if args.json:
        print_json_line({"kind": "cache", "action": "info", **info, "results": results})
    else:
        print(f"token cache: {info['path']}")
        print(f"entries: {info['entries']:,}  size: {_human(info['bytes'])}")
        print(f"whole-file results: {folder}")
        print(f"entries: {entries:,}  size: {_human(size)}")
        if info["disabled"]:
            print(info["disabled"])
    return 0
