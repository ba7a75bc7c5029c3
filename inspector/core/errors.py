"""The one hierarchy of typed errors; the CLI maps them to exit codes, the TUI to notices."""

from __future__ import annotations


class InspectorError(Exception):
    """Base of every error the inspector raises on purpose."""


class ConfigError(InspectorError):
    """A tuning or configuration value is out of its allowed range."""

    def __init__(self, field: str, value: object, allowed: str) -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        super().__init__(f"{field} = {value!r} is not allowed: must be {allowed}")


class FormatError(InspectorError):
    """Input bytes could not be read as any supported format.

    `where` locates the problem ("line 12", "byte 4096") when known.
    """

    def __init__(self, message: str, where: str | None = None) -> None:
        self.message = message
        self.where = where
        super().__init__(f"{message} ({where})" if where else message)
