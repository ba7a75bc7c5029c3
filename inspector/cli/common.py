"""Arguments and helpers shared by the subcommands: tuning flags, default sources, output.

Every command's stdout and stderr go through `masked_output` (secrets masked line by line,
the user's API key and header values always). The strategy registry is imported by the
helpers that read it, not here: every command imports this module, and a command without
TUNING flags (`stats`) never reads the registry. Never imports Textual.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspector.core.errors import ConfigError
from inspector.core.redact import MASK, Masker
from inspector.core.tuning import apply_overrides  # noqa: F401 - re-exported

if TYPE_CHECKING:
    from inspector.core.strategy.fields import FieldInfo


class UsageError(Exception):
    """Bad command-line usage (exit status 2)."""


def _flag_fields() -> dict[str, list[FieldInfo]]:
    """Every settings field of every strategy, grouped by the CLI flag that sets it (every
    strategy is imported)."""
    from inspector.core.strategy import registry
    from inspector.core.strategy.fields import fields_of

    grouped: dict[str, list[FieldInfo]] = {}
    for strategy in registry.all_strategies():
        for info in fields_of(strategy.settings_model):
            grouped.setdefault(info.flag, []).append(info)
    return grouped


def _dest(info: FieldInfo) -> str:
    return info.alias or info.name


def _bool_value(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "yes", "on", "1"):
        return True
    if lowered in ("false", "no", "off", "0"):
        return False
    raise argparse.ArgumentTypeError(f"{text!r} is not true or false")


def add_tuning_arguments(parser: argparse.ArgumentParser, skip: Sequence[str] = ()) -> None:
    """The TUNING flags, from the registry's static table of every strategy's settings
    fields (no strategy is imported); absent flags keep the recorded values. `skip`: flags
    the command defines itself."""
    from inspector.core.strategy import registry

    group = parser.add_argument_group("tuning (overrides what the source recorded)")
    group.add_argument(
        "--processor",
        metavar="NAME",
        help="processor to evaluate: "
        + ", ".join(registry.strategy_keys())
        + " (or openJiuwen's class name)",
    )
    group.add_argument(
        "--family",
        choices=registry.families(),
        help="processor family, where a class name exists in several (DialogueCompressor)",
    )
    for spec in registry.flags():
        if spec.flag in skip:
            continue
        if spec.kind == "bool" and spec.flag.startswith("--no-"):
            group.add_argument(
                spec.flag, dest=spec.dest, action="store_const", const=False, help=spec.help
            )
        elif spec.kind == "bool":
            group.add_argument(
                spec.flag, dest=spec.dest, type=_bool_value, metavar="BOOL", help=spec.help
            )
        elif spec.kind == "choice":
            group.add_argument(spec.flag, dest=spec.dest, choices=spec.choices, help=spec.help)
        else:
            kind = int if spec.kind == "int" else float if spec.kind == "float" else str
            metavar = "N" if spec.kind == "int" else "F" if spec.kind == "float" else "TEXT"
            group.add_argument(
                spec.flag, dest=spec.dest, type=kind, metavar=metavar, help=spec.help
            )


def tuning_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The tuning fields the user set on the command line, by flag name."""
    from inspector.core.strategy import registry

    out: dict[str, Any] = {}
    for key in ("processor", "family"):
        if getattr(args, key, None) is not None:
            out[key] = getattr(args, key)
    for spec in registry.flags():
        value = getattr(args, spec.dest, None)
        if value is not None:
            out[spec.dest] = value
    return out


def check_overrides(overrides: dict[str, Any]) -> None:
    """Validate flag values up front so a bad one is a usage error naming the flag."""
    from inspector.core.strategy import registry

    if "processor" in overrides:
        try:
            registry.resolve(str(overrides["processor"]), overrides.get("family"))
        except ConfigError as error:
            raise UsageError(
                f"--processor: {error.value!r} is not a processor, must be {error.allowed}"
            ) from None
    if not set(overrides) - {"processor", "family"}:
        return  # nothing more to check, and no strategy needs importing
    grouped = _flag_fields()
    for flag, infos in grouped.items():
        name = _dest(infos[0])
        if name not in overrides:
            continue
        errors: list[ConfigError] = []
        family = overrides.get("family")
        if not any(_accepts(i.name, overrides[name], family, errors) for i in infos):
            raise UsageError(
                f"{flag}: {overrides[name]!r} is not allowed, must be {errors[0].allowed}"
            ) from None


