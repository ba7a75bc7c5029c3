"""The TUI re-run: form, worker with progress and cancel, before/after view, dump writing.

Driven through Textual's pilot on a minimal host app, against the threaded FakeOpenAI
server serving reference scenario a's recorded reply (5460 -> 4047 tokens).
"""

from __future__ import annotations

import io
import json
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.pilot import Pilot
from textual.widgets import Checkbox, Input, Static

from inspector.core.artifact import Artifact
from inspector.core.tuning import Tuning
from inspector.encoding import make_counters
from inspector.llm import MissingApiKey
from inspector.sources.loader import load_paths
from inspector.tui.screens.rerun_dialog import FormValues, RerunDialog, RerunRequest, parse_form
from inspector.tui.screens.rerun_screen import RerunScreen, open_rerun, plain_error
from tests.conftest import REFERENCE
from tests.servers.fake_openai import FakeOpenAI, Reply

pytestmark = pytest.mark.skipif(not REFERENCE.exists(), reason="reference folder not available")

SECRET = "sk-tui-tests-SECRET-777"
A = REFERENCE / "a_current_round_plain"
A_DUMP = next(A.glob("17*_CurrentRoundCompressor_*.json"))
A_SCRIPT = [
    Reply.from_script(item)
    for item in json.loads((A / "input.json").read_text())["fake_server_script"]
]
COUNTERS = make_counters()
SIZE = (140, 50)


def dump_artifact() -> Artifact:
    """Scenario a's dump, loaded as the app loads it."""
    found = [item for item in load_paths([A_DUMP]) if isinstance(item, Artifact)]
    return next(a for a in found if a.kind == "dump")


class Host(App[None]):
    """The smallest app that offers the re-run: one key calls `open_rerun`."""

    BINDINGS = [Binding("R", "rerun", "Re-run")]

    def __init__(self, artifact: Artifact, tuning: Tuning, env: dict[str, str]) -> None:
        super().__init__()
        self.artifact = artifact
        self.tuning = tuning
        self.env = env
        self.notices: list[str] = []

    def notify(self, message: str, *, title: str = "", **kwargs: Any) -> None:  # type: ignore[override]
        """Record notices (titles) for the assertions, then show them."""
        self.notices.append(title)
        super().notify(message, title=title, **kwargs)

    def compose(self) -> ComposeResult:
        """A placeholder body."""
        yield Static("host")

    def action_rerun(self) -> None:
        """Open the re-run form."""
        open_rerun(self, self.artifact, self.tuning, counters=COUNTERS, env=self.env)


def text_of(app: App[Any], selector: str) -> str:
    """Plain text of a Static on the current screen."""
    widget = app.screen.query_one(selector, Static)
    console = Console(file=io.StringIO(), width=1000, color_system=None, record=True)
    console.print(widget.content)
    return console.export_text()


@pytest.fixture(autouse=True)
def _data_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


def host(env: dict[str, str] | None = None) -> Host:
    """A host on scenario a's dump with its recorded tuning."""
    artifact = dump_artifact()
    assert artifact.snapshot is not None
    return Host(
        artifact, artifact.snapshot.tuning, {"OPENAI_API_KEY": SECRET} if env is None else env
    )


async def fill_form(
    app: Host, pilot: Pilot[Any], base_url: str, out: Path, *, typed: bool = False
) -> RerunDialog:
    """Open the form and fill it (with `typed`, the model name is typed key by key)."""
    await pilot.press("R")
    await pilot.pause()
    dialog = app.screen
    assert isinstance(dialog, RerunDialog)
    dialog.query_one("#base-url", Input).value = base_url
    model = dialog.query_one("#model", Input)
    assert model.has_focus  # the base URL has a default, so the form starts at the model
    if typed:
        await pilot.press(*"fake-compress-model")
    else:
        model.value = "fake-compress-model"
    dialog.query_one("#out-dir", Input).value = str(out)
    await pilot.pause()
    return dialog


async def finished(app: Host, pilot: Pilot[Any]) -> RerunScreen:
    """Wait for the run's worker and its messages."""
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, RerunScreen)
    return screen


