"""The registry's static tables describe the imported strategies exactly (issue 16, start
cost): `STRATEGY_TABLE` names what each line of `STRATEGIES` is, `TUNING_FLAGS` is what
every settings model generates. A failure prints the table to paste into
`inspector/core/strategy/registry.py`."""

from __future__ import annotations

import json
import subprocess
import sys

from inspector.core.strategy import registry
from tests.conftest import REPO


def _flags_source(flags: tuple[registry.TuningFlag, ...]) -> str:
    """`TUNING_FLAGS` as Python source, for the failure message."""
    rows = []
    for spec in flags:
        args = [repr(spec.flag), repr(spec.dest), repr(spec.kind), repr(spec.help)]
        if spec.choices:
            args.append(repr(tuple(spec.choices)))
        rows.append(f"    TuningFlag({', '.join(args)}),")
    return "TUNING_FLAGS: tuple[TuningFlag, ...] = (\n" + "\n".join(rows) + "\n)"


def test_strategy_table_is_the_imported_strategies() -> None:
    imported = registry.table_of(registry.all_strategies())
    assert imported == registry.STRATEGY_TABLE, "paste:\n" + "\n".join(map(repr, imported))
    assert tuple(line.target for line in registry.STRATEGY_TABLE) == registry.STRATEGIES


def test_tuning_flags_are_those_the_settings_models_generate() -> None:
    generated = registry.tuning_flags(registry.all_strategies())
    assert generated == registry.TUNING_FLAGS, "paste:\n" + _flags_source(generated)
    # one flag per line, each with a destination of its own
    assert len({spec.flag for spec in generated}) == len(generated)
    assert len({spec.dest for spec in generated}) == len(generated)


def test_static_answers_equal_the_imported_ones() -> None:
    strategies = registry.all_strategies()
    assert registry.strategy_keys() == tuple(s.key for s in strategies)
    assert registry.families() == tuple(dict.fromkeys(s.family for s in strategies))
    for strategy in strategies:
        assert registry.get(strategy.key) is strategy
        assert registry.resolve(strategy.processor, strategy.family) is strategy
        # the first strategy of that class name, in menu order, when no family is given
        first = next(s for s in strategies if s.processor == strategy.processor)
        assert registry.resolve(strategy.processor.upper()) is first


_CHILD = """
import json, sys
from inspector.core.strategy import registry
registry.strategy_keys(); registry.families(); registry.flags()
strategy = registry.resolve("CurrentRoundCompressor", "forked")
print(json.dumps([strategy.key, sorted(m for m in sys.modules if m.startswith("inspector"))]))
"""


def test_naming_and_resolving_one_strategy_imports_only_its_module() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD], capture_output=True, text=True, check=True, cwd=REPO
    )
    key, modules = json.loads(done.stdout)
    assert key == "current_round"
    assert "inspector.core.forked.strategy" in modules
    others = [
        m for m in modules if m.startswith(("inspector.core.standard", "inspector.core.hybrid"))
    ]
    assert others == []
