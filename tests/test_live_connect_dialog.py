"""ConnectDialog driven through Textual's pilot against a real fake gateway."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Input, OptionList, Static

from inspector.tui.screens.connect_dialog import ConnectDialog, ConnectRequest, build_request
from tests.servers.fake_gateway import FakeGateway


class Host(App[None]):
    """A bare app that opens the dialog and keeps what it returned."""

    def __init__(self, dialog: ConnectDialog) -> None:
        super().__init__()
        self.dialog = dialog
        self.results: list[ConnectRequest | None] = []

    def compose(self) -> ComposeResult:
        yield Static("host")

    def on_mount(self) -> None:
        self.push_screen(self.dialog, self.results.append)


async def listed(app: Host, pilot: Pilot[None]) -> OptionList:
    """ctrl+l in the dialog, then its session list once the gateway has answered."""
    await pilot.press("ctrl+l")
    options = app.dialog.query_one("#connect-sessions", OptionList)
    for _ in range(100):
        await pilot.pause(0.02)
        if options.option_count:
            break
    return options


def test_build_request_validates() -> None:
    request = build_request("ws://127.0.0.1:19000/ws", "s1", "auto", "")
    assert request == ConnectRequest("gateway", "ws://127.0.0.1:19000/ws", "s1", "auto", "main")
    assert build_request("ws://h:1/ws?session_id=q", "", "", "main").session_id == "q"
    assert build_request("ws://h:1/ws?session_id=q", "", "", "main").trajectory is None
    assert build_request("http://h:19002/api/trajectory/sessions/x", "", "", "").session_id == "x"
    assert build_request("/tmp/dumps", "", "", "").kind == "files"
    for bad in (
        ("", "", "", ""),
        ("ws://h:1/ws", "", "auto", ""),
        ("ws://h:1/ws", "s", "ftp://x", ""),
        ("http://h:1/", "", "", ""),
    ):
        with pytest.raises(ValueError):
            build_request(*bad)


async def test_dialog_lists_sessions_and_returns_the_pick() -> None:
    with FakeGateway() as gateway:
        gateway.sessions_meta = [
            {"session_id": "sess_a", "title": "first", "mode": "agent"},
            {"session_id": "sess_b", "title": "second", "mode": "agent"},
        ]
        app = Host(ConnectDialog(source=gateway.url()))
        async with app.run_test() as pilot:
            options = await listed(app, pilot)
            assert options.option_count == 2
            options.focus()
            options.highlighted = 1
            await pilot.press("enter")
            assert app.dialog.query_one("#connect-session", Input).value == "sess_b"
            await pilot.click("#connect-ok")
            await pilot.pause()
        assert app.results == [ConnectRequest("gateway", gateway.url(), "sess_b", "auto", "main")]


async def test_dialog_explains_bad_input_and_escape_cancels() -> None:
    app = Host(ConnectDialog(source="ws://127.0.0.1:19000/ws"))
    async with app.run_test() as pilot:
        app.dialog.query_one("#connect-source", Input).focus()
        await pilot.press("enter")
        status = app.dialog.query_one("#connect-status", Static)
        assert "session" in str(status.render()) and status.has_class("-error")
        await pilot.press("escape")
        await pilot.pause()
    assert app.results == [None]


async def test_a_gateways_session_titles_are_shown_as_they_are() -> None:
    with FakeGateway() as gateway:
        gateway.sessions_meta = [
            {"session_id": "sess_a", "title": "a[/x] \x1b]0;PWNED\x07 [bold]b", "mode": "agent"},
        ]
        app = Host(ConnectDialog(source=gateway.url()))
        async with app.run_test() as pilot:
            options = await listed(app, pilot)
            assert options.option_count == 1
            await pilot.pause()
            shot = app.export_screenshot()
            assert "\x1b" not in shot and "\x07" not in shot  # nothing reaches the terminal
            prompt = str(options.get_option_at_index(0).prompt)
            assert "a[/x] \\x1b]0;PWNED\\x07 [bold]b" in prompt
