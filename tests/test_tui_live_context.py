"""The open context view follows its source (issue 17, item 6): real files, the real follower.

A session of `sample_dumps` is written into a tmp workspace state by state (its dumps, its
debug lines and its exported snapshots up to a moment), the way openJiuwen grows it. The
browser follows the folder; the open ContextScreen moves to the newer state of its own
context, says what changed, keeps the tuning, and holds still while pinned (`L`). Every wait
is a bounded poll on state. The identity rule and the change words are tested as plain
functions.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from inspector.core.artifact import Artifact
from inspector.core.messages import Message
from inspector.core.snapshot import ContextSnapshot
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import Tuning
from inspector.tui.app import InspectorApp, create_app
from inspector.tui.screens.browser import BrowserScreen
from inspector.tui.screens.context import ContextScreen
from inspector.tui.screens.context_live import (
    PIN_STATE_KEY,
    StateSummary,
    carried_index,
    carried_pins,
    change_words,
    context_identity,
    is_newer_state,
    message_changes,
    newest_state,
)
from inspector.tui.widgets.message_list import MessageList

SAMPLES = Path(__file__).resolve().parent.parent / "sample_dumps" / "workspace" / "context"
SESSION = "ui-review-images"
#: Times of the session's states (seconds): evaluation #3 (target_below_min), the first dump,
#: evaluation #5 (below_threshold), the second dump.
EVAL_3, DUMP_1, EVAL_5, DUMP_2 = 1796072820.512, 1796072824.970, 1796072828.474, 1796072832.932


# --- the workspace, grown state by state --------------------------------------------------


def grow_session(workspace: Path, session: str, until: float) -> None:
    """Write `session`'s files as they stood at time `until` (atomically: write, then rename)."""
    source = SAMPLES / f"{session}_context"
    target = workspace / "context" / f"{session}_context"
    for folder in ("compression_logs", "context_debug"):
        (target / folder).mkdir(parents=True, exist_ok=True)
    for dump in sorted((source / "compression_logs").glob("*.json")):
        if int(dump.name.split("_")[0]) / 1000 <= until:
            _put(target / "compression_logs" / dump.name, dump.read_text())
    for log in [
        *sorted((source / "context_debug").glob("*.jsonl")),
        source / "inspector_snapshots.jsonl",
    ]:
        lines = [
            line for line in log.read_text().splitlines() if json.loads(line)["timestamp"] <= until
        ]
        where = target / log.relative_to(source)
        text = "".join(line + "\n" for line in lines)
        if not where.exists() or where.read_text() != text:
            _put(where, text)


def _put(path: Path, text: str) -> None:
    if path.exists() and path.read_text() == text:
        return
    part = path.with_name(path.name + ".part")
    part.write_text(text)
    os.replace(part, path)


async def wait_for(pilot: Pilot[Any], condition: Callable[[], bool], timeout: float = 8.0) -> None:
    """Pause until `condition()` holds (fail after `timeout` seconds)."""
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > timeout:
            raise AssertionError(f"not within {timeout} s")
        await pilot.pause(0.05)


def browser_of(app: InspectorApp) -> BrowserScreen:
    """The browser (the screen under the context view)."""
    return next(s for s in app.screen_stack if isinstance(s, BrowserScreen))


def following(browser: BrowserScreen) -> bool:
    """Whether the follower has started (it is primed before the load)."""
    return browser.follow_state is not None and browser.follow_state.state == "following"


async def open_state(pilot: Pilot[Any], app: InspectorApp, timestamp: float) -> ContextScreen:
    """Select the browser row of the state written at `timestamp` and open it."""
    browser = browser_of(app)
    await wait_for(pilot, lambda: following(browser) and not browser.reading)
    index = next(
        i
        for i, row in enumerate(browser.shown)
        if row.artifact is not None and row.artifact.timestamp == timestamp
    )
    browser.query_one("#table").move_cursor(row=index)
    await pilot.pause()
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, ContextScreen))
    screen = app.screen
    assert isinstance(screen, ContextScreen)
    await wait_for(pilot, lambda: screen.decision is not None)
    return screen


def message_count(screen: ContextScreen) -> int:
    """Rows in the message list."""
    return screen.query_one(MessageList).row_count


# --- pilot tests -------------------------------------------------------------------------


