"""`inspector [SOURCE ...] [TUNING]` builds the app through the factory with the flags given."""

from __future__ import annotations

from typing import Any

import pytest

from inspector.cli import main


class FakeApp:
    """Stands in for the Textual app: records how it was built and run."""

    built: list[tuple[list[str], dict[str, Any]]] = []
    return_code = 0

    def __init__(self, sources: list[str], overrides: dict[str, Any]) -> None:
        FakeApp.built.append((sources, overrides))

    def run(self) -> None:
        """Nothing to draw."""


@pytest.fixture(autouse=True)
def fake_app(monkeypatch: pytest.MonkeyPatch) -> None:
    import inspector.tui.app as app_module

    FakeApp.built.clear()
    monkeypatch.setattr(app_module, "create_app", FakeApp)


def test_sources_and_tuning_flags_reach_the_app() -> None:
    code = main(
        [
            "dumps/",
            "x.json",
            "--trigger-ratio",
            "0.5",
            "--keep-recent",
            "3",
            "--no-tool-boundary",
            "--tokens",
            "len_div_4",
        ]
    )
    assert code == 0
    sources, overrides = FakeApp.built[-1]
    assert sources == ["dumps/", "x.json"]
    assert overrides == {
        "trigger_ratio": 0.5,
        "keep_recent": 3,
        "token_mode": "len_div_4",
        "tool_boundary": False,
    }


def test_no_source_opens_the_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("OPENJIUWEN_COMPRESSION_DUMP_DIR", str(tmp_path))
    assert main([]) == 0
    assert FakeApp.built[-1][0] == [str(tmp_path)]


def test_bad_flag_is_a_usage_error_before_the_app(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["x.json", "--trigger-ratio", "1.5"]) == 2
    assert not FakeApp.built
    assert "--trigger-ratio" in capsys.readouterr().err