def _accepts(field: str, value: Any, family: str | None, errors: list[ConfigError]) -> bool:
    """Whether some settings model with `field` (of the `--family` asked for, if any) takes
    `value`; each refusal is appended to `errors`."""
    from inspector.core.strategy import registry

    models = {
        s.settings_model
        for s in registry.all_strategies()
        if field in s.settings_model.model_fields and family in (None, s.family)
    }
    for model in sorted(models, key=lambda m: m.__qualname__):
        try:
            model().with_(**{field: value})
            return True
        except ConfigError as error:
            errors.append(error)
    return False


def default_sources(repo_samples: Path | None = None) -> list[str]:
    """No SOURCE given: the openJiuwen env folders that exist, else the preferences'
    `dump_folders` that exist, else the bundled sample_dumps (the repository's folder, or
    the installed package's copy `inspector/samples`)."""
    found = [
        os.environ[name]
        for name in ("OPENJIUWEN_COMPRESSION_DUMP_DIR", "OPENJIUWEN_CONTEXT_DEBUG_DIR")
        if os.environ.get(name) and ("{" in os.environ[name] or Path(os.environ[name]).exists())
    ]
    if found:
        return list(dict.fromkeys(found))
    if repo_samples is None:
        from inspector.prefs import load_prefs

        remembered = [f for f in load_prefs()[0].dump_folders if Path(f).expanduser().exists()]
        if remembered:
            return [str(Path(f).expanduser()) for f in remembered]
    samples = repo_samples or Path(__file__).resolve().parents[2] / "sample_dumps"
    if samples.exists():
        return [str(samples)]
    # installed from a wheel: sample_dumps/ ships as the data package inspector.samples
    bundled = Path(__file__).resolve().parents[1] / "samples"
    if repo_samples is None and bundled.is_dir():
        return [str(bundled)]
    return ["sample_dumps"]


_LONE_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_DATA_MASKER = Masker()


def print_json_line(obj: Any, stream: Any = None, *, flush: bool = True) -> None:
    """One compact JSON object per line (non-ASCII kept), always valid UTF-8, secrets masked
    (with the stream's masker, so --no-mask applies; else every kind the masker knows).
    `flush=False` leaves the line in the stream's buffer (a command printing many lines in
    a row, e.g. `why --json` over a big log: a write call per line cost more than its
    line's masking); the next flushed line, or the process's exit, writes it, in order.
    """
    out = stream or sys.stdout
    write_json_line(json_line_bytes(obj, out), out, flush=flush)


def json_line_bytes(obj: Any, stream: Any = None) -> bytes:
    """The bytes `print_json_line` writes for `obj` on `stream` (made apart from writing
    them: a helper process makes them, the parent writes them, `write_json_line`).

    A lone surrogate (read from a `"\\ud800"` escape) cannot be encoded as UTF-8: it is
    written as the same JSON escape, so the line still reads back to the same string.
    The line is UTF-8 whatever the stream's own encoding.
    """
    masker = getattr(stream or sys.stdout, "masker", None)
    text = (masker if isinstance(masker, Masker) else _DATA_MASKER).json_text(obj)
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:
        text = _LONE_SURROGATE_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
        return (text + "\n").encode("utf-8")


def write_json_line(data: bytes, stream: Any = None, *, flush: bool = True) -> None:
    """Write a line of `json_line_bytes` to `stream` (stdout), as `print_json_line` does."""
    out = stream or sys.stdout
    binary = getattr(out, "buffer", None)
    if binary is not None:
        # text written before goes first (a MaskedStream knows when there is none)
        (out.flush if flush else getattr(out, "push_text", out.flush))()
        binary.write(data)
        if flush:
            binary.flush()
    else:
        out.write(data.decode("utf-8"))
        if flush:
            out.flush()


def require_sources(sources: Sequence[str]) -> list[str]:
    """Sources given, or the defaults."""
    return list(sources) if sources else default_sources()


def default_jobs() -> int:
    """The processes a command works with unless told (`--jobs`): the cores, at most 4."""
    return min(os.cpu_count() or 1, 4)


def add_jobs_argument(parser: argparse.ArgumentParser, what: str, memory: bool = False) -> None:
    """`--jobs N`: how many processes do `what` (at least 1; `check_jobs`). Not given, it
    is None (`check_jobs`: `default_jobs`); `memory`: the help says the default is also
    bounded by the free memory (`processes.jobs_memory_holds`, where the command spreads)."""
    bound = ", and as many as the free memory holds; never more than the cores" if memory else ""
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help=f"processes {what} in parallel (default: the cores, at most 4{bound}; 1: this "
        "one alone)",
    )