async def test_rerun_before_after_and_write(tmp_path: Path) -> None:
    app = host()
    out = tmp_path / "out"
    before = sorted(p.name for p in A.iterdir())
    with FakeOpenAI(A_SCRIPT) as server:
        async with app.run_test(size=SIZE) as pilot:
            await fill_form(app, pilot, server.base_url, out, typed=True)
            await pilot.click("#run")
            screen = await finished(app, pilot)
            sent = server.requests[0]
            assert sent.had_authorization_header and sent.body["model"] == "fake-compress-model"
            assert screen.state == "done" and screen.result is not None
            result = screen.result
            assert result.outcome == "applied" and result.prompt_source == "recorded"
            c = result.compaction
            assert c is not None and (c.tokens_before, c.tokens_after) == (5460, 4047)
            assert "5460 -> 4047" in text_of(app, "#rerun-tokens")
            assert "saves 1413" in text_of(app, "#rerun-tokens")
            assert "COMPRESSED" in text_of(app, "#rerun-status")
            assert "attempt 1:" in text_of(app, "#rerun-attempts")
            before_text = text_of(app, "#before")
            after_text = text_of(app, "#after")
            assert "folded into the summary" in before_text
            assert f"memory block <{result.wrapper.tag}>" in after_text
            assert c.reinjection.files and c.reinjection.files[0] in after_text
            assert "protected tail" in after_text
            assert "what the summary lost" in text_of(app, "#lost")
            assert "attempts" in text_of(app, "#findings")
            assert SECRET not in app.export_screenshot()

            await pilot.press("w")
            await finished(app, pilot)
            assert screen.written is not None and screen.written.dump is not None
            assert screen.written.dump.parent == out and screen.written.dump.exists()
            assert str(screen.written.dump) in text_of(app, "#rerun-written")
            assert SECRET not in screen.written.dump.read_text()
            assert screen.check_action("write_dump", ()) is None  # written once; shown dimmed

            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, RerunScreen)
    assert sorted(p.name for p in A.iterdir()) == before


async def test_http_401_in_plain_words(tmp_path: Path) -> None:
    error = {
        "message": "Incorrect API key provided.",
        "type": "invalid_request_error",
        "code": "invalid_api_key",
    }
    app = host()
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    with FakeOpenAI([Reply(status=401, error=error)]) as server:
        async with app.run_test(size=SIZE) as pilot:
            await fill_form(app, pilot, server.base_url, blocked / "out")
            await pilot.press("ctrl+r")
            screen = await finished(app, pilot)
            assert screen.state == "done" and screen.result is not None
            assert screen.result.outcome == "failed"
            status = text_of(app, "#rerun-status")
            assert "MODEL CALL FAILED" in status and "API key was refused" in status
            assert "no new context" in text_of(app, "#after")
            assert "debug records" in text_of(app, "#rerun-written")
            await pilot.press("w")  # the folder cannot be created: said in plain words
            await finished(app, pilot)
            assert screen.written is None and screen.write_error is not None
            assert "not written: cannot create" in text_of(app, "#rerun-written")
            shot = app.export_screenshot()
            assert "Traceback" not in shot and SECRET not in shot


async def test_edit_and_rerun_without_tools(tmp_path: Path) -> None:
    app = host()
    with FakeOpenAI(A_SCRIPT) as server:
        async with app.run_test(size=SIZE) as pilot:
            await fill_form(app, pilot, server.base_url, tmp_path / "out")
            await pilot.press("ctrl+r")
            screen = await finished(app, pilot)
            assert "tools" in server.requests[0].body
            await pilot.press("e")
            await pilot.pause()
            dialog = app.screen
            assert isinstance(dialog, RerunDialog)
            assert dialog.query_one("#model", Input).value == "fake-compress-model"
            dialog.query_one("#tools", Checkbox).value = False
            await pilot.press("ctrl+r")
            await finished(app, pilot)
            assert app.screen is screen and screen.run_number == 2
            assert "tools" not in server.requests[1].body
            assert screen.result is not None and screen.result.include_tools is False
            assert "tools left out" in text_of(app, "#findings")


async def test_open_rerun_refuses_what_cannot_run() -> None:
    artifact = dump_artifact()
    assert artifact.snapshot is not None
    log_only = Artifact(source="x.jsonl", id="log", kind="debug", snapshot=None)
    hybrid = artifact.snapshot.tuning.with_(processor="hybrid")
    for target, tuning in ((log_only, artifact.snapshot.tuning), (artifact, hybrid)):
        app = Host(target, tuning, {"OPENAI_API_KEY": SECRET})
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("R")
            await pilot.pause()
            assert not isinstance(app.screen, RerunDialog)
            assert app.notices == ["cannot re-run"]


def test_plain_error_words() -> None:
    assert "OPENAI_API_KEY is not set" in plain_error(MissingApiKey("OPENAI_API_KEY"))
    assert plain_error(FileNotFoundError(2, "No such file or directory", "/p.txt")) == (
        "Cannot read /p.txt: No such file or directory."
    )
    assert plain_error(RuntimeError("boom")) == "Unexpected error (RuntimeError): boom"


