"""Which standard processors re-run, and how each builds its script: one mapping.

`SCRIPT_BUILDERS` maps openJiuwen's class name to the function that builds the processor's
model calls (`rerun_script.Script`) from the prepared context under the settings' release,
the settings and the prompts; `StandardStrategy.rerun_script` looks it up and its
"rerun" capability is derived from it. Must not import anything outside the standard
library, pydantic and `inspector.core`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from inspector.core.standard import settings as models
from inspector.core.standard.prepared import StandardPrepared
from inspector.core.standard.rerun_compact import full_compact_script
from inspector.core.standard.rerun_offload import mso_script
from inspector.core.standard.rerun_round import round_level_script
from inspector.core.standard.rerun_script import (
    Script,
    StandardPrompts,
    current_round_script,
    dialogue_script,
)
from inspector.core.strategy.base import Settings

#: (prepared context under the settings' release, settings, prompts, new offload handle).
Builder = Callable[[StandardPrepared, Settings, StandardPrompts, Callable[[], str]], Script]


def _offloader(
    prep: StandardPrepared, settings: Settings, prompts: StandardPrompts, handle: Callable[[], str]
) -> Script:
    assert isinstance(settings, models.MessageSummaryOffloaderSettings)
    return mso_script(prep, settings, prompts.offload, handle)


def _dialogue(
    prep: StandardPrepared, settings: Settings, prompts: StandardPrompts, _: Callable[[], str]
) -> Script:
    assert isinstance(settings, models.DialogueSettings)
    return dialogue_script(prep, settings, prompts.dialogue)


def _current_round(
    prep: StandardPrepared, settings: Settings, prompts: StandardPrompts, _: Callable[[], str]
) -> Script:
    assert isinstance(settings, models.CurrentRoundSettings)
    return current_round_script(prep, settings, prompts)


def _round_level(
    prep: StandardPrepared, settings: Settings, prompts: StandardPrompts, _: Callable[[], str]
) -> Script:
    assert isinstance(settings, models.RoundLevelSettings)
    return round_level_script(prep, settings, prompts)


def _full_compact(
    prep: StandardPrepared, settings: Settings, prompts: StandardPrompts, _: Callable[[], str]
) -> Script:
    assert isinstance(settings, models.FullCompactSettings)
    return full_compact_script(prep, settings, prompts.full_compact)


SCRIPT_BUILDERS: Mapping[str, Builder] = {
    "MessageSummaryOffloader": _offloader,
    "DialogueCompressor": _dialogue,
    "CurrentRoundCompressor": _current_round,
    "RoundLevelCompressor": _round_level,
    "FullCompactProcessor": _full_compact,
}
