"""The one list of strategies. Adding a strategy is one package under `inspector.core` plus
one line in `STRATEGIES`; every front end then offers it.

Entries are "module:attribute" strings imported on first use, so that importing the
registry stays cheap and strategy packages may import `inspector.core.strategy.base`
freely. Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import importlib
from functools import cache

from inspector.core.errors import ConfigError
from inspector.core.strategy.base import Strategy

#: Every strategy, in menu order: "module:attribute" of an instance.
STRATEGIES: tuple[str, ...] = (
    "inspector.core.forked.strategy:CURRENT_ROUND",
    "inspector.core.forked.strategy:DIALOGUE",
    "inspector.core.forked.strategy:ROUND_LEVEL",
    "inspector.core.hybrid_strategy:HYBRID",
    "inspector.core.standard.strategy:MESSAGE_SUMMARY_OFFLOADER",
    "inspector.core.standard.strategy:REASONING_TOOL_LOOP",
    "inspector.core.standard.strategy:DIALOGUE",
    "inspector.core.standard.strategy:CURRENT_ROUND",
    "inspector.core.standard.strategy:ROUND_LEVEL",
    "inspector.core.standard.strategy:MESSAGE_OFFLOADER",
    "inspector.core.standard.strategy:TOOL_RESULT_BUDGET",
    "inspector.core.standard.strategy:TOOL_RESULT_WINDOW",
    "inspector.core.standard.strategy:MICRO_COMPACT",
    "inspector.core.standard.strategy:FULL_COMPACT",
)


@cache
def all_strategies() -> tuple[Strategy, ...]:
    """Every registered strategy, imported once."""
    found: list[Strategy] = []
    for entry in STRATEGIES:
        module_name, _, attribute = entry.partition(":")
        found.append(getattr(importlib.import_module(module_name), attribute))
    return tuple(found)


def strategy_keys() -> tuple[str, ...]:
    """Registry keys in menu order."""
    return tuple(strategy.key for strategy in all_strategies())


def _normal(name: str) -> str:
    return name.strip().replace("-", "_").replace(" ", "").lower()


def resolve(name: str, family: str | None = None) -> Strategy:
    """The strategy named by key or openJiuwen class name, case-insensitively.

    `family` narrows the match where a class name exists in several families
    (DialogueCompressor is both a forked and a standard processor).
    """
    wanted = _normal(name)
    matches = [
        strategy
        for strategy in all_strategies()
        if wanted
        in (
            _normal(strategy.key),
            _normal(strategy.processor),
            _normal(strategy.key).replace("_", ""),
        )
        and (family is None or strategy.family == family)
    ]
    if not matches:
        raise ConfigError("processor", name, "one of " + ", ".join(strategy_keys()))
    return matches[0]


def get(key: str) -> Strategy:
    """The strategy with exactly this registry key."""
    for strategy in all_strategies():
        if strategy.key == key:
            return strategy
    raise ConfigError("processor", key, "one of " + ", ".join(strategy_keys()))
