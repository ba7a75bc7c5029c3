"""From what a source recorded and what the user asked for to one strategy and its settings.

The one place where the processor a snapshot names, the `--processor`/`--family` choice and
the tuning overrides (by any field spelling) meet. Must not import anything outside the
standard library, pydantic and `inspector.core`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from inspector.core.errors import ConfigError
from inspector.core.snapshot import ContextSnapshot
from inspector.core.strategy import registry
from inspector.core.strategy.base import Settings, Strategy
from inspector.core.strategy.fields import apply_named

#: Override keys that choose the strategy rather than set a field.
CHOICE_KEYS = ("processor", "family")


@dataclass(frozen=True)
class Selection:
    """A strategy, its effective settings, and what the user set that does not apply to it."""

    strategy: Strategy
    settings: Settings
    #: Override names the strategy's settings do not have (shown as a notice).
    ignored: tuple[str, ...] = ()
    #: Fields whose value the source did not record and the user did not set.
    assumed: frozenset[str] = frozenset()


def recorded_strategy(snapshot: ContextSnapshot) -> Strategy:
    """The strategy the snapshot names (its family's processor), else CurrentRound."""
    if snapshot.family != "forked" and snapshot.processor_name:
        return registry.resolve(snapshot.processor_name, snapshot.family)
    return registry.get(snapshot.tuning.processor)


def select(snapshot: ContextSnapshot, overrides: Mapping[str, Any]) -> Selection:
    """The effective selection: recorded values, then the user's overrides on top.

    Switching processor starts from the new strategy's reading of the source (its own
    defaults where the source says nothing) and applies the same overrides.
    """
    name, family = overrides.get("processor"), overrides.get("family")
    if name is not None and family is None:
        # a class name in several families means the snapshot's family's first
        try:
            strategy = registry.resolve(str(name), snapshot.family)
        except ConfigError:
            strategy = registry.resolve(str(name))
    elif name is not None:
        strategy = registry.resolve(str(name), family or None)
    elif family is not None and family != snapshot.family:
        raise ConfigError("processor", None, f"a processor of the {family} family (--processor)")
    else:
        strategy = recorded_strategy(snapshot)
    fields = {k: v for k, v in overrides.items() if k not in CHOICE_KEYS}
    settings, ignored = apply_named(strategy.recorded_settings(snapshot), fields)
    assumed = strategy.assumed_fields(snapshot) - {
        f for f in type(settings).model_fields if f in fields
    }
    return Selection(strategy, settings, tuple(ignored), assumed)