async def test_the_open_context_moves_to_the_next_state_and_pins(
    tmp_path: Path, counters: dict[str, TokenCounter]
) -> None:
    grow_session(tmp_path, SESSION, EVAL_3)
    app = create_app([str(tmp_path)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = await open_state(pilot, app, EVAL_3)
        assert screen.decision is not None
        assert screen.decision.verdict == "DOES NOT COMPRESS"
        assert screen.artifact.kind == "debug" and message_count(screen) == 5
        assert screen.live_marker == ""  # no marker before anything changed
        # the user's tuning: keep-recent one lower, and the cursor on message 2
        keep = screen.settings.keep_recent_messages  # type: ignore[attr-defined]
        await pilot.press("minus")
        await wait_for(pilot, lambda: screen.settings.keep_recent_messages == keep - 1)  # type: ignore[attr-defined]
        screen.query_one(MessageList).move_to(4)
        await pilot.press("P")  # a pin on message 4 (in the kept tail before and after)
        assert screen.pins == frozenset({4})
        screen.query_one(MessageList).move_to(2)
        first_messages = screen.snapshot.messages if screen.snapshot else ()

        # the session's next dump and its debug lines are written
        grow_session(tmp_path, SESSION, DUMP_1)
        await wait_for(
            pilot, lambda: screen.artifact.kind == "dump" and "verdict" in screen.live_marker
        )
        assert screen.artifact.timestamp == DUMP_1
        assert message_count(screen) == 7
        assert screen.decision is not None and screen.decision.verdict == "COMPRESSES"
        assert screen.settings.keep_recent_messages == keep - 1  # type: ignore[attr-defined]
        assert screen.decision.settings.keep_recent_messages == keep - 1  # type: ignore[attr-defined]
        assert screen.pins == frozenset({4})
        marker = screen.live_marker
        assert re.match(r"● updated \d\d:\d\d:\d\d · dump #\d+: \+2 messages", marker), marker
        assert "verdict DOES NOT COMPRESS → COMPRESSES" in marker
        assert "total " in marker and " → " in marker.split("total ")[1]
        assert screen.query_one("#live-marker").render().plain == marker  # type: ignore[attr-defined]
        # the new messages are highlighted until the next key; the cursor stayed on its message
        message_list = screen.query_one(MessageList)
        assert screen.live_new == (5, 6)
        assert all(message_list._line_key(i, 80)[4] for i in (5, 6))
        assert screen.snapshot is not None
        assert screen.snapshot.messages[message_list.cursor] == first_messages[2]
        await pilot.press("down")
        await wait_for(pilot, lambda: screen.live_new == ())
        assert not message_list._line_key(5, 80)[4]

        # pinned: newer states are counted, not shown
        await pilot.press(PIN_STATE_KEY)
        assert screen.live_pinned and screen.live_marker.startswith("◆ pinned to dump #")
        grow_session(tmp_path, SESSION, EVAL_5)
        await wait_for(pilot, lambda: "1 newer state " in screen.live_marker)
        grow_session(tmp_path, SESSION, DUMP_2)
        await wait_for(pilot, lambda: "2 newer states" in screen.live_marker)
        assert f"(press {PIN_STATE_KEY} to follow)" in screen.live_marker
        assert screen.artifact.timestamp == DUMP_1 and message_count(screen) == 7

        # unpinned: the newest state at once
        await pilot.press(PIN_STATE_KEY)
        await wait_for(pilot, lambda: screen.artifact.timestamp == DUMP_2)
        await wait_for(pilot, lambda: "verdict" in screen.live_marker)
        assert not screen.live_pinned and message_count(screen) == 9
        assert screen.live_marker.startswith("● updated") and "dump #" in screen.live_marker
        assert screen.settings.keep_recent_messages == keep - 1  # type: ignore[attr-defined]


async def test_another_sessions_dump_leaves_the_open_context_alone(
    tmp_path: Path, counters: dict[str, TokenCounter]
) -> None:
    grow_session(tmp_path, SESSION, EVAL_3)
    app = create_app([str(tmp_path)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = await open_state(pilot, app, EVAL_3)
        browser = browser_of(app)
        rows_before = len(browser.rows)
        grow_session(tmp_path, "ops-incident-42", 2e9)
        await wait_for(pilot, lambda: len(browser.rows) > rows_before)
        await pilot.pause(0.3)
        assert any(r.artifact and r.artifact.session_id == "ops-incident-42" for r in browser.rows)
        assert screen.artifact.timestamp == EVAL_3 and message_count(screen) == 5
        assert screen.live_marker == ""
        assert not screen.query("#live-marker")


async def test_pinning_before_any_update_says_so_and_unpinning_follows_again(
    tmp_path: Path, counters: dict[str, TokenCounter]
) -> None:
    grow_session(tmp_path, SESSION, DUMP_1)
    app = create_app([str(tmp_path)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = await open_state(pilot, app, DUMP_1)
        await pilot.press(PIN_STATE_KEY)
        assert screen.live_marker.startswith("◆ pinned to")
        assert "newer states are held" in screen.live_marker
        await pilot.press(PIN_STATE_KEY)
        assert screen.live_marker.startswith("● following updates again")
        assert screen.artifact.timestamp == DUMP_1


async def test_a_live_agents_new_window_updates_the_open_window(
    counters: dict[str, TokenCounter],
) -> None:
    from tests.servers.fake_trajectory import SESSION as LIVE_SESSION
    from tests.servers.fake_trajectory import FakeTrajectory

    with FakeTrajectory() as server:
        app = create_app([server.session_url()], counters=counters)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            browser = browser_of(app)
            await wait_for(
                pilot, lambda: any(r.artifact and "live" in r.artifact.extra for r in browser.rows)
            )
            index = next(
                i
                for i, row in enumerate(browser.shown)
                if row.artifact is not None and "live" in row.artifact.extra
            )
            browser.query_one("#table").move_cursor(row=index)
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, ContextScreen))
            screen = app.screen
            assert isinstance(screen, ContextScreen)
            await wait_for(pilot, lambda: screen.decision is not None)
            first_id, first_count = screen.artifact.id, message_count(screen)
            server.append_event(
                LIVE_SESSION,
                "context.window.commit",
                {
                    "window_id": "main:window-8",
                    "base_window_id": "main:window-7",
                    "complete": True,
                    "request_purpose": "assistant",
                    "delta": [
                        {
                            "op": "insert",
                            "message_id": "assistant-4",
                            "index": 3,
                            "message": {
                                "message_id": "assistant-4",
                                "role": "assistant",
                                "origin": "harness_internal",
                                "content": "Published.",
                            },
                        }
                    ],
                },
                epoch="epoch-2",
                sequence=2,
            )
            await wait_for(pilot, lambda: "verdict" in screen.live_marker)
            assert screen.artifact.id != first_id and screen.artifact.id.endswith("window-8")
            assert message_count(screen) == first_count + 1
            assert re.match(r"● updated .* · window #2: \+1 messages", screen.live_marker)
            assert screen.live_new == (first_count,)


async def test_a_rewritten_snapshot_file_opened_alone_updates_its_view(
    tmp_path: Path, counters: dict[str, TokenCounter]
) -> None:
    def record(*texts: str) -> str:
        messages = [
            {"role": "user" if i % 2 == 0 else "assistant", "content": t}
            for i, t in enumerate(texts)
        ]
        return json.dumps({"id": "s1", "context_max": 1000, "messages": messages}) + "\n"

    log = tmp_path / "snapshots.jsonl"
    log.write_text(record("hello", "hi there"))
    app = create_app([str(log)], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await wait_for(pilot, lambda: isinstance(app.screen, ContextScreen))  # opens straight
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        await wait_for(pilot, lambda: screen.decision is not None and following(browser_of(app)))
        _put(log, record("hello", "hi there", "read the file " * 400, "done"))
        await wait_for(pilot, lambda: "verdict" in screen.live_marker)
        assert message_count(screen) == 4 and screen.live_new == (2, 3)
        assert "snapshot #1 rewritten: +2 messages" in screen.live_marker
        assert screen.decision is not None and screen.decision.total_tokens is not None
        assert "total " in screen.live_marker and " → " in screen.live_marker


async def test_pin_state_key_is_in_the_palette_and_help(counters: dict[str, TokenCounter]) -> None:
    from inspector.tui.commands import binding_commands
    from inspector.tui.screens.help import help_sections

    context = dict(help_sections())["Context view"]
    assert any(getattr(b, "key", "") == PIN_STATE_KEY for b in context)
    app = create_app([str(SAMPLES / f"{SESSION}_context")], counters=counters)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        if not isinstance(app.screen, ContextScreen):
            await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ContextScreen))
        titles = [c.title for c in binding_commands(app, app.screen)]
        assert "Pin state" in titles


# --- the identity rule and the words (plain functions) -------------------------------------


def _art(
    source: str = "a.json",
    id: str = "a",
    *,
    kind: Any = "dump",
    session: str | None = "s1",
    context: str | None = "ctx",
    processor: str | None = "RoundLevelCompressor",
    timestamp: float | None = 10.0,
    messages: tuple[str, ...] = ("hi",),
    live: dict[str, Any] | None = None,
    snapshot: bool = True,
) -> Artifact:
    shot = ContextSnapshot(id, (), tuple(Message("user", t) for t in messages), (), Tuning())
    return Artifact(
        source=source,
        id=id,
        kind=kind,
        snapshot=shot if snapshot else None,
        processor=processor,
        session_id=session,
        context_id=context,
        timestamp=timestamp,
        extra={"live": live} if live is not None else {},
    )


@pytest.mark.parametrize(
    ("other", "same"),
    [
        (_art("b.json", "b", timestamp=20.0), True),  # the session's next dump
        (_art("b.jsonl", "b#4", kind="debug", timestamp=20.0), True),  # its next evaluation
        (_art("b.json", "b", session="s2"), False),  # another session
        (_art("b.json", "b", context="ctx2"), False),  # another context of the session
        (_art("b.json", "b", processor="DialogueCompressor"), False),  # another processor
        (_art("b.json", "b", snapshot=False), False),  # nothing to show
    ],
)
def test_context_identity(other: Artifact, same: bool) -> None:
    assert (context_identity(other) == context_identity(_art())) is same


def test_identity_of_live_windows_and_bare_files() -> None:
    window = {"subject_id": "agent", "window_id": "w1", "revision": 1}
    first = _art("ws://g", "s/agent/w1", kind="messages", live=window, timestamp=None)
    second = _art(
        "ws://g",
        "s/agent/w2",
        kind="messages",
        live={**window, "window_id": "w2", "revision": 2},
        timestamp=None,
    )
    other = _art(
        "ws://g",
        "s/helper/w1",
        kind="messages",
        live={**window, "subject_id": "helper"},
        timestamp=None,
    )
    assert context_identity(first) == context_identity(second) != context_identity(other)
    assert is_newer_state(first, second) and not is_newer_state(second, first)
    bare = _art("x.json", "x", session=None, kind="snapshot")
    assert context_identity(bare) == ("artifact", "x.json", "x")
    assert context_identity(_art("y.json", "y", session=None, kind="snapshot")) != context_identity(
        bare
    )


def test_newer_state_and_the_newest() -> None:
    current = _art()
    same_again = _art()  # a reread of the same file, unchanged
    rewritten = _art(messages=("hi", "more"))
    older = _art("o.json", "o", timestamp=5.0)
    newer = _art("n.json", "n", timestamp=30.0)
    newest = _art("m.json", "m", timestamp=40.0)
    assert not is_newer_state(current, same_again)
    assert is_newer_state(current, rewritten)
    assert not is_newer_state(current, older)
    assert newest_state(current, [older, newest, same_again, newer]) is newest
    assert newest_state(current, [older, same_again]) is None


def test_message_changes_cursor_and_pins() -> None:
    def messages(*texts: str) -> tuple[Message, ...]:
        return tuple(Message("user", t) for t in texts)

    old = messages("a", "b", "c")
    grown = messages("a", "b", "c", "d", "e")
    compressed = messages("summary", "c", "d")
    assert message_changes(old, grown) == ((3, 4), 0)
    assert message_changes(old, compressed) == ((0, 2), 2)
    assert carried_index(old, compressed, 2) == 1
    assert carried_index(old, compressed, 0) is None
    assert carried_pins(old, compressed, frozenset({0, 2})) == frozenset({1})


def test_change_words() -> None:
    before = StateSummary(5, 5210, "DOES NOT COMPRESS")
    after = StateSummary(8, 6044, "COMPRESSES")
    assert change_words(before, after, 3, 0) == (
        "+3 messages, total 5,210 → 6,044, verdict DOES NOT COMPRESS → COMPRESSES"
    )
    same = StateSummary(8, 6044, "COMPRESSES")
    assert (
        change_words(after, same, 0, 0)
        == "same 8 messages, total 6,044 (same), verdict still COMPRESSES"
    )
    assert change_words(after, StateSummary(3, 900, "COMPRESSES"), 1, 6).startswith(
        "+1 −6 messages"
    )
