"""The TUI driven through Textual's pilot: browser, context view, why panel, conventions.

Every assertion on regions and verdicts compares with what the core computes (the same
strategy deciding the same settings on a freshly prepared context).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from textual.message import Message
from textual.notifications import Notification, Notify
from textual.pilot import Pilot

from inspector.core.flip_check import holding_flips
from inspector.core.strategy import registry
from inspector.core.strategy.base import Decision
from inspector.core.tokens import TokenCounter
from inspector.render.verdict import render_to_text
from inspector.tui.app import InspectorApp, create_app
from inspector.tui.screens.browser import BrowserScreen
from inspector.tui.screens.context import ContextScreen
from inspector.tui.screens.help import HelpScreen, help_sections, key_display
from inspector.tui.widgets.context_bar_panel import ContextBarPanel
from inspector.tui.widgets.message_list import MessageList
from inspector.tui.widgets.why_panel import FlipButton
from tests.conftest import REFERENCE

pytestmark = pytest.mark.skipif(not REFERENCE.exists(), reason="reference folder not available")


class Notices:
    """A `run_test(message_hook=...)` hook that keeps every notification the app was sent."""

    def __init__(self) -> None:
        self.seen: list[Notification] = []

    def __call__(self, message: Message) -> None:
        if isinstance(message, Notify):
            self.seen.append(message.notification)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A good snapshot, a dump with its scenario, a truncated JSON file and a binary file."""
    shutil.copy(REFERENCE / "e_target_below_min" / "input.json", tmp_path / "e_input.json")
    scenario = tmp_path / "a"
    shutil.copytree(REFERENCE / "a_current_round_plain", scenario)
    for extra in ("http_requests.json", "result.json"):
        (scenario / extra).unlink()
    good = (REFERENCE / "b_keep_recent_tool_boundary" / "input.json").read_text(encoding="utf-8")
    (tmp_path / "truncated.json").write_text(good[: len(good) // 2], encoding="utf-8")
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00\x01garbage")
    return tmp_path


async def loaded(app: InspectorApp, pilot: Pilot[Any]) -> BrowserScreen:
    """Wait until the browser finished loading."""
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, BrowserScreen)
    return screen


async def open_row(app: InspectorApp, pilot: Pilot[Any], predicate: Any) -> ContextScreen:
    """Move the browser cursor to the first row matching `predicate` and press Enter."""
    browser = await loaded(app, pilot)
    index = next(i for i, row in enumerate(browser.shown) if predicate(row))
    browser.query_one("#table").move_cursor(row=index)
    await pilot.press("enter")
    await settle(app, pilot)
    screen = app.screen
    assert isinstance(screen, ContextScreen)
    return screen


#: Rounds `settle` waits for workers started by the messages of those before (a bound: a
#: worker that never ends is left running, as one round left it).
SETTLE_ROUNDS = 40


async def settle(app: InspectorApp, pilot: Pilot[Any]) -> None:
    """Let workers finish and their messages land, and those they start in turn.

    One round was not enough: `wait_for_complete` waits for the workers there are when it is
    called, and a key whose worker starts another (the strategy switch swaps the settings
    panel, which counts the new token mode in a worker of its own) left the screen's
    decision a step behind, now and then (a flaky test under load)."""
    for _ in range(SETTLE_ROUNDS):
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        if not any(worker.is_running or worker.state.name == "PENDING" for worker in app.workers):
            return


def text_of(widget: Any) -> str:
    """Plain text of a Static's content."""
    return render_to_text(widget.content, width=200)


def core_decision(screen: ContextScreen, counters: dict[str, TokenCounter]) -> Decision:
    """The screen's strategy deciding its settings on a freshly prepared context."""
    assert screen.artifact.snapshot is not None
    strategy = registry.get(screen.strategy.key)
    prepared = strategy.prepare(screen.artifact.snapshot, counters)
    return strategy.decide(prepared, screen.settings, screen.artifact)


def assert_matches_core(screen: ContextScreen, counters: dict[str, TokenCounter]) -> None:
    """The screen's verdict and every row's region equal a fresh core decision."""
    assert screen.artifact.snapshot is not None and screen.decision is not None
    expected = core_decision(screen, counters)
    got = screen.decision
    assert (got.hit, got.reason, got.total_tokens, got.threshold) == (
        expected.hit,
        expected.reason,
        expected.total_tokens,
        expected.threshold,
    )
    assert got.regions == expected.regions and got.checks == expected.checks
    message_list = screen.query_one(MessageList)
    assert message_list.row_count == len(screen.artifact.snapshot.messages)
    for index in range(message_list.row_count):
        assert message_list.region_of(index) == expected.region_of(index)


async def test_browser_lists_artifacts_and_error_rows(
    folder: Path, counters: dict[str, TokenCounter]
) -> None:
    app = create_app([str(folder)], counters=counters)
    notices = Notices()
    async with app.run_test(size=(120, 40), message_hook=notices) as pilot:
        browser = await loaded(app, pilot)
        errors = [row for row in browser.rows if row.error is not None]
        sources = {Path(row.error.source).name for row in errors if row.error}
        assert {"truncated.json", "binary.json"} <= sources
        assert all(row.outcome.startswith("error:") for row in errors)
        kinds = {row.artifact.kind for row in browser.rows if row.artifact is not None}
        assert {"snapshot", "dump"} <= kinds
        # newest first: rows with a timestamp come before rows without, in descending order
        stamps = [row.timestamp for row in browser.shown]
        dated = [s for s in stamps if s is not None]
        assert dated == sorted(dated, reverse=True)
        assert stamps[: len(dated)] == dated
        # Enter on an error row explains it and stays on the browser
        index = next(i for i, row in enumerate(browser.shown) if row.error is not None)
        browser.query_one("#table").move_cursor(row=index)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, BrowserScreen)
        reason = browser.shown[index].error
        assert reason is not None
        assert any(reason.error in n.message for n in notices.seen)


