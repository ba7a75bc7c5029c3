"""`inspector [SOURCE ...] [TUNING]`: open the TUI through the app factory.

Flags are checked before Textual is imported, so a bad value is a usage error (exit 2).
"""

from __future__ import annotations

import argparse

from inspector.cli.common import check_overrides, default_sources, tuning_overrides


def run_tui(args: argparse.Namespace) -> int:
    """Open the app on the sources (or the defaults) with the tuning flags as starting values."""
    overrides = tuning_overrides(args)
    check_overrides(overrides)
    sources = list(args.sources) or default_sources()
    from inspector.tui.app import create_app

    app = create_app(sources, overrides)
    app.run()
    return int(app.return_code or 0)
