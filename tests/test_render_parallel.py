"""A long text report is laid out by helper processes (`render.parallel.ParallelPrinter`) and
written in order, byte for byte what the console itself prints: plain and coloured, narrow
and wide, UTF-8 and ASCII (Rich draws other boxes then), with control characters escaped
(`TerminalSafeConsole`). A helper that dies leaves the printer printing the rest itself; a
renderable that fails raises as it would when printed here. `inspector why` over a folder
prints the same report as with no helpers. Behaviour only; the speed is in bench/ and the
README."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console, ConsoleOptions, RenderResult
from rich.panel import Panel
from rich.text import Text

from bench.synth import write_folder
from inspector.cli import main
from inspector.render import parallel
from inspector.render.parallel import EncodedText, ParallelPrinter
from inspector.render.plain import PlainTable, TerminalSafeConsole

PARENT = os.getpid()


def _renderables(count: int) -> list[Any]:
    """Panels of tables with styles, wide characters, long words and a control character."""
    made = []
    for index in range(count):
        table = PlainTable(box=None, show_header=True, header_style="bold", pad_edge=False)
        table.add_column("name", style="bold")
        table.add_column("value", justify="right")
        table.add_row(f"row {index}", f"{index * 7919:,}")
        table.add_row("会话-七 🙂", "x" * (index % 90))
        table.add_row("\x1b]0;title\x07", Text("styled", style="red on white"))
        made.append(Panel(table, title=Text(f"#{index}"), subtitle="a long " * (index % 9)))
    return made


def _console(encoding: str, **settings: Any) -> tuple[Console, io.StringIO]:
    buffer = EncodedText(encoding)
    return TerminalSafeConsole(file=buffer, highlight=False, **settings), buffer


@pytest.mark.parametrize(
    ("encoding", "settings"),
    [
        ("utf-8", {"width": 80}),
        ("utf-8", {"width": 57, "force_terminal": True, "color_system": "truecolor"}),
        ("utf-8", {"width": 132, "force_terminal": True, "color_system": "standard"}),
        ("ascii", {"width": 70}),
    ],
)
def test_helpers_print_the_bytes_the_console_prints(
    monkeypatch: pytest.MonkeyPatch, encoding: str, settings: dict[str, Any]
) -> None:
    monkeypatch.setattr(parallel, "SERIAL_FIRST", 3)
    items = _renderables(40)
    alone, expected = _console(encoding, **settings)
    for item in items:
        alone.print(item)
    console, got = _console(encoding, **settings)
    with ParallelPrinter(console, helpers=2) as printer:
        for item in items:
            printer.print(item)
    assert printer.sent == 40 - 3  # every one after the first three went to a helper
    assert got.getvalue() == expected.getvalue()
    assert ("╭" in expected.getvalue()) is (encoding == "utf-8")  # the boxes follow it


class _Deadly:
    """Kills the helper that lays it out (printed in this process, it is one line)."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if os.getpid() != PARENT:
            os._exit(3)
        yield Text("survived")


def test_a_helper_that_dies_leaves_the_rest_printed_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "SERIAL_FIRST", 2)
    items: list[Any] = [*_renderables(6), _Deadly(), *_renderables(6)]
    alone, expected = _console("utf-8", width=80)
    for item in items:
        alone.print(item)
    console, got = _console("utf-8", width=80)
    with ParallelPrinter(console, helpers=2) as printer:
        for item in items:
            printer.print(item)
    assert got.getvalue() == expected.getvalue()
    assert "survived" in got.getvalue()


class _Failing:
    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        raise LookupError("no such cell")
        yield Text("")  # pragma: no cover - a generator, as renderables are


def test_a_renderable_that_fails_raises_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "SERIAL_FIRST", 1)
    console, got = _console("utf-8", width=80)
    with pytest.raises(LookupError, match="no such cell"), ParallelPrinter(console, 2) as printer:
        for item in [*_renderables(3), _Failing(), *_renderables(3)]:
            printer.print(item)
    assert got.getvalue().count("╭") == 3  # what came before it, in order, then nothing


def test_no_helpers_for_a_short_report_or_one_core(monkeypatch: pytest.MonkeyPatch) -> None:
    console, _ = _console("utf-8", width=80)
    with ParallelPrinter(console, helpers=2) as printer:
        for item in _renderables(parallel.SERIAL_FIRST):
            printer.print(item)
    assert printer.sent == 0
    monkeypatch.setattr(parallel, "SERIAL_FIRST", 0)
    with ParallelPrinter(console, helpers=1) as printer:
        for item in _renderables(5):
            printer.print(item)
    assert printer.sent == 0


def _why(folder: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    # `--jobs 1`: no forked helper decides (`ReportRun.spread`); the render helpers lay out
    code = main(["why", "--jobs", "1", str(folder)])
    return code, capsys.readouterr().out


def test_why_over_a_folder_prints_the_report_it_prints_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CONTEXT_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CONTEXT_INSPECTOR_NO_RESULT_CACHE", "1")
    monkeypatch.setenv("COLUMNS", "100")
    folder = write_folder(tmp_path / "f", dumps=70, sessions=2, messages_per_dump=6)
    sent: list[int] = []
    exit_ = ParallelPrinter.__exit__

    def counted(self: ParallelPrinter, *exc_info: Any) -> None:
        exit_(self, *exc_info)
        sent.append(self.sent)

    monkeypatch.setattr(ParallelPrinter, "__exit__", counted)
    monkeypatch.setenv(parallel.HELPERS_ENV, "2")
    with_helpers = _why(folder, capsys)
    monkeypatch.setenv(parallel.HELPERS_ENV, "0")  # none: everything printed here
    alone = _why(folder, capsys)
    monkeypatch.setattr(
        parallel, "helper_start_method", lambda: None
    )  # no way to start helpers here
    without_pool = _why(folder, capsys)
    assert sent[0] > 70 - parallel.SERIAL_FIRST and sent[1:] == [0, 0]
    assert with_helpers == alone == without_pool and alone[1].count("╭─ dump") == 70


def test_the_helpers_asked_for() -> None:
    cores = os.cpu_count() or 1
    assert parallel.helpers_wanted({}) == (cores, None)
    assert parallel.helpers_wanted({}, 1) == (1, None)  # `why --jobs 1`: none
    assert parallel.helpers_wanted({parallel.HELPERS_ENV: "3"}, 1) == (3, None)
    assert parallel.helpers_wanted({parallel.HELPERS_ENV: " 3 "}) == (3, None)
    assert parallel.helpers_wanted({parallel.HELPERS_ENV: "0"}) == (0, None)
    count, warning = parallel.helpers_wanted({parallel.HELPERS_ENV: "all"})
    assert count == cores and warning is not None and "'all' is not a count" in warning


def test_why_says_when_the_helpers_asked_for_are_not_a_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CONTEXT_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv(parallel.HELPERS_ENV, "many")
    code = main(["why", "--jobs", "1", str(Path(__file__).resolve().parents[1] / "sample_dumps")])
    captured = capsys.readouterr()
    assert code in (0, 1) and "╭─" in captured.out
    assert f"warning: {parallel.HELPERS_ENV}='many' is not a count" in captured.err