async def test_browser_filters_and_sort(folder: Path, counters: dict[str, TokenCounter]) -> None:
    app = create_app([str(folder)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        browser = await loaded(app, pilot)
        total = len(browser.rows)
        await pilot.press("o")  # compressed
        assert browser.shown and all(row.outcome_kind == "compressed" for row in browser.shown)
        await pilot.press("o", "o", "o", "o")  # not compressed, unknown, failed, error
        assert browser.outcome_filter == "error"
        assert browser.shown and all(row.error is not None for row in browser.shown)
        await pilot.press("o")  # all
        assert len(browser.shown) == total
        await pilot.press("p")
        assert browser.processor_filter is not None
        assert all(row.processor == browser.processor_filter for row in browser.shown)
        await pilot.press("p", "p", "p", "p", "p")
        while browser.processor_filter is not None:
            await pilot.press("p")
        await pilot.press("slash")
        await pilot.press(*"truncated")
        assert [Path(row.title).name for row in browser.shown] == ["truncated.json"]
        await pilot.press("escape")
        assert len(browser.shown) == total
        await pilot.press("s")
        assert browser.sort_column == "processor"
        names = [row.processor for row in browser.shown if row.processor]
        assert names == sorted(names, key=str.lower)


async def test_context_view_regions_equal_core(
    folder: Path, counters: dict[str, TokenCounter]
) -> None:
    app = create_app([str(folder)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_row(
            app, pilot, lambda row: row.artifact is not None and row.artifact.kind == "snapshot"
        )
        assert_matches_core(screen, counters)
        assert screen.decision is not None and screen.decision.reason == "target_below_min"
        assert screen.flips is not None
        # detail pane follows the cursor and says why the message is in its region
        await pilot.press("d", "down", "down")
        detail = text_of(screen.query_one("#detail-body"))
        assert "#2" in detail
        await pilot.press("escape")
        assert isinstance(app.screen, BrowserScreen)


async def test_every_tuning_control_recomputes_like_core(
    folder: Path, counters: dict[str, TokenCounter]
) -> None:
    app = create_app([str(folder)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_row(
            app, pilot, lambda row: row.artifact is not None and row.artifact.kind == "snapshot"
        )
        recorded = screen.settings
        assert screen.strategy.key == "current_round"
        await pilot.press("t")
        trigger, minimum = recorded.trigger_context_ratio, recorded.min_target_context_ratio  # type: ignore[attr-defined]
        keep = recorded.keep_recent_messages  # type: ignore[attr-defined]
        steps: list[tuple[tuple[str, ...], dict[str, Any]]] = [
            (("right_square_bracket",), {"trigger_context_ratio": round(trigger + 0.05, 3)}),
            (("left_square_bracket",), {"trigger_context_ratio": trigger}),
            (("right_curly_bracket",), {"min_target_context_ratio": round(minimum + 0.01, 3)}),
            (
                ("left_curly_bracket", "left_curly_bracket"),
                {"min_target_context_ratio": round(minimum - 0.01, 3)},
            ),
            (("plus",), {"keep_recent_messages": keep + 1}),
            (("minus",), {"keep_recent_messages": keep}),
            (("b",), {"tool_boundary": False}),
            (("b",), {"tool_boundary": True}),
            (
                ("m",),
                {
                    "token_mode": "len_div_4"
                    if recorded.token_mode != "len_div_4"  # type: ignore[attr-defined]
                    else "tiktoken_cl100k"
                },
            ),
        ]
        for keys, fields in steps:
            await pilot.press(*keys)
            await settle(app, pilot)
            for name, value in fields.items():
                assert getattr(screen.settings, name) == pytest.approx(value), (keys, name)
            assert_matches_core(screen, counters)
        await pilot.press("p")
        await settle(app, pilot)
        assert screen.strategy.key == "dialogue"
        assert "keep_recent_messages" not in screen.settings_fields()
        assert_matches_core(screen, counters)
        # the panel's own controls, generated from the settings model
        panel = screen.query_one("#tuning")
        for name, text, value in (
            ("trigger_context_ratio", "0.3", 0.3),
            ("min_target_context_ratio", "0.02", 0.02),
            ("context_max", "9000", 9000),
        ):
            panel.query_one(f"#field-{name}").value = text
            await settle(app, pilot)
            assert getattr(screen.settings, name) == value
            assert_matches_core(screen, counters)
        await pilot.press("p")
        await settle(app, pilot)
        assert screen.strategy.key == "round_level"
        assert screen.settings.keep_recent_messages == 4  # type: ignore[attr-defined]
        panel = screen.query_one("#tuning")
        panel.query_one("#field-keep_recent_messages").value = "2"
        await settle(app, pilot)
        assert screen.settings.keep_recent_messages == 2  # type: ignore[attr-defined]
        panel.query_one("#field-tool_boundary").value = False
        await settle(app, pilot)
        assert screen.settings.tool_boundary is False  # type: ignore[attr-defined]
        panel.query_one("#field-token_mode").value = "tiktoken_cl100k"
        await settle(app, pilot)
        assert screen.settings.token_mode == "tiktoken_cl100k"  # type: ignore[attr-defined]
        assert_matches_core(screen, counters)
        # an out-of-range value is shown, not applied
        before = screen.settings
        panel.query_one("#field-trigger_context_ratio").value = "1.5"
        await settle(app, pilot)
        assert screen.settings == before
        assert "trigger_context_ratio" in text_of(panel.query_one("#settings-problem"))
        # changed fields are highlighted; reset goes back to the recorded values
        assert panel.query_one("#row-keep_recent_messages").has_class("-changed")
        await pilot.press("r")
        await settle(app, pilot)
        assert screen.settings == screen.recorded
        assert not panel.query_one("#row-keep_recent_messages").has_class("-changed")
        assert_matches_core(screen, counters)
        # the hybrid pipeline through the same screen: its own fields, labels on the rows
        await pilot.press("p")
        await settle(app, pilot)
        assert screen.strategy.key == "hybrid"
        assert "preserve_recent_turns" in screen.settings_fields()
        assert_matches_core(screen, counters)
        labels = [screen.query_one(MessageList).row_label(i) for i in range(3)]
        assert all(labels) and screen.decision is not None
        assert screen.decision.verdict.startswith("STOPS AT LEVEL")


async def test_flip_key_applies_the_smallest_change(
    folder: Path, counters: dict[str, TokenCounter]
) -> None:
    app = create_app([str(folder)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_row(
            app, pilot, lambda row: row.artifact is not None and row.artifact.kind == "dump"
        )
        assert screen.decision is not None and screen.artifact.snapshot is not None
        before = screen.decision.hit
        strategy = registry.get(screen.strategy.key)
        prepared = strategy.prepare(screen.artifact.snapshot, counters)
        expected = holding_flips(
            strategy.flips(prepared, screen.settings),
            screen.artifact.snapshot,
            strategy.key,
            counters,
        )
        assert expected and [f.sentence for f in screen.flips or ()] == [
            f.sentence for f in expected
        ]
        await pilot.press("1")
        await settle(app, pilot)
        assert screen.settings == expected[0].settings
        assert screen.decision.hit != before
        assert_matches_core(screen, counters)
        # the second flip through its button
        await pilot.press("r")
        await settle(app, pilot)
        await pilot.press("w")
        await pilot.pause()
        button = [b for b in screen.query(FlipButton) if b.number == 1][0]
        button.press()
        await settle(app, pilot)
        assert screen.settings == expected[1].settings
        # a processor flip switches the strategy
        processor = next(i for i, f in enumerate(expected) if f.strategy is not None)
        await pilot.press("r")
        await settle(app, pilot)
        await pilot.press(str(processor + 1))
        await settle(app, pilot)
        assert screen.strategy.key == expected[processor].strategy
        assert_matches_core(screen, counters)


async def test_sweep_view_applies_a_value(folder: Path, counters: dict[str, TokenCounter]) -> None:
    from inspector.core.strategy.base import flip_indices
    from inspector.tui.screens.sweep import SweepScreen

    app = create_app([str(folder)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_row(
            app, pilot, lambda row: row.artifact is not None and row.artifact.kind == "snapshot"
        )
        assert screen.artifact.snapshot is not None
        await pilot.press("s")
        await pilot.pause()
        sweep_screen = app.screen
        assert isinstance(sweep_screen, SweepScreen)
        await pilot.press("2")  # min_target_context_ratio: this context flips on it
        assert sweep_screen.param == "min_target_context_ratio"
        strategy = registry.get(screen.strategy.key)
        prepared = strategy.prepare(screen.artifact.snapshot, counters)
        grid = strategy.sweep(prepared, screen.settings, "min_target_context_ratio", None)
        flips = strategy.flips(prepared, screen.settings)
        values = {p.value for p in grid} | {
            f.value for f in flips if f.param == "min_target_context_ratio"
        }
        values.add(screen.settings.min_target_context_ratio)  # type: ignore[attr-defined]
        expected = strategy.sweep(
            prepared, screen.settings, "min_target_context_ratio", sorted(values)
        )
        assert [p.value for p in sweep_screen.points] == [p.value for p in expected]
        assert [(p.decision.hit, p.decision.reason) for p in sweep_screen.points] == [
            (p.decision.hit, p.decision.reason) for p in expected
        ]
        assert flip_indices(list(expected))
        await pilot.press("f")
        chosen = sweep_screen.points[sweep_screen.cursor]
        exact = next(f for f in flips if f.param == "min_target_context_ratio")
        assert chosen.value == exact.value  # `f` lands on the exact flip, not a grid neighbour
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.screen is screen
        assert screen.settings.min_target_context_ratio == chosen.value  # type: ignore[attr-defined]
        assert screen.decision is not None and screen.decision.hit == chosen.decision.hit
        assert_matches_core(screen, counters)


async def test_search_boundaries_and_copy(folder: Path, counters: dict[str, TokenCounter]) -> None:
    app = create_app([str(folder)], counters=counters)
    copied: list[str] = []
    app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_row(
            app, pilot, lambda row: row.artifact is not None and row.artifact.kind == "snapshot"
        )
        snapshot = screen.artifact.snapshot
        assert snapshot is not None and screen.decision is not None
        message_list = screen.query_one(MessageList)
        await pilot.press("slash")
        await pilot.press(*"grep", "enter")
        await pilot.pause()
        assert screen.matches
        assert message_list.cursor == screen.matches[0]
        await pilot.press("n")
        assert message_list.cursor == (
            screen.matches[1] if len(screen.matches) > 1 else screen.matches[0]
        )
        await pilot.press("N")
        assert message_list.cursor == screen.matches[0]
        await pilot.press("home")
        starts = sorted(
            {r.start for r in screen.decision.regions if r.end > r.start and r.start > 0}
        )
        await pilot.press("greater_than_sign")
        assert message_list.cursor == starts[0]
        await pilot.press("end", "less_than_sign")
        assert message_list.cursor == starts[-1]
        await pilot.press("y")
        assert copied and copied[-1].startswith(f"#{message_list.cursor} ")
        await pilot.press("Y")
        await pilot.pause()
        assert "target_below_min" in copied[-1] and "Checks" in copied[-1]


async def test_dump_before_and_after(folder: Path, counters: dict[str, TokenCounter]) -> None:
    app = create_app([str(folder)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_row(
            app, pilot, lambda row: row.artifact is not None and row.artifact.kind == "dump"
        )
        assert screen.artifact.after is not None
        assert_matches_core(screen, counters)
        await pilot.press("a")
        await pilot.pause()
        message_list = screen.query_one(MessageList)
        assert screen.showing_after and message_list.row_count == len(screen.artifact.after)
        assert "AFTER compression" in render_to_text(screen.query_one(ContextBarPanel).render())
        await pilot.press("a")
        await pilot.pause()
        assert not screen.showing_after
        assert_matches_core(screen, counters)
        # compare mode draws the recorded bar above the tuned one
        await pilot.press("c")
        await pilot.pause()
        assert screen.compare
        assert "recorded" in text_of(screen.query_one("#settings-compare-table"))


async def test_palette_commands_are_the_bindings(
    folder: Path, counters: dict[str, TokenCounter]
) -> None:
    app = create_app([str(folder)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_row(
            app, pilot, lambda row: row.artifact is not None and row.artifact.kind == "snapshot"
        )
        titles = {command.title for command in app.get_system_commands(screen)}
        assert {
            "Why",
            "Tune",
            "Sweep",
            "Search",
            "Compare",
            "Reset",
            "Trigger +",
            "Copy why report",
            "Help",
        } <= titles
        assert "Before/after" not in titles  # a snapshot has no after-compression context
        commands = {command.title: command for command in app.get_system_commands(screen)}
        await commands["Tune"].callback()  # type: ignore[misc]
        await pilot.pause()
        assert screen.query_one("#side").active == "tab-tune"
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        shown = text_of(app.screen.query_one("#help-body Static"))
        for _, bindings in help_sections():
            for binding in bindings:
                assert key_display(binding.key).split()[0] in shown  # type: ignore[union-attr]
        await pilot.press("escape")
        assert app.screen is screen
        await pilot.press("R")  # the re-run form of the LLM helper, for this context and tuning
        await pilot.pause()
        assert type(app.screen).__name__ == "RerunDialog"
        await pilot.press("escape")  # leaves the focused field; the form stays
        await pilot.pause()
        assert type(app.screen).__name__ == "RerunDialog"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen
        theme = app.theme
        await pilot.press("ctrl+t")
        assert app.theme != theme


async def test_small_terminal_80x24(folder: Path, counters: dict[str, TokenCounter]) -> None:
    app = create_app([str(folder)], counters=counters)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_row(
            app, pilot, lambda row: row.artifact is not None and row.artifact.kind == "dump"
        )
        message_list = screen.query_one(MessageList)
        assert message_list.region.height >= 8 and message_list.region.width >= 30
        assert screen.query_one("#side").region.width >= 34
        await pilot.press("z")
        await pilot.pause()
        assert message_list.region.width == 80
        await pilot.press("z")
        await pilot.pause()
        assert screen.query_one("#side").region.width == 80
        await pilot.press("z", "t", "s")
        await pilot.pause()
        text = app.export_screenshot()
        assert "verdict" in text


async def test_debug_record_without_context(counters: dict[str, TokenCounter]) -> None:
    app = create_app(
        [str(REFERENCE / "c_below_threshold" / "CurrentRoundCompressor.jsonl")], counters=counters
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)  # one file, one record: it opens straight into its view
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        assert not screen.has_context and screen.decision is None
        assert "no context" in text_of(screen.query_one("#verdict"))
        await pilot.press("p", "s", "a", "1")  # nothing to tune: no crash
        await pilot.pause()
        assert app.screen is screen


async def test_loader_failure_becomes_a_notice(counters: dict[str, TokenCounter]) -> None:
    def broken_loader(paths: Any) -> Any:
        yield from ()
        raise RuntimeError("disk on fire")

    app = create_app(["nowhere"], counters=counters, loader=broken_loader)
    notices = Notices()
    async with app.run_test(size=(100, 30), message_hook=notices) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert any("disk on fire" in n.message for n in notices.seen)
        assert isinstance(app.screen, BrowserScreen)


def test_json_of_fixture_is_really_truncated(folder: Path) -> None:
    with pytest.raises(json.JSONDecodeError):
        json.loads((folder / "truncated.json").read_text(encoding="utf-8"))


async def test_command_line_tuning_sets_the_starting_values(
    folder: Path, counters: dict[str, TokenCounter]
) -> None:
    app = create_app(
        [str(folder)], {"trigger_ratio": 0.5, "processor": "dialogue"}, counters=counters
    )
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_row(
            app, pilot, lambda row: row.artifact is not None and row.artifact.kind == "snapshot"
        )
        assert screen.strategy.key == "dialogue"
        assert screen.settings.trigger_context_ratio == 0.5  # type: ignore[attr-defined]
        assert screen.artifact.snapshot is not None
        assert screen.artifact.snapshot.tuning.processor == "current_round"
        assert_matches_core(screen, counters)
        await pilot.press("r")
        await settle(app, pilot)
        assert screen.settings == screen.recorded


MONKEY_KEYS = [
    "down",
    "up",
    "pagedown",
    "end",
    "home",
    "enter",
    "d",
    "w",
    "t",
    "s",
    "tab",
    "right",
    "left",
    "f",
    "escape",
    "slash",
    "x",
    "enter",
    "n",
    "N",
    "greater_than_sign",
    "less_than_sign",
    "a",
    "c",
    "r",
    "right_square_bracket",
    "left_square_bracket",
    "right_curly_bracket",
    "left_curly_bracket",
    "plus",
    "minus",
    "b",
    "p",
    "m",
    "y",
    "Y",
    "z",
    "1",
    "2",
    "question_mark",
    "ctrl+t",
]


async def test_random_keys_never_crash_at_80x24(
    folder: Path, counters: dict[str, TokenCounter]
) -> None:
    import random

    chooser = random.Random(4)
    app = create_app([str(folder)], counters=counters)
    app.copy_to_clipboard = lambda text: None  # type: ignore[method-assign]
    notices = Notices()
    async with app.run_test(size=(80, 24), message_hook=notices) as pilot:
        await open_row(
            app, pilot, lambda row: row.artifact is not None and row.artifact.kind == "dump"
        )
        for _ in range(80):
            if type(app.screen).__name__ in ("HelpScreen", "RerunDialog"):
                await pilot.press("escape")
                continue
            await pilot.press(chooser.choice(MONKEY_KEYS))
        await settle(app, pilot)
        assert not [n for n in notices.seen if n.severity == "error" and "failed" in n.title]


async def test_slow_load_shows_rows_early_and_keeps_input(
    folder: Path, counters: dict[str, TokenCounter]
) -> None:
    import asyncio
    import time

    from inspector.sources.loader import load_paths

    def slow_loader(paths: Any) -> Any:
        for item in load_paths(paths):
            time.sleep(0.15)
            yield item

    app = create_app([str(folder)], counters=counters, loader=slow_loader)
    async with app.run_test(size=(100, 30)) as pilot:
        browser = app.screen
        assert isinstance(browser, BrowserScreen)
        for _ in range(50):
            await asyncio.sleep(0.05)
            if browser.rows:
                break
        assert browser.rows and browser.reading  # first rows on screen before the load ends
        assert not browser.loading, "Textual's loading indicator must not cover the screen"
        assert browser.query_one("#load-line").display
        await pilot.press("o")  # input is handled while loading
        assert browser.outcome_filter == "compressed"
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not browser.reading and not browser.query_one("#load-line").display


async def test_files_listed_by_name_before_the_load_reaches_them(
    folder: Path, counters: dict[str, TokenCounter]
) -> None:
    import asyncio
    import threading

    from inspector.sources.loader import load_paths

    release = threading.Event()

    def blocked_loader(paths: Any) -> Any:
        release.wait(timeout=20)
        yield from load_paths(paths)

    app = create_app([str(folder)], counters=counters, loader=blocked_loader)
    async with app.run_test(size=(120, 30)) as pilot:
        browser = app.screen
        assert isinstance(browser, BrowserScreen)
        for _ in range(100):
            await asyncio.sleep(0.05)
            if browser.pending:
                break
        await pilot.pause()
        assert browser.pending and not browser.rows, "placeholder rows come before any parsed row"
        placeholders = [row for row in browser.shown if row.outcome_kind == "pending"]
        assert {row.title for row in placeholders} >= {
            str(folder / "e_input.json"),
            str(folder / "truncated.json"),
        }
        await pilot.press("enter")  # opening a placeholder only says it is still being read
        assert isinstance(app.screen, BrowserScreen)
        release.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not browser.pending
        assert all(row.outcome_kind != "pending" for row in browser.shown)
        assert any(row.error is not None for row in browser.shown) and browser.artifacts()


async def test_browser_home_end_g_and_G_move_to_the_first_and_last_row(
    folder: Path, counters: dict[str, TokenCounter]
) -> None:
    app = create_app([str(folder)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        browser = await loaded(app, pilot)
        table = browser.query_one("#table")
        last = len(browser.shown) - 1
        assert last > 0
        for keys, row in ((("G",), last), (("g",), 0), (("end",), last), (("home",), 0)):
            await pilot.press(*keys)
            await pilot.pause()
            assert table.cursor_row == row, keys
