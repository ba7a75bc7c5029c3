"""Rich renderables printed by helper processes, in order: a long text report on every core.

`why` over a folder of 5,051 dumps printed 10,015 panels in 92-96 s, about 70 % of it Rich
laying them out (6.6 ms a panel). A `ParallelPrinter` prints the first `SERIAL_FIRST`
renderables itself, as a console does; after that, when the machine has more than one core,
it sends each renderable (pickled: ~8 KB and 0.5 ms a panel) to helper processes that print
it on a console made like this one (`console_settings`: class, width, colour system,
terminal or not, encoding), and writes what each returns in the order given, as it comes.
The bytes are the console's own (tests/test_render_parallel.py). A helper that dies or a
pool that cannot start makes the printer print the rest itself; a helper's exception is the
renderable's own, raised here as printing it here would have.

`CONTEXT_INSPECTOR_RENDER_HELPERS` sets how many helpers (`helpers_wanted`; 0 or 1: none).
Helpers are started as `processes.helper_start_method` says. Rich only: no sources, no
front end.
"""

from __future__ import annotations

import io
import multiprocessing
import os
from collections import deque
from collections.abc import Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from rich.console import Console, RenderableType

from inspector.processes import helper_start_method

#: Renderables printed here before helpers are started (a short report never waits for them).
SERIAL_FIRST = 48
#: How many helpers (unset: one per core; 0 or 1: none, everything printed here).
HELPERS_ENV = "CONTEXT_INSPECTOR_RENDER_HELPERS"
#: Renderables sent to the helpers and not yet written, per helper, at most.
AHEAD = 6


def helpers_wanted(
    environ: Mapping[str, str], default: int | None = None
) -> tuple[int, str | None]:
    """The helpers `HELPERS_ENV` asks for (unset: `default`, else one per core), and a
    warning when its value is not a count."""
    cores = default if default is not None else os.cpu_count() or 1
    text = environ.get(HELPERS_ENV, "").strip()
    if not text:
        return cores, None
    if text.isdigit():
        return int(text), None
    return cores, f"warning: {HELPERS_ENV}={text!r} is not a count: {cores} helper(s)"


def console_settings(console: Console) -> dict[str, Any]:
    """What a helper needs to make a console printing the same bytes as `console`."""
    return {
        "cls": type(console),
        "width": console.width,
        "height": console.height,
        "color_system": console.color_system,
        "force_terminal": console.is_terminal,
        "no_color": console.no_color,
        "legacy_windows": console.legacy_windows,
        "safe_box": console.safe_box,
        "tab_size": console.tab_size,
        "emoji": console._emoji,  # noqa: SLF001 - no public reader of the setting
        "highlight": console._highlight,  # noqa: SLF001 - idem
        "encoding": console.encoding,
    }


class EncodedText(io.StringIO):
    """A text buffer that says it writes `encoding` (Rich draws ASCII boxes for a file
    that cannot write UTF-8)."""

    def __init__(self, encoding: str) -> None:
        super().__init__()
        self._encoding = encoding

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._encoding


def render_text(settings: Mapping[str, Any], renderable: RenderableType) -> str:
    """What a console made from `settings` (`console_settings`) writes for `renderable`."""
    options = dict(settings)
    cls, encoding = options.pop("cls"), options.pop("encoding")
    buffer = EncodedText(encoding)
    cls(file=buffer, **options).print(renderable)
    return buffer.getvalue()


class ParallelPrinter:
    """`print(renderable)` as `console.print`, on helper processes once past the first
    `SERIAL_FIRST`; a context manager (the helpers end with it, what they print written)."""

    def __init__(self, console: Console, helpers: int) -> None:
        self.console = console
        self.helpers = helpers
        self.printed = 0
        #: How many of them went to a helper (and came back, unless it died).
        self.sent = 0
        self._settings = console_settings(console)
        self._pool: ProcessPoolExecutor | None = None
        self._started = False
        self._ahead: deque[tuple[Future[str], RenderableType]] = deque()

    def __enter__(self) -> ParallelPrinter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        finished = exc_info[0] is None  # else (an error, Ctrl-C): nothing more is printed
        try:
            while finished and self._ahead:
                self._write_next()
        except BaseException:
            finished = False  # a renderable failed: nothing after it, as when printed here
            raise
        finally:
            self._stop(print_rest=finished)

    def print(self, renderable: RenderableType) -> None:
        """Print `renderable` (here, or on a helper once they run: written in order)."""
        self.printed += 1
        pool = self._pool_now()
        if pool is None:
            self.console.print(renderable)
            return
        try:
            future = pool.submit(render_text, self._settings, renderable)
        except (BrokenProcessPool, RuntimeError):
            self._stop()
            self.console.print(renderable)
            return
        self.sent += 1
        self._ahead.append((future, renderable))
        while self._ahead and (len(self._ahead) > AHEAD * self.helpers or self._ahead[0][0].done()):
            self._write_next()

    def _pool_now(self) -> ProcessPoolExecutor | None:
        """The helpers, started once `SERIAL_FIRST` renderables were printed here."""
        if self._started or self.printed <= SERIAL_FIRST or self.helpers < 2:
            return self._pool
        self._started = True
        method = helper_start_method()
        if method is not None:
            try:
                context = multiprocessing.get_context(method)
                self._pool = ProcessPoolExecutor(self.helpers, mp_context=context)
            except (OSError, ValueError):
                self._pool = None
        return self._pool

    def _write_next(self) -> None:
        """Write the oldest renderable sent (printed here if its helper died)."""
        future, renderable = self._ahead.popleft()
        try:
            text = future.result()
        except BrokenProcessPool:
            self.console.print(renderable)
            self._stop()  # and the others sent after it
            return
        file = self.console.file
        file.write(text)
        file.flush()

    def _stop(self, print_rest: bool = True) -> None:
        """End the helpers; anything still sent is printed here, in order (`print_rest`)."""
        pool, self._pool = self._pool, None
        ahead = list(self._ahead) if print_rest else []
        self._ahead.clear()
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        for future, renderable in ahead:
            done = future.done() and not future.cancelled() and future.exception() is None
            if done:
                self.console.file.write(future.result())
            else:
                self.console.print(renderable)
