"""Placeholder launcher until the TUI lands: prints the why report of the sources."""

from __future__ import annotations

import argparse


def run_tui(args: argparse.Namespace) -> int:
    """Run the why report on the sources (the TUI replaces this)."""
    from inspector.cli import why

    args.json = False
    return why.run(args)
