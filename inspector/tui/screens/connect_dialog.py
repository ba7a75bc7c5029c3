"""ConnectDialog: choose a live source (a jiuwenswarm gateway, a trajectory API, a folder).

A modal screen that returns a `ConnectRequest` (or None when cancelled). For a gateway it
can list the sessions the gateway knows (`session.list`, read-only) in a worker so the user
picks one instead of typing its id. The dialog only describes the connection: what a
source string is, how its fields are checked and how it opens live in
`inspector.sources.connect` (shared with `inspector watch`); the caller starts it with
`ConnectRequest.open()`, so state stays in the screen that shows the live events.
"""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from inspector.core.redact import shown_name
from inspector.sources.connect import (
    DEFAULT_GATEWAY,
    ConnectRequest,
    build_request,
    classify_source,
)

__all__ = ["ConnectDialog", "ConnectRequest", "build_request", "classify_source"]


class ConnectDialog(ModalScreen[ConnectRequest | None]):
    """Connect to a running agent or a growing folder; enter connects, escape cancels."""

    DEFAULT_CSS = """
    ConnectDialog { align: center middle; }
    ConnectDialog #connect-body {
        width: 80%; max-width: 96; height: auto; max-height: 90%;
        background: $surface; border: round $accent; padding: 0 2;
    }
    ConnectDialog Label { color: $text-muted; }
    ConnectDialog .title { text-style: bold; margin-bottom: 1; }
    ConnectDialog Input { margin-bottom: 1; }
    ConnectDialog #connect-sessions { height: auto; max-height: 10; display: none; }
    ConnectDialog #connect-sessions.-shown { display: block; }
    ConnectDialog #connect-status { color: $text-muted; }
    ConnectDialog #connect-status.-error { color: $error; }
    ConnectDialog #connect-buttons { height: auto; align-horizontal: right; }
    ConnectDialog Button { margin-left: 2; }
    """

    #: Typing starts in the source field (the scrolling body would take focus otherwise).
    AUTO_FOCUS = "#connect-source"

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding(
            "ctrl+l", "list_sessions", "Sessions", tooltip="Ask the gateway which sessions it knows"
        ),
    ]

    def __init__(
        self, source: str = DEFAULT_GATEWAY, session_id: str = "", trajectory: str = "auto"
    ) -> None:
        super().__init__()
        self._initial = (source, session_id, trajectory)

    def compose(self) -> ComposeResult:
        """Source, session, trajectory and subject fields; a session list; the buttons."""
        source, session_id, trajectory = self._initial
        with VerticalScroll(id="connect-body"):
            yield Static("Connect to a live source", classes="title", markup=False)
            yield Label("gateway ws:// URL, trajectory http:// URL, or a folder / log to follow")
            yield Input(source, id="connect-source", placeholder=DEFAULT_GATEWAY, compact=True)
            yield Label("session id (ctrl+l lists the gateway's sessions)")
            yield Input(session_id, id="connect-session", placeholder="sess_…", compact=True)
            yield OptionList(id="connect-sessions")
            yield Label("trajectory API for the rebuilt context window (auto, URL, or empty)")
            yield Input(trajectory, id="connect-trajectory", placeholder="auto", compact=True)
            yield Label("subject (trajectory)")
            yield Input("main", id="connect-subject", compact=True)
            yield Static("", id="connect-status", markup=False)
            with Horizontal(id="connect-buttons"):
                yield Button("Sessions", id="connect-list", compact=True)
                yield Button("Cancel", id="connect-cancel", compact=True)
                yield Button("Connect", id="connect-ok", variant="primary", compact=True)

    def _value(self, widget_id: str) -> str:
        return self.query_one(f"#{widget_id}", Input).value

    def _say(self, text: str, error: bool = False) -> None:
        status = self.query_one("#connect-status", Static)
        status.update(text)
        status.set_class(error, "-error")

    def action_cancel(self) -> None:
        """Close without connecting."""
        self.dismiss(None)

    def action_connect(self) -> None:
        """Validate and return the request."""
        try:
            request = build_request(
                self._value("connect-source"),
                self._value("connect-session"),
                self._value("connect-trajectory"),
                self._value("connect-subject"),
            )
        except ValueError as error:
            self._say(str(error), error=True)
            return
        self.dismiss(request)

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self.action_connect()

    @on(Button.Pressed, "#connect-ok")
    def _ok(self) -> None:
        self.action_connect()

    @on(Button.Pressed, "#connect-cancel")
    def _cancel(self) -> None:
        self.action_cancel()

    @on(Button.Pressed, "#connect-list")
    def _list(self) -> None:
        self.action_list_sessions()

    def action_list_sessions(self) -> None:
        """Ask the gateway for its sessions (read-only `session.list`) in a worker."""
        source = self._value("connect-source").strip()
        if classify_source(source) != "gateway":
            self._say("sessions can be listed for a ws:// gateway only", error=True)
            return
        self._say("asking the gateway…")
        self._fetch_sessions(source)

    @work(exclusive=True, group="connect-sessions")
    async def _fetch_sessions(self, source: str) -> None:
        """Connect once, call session.list, show the sessions (or why not)."""
        from inspector.sources.live.gateway import list_sessions

        try:
            sessions = await list_sessions(source)
        except ConnectionError as error:
            self._say(str(error), error=True)
            return
        options = self.query_one("#connect-sessions", OptionList)
        options.clear_options()
        for meta in sessions:
            session_id = str(meta.get("session_id", ""))
            label = f"{session_id}  {meta.get('title') or ''}  {meta.get('mode') or ''}".rstrip()
            options.add_option(Option(Text(shown_name(label)), id=session_id))  # as it is
        options.set_class(bool(sessions), "-shown")
        self._say(f"{len(sessions)} sessions" if sessions else "the gateway knows no sessions yet")
        if sessions:
            options.focus()

    @on(OptionList.OptionSelected, "#connect-sessions")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.query_one("#connect-session", Input).value = event.option.id or ""
        self.query_one("#connect-ok", Button).focus()
