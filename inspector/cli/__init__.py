"""Command line: `inspector [SOURCE ...] [TUNING]` opens the TUI; subcommands are headless.

The headless commands never import Textual. Each subcommand lives in its own module with
`add_parser(subparsers)` and `run(args) -> int`; this module parses, dispatches and maps
errors to exit codes in one place (0 all read, 1 some input unreadable, 2 bad usage).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import os
import sys
from collections.abc import Sequence

from inspector.cli.common import UsageError, add_mask_flag, add_tuning_arguments, masked_output
from inspector.core.redact import shown_name

#: Subcommand name -> module under inspector.cli implementing it.
COMMAND_MODULES: dict[str, str] = {
    "why": "inspector.cli.why",
    "sweep": "inspector.cli.sweep",
    "snapshot": "inspector.cli.snapshot",
    "stats": "inspector.cli.stats",
    "watch": "inspector.cli.watch",
    "compare": "inspector.cli.compare",
    "rerun": "inspector.cli.rerun",
    "cache": "inspector.cli.cache",
    "schema": "inspector.cli.schema",
    "report": "inspector.cli.report",
    "index": "inspector.cli.index",
}

EXIT_OK, EXIT_UNREADABLE, EXIT_USAGE = 0, 1, 2
#: What writing the output may fail with (a full disk or quota, a device gone, a closed
#: descriptor): said in one line.
_WRITE_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EBADF, errno.EFBIG})


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so usage errors map to exit 2 in one place."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")


def build_parser(command: str | None) -> argparse.ArgumentParser:
    """The parser for one subcommand, or for the TUI launcher when `command` is None."""
    if command is None:
        parser = _Parser(
            prog="inspector",
            description="Open the Context Inspector TUI. Subcommands: "
            + ", ".join(COMMAND_MODULES),
        )
        parser.add_argument(
            "sources",
            nargs="*",
            metavar="SOURCE",
            help="dumps, logs, folders, snapshots, or a live ws:// gateway / http:// trajectory URL",
        )
        add_tuning_arguments(parser)
        return parser
    module = importlib.import_module(COMMAND_MODULES[command])
    parser = _Parser(prog=f"inspector {command}")
    module.add_arguments(parser)
    add_mask_flag(parser)
    return parser


def _closed_streams() -> str | None:
    """A closed stderr (`2>&-`) made the null device: its messages are dropped, the rest
    runs as it would. A closed stdout (`>&-`) too, with what to say about it (the
    command then does not run: it has nowhere to write)."""
    said = None
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 - for the process's life
            if name == "stdout":
                said = "inspector: standard output is closed: nowhere to write"
    return said


def _drop_stdout() -> None:
    """After a write to stdout failed (a closed pipe, a full disk): what is still buffered
    goes to the null device, so that the interpreter's last flush raises nothing."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno())  # type: ignore[union-attr]


def _tolerant_streams() -> None:
    """Text that cannot be encoded (a lone surrogate in a loaded file) is printed escaped,
    never a traceback, whatever the terminal's encoding."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


def _mistyped_command(word: str) -> bool:
    """A bare first word (no option, path separator, dot, URL or template) that is not an
    existing path: a mistyped command. A missing path-like word opens the TUI, which shows
    it as an error row."""
    if word.startswith("-") or "/" in word or "\\" in word or "." in word or "{" in word:
        return False
    try:
        return not os.path.lexists(word)
    except (ValueError, OSError):  # an embedded NUL, a name too long
        return True


def _no_such_command(word: str) -> str:
    """The usage error for a first word that is neither a command nor a path, with a hint."""
    import difflib

    close = difflib.get_close_matches(word, COMMAND_MODULES, n=1)
    if not close:
        lowered = word.lower().rstrip("s")
        close = [
            c
            for c in COMMAND_MODULES
            if lowered and (c.startswith(lowered) or lowered.startswith(c))
        ][:1]
    hint = f" (did you mean `inspector {close[0]}`?)" if close else ""
    return (
        f"inspector: {shown_name(repr(word))} is neither a command nor an existing file or "
        f"folder{hint}; commands: {', '.join(COMMAND_MODULES)}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `inspector` console script (`argv` None: this process's own
    arguments; the TUI then ends the process when the app closes, `run_tui`)."""
    closed = _closed_streams()
    if closed is not None:
        print(closed, file=sys.stderr)
        return EXIT_UNREADABLE
    _tolerant_streams()
    args_list = list(sys.argv[1:] if argv is None else argv)
    command = args_list[0] if args_list and args_list[0] in COMMAND_MODULES else None
    if command is None and args_list and args_list[0] in ("-h", "--help"):
        build_parser(None).print_help()
        print("\nheadless commands: " + ", ".join(COMMAND_MODULES) + " (inspector COMMAND --help)")
        return EXIT_OK
    if command is None and args_list and args_list[0] == "--version":
        from inspector import __version__

        print(f"inspector {__version__}")
        return EXIT_OK
    if command is None and args_list and _mistyped_command(args_list[0]):
        print(_no_such_command(args_list[0]), file=sys.stderr)
        return EXIT_USAGE
    try:
        parser = build_parser(command)
        args = parser.parse_args(args_list[1:] if command else args_list)
        if command is None:
            from inspector.cli.launch import run_tui

            return run_tui(args, end_process=argv is None)
        module = importlib.import_module(COMMAND_MODULES[command])
        with masked_output(args):
            return int(module.run(args))
    except UsageError as error:
        print(str(error), file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`| head`): nothing more to say
        _drop_stdout()
        return EXIT_OK
    except OSError as error:  # the output could not be written (a full disk), or worse
        if error.errno not in _WRITE_ERRORS:
            print(f"inspector: {error}", file=sys.stderr)
            return EXIT_UNREADABLE
        _drop_stdout()
        print(f"inspector: cannot write the output: {error.strerror}", file=sys.stderr)
        return EXIT_UNREADABLE
    except MemoryError:
        print("inspector: out of memory (try fewer sources, or --jobs 1)", file=sys.stderr)
        return EXIT_UNREADABLE


if __name__ == "__main__":
    raise SystemExit(main())
