"""What a settings model says about its fields, for the front ends that are built from it.

The CLI flags, the Tune panel, `--help` and sweeps read `FieldInfo`s from here instead of
naming fields. Must not import anything outside the standard library, pydantic and
`inspector.core`.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from inspector.core.errors import ConfigError
from inspector.core.strategy.base import Settings

FieldKind = Literal["float", "int", "bool", "choice", "text"]


@dataclass(frozen=True, slots=True)
class FieldInfo:
    """One tunable field of a strategy's settings."""

    name: str
    kind: FieldKind
    default: Any
    description: str
    #: The CLI flag (`--trigger-ratio`); every field also answers to `--<name-with-dashes>`.
    flag: str
    choices: tuple[Any, ...] = ()
    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None
    #: Sweeps and flips move this field.
    sweep: bool = True
    #: openJiuwen itself cannot set it: a what-if.
    what_if: bool = False
    #: Our older short name (`trigger_ratio`), accepted wherever a field is named.
    alias: str | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """Every spelling that names this field."""
        return tuple(x for x in (self.name, self.alias) if x)

    def range_text(self) -> str:
        """The allowed range in words ("0 < x < 1", "one of a, b")."""
        if self.kind == "choice":
            return "one of " + ", ".join(str(c) for c in self.choices)
        if self.kind == "bool":
            return "true or false"
        low = (
            f"{self.gt:g} < "
            if self.gt is not None
            else f"{self.ge:g} <= "
            if self.ge is not None
            else ""
        )
        high = (
            f" < {self.lt:g}"
            if self.lt is not None
            else f" <= {self.le:g}"
            if self.le is not None
            else ""
        )
        return f"{low}{self.name}{high}" if (low or high) else "any " + self.kind


def _bounds(metadata: list[Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in metadata:
        for key in ("gt", "ge", "lt", "le"):
            value = getattr(item, key, None)
            if value is not None:
                out[key] = value
    return out


def _kind(annotation: Any) -> tuple[FieldKind, tuple[Any, ...]]:
    if typing.get_origin(annotation) is Literal:
        return "choice", typing.get_args(annotation)
    if annotation is bool:
        return "bool", ()
    if annotation is int:
        return "int", ()
    if annotation is float:
        return "float", ()
    return "text", ()


@cache
def fields_of(model: type[Settings]) -> tuple[FieldInfo, ...]:
    """The fields of a settings model, in declaration order."""
    out: list[FieldInfo] = []
    hints = typing.get_type_hints(model)
    for name, info in model.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        kind, choices = _kind(hints.get(name, info.annotation))
        out.append(
            FieldInfo(
                name=name,
                kind=kind,
                default=info.default,
                description=info.description or "",
                flag=str(extra.get("flag") or "--" + name.replace("_", "-")),
                choices=choices,
                sweep=bool(extra.get("sweep", kind in ("float", "int"))),
                what_if=bool(extra.get("what_if", False)),
                alias=str(extra["tuning"]) if extra.get("tuning") else None,
                **_bounds(list(info.metadata)),
            )
        )
    return tuple(out)


def field_named(model: type[Settings], name: str) -> FieldInfo:
    """The field `name` (its own name, its short alias or its flag) of a settings model."""
    wanted = name.strip().lstrip("-").replace("-", "_")
    for info in fields_of(model):
        if wanted in info.names or wanted == info.flag.lstrip("-").replace("-", "_"):
            return info
    raise ConfigError(
        "param", name, "one of " + ", ".join(f.name for f in fields_of(model) if f.sweep)
    )


def apply_named(settings: Settings, changes: dict[str, Any]) -> tuple[Settings, list[str]]:
    """Apply changes keyed by any spelling; returns the new settings and the names that do
    not apply to this model (for a notice)."""
    model = type(settings)
    resolved: dict[str, Any] = {}
    ignored: list[str] = []
    for name, value in changes.items():
        try:
            resolved[field_named(model, name).name] = value
        except ConfigError:
            ignored.append(name)
    return settings.with_(**resolved), ignored