async def test_connection_refused_and_nothing_to_compress(tmp_path: Path) -> None:
    app = host()
    async with app.run_test(size=SIZE) as pilot:
        await fill_form(app, pilot, "http://127.0.0.1:9/v1", tmp_path / "out")
        await pilot.press("ctrl+r")
        screen = await finished(app, pilot)
        assert screen.result is not None and screen.result.outcome == "failed"
        assert "could not connect" in text_of(app, "#rerun-status")
        # a tuning that leaves nothing to compress: a plain sentence, no call
        screen.tuning = screen.tuning.with_(keep_recent=200)
        screen.start_run()
        await finished(app, pilot)
        assert screen.state == "error" and screen.error_message is not None
        assert screen.error_message.startswith("Nothing to compress")
        assert "No model call was made" in text_of(app, "#rerun-error")
        assert "Traceback" not in app.export_screenshot()


async def test_missing_key_is_reported_in_the_form(tmp_path: Path) -> None:
    app = host(env={})
    async with app.run_test(size=SIZE) as pilot:
        dialog = await fill_form(app, pilot, "http://127.0.0.1:9/v1", tmp_path / "out")
        assert "OPENAI_API_KEY is not set" in text_of(app, "#key-status")
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert app.screen is dialog
        assert "OPENAI_API_KEY is not set" in dialog.errors["key-env"]
        assert "is not set" in text_of(app, "#error-key-env")
        assert dialog.query_one("#error-key-env").has_class("-shown")
        # no key for a local server: the form accepts it
        dialog.query_one("#send-key", Checkbox).value = False
        await pilot.pause()
        assert "no Authorization header" in text_of(app, "#key-status")
        await pilot.press("ctrl+r")
        screen = await finished(app, pilot)
        assert screen.request.send_key is False


async def test_out_dir_inside_source_refused(tmp_path: Path) -> None:
    app = host()
    async with app.run_test(size=SIZE) as pilot:
        dialog = await fill_form(app, pilot, "http://127.0.0.1:9/v1", A / "sub")
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert app.screen is dialog
        assert "never writes where it reads" in text_of(app, "#error-out-dir")
        await pilot.press("escape")  # leaves the out-dir field (focused by the error)
        await pilot.pause()
        assert app.screen is dialog
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, (RerunDialog, RerunScreen))


async def test_cancel_during_slow_reply(tmp_path: Path) -> None:
    slow = Reply(content=A_SCRIPT[0].content, delay=5.0)
    app = host()
    with FakeOpenAI([slow]) as server:
        async with app.run_test(size=SIZE) as pilot:
            await fill_form(app, pilot, server.base_url, tmp_path / "out")
            await pilot.press("ctrl+r")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, RerunScreen)
            deadline = time.monotonic() + 3
            while not server.requests and time.monotonic() < deadline:
                await pilot.pause(0.05)
            assert server.requests and screen.state == "running"
            assert "calling fake-compress-model" in text_of(app, "#rerun-status")
            started = time.monotonic()
            await pilot.press("escape")
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert time.monotonic() - started < 2
            assert screen.state == "cancelled" and screen.result is None
            assert "cancelled" in text_of(app, "#rerun-status")
            assert app.screen is screen  # the first Escape cancels, the second goes back
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, RerunScreen)


def test_parse_form_messages(tmp_path: Path) -> None:
    values = FormValues(
        base_url="api.example.com",
        model=" ",
        api_key_env="1BAD",
        send_key=True,
        prompt_choice="file",
        prompt_file=str(tmp_path / "missing.txt"),
        include_tools=False,
        policy="status",
        timeout="0",
        out_dir=str(tmp_path / "out"),
    )
    request, errors = parse_form(values, [str(A_DUMP)], {})
    assert request is None
    assert set(errors) == {"base-url", "model", "key-env", "prompt-file", "timeout"}
    prompt = tmp_path / "p.txt"
    prompt.write_text("summarise")
    good = FormValues(
        "http://localhost:8000/v1",
        "m",
        "MY_KEY",
        True,
        "file",
        str(prompt),
        False,
        "status",
        "5",
        str(tmp_path),
    )
    request, errors = parse_form(good, [str(A_DUMP)], {"MY_KEY": "x"})
    assert errors == {}
    assert request == RerunRequest(
        base_url="http://localhost:8000/v1",
        model="m",
        out_dir=tmp_path,
        api_key_env="MY_KEY",
        prompt_choice="file",
        prompt_file=str(prompt),
        include_tools=False,
        policy="status",
        timeout_s=5.0,
    )
    assert request.endpoint().require_key and request.endpoint().timeout_s == 5.0