def check_jobs(args: argparse.Namespace, command: str) -> int:
    """The `--jobs` given, else `default_jobs()` (1 for a command without the flag); a usage
    error below 1."""
    if not hasattr(args, "jobs"):
        return 1
    if args.jobs is None:
        return default_jobs()
    if args.jobs < 1:
        raise UsageError(f"inspector {command}: --jobs must be at least 1")
    return int(args.jobs)


def add_mask_flag(parser: argparse.ArgumentParser) -> None:
    """The visible `--no-mask` every command has."""
    parser.add_argument(
        "--no-mask",
        action="store_true",
        help="print secrets found in the data as they are (for your own debugging; the API "
        "key and --header values stay masked)",
    )


def given_secrets(args: argparse.Namespace) -> list[str]:
    """The literals the user gave that must never be printed: the API key (from the variable
    --api-key-env names, when the command has one) and every --header value."""
    found: list[str] = []
    variable = getattr(args, "api_key_env", None)
    if isinstance(variable, str) and os.environ.get(variable):
        found.append(os.environ[variable])
    for header in getattr(args, "header", None) or []:
        if isinstance(header, str):
            name, _, value = header.partition(":")
            found.append(value.strip() or name.strip())
    return found


class MaskedStream:
    """A text stream that masks secrets line by line before they reach `inner`; bytes written
    to its `buffer` (JSON lines, masked as data by `print_json_line`) get the literals only."""

    def __init__(self, inner: Any, masker: Masker) -> None:
        self._inner = inner
        #: What JSON values printed to this stream are masked with (`print_json_line`).
        self.masker = masker
        self._pending = ""
        #: Whether text went to `inner` since it was last flushed (it may sit in the text
        #: layer's own buffer, before bytes written to its `buffer` since).
        self._text_unflushed = False
        self.buffer = _MaskedBinary(self, inner.buffer) if hasattr(inner, "buffer") else None

    def write(self, text: str) -> int:
        """Buffer up to the last newline; write the complete lines masked."""
        self._pending += text
        if "\n" in self._pending:
            head, _, self._pending = self._pending.rpartition("\n")
            self._inner.write(self.masker.text(head + "\n"))
            self._text_unflushed = True
        return len(text)

    def flush(self) -> None:
        """Write what is pending (masked) and flush."""
        if self._pending:
            self._inner.write(self.masker.text(self._pending))
            self._pending = ""
        self._inner.flush()
        self._text_unflushed = False

    def push_text(self) -> None:
        """`flush` when text is pending or unflushed, else nothing: bytes written to `buffer`
        next come after every text written before, and the bytes already in the binary
        layer's buffer stay there (no write call per JSON line)."""
        if self._pending or self._text_unflushed:
            self.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _MaskedBinary:
    """The `buffer` of a MaskedStream: UTF-8 lines masked as text, bytes kept otherwise."""

    def __init__(self, owner: MaskedStream, inner: Any) -> None:
        self._owner = owner
        self._inner = inner

    def write(self, data: bytes) -> int:
        """Mask the bytes as UTF-8 text (undecodable bytes kept as they are)."""
        self._owner.push_text()
        if not self._owner.masker.literals:  # nothing to mask: the bytes as they are
            self._inner.write(data)
            return len(data)
        text = bytes(data).decode("utf-8", "surrogateescape")
        masked = self._owner.masker.literal_text(text)
        self._inner.write(masked.encode("utf-8", "surrogateescape"))
        return len(data)

    def flush(self) -> None:
        """Flush the underlying binary stream."""
        self._inner.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@contextlib.contextmanager
def masked_output(args: argparse.Namespace) -> Iterator[Masker]:
    """stdout and stderr masked for the duration of a command: the user's own secrets always,
    secrets found in the data unless --no-mask."""
    masker = Masker(given_secrets(args), enabled=True)
    if getattr(args, "no_mask", False):
        masker = _LiteralsOnly(masker.literals)
    saved = sys.stdout, sys.stderr
    sys.stdout = MaskedStream(sys.stdout, masker)  # type: ignore[assignment]
    sys.stderr = MaskedStream(sys.stderr, masker)  # type: ignore[assignment]
    try:
        yield masker
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(ValueError, OSError):
                stream.flush()
        sys.stdout, sys.stderr = saved


class _LiteralsOnly(Masker):
    """--no-mask: only the literals the user gave are masked."""

    def text(self, text: str) -> str:
        """`text` with the user's literals masked, nothing else."""
        for literal in self.literals:
            text = text.replace(literal, MASK)
        return text

    def value(self, value: Any) -> Any:
        """JSON values are left as they are (the stream masks the literals)."""
        return value
