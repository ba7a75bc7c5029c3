"""Issue 16: a header-level load leaves no reference cycle behind it.

Artifacts refer back to the load (`loader._Streamer`: lazy timelines, release facts), so
whatever it still holds when it ends (its file loads, timeline makers, the debug
artifacts made while helpers read dumps) makes one cycle with all it read, freed only by
a full collection: 0.4 s at the exit of `stats` over 50,000 files. With the collector off,
the load must be freed as soon as its results are dropped.
"""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from typing import Any

import pytest

from bench.synth import write_folder
from inspector.sources import loader
from inspector.sources.pool import POOL_MIN_FILES


@pytest.mark.parametrize("on_demand", [False, True])
def test_header_level_load_is_freed_without_the_collector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on_demand: bool
) -> None:
    folder = write_folder(
        tmp_path / "f", dumps=POOL_MIN_FILES + 16, sessions=4, messages_per_dump=6
    )
    made: list[weakref.ref[Any]] = []
    early: list[int] = []
    real_init = loader._Streamer.__init__
    real_early = loader._Streamer._unlinkable_early

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        made.append(weakref.ref(self))

    def unlinkable_early(self: Any, *args: Any) -> None:
        real_early(self, *args)
        early.append(len(self._early_debug))

    monkeypatch.setattr(loader._Streamer, "__init__", init)
    monkeypatch.setattr(loader._Streamer, "_unlinkable_early", unlinkable_early)
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        results = list(loader.load_paths([folder], contexts=on_demand, on_demand=on_demand))
        assert results
        del results  # a debug artifact's timeline, and an on-demand `whole`, hold the load
        assert made and made[0]() is None
    finally:
        if enabled:
            gc.enable()
    # the case this guards: debug artifacts made early, while a helper read dumps
    assert early and early[0] > 0
