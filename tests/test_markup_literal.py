"""Text from files is shown as it is, never read as Rich or Textual markup.

A folder named `odd[/x]dir`, a dump whose session id is `a[/]b` and whose messages hold
`[bold]` and `[/]`: Rich and Textual read `[...]` in a `str` as markup, so before this the
CLI's `why` and `stats` and the TUI's status line, table, notices and panels raised
MarkupError (a traceback; the TUI gone), and `[bold]` vanished from what was shown. Each
front end is driven over such a folder: it must finish, and show those characters.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.core.tokens import TokenCounter
from inspector.tui.app import create_app
from inspector.tui.screens.browser import BrowserScreen
from inspector.tui.screens.context import ContextScreen
from tests.test_tui_app import loaded, settle

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = next(ROOT.glob("sample_dumps/**/1796159289784_CurrentRound*.json"))
LOG = SAMPLE.parents[1] / "context_debug" / "CurrentRoundCompressor.jsonl"
SESSION = "a[/]b"
CONTEXT = "[/c]ctx"
MARKED = "[bold]kept[/bold] and [/]"
ERROR_TYPE = "[/e]overflow"


@pytest.fixture()
def odd_folder(tmp_path: Path) -> Path:
    """A folder `odd[/x]dir` with a dump full of markup-like text and a broken file."""
    folder = tmp_path / "odd[" / "x]dir"
    folder.mkdir(parents=True)
    dump = json.loads(SAMPLE.read_text())
    dump["session_id"] = SESSION
    dump["context_id"] = CONTEXT
    for message in dump["compression_request"]["messages_sent_to_model"][:3]:
        if isinstance(message.get("content"), str):
            message["content"] = f"{MARKED} {message['content']}"
    (folder / f"{SAMPLE.stem.rsplit('_', 1)[0]}_odd[1].json").write_text(json.dumps(dump))
    (folder / "broken[bold].json").write_text('{"messages": [')
    records = [json.loads(line) for line in LOG.read_text().splitlines() if line.strip()]
    for record in records:
        if record.get("error_type"):
            record["error_type"] = ERROR_TYPE  # shown in the recorded table of the run
    (folder / "CurrentRoundCompressor.jsonl").write_text(
        "".join(json.dumps(record) + "\n" for record in records)
    )
    return folder


def shown(app: object) -> str:
    """The text on the app's screen (its SVG screenshot without tags, spaces as spaces)."""
    svg = app.export_screenshot()  # type: ignore[attr-defined]
    return html.unescape(re.sub(r"<[^>]+>", "", svg)).replace("\xa0", " ")


@pytest.fixture()
def counters() -> dict[str, TokenCounter]:
    """Offline counters (the test is about what is shown)."""
    return {mode: TokenCounter(mode) for mode in ("tiktoken_cl100k", "len_div_4", "string_length")}


@pytest.mark.parametrize(
    "argv",
    [["why"], ["stats"], ["compare"], ["sweep", "--param", "trigger_ratio"]],
    ids=["why", "stats", "compare", "sweep"],
)
def test_cli_reports_show_markup_like_text(
    odd_folder: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    status = main([*argv, str(odd_folder)])
    out, err = capsys.readouterr()
    assert status in (0, 1), (status, err)  # 1: the broken file is reported as an error
    assert "Traceback" not in out + err and "MarkupError" not in out + err
    assert "broken[bold].json" in err  # the error names the file as it is
    shown = " ".join((out + err).split())
    assert "odd[/x]dir" in shown or SESSION in shown or CONTEXT in shown, out
    if argv == ["why"]:
        assert ERROR_TYPE in shown  # a debug run's recorded error type, in its table


async def test_tui_shows_markup_like_text_everywhere(
    odd_folder: Path, counters: dict[str, TokenCounter]
) -> None:
    app = create_app([str(odd_folder)], counters=counters)
    async with app.run_test(size=(140, 45), notifications=True) as pilot:
        browser = await loaded(app, pilot)
        assert isinstance(browser, BrowserScreen)
        assert SESSION in shown(app)
        # the error row's notice names the file as it is
        errors = [i for i, row in enumerate(browser.shown) if row.error is not None]
        assert errors
        browser.query_one("#table").move_cursor(row=errors[0])
        await pilot.press("enter")
        await pilot.pause()
        notices = [n.message for n in app._notifications]
        assert any("broken[bold].json" in message for message in notices), notices
        await pilot.pause(0.1)
        assert "odd[/x]dir/broken[bold].json" in " ".join(shown(app).split())  # the toast
        # the dump, and every panel and screen a key opens from it
        dump = next(
            i for i, row in enumerate(browser.shown) if row.artifact and row.artifact.kind == "dump"
        )
        browser.query_one("#table").move_cursor(row=dump)
        await pilot.press("enter")
        await settle(app, pilot)
        context = app.screen
        assert isinstance(context, ContextScreen)
        for key in ("w", "t", "d", "a", "a", "c", "c", "right_square_bracket"):
            await pilot.press(key)
            await settle(app, pilot)
            assert app.screen is context, key
        assert "[bold]kept[/bold]" in shown(app)  # a message of the list
        await pilot.press("slash")
        await pilot.press(*"[/q]")
        await pilot.press("enter")
        await settle(app, pilot)
        assert any("[/q]" in n.message for n in app._notifications)
        for key in ("s", "C", "question_mark"):
            await pilot.press(key)
            await settle(app, pilot)
            assert app.screen is not context, key  # the sweep, the comparison, the help
            await pilot.press("escape")
            await settle(app, pilot)
            assert app.screen is context, key
    assert app.return_code in (None, 0)
