"""Issue 17 (1), latency, driven by Textual's pilot: what a key repaints, what waits for later,
what is cancelled, and the browser's incremental filter.

Each test asserts the state the behaviour leaves (screens painted, rows shown, work
cancelled), never a time: timings are in bench/bench_tui.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import DataTable, Input

from inspector.core.tokens import TokenCounter
from inspector.tui.app import InspectorApp, create_app
from inspector.tui.screens.browser import BrowserScreen
from inspector.tui.screens.browser_cells import row_cells, sort_value
from inspector.tui.screens.browser_table import BrowserTable
from inspector.tui.screens.context import ContextScreen
from inspector.tui.screens.help import HelpScreen
from inspector.tui.widgets.message_list import MessageList
from inspector.tui.widgets.quiet_footer import QuietFooter
from inspector.tui.widgets.settings_panel import SettingsPanel
from tests.test_tui_app import loaded

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_dumps"
CONTEXTS = SAMPLES / "workspace" / "context"
DEMO_DUMP = next((CONTEXTS / "demo" / "bugfix-tinycal_context").rglob("1795900020374_*.json"))


async def settle(app: InspectorApp, pilot: Pilot[Any], delay: float = 0.2) -> None:
    """Let workers finish, the coalesced side tab draw, and their messages land."""
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause(delay)
    await app.workers.wait_for_complete()
    await pilot.pause()


def regions_handed_to(screen: Any) -> list[Any]:
    """Record the regions other screens ask `screen` to repaint from now on (a screen below
    the top one hands its dirty regions up this way)."""
    handed: list[Any] = []
    refresh = screen.refresh

    def recorded(*regions: Any, **kwargs: Any) -> Any:
        handed.extend(regions)
        return refresh(*regions, **kwargs)

    screen.refresh = recorded
    return handed


async def test_a_screen_below_an_opaque_one_never_repaints_it(
    counters: dict[str, TokenCounter],
) -> None:
    """The browser under the context view repainting itself costs the context view nothing;
    a modal (translucent) screen still shows the screen below it."""
    app = create_app([str(DEMO_DUMP)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        context = app.screen
        assert isinstance(context, ContextScreen)
        browser = app.screen_stack[-2]
        assert isinstance(browser, BrowserScreen)
        assert app._background_screens == []
        assert not browser.is_current
        handed = regions_handed_to(context)
        for _ in range(5):
            browser.query_one("#table").refresh()
            browser.refresh()
            await pilot.pause(0.05)
        assert handed == []
        app.action_help()
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert app._background_screens == [context]
        await pilot.press("escape")
        await settle(app, pilot)
        await pilot.resize_terminal(100, 30)  # resized while covered: laid out on return
        await settle(app, pilot)
        app.pop_screen()
        await settle(app, pilot)
        assert app.screen is browser and browser.is_current
        assert browser.size == app.size == (100, 30)
        assert browser.query_one("#table").size.width == 100


# --- the browser's incremental filter ------------------------------------------------------


def full_rebuild(browser: BrowserScreen) -> list[tuple[str, list[str]]]:
    """What a full rebuild shows: every row sorted, then filtered, with its cells as text."""
    rows = sorted(
        [*browser.rows, *browser.pending.values()],
        key=lambda row: sort_value(row, browser.sort_column),
        reverse=browser.sort_reverse,
    )
    text = browser.text_filter
    return [
        (str(row.key), [str(cell) for cell in row_cells(row, browser.palette)])
        for row in rows
        if (not text or text in row.search_text)
        and (not browser.processor_filter or row.processor == browser.processor_filter)
        and (not browser.outcome_filter or row.outcome_kind == browser.outcome_filter)
    ]


def table_rows(table: BrowserTable) -> list[tuple[str, list[str]]]:
    """The rows the table holds, top to bottom, with their cells as text."""
    return [(key, [str(cell) for cell in table.get_row(key)]) for key in table.row_keys]


async def open_browser(app: InspectorApp, pilot: Pilot[Any]) -> BrowserScreen:
    await settle(app, pilot)
    browser = app.screen
    assert isinstance(browser, BrowserScreen)
    return browser


async def test_the_incremental_filter_shows_what_a_full_rebuild_shows(
    counters: dict[str, TokenCounter],
) -> None:
    """Typing, deleting, sorting and the outcome filter: after every step the table holds
    exactly the rows (order and cells) a rebuild from scratch would."""
    app = create_app([str(SAMPLES)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        browser = await open_browser(app, pilot)
        table = browser.query_one("#table", BrowserTable)
        assert len(browser.rows) > 5
        browser.action_focus_filter()
        seen: set[int] = set()
        for key in ["d", "e", "m", "o", "backspace", "backspace", "backspace", "c", "backspace"]:
            await pilot.press(key)
            await pilot.pause()
            assert table_rows(table) == full_rebuild(browser), key
            seen.add(len(browser.shown))
        assert len(seen) > 2  # the filter really narrowed and widened the rows
        await pilot.press("escape")
        for action in (browser.action_cycle_sort, browser.action_reverse_sort):
            action()
            await pilot.pause()
            assert table_rows(table) == full_rebuild(browser)
        browser.action_cycle_outcome()
        await pilot.pause()
        assert table_rows(table) == full_rebuild(browser)
        assert [row.key for row in browser.shown] == [int(k) for k, _ in table_rows(table)]


async def test_filter_keys_typed_together_redraw_once_and_an_unchanged_result_not_at_all(
    counters: dict[str, TokenCounter],
) -> None:
    """Keys already queued join one redraw (the last text wins); a key that leaves the same
    rows does not touch the table."""
    app = create_app([str(SAMPLES)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        browser = await open_browser(app, pilot)
        table = browser.query_one("#table", BrowserTable)
        redraws: list[str] = []
        replaced: list[int] = []
        refresh, replace = browser._refresh_table, table.replace_rows

        def counted_refresh() -> None:
            redraws.append(browser.text_filter)
            refresh()

        def counted_replace(rows: Any, **kwargs: Any) -> None:
            replaced.append(len(rows))
            replace(rows, **kwargs)

        browser._refresh_table = counted_refresh  # type: ignore[method-assign]
        table.replace_rows = counted_replace  # type: ignore[method-assign]
        browser.action_focus_filter()
        box = browser.query_one("#filter", Input)
        for text in ("d", "de", "dem"):  # three edits in one go, as from a fast typist
            box.value = text
        await pilot.pause()
        assert redraws == ["dem"]
        assert replaced and table_rows(table) == full_rebuild(browser)
        redraws.clear()
        replaced.clear()
        box.value = "dem "  # the filter strips spaces: the same rows
        await pilot.pause()
        assert redraws == ["dem"] and replaced == []


async def test_a_click_after_filtering_selects_the_row_under_the_pointer(
    counters: dict[str, TokenCounter],
) -> None:
    """Rendered cells are reused across filters; the row a click lands on is the new one."""
    app = create_app([str(SAMPLES)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        browser = await open_browser(app, pilot)
        table = browser.query_one("#table", BrowserTable)
        last = browser.shown[-1]
        browser.action_focus_filter()
        word = last.title.lower()
        browser.query_one("#filter", Input).value = word
        await pilot.pause()
        assert len(browser.shown) < len(browser.rows)
        target = next(i for i, row in enumerate(browser.shown) if row.key == last.key)
        browser.query_one("#filter", Input).value = ""
        await pilot.pause()
        browser.query_one("#filter", Input).value = word
        await pilot.pause()
        await pilot.click(table, offset=(2, 1 + target))  # row 0 is the header
        await pilot.pause()
        assert table.cursor_row == target
        assert browser.selected_row() is not None and browser.selected_row().key == last.key  # type: ignore[union-attr]


# --- a tuning key repaints what changed -------------------------------------------------------


async def test_a_tuning_key_repaints_only_the_list_lines_whose_region_moved(
    counters: dict[str, TokenCounter],
) -> None:
    """`+` (keep one more recent message) repaints the lines that change region (and their
    changed marks), not the whole list; `]` (the trigger ratio) moves no region and asks
    for no line."""
    app = create_app([str(DEMO_DUMP)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        context = app.screen
        assert isinstance(context, ContextScreen) and context.decision is not None
        listing = context.query_one(MessageList)
        drawn: list[int | str] = []  # the lines the list asks to repaint ("all": every line)
        refresh, refresh_line = listing.refresh, listing.refresh_line

        def whole(*regions: Any, **kwargs: Any) -> Any:
            drawn.extend(["all"] if not regions else [])
            return refresh(*regions, **kwargs)

        listing.refresh = whole  # type: ignore[method-assign]

        def one_line(y: int) -> None:
            drawn.append(y)
            refresh_line(y)

        listing.refresh_line = one_line  # type: ignore[method-assign]
        rows = range(listing.row_count)
        assert listing.row_count < listing.scrollable_content_region.height  # all on screen

        def lines() -> dict[int, tuple[str, str, bool]]:
            return {
                i: (listing.region_of(i), listing.row_label(i), listing.is_changed(i)) for i in rows
            }

        before = lines()
        await pilot.press("plus")
        await pilot.pause()
        after = lines()
        moved = {i for i in rows if before[i] != after[i]}
        assert moved and len(moved) < listing.row_count
        assert set(drawn) == moved
        await settle(app, pilot)
        drawn.clear()
        regions = list(context.decision.regions)
        before = lines()
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert list(context.decision.regions) == regions and lines() == before
        assert drawn == []


# --- opening a context: the side tabs after ----------------------------------------------------


async def test_the_tune_controls_are_built_when_the_tab_first_opens(
    counters: dict[str, TokenCounter],
) -> None:
    """Opening a context builds no tuning control; the Tune tab builds them and shows the
    settings changed meanwhile (and a problem said meanwhile)."""
    app = create_app([str(DEMO_DUMP)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        context = app.screen
        assert isinstance(context, ContextScreen) and context.decision is not None
        panel = context.query_one(SettingsPanel)
        assert not panel.built and not panel.query(Input)
        await pilot.press("plus")  # keep one more recent message, Tune tab not open
        await settle(app, pilot)
        context.query_one(SettingsPanel).show_problem("keep_recent: a problem said meanwhile")
        kept = context.settings.keep_recent_messages  # type: ignore[attr-defined]
        assert kept == 1
        context.action_show_tab("tune")
        await settle(app, pilot)
        assert panel.built
        box = panel.query_one("#field-keep_recent_messages", Input)
        assert box.value == str(kept)
        assert "a problem said meanwhile" in str(panel.query_one("#settings-problem").content)
        assert panel.query_one("#row-keep_recent_messages").has_class("-changed")


async def test_the_footer_redraws_only_when_its_keys_change(
    counters: dict[str, TokenCounter],
) -> None:
    """Binding refreshes that change nothing shown leave the footer's line alone; a change
    of what is shown (the Tune tab's focus) is drawn. The footer is one widget (no key
    widgets mounted), and a click on a key presses it."""
    app = create_app([str(DEMO_DUMP)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        context = app.screen
        assert isinstance(context, ContextScreen)
        footer = context.query_one(QuietFooter)
        assert not footer.children
        shown = footer._shown
        assert shown
        redraws: list[object] = []
        refresh = footer.refresh
        footer.refresh = lambda *a, **k: (redraws.append(a), refresh(*a, **k))[1]  # type: ignore[method-assign]
        for _ in range(3):
            context.refresh_bindings()
            await pilot.pause()
        assert footer._shown is shown and not redraws  # the same keys: not drawn again

        def drawn() -> set[str]:
            return {key.key for key in footer.keys} - {app.COMMAND_PALETTE_BINDING}

        def wanted() -> set[str]:
            return {b.key for (_, b, _, _) in context.active_bindings.values() if b.show}

        assert drawn() == wanted()
        context.action_show_tab("tune")
        await settle(app, pilot)
        context.action_focus_side()  # an input has the focus: other bindings apply
        await settle(app, pilot)
        assert drawn() == wanted()
        context.query_one(MessageList).focus()
        await settle(app, pilot)
        why = next(key for key in footer.keys if key.key == "w")
        context.action_show_tab("detail")
        await pilot.click(QuietFooter, offset=(why.start + 1, 0))
        await settle(app, pilot)
        assert context.active_tab() == "why"


# --- tuning keys: repeats coalesced, stale work dropped ----------------------------------------


async def test_held_tuning_keys_search_the_flips_once_and_stale_results_are_dropped(
    counters: dict[str, TokenCounter],
) -> None:
    """Keys arriving together each re-decide (the verdict follows every one) but the flips
    are searched once, for the last settings; flips found for settings left behind are
    not shown."""
    from textual import events

    app = create_app([str(DEMO_DUMP)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        context = app.screen
        assert isinstance(context, ContextScreen) and context.flips is not None
        searched: list[Any] = []
        find_flips = context.find_flips

        def recorded(key: str, settings: Any) -> Any:
            searched.append(settings)
            return find_flips(key, settings)

        context.find_flips = recorded  # type: ignore[method-assign]
        start = context.settings
        assert app._driver is not None
        for key, char in (("plus", "+"), ("plus", "+"), ("right_square_bracket", "]")):
            event = events.Key(key, char)
            event.set_sender(app)
            app._driver.send_message(event)
        await settle(app, pilot, delay=0.4)
        final = context.settings
        assert final.keep_recent_messages == start.keep_recent_messages + 2  # type: ignore[attr-defined]
        assert final.trigger_context_ratio > start.trigger_context_ratio  # type: ignore[attr-defined]
        assert searched == [final]
        assert context.flips is not None and context.decision is not None
        assert context.decision.settings == final
        shown = context.flips
        context.post_message(ContextScreen.FlipsFound(context.strategy.key, start, []))
        await pilot.pause()
        assert context.flips is shown  # found for the settings left behind: ignored


async def test_a_row_filled_in_place_widens_its_columns(tmp_path: Path) -> None:
    """A placeholder row ("reading…") filled with a long outcome widens the column: a
    broken file opened alone showed "error: n" and nothing more."""
    from inspector.encoding import make_counters
    from inspector.tui.screens.browser_cells import OUTCOME_WIDTH

    broken = tmp_path / "broken.json"
    broken.write_text('{"messages": [{"role": "user", "content": "hi"')
    app = create_app([str(broken)], counters=make_counters())
    async with app.run_test(size=(120, 40)) as pilot:
        browser = await loaded(app, pilot)
        table = browser.query_one("#table", DataTable)
        [row] = browser.shown
        assert row.outcome.startswith("error: not valid JSON")
        outcome = next(c for c in table.ordered_columns if c.key.value == "outcome")
        assert outcome.content_width == OUTCOME_WIDTH
