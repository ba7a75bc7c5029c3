"""Themeable colours: one mapping for the CLI, component classes and theme variables in the TUI.

No module of `inspector.render` or `inspector.tui` spells a colour (only `render/styles.py`
and `tui/app.tcss` do); the shared Rich renderables take their styles from the palette they
are given; and switching Textual's light and dark themes restyles the message list's regions
and the verdict badge, each legible on the theme's background.
"""

from __future__ import annotations

import ast
import io
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from rich.color import ANSI_COLOR_NAMES
from rich.console import Console, RenderableType
from rich.style import Style
from textual.color import Color

from inspector.core.checks import Check
from inspector.core.tokens import TokenCounter
from inspector.render.styles import (
    COMPONENT_CLASSES,
    DEFAULT_PALETTE,
    DEFAULT_STYLES,
    REGION_NAMES,
    Palette,
)
from inspector.render.why_report import checks_table
from inspector.tui.app import create_app
from inspector.tui.screens.context import ContextScreen
from inspector.tui.widgets.context_bar_panel import ContextBarPanel
from inspector.tui.widgets.message_list import MessageList
from tests.conftest import REFERENCE
from tests.test_tui_app import open_row, settle

ROOT = Path(__file__).resolve().parent.parent
SCANNED = (ROOT / "inspector" / "render", ROOT / "inspector" / "tui")
ALLOWED = {ROOT / "inspector" / "render" / "styles.py"}
TCSS = ROOT / "inspector" / "tui" / "app.tcss"

