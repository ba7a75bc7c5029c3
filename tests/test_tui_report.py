"""The context view's report key (`e`), pins (`P`), plain-text copies (`y`/`Y`) and the
remembered theme, driven through the pilot and compared with the CLI's builders and the core."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from inspector.core.pins import PINNED_LABEL, apply_pins
from inspector.core.tokens import TokenCounter
from inspector.prefs import load_prefs, save_prefs, update_prefs
from inspector.tui.app import create_app
from inspector.tui.widgets.message_list import MessageList
from tests.test_pins import context
from tests.test_tui_app import Notices, open_row, settle


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Two snapshots: the pins context and a copy under another id."""
    source = tmp_path / "in"
    source.mkdir()
    raw = context().to_dict()
    (source / "pins.json").write_text(json.dumps(raw), encoding="utf-8")
    (source / "other.json").write_text(json.dumps({**raw, "id": "other"}), encoding="utf-8")
    return source


async def test_report_key_writes_md_html_and_snapshot(
    folder: Path, tmp_path: Path, counters: dict[str, TokenCounter]
) -> None:
    out = tmp_path / "reports"
    update_prefs(report_folder=str(out))
    notices = Notices()
    app = create_app([str(folder)], counters=counters)
    async with app.run_test(size=(140, 40), message_hook=notices) as pilot:
        screen = await open_row(app, pilot, lambda row: row.artifact.id == "pins")
        screen.query_one(MessageList).move_to(4)
        await pilot.press("P")
        await settle(app, pilot)
        assert screen.pins == {4}
        assert screen.decision is not None
        assert screen.decision.region_label(3) == screen.decision.region_label(4) == PINNED_LABEL
        snapshot = screen.artifact.snapshot
        assert snapshot is not None
        expected = apply_pins(screen.strategy, snapshot, screen.settings, counters, {4})
        assert screen.decision.regions == expected.decision.regions
        # a tuning key keeps the pins
        await pilot.press("right_square_bracket")
        await settle(app, pilot)
        assert screen.decision.region_label(4) == PINNED_LABEL
        await pilot.press("e")
        await settle(app, pilot)
        written = sorted(p.name for p in out.iterdir())
        assert written == ["snapshot-pins.html", "snapshot-pins.md", "snapshot-pins.snapshot.json"]
        assert any(str(out) in n.message for n in notices.seen)
        saved = json.loads((out / "snapshot-pins.snapshot.json").read_text(encoding="utf-8"))
        assert saved["pins"] == [4]
        markdown = (out / "snapshot-pins.md").read_text(encoding="utf-8")
        assert f"**{screen.decision.verdict}**" in markdown and "pinned (kept verbatim)" in markdown
        assert "## Pins across strategies (what-if)" in markdown
        page = (out / "snapshot-pins.html").read_text(encoding="utf-8")
        HTMLParser().feed(page)
        assert "<script" not in page and PINNED_LABEL in page
        # Y copies the same report as plain text; y one message, plain
        await pilot.press("Y")
        assert app.clipboard == screen.report_text()
        assert not any("\u2500" <= ch <= "\u257f" for ch in app.clipboard)
        await pilot.press("y")
        assert app.clipboard.startswith("#4 tool\n")
        await pilot.press("P")
        await settle(app, pilot)
        assert screen.pins == frozenset() and screen.decision.region_of(4) == "compress"


async def test_theme_choice_is_remembered(folder: Path, counters: dict[str, TokenCounter]) -> None:
    app = create_app([str(folder)], counters=counters)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        assert app.theme == "textual-dark"
        app.theme = "nord"
        await pilot.pause()
    assert load_prefs()[0].theme == "nord"
    again = create_app([str(folder)], counters=counters)
    async with again.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        assert again.theme == "nord"


def test_preferences_file(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    prefs, problem = load_prefs(path)
    assert (prefs.theme, prefs.layout, problem) == (None, "both", "")
    save_prefs(prefs.model_copy(update={"model": "qwen", "api_key_env": "MY_KEY"}), path)
    assert load_prefs(path)[0].api_key_env == "MY_KEY"
    path.write_text('{"layout": "sideways"}', encoding="utf-8")
    prefs, problem = load_prefs(path)
    assert prefs.layout == "both" and "layout" in problem
    path.write_text("{not json", encoding="utf-8")
    assert "unreadable" in load_prefs(path)[1]
    with pytest.raises(ValueError):
        update_prefs(path, api_key_env="sk-" + "x" * 30)


def test_remembered_dump_folders_are_the_default_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspector.cli.common import default_sources

    for name in ("OPENJIUWEN_COMPRESSION_DUMP_DIR", "OPENJIUWEN_CONTEXT_DEBUG_DIR"):
        monkeypatch.delenv(name, raising=False)
    assert default_sources()[0].endswith("sample_dumps")
    update_prefs(dump_folders=[str(tmp_path), str(tmp_path / "gone")])
    assert default_sources() == [str(tmp_path)]
    monkeypatch.setenv("OPENJIUWEN_COMPRESSION_DUMP_DIR", str(tmp_path / "in"))
    (tmp_path / "in").mkdir()
    assert default_sources() == [str(tmp_path / "in")]
