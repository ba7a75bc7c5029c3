"""Settings shown while the tuning panel swaps its controls wait for the new controls.

`p` on the context view swaps the panel to another strategy's settings model (the controls
recomposed) and, when the new token mode must be counted first, a worker shows the settings
once counted. A `show` that came during the recompose found the old controls gone:
NoMatches for `#settings-compare-table`, the app gone with a traceback (and, now and then,
`test_every_tuning_control_recomputes_like_core` failed on a stale decision).
"""

from __future__ import annotations

import asyncio

from textual.app import App, ComposeResult
from textual.widgets import Input

from inspector.core.strategy import registry
from inspector.tui.widgets.settings_panel import SettingsPanel


class _PanelApp(App[None]):
    def compose(self) -> ComposeResult:
        yield SettingsPanel(registry.get("current_round").settings_model, id="panel")


async def test_a_show_during_the_swap_is_shown_on_the_new_controls() -> None:
    app = _PanelApp()
    current = registry.get("current_round").settings_model()
    dialogue_model = registry.get("dialogue").settings_model
    dialogue = dialogue_model.model_validate({"context_max": 9_000, "trigger_context_ratio": 0.6})
    async with app.run_test() as pilot:
        panel = app.query_one(SettingsPanel)
        await pilot.pause()
        assert panel.built  # shown: its controls exist
        panel.show(current, current)
        swap = asyncio.ensure_future(panel.use_model(dialogue_model))
        await asyncio.sleep(0)  # the swap has started its recompose
        panel.show(dialogue, dialogue_model())  # the count finished meanwhile
        await swap
        await pilot.pause()
        assert app.return_code is None  # no exception ended the app
        assert panel.query_one("#field-context_max", Input).value == "9000"
        assert panel.query_one("#field-trigger_context_ratio", Input).value == "0.6"
        assert panel.query_one("#row-context_max").has_class("-changed")