#: Rich's colour names (red, grey37, bright_white, ...), hex colours and rgb()/color() forms.
_WORDS = sorted((name for name in ANSI_COLOR_NAMES if name != "default"), key=len, reverse=True)
COLOUR = re.compile(
    r"(?<![\w$-])(?:" + "|".join(map(re.escape, _WORDS)) + r")(?![\w-])"
    r"|#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b|\brgb\(|\bcolor\(\d",
    re.IGNORECASE,
)


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def colour_literals(source: str) -> list[tuple[int, str]]:
    """(line, string) of every string literal in `source` that names a colour (docstrings aside)."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    hits: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            if COLOUR.search(node.value):
                hits.append((node.lineno, node.value))
    return sorted(hits)


def test_the_scanner_finds_colour_literals() -> None:
    source = (
        '"""Docstrings may say red."""\n'
        'a = Text("x", "bold red")\n'
        'b = Style(color="grey37")\n'
        'c = f"{n} on #00ff00"\n'
        'd = "$text-success"\n'
        'e = "changed region"\n'
        'f = "region.prefix"\n'
    )
    assert sorted(line for line, _ in colour_literals(source)) == [2, 3, 4]


def test_no_colour_literal_outside_the_mapping() -> None:
    """Only render/styles.py (the CLI mapping) and tui/app.tcss spell colours."""
    offenders = []
    scanned = 0
    for folder in SCANNED:
        for path in sorted(folder.rglob("*.py")):
            if path in ALLOWED:
                continue
            scanned += 1
            for line, text in colour_literals(path.read_text(encoding="utf-8")):
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {text!r}")
    assert scanned > 30
    assert not offenders, "colour literals:\n" + "\n".join(offenders)


def test_app_tcss_styles_every_name_with_theme_variables() -> None:
    """Each semantic style has a rule; TUI colours are theme variables, never colour literals."""
    css = TCSS.read_text(encoding="utf-8")
    rules = dict(re.findall(r"^\.([\w-]+)\s*\{([^}]*)\}", css, re.MULTILINE))
    for name, component in COMPONENT_CLASSES.items():
        if name == "plain":
            continue
        assert component in rules, f"app.tcss has no .{component} rule for {name!r}"
        body = rules[component]
        assert re.search(r"(?:^|;)\s*color:\s*\$[\w-]+", body), f".{component} sets no colour"
    css_without_comments = re.sub(r"/\*.*?\*/", "", css, flags=re.DOTALL)
    for line in css_without_comments.splitlines():
        if re.search(r"\b(?:color|background):", line):
            values = re.findall(r"\b(?:color|background):\s*([^;}]+)", line)
            assert all(value.strip().startswith("$") for value in values), line


def _ansi(renderable: RenderableType) -> str:
    console = Console(file=io.StringIO(), width=100, color_system="truecolor", force_terminal=True)
    console.print(renderable)
    out = console.file
    assert isinstance(out, io.StringIO)
    return out.getvalue()


def test_renderables_take_their_styles_from_the_palette() -> None:
    """The same table drawn with the default palette and with another one differs exactly there."""
    checks = [
        Check("threshold", "Threshold", "pass", "total is above the threshold"),
        Check("target", "Target", "fail", "target is below the minimum"),
    ]
    custom = Palette({"status.pass": Style(color="#010203"), "status.fail": "#a0b0c0"})
    drawn = _ansi(checks_table(checks, custom))
    assert "38;2;1;2;3" in drawn and "38;2;160;176;192" in drawn
    default = _ansi(checks_table(checks))
    assert "38;2;1;2;3" not in default
    assert DEFAULT_PALETTE("status.pass") == Style.parse(DEFAULT_STYLES["status.pass"])
    with pytest.raises(KeyError):
        DEFAULT_PALETTE("no.such.style")


def _contrast(a: Color, b: Color) -> float:
    def luminance(c: Color) -> float:
        def channel(v: int) -> float:
            s = v / 255
            return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

        return 0.2126 * channel(c.r) + 0.7152 * channel(c.g) + 0.0722 * channel(c.b)

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _color(style: Style, which: str = "color") -> Color:
    value = getattr(style, which)
    assert value is not None, f"{style!r} has no {which}"
    return Color.from_rich_color(value)


def _look(screen: ContextScreen) -> dict[str, Any]:
    """What the screen shows in the current theme: region styles, verdict badge, background."""
    message_list = screen.query_one(MessageList)
    verdict = screen.query_one("#verdict").content  # type: ignore[attr-defined]
    badge = next(span.style for span in verdict.spans if span.start == 0)
    assert isinstance(badge, Style)
    role_cell = message_list.render_line(0)
    return {
        "background": _color(message_list.rich_style, "bgcolor"),
        "regions": {name: message_list.region_style(name) for name in REGION_NAMES},
        "row0": (message_list.region_of(0), [s.style for s in role_cell]),
        "badge": badge,
        "bar": screen.query_one(ContextBarPanel).palette["region.compress"],
        "palette": {name: screen.palette[name] for name in screen.palette.names()},
    }


@pytest.mark.skipif(not REFERENCE.exists(), reason="reference folder not available")
async def test_light_and_dark_themes_restyle_regions_and_verdict(
    tmp_path: Path, counters: dict[str, TokenCounter]
) -> None:
    shutil.copy(REFERENCE / "e_target_below_min" / "input.json", tmp_path / "e_input.json")
    app = create_app([str(tmp_path)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_row(app, pilot, lambda row: row.artifact is not None)
        assert screen.decision is not None and not screen.decision.hit
        looks = {}
        for theme in ("textual-light", "textual-dark"):
            app.theme = theme
            await settle(app, pilot)
            looks[theme] = _look(screen)
        light, dark = looks["textual-light"], looks["textual-dark"]
        assert light["background"] != dark["background"]
        for look in (light, dark):
            background = look["background"]
            for name, style in look["regions"].items():
                fg = _color(style)
                assert fg != background, name
                assert _contrast(fg, background) >= 3.0, (name, fg, background)
            badge_bg, badge_fg = _color(look["badge"], "bgcolor"), _color(look["badge"])
            assert badge_fg != badge_bg and _contrast(badge_fg, badge_bg) >= 3.0, look["badge"]
            # every semantic style of the screen is legible where it is drawn
            for name, style in look["palette"].items():
                if style.color is not None:
                    ground = background if style.bgcolor is None else _color(style, "bgcolor")
                    assert _contrast(_color(style), ground) >= 3.0, (name, style)
            main = {look["regions"][name].color for name in ("prefix", "compress", "tail")}
            assert len(main) == 3, "prefix, compress and tail must look different"
            # the list draws row 0's role cell in its region's style
            region, styles = look["row0"]
            assert any(s is not None and s.color == look["regions"][region].color for s in styles)
        for name in ("prefix", "compress", "tail", "summary"):
            assert light["regions"][name].color != dark["regions"][name].color, name
        assert light["badge"].bgcolor != dark["badge"].bgcolor
        for name in ("verdict.hit", "verdict.miss", "verdict.hit_badge", "severity.warning"):
            assert light["palette"][name] != dark["palette"][name], name
        assert light["bar"].color != dark["bar"].color
        # dark again draws exactly what the dark theme drew at first use of the palette
        assert dark["regions"]["prefix"] == screen.query_one(MessageList).region_style("prefix")
