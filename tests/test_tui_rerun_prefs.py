"""The re-run form reads the saved preferences (endpoint, model, key variable name) and, with
"remember" ticked, saves what was typed; never the key itself.

Driven through the pilot on the re-run tests' host app against the threaded FakeOpenAI
server (the preferences file is the per-test one of `tests/conftest.py`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Checkbox, Input

from inspector.prefs import load_prefs, prefs_path, update_prefs
from inspector.tui.screens.rerun_dialog import RerunDialog, RerunRequest, remember_request
from inspector.tui.screens.rerun_screen import RerunScreen
from tests.servers.fake_openai import FakeOpenAI
from tests.test_tui_rerun import A_SCRIPT, SECRET, SIZE, finished, host

pytestmark = pytest.mark.skipif(not A_SCRIPT, reason="reference folder not available")


async def test_the_form_starts_from_the_saved_preferences(tmp_path: Path) -> None:
    update_prefs(endpoint="http://127.0.0.1:9/v1", model="saved-model", api_key_env="MY_KEY")
    app = host(env={"MY_KEY": SECRET, "OPENAI_BASE_URL": "http://elsewhere:1/v1"})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("R")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, RerunDialog)
        assert dialog.query_one("#base-url", Input).value == "http://127.0.0.1:9/v1"
        assert dialog.query_one("#model", Input).value == "saved-model"
        assert dialog.query_one("#key-env", Input).value == "MY_KEY"
        assert dialog.query_one("#remember", Checkbox).value  # they were remembered before
        assert SECRET not in app.export_screenshot()


async def test_nothing_saved_gives_the_defaults_and_remember_saves_the_typed_values(
    tmp_path: Path,
) -> None:
    assert not prefs_path().exists()
    app = host(env={"LOCAL_KEY": SECRET})
    with FakeOpenAI(A_SCRIPT) as server:
        base_url = server.base_url
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("R")
            await pilot.pause()
            dialog = app.screen
            assert isinstance(dialog, RerunDialog)
            assert dialog.query_one("#model", Input).value == ""
            assert dialog.query_one("#key-env", Input).value == "OPENAI_API_KEY"
            remember = dialog.query_one("#remember", Checkbox)
            assert not remember.value  # nothing remembered yet: offered, not assumed
            dialog.query_one("#base-url", Input).value = server.base_url
            dialog.query_one("#model", Input).focus()
            await pilot.press(*"typed-model")
            dialog.query_one("#key-env", Input).value = "LOCAL_KEY"
            dialog.query_one("#out-dir", Input).value = str(tmp_path / "out")
            remember.value = True
            await pilot.press("ctrl+r")
            screen = await finished(app, pilot)
            assert isinstance(screen, RerunScreen) and screen.result is not None
            assert server.requests[0].body["model"] == "typed-model"
    saved, problem = load_prefs()
    assert problem == ""
    assert (saved.endpoint, saved.model, saved.api_key_env) == (
        base_url,
        "typed-model",
        "LOCAL_KEY",
    )
    assert SECRET not in prefs_path().read_text(encoding="utf-8")

    # unticked: a later run with other values leaves the saved ones alone
    app = host(env={"LOCAL_KEY": SECRET})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("R")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, RerunDialog)
        assert dialog.query_one("#model", Input).value == "typed-model"
        dialog.query_one("#model", Input).value = "another"
        dialog.query_one("#remember", Checkbox).value = False
        dialog.query_one("#out-dir", Input).value = str(tmp_path / "out")
        await pilot.press("ctrl+r")
        await finished(app, pilot)
    assert load_prefs()[0].model == "typed-model"


def test_remember_refuses_a_key_in_the_variable_field(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    request = RerunRequest(
        base_url="http://127.0.0.1:9/v1", model="m", out_dir=tmp_path, api_key_env="sk_live_1234"
    )
    problem = remember_request(request, path)
    assert problem.startswith("not remembered: the key variable")
    assert "not a key" in problem
    assert not path.exists()
    blocked = tmp_path / "a-file"
    blocked.write_text("x")
    good = RerunRequest(base_url="http://h/v1", model="m", out_dir=tmp_path, api_key_env="K")
    assert remember_request(good, blocked / "settings.json").startswith(
        "not remembered: cannot write"
    )
