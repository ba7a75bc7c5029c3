"""User preferences: a small JSON file remembered between runs (theme, folders, endpoint, ...).

`$CONTEXT_INSPECTOR_CONFIG_DIR/settings.json` when that variable is set, else
`<user config dir>/context-inspector/settings.json` (`$XDG_CONFIG_HOME/context-inspector/`
on Linux). Never holds an API key: only the name of the environment variable that does.
A missing, unreadable or invalid file gives the defaults (and says what was wrong), never an
error; writes are atomic (`write_text_file`, also used for reports). Imports pydantic and platformdirs
only: no Textual, Rich or other inspector packages.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

APP_NAME = "context-inspector"
FILE_NAME = "settings.json"
#: Layouts of the context view (`z` cycles them).
Layout = Literal["both", "list", "panel"]


class Preferences(BaseModel):
    """What the user chose last time; every field has a default."""

    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

    theme: str | None = Field(
        default=None, description="Textual theme name chosen last (None: dark)"
    )
    dump_folders: tuple[str, ...] = Field(
        default=(), description="folders opened when `inspector` runs without a SOURCE"
    )
    endpoint: str | None = Field(default=None, description="re-run: the OpenAI-compatible base URL")
    model: str | None = Field(default=None, description="re-run: the model name")
    api_key_env: str | None = Field(
        default=None, description="re-run: the NAME of the environment variable holding the key"
    )
    layout: Layout = Field(
        default="both", description="context view: list and panel, or one of them"
    )
    report_folder: str | None = Field(
        default=None, description="where the TUI writes reports (None: the user data folder)"
    )

    @field_validator("api_key_env")
    @classmethod
    def _a_name_not_a_key(cls, value: str | None) -> str | None:
        """A variable name only: anything that looks like a key itself is refused."""
        if value is not None and not value.replace("_", "").isalnum():
            raise ValueError("must be an environment variable name, not a key")
        if value is not None and (value.startswith(("sk-", "sk_")) or len(value) > 64):
            raise ValueError("must be an environment variable name, not a key")
        return value


def prefs_path() -> Path:
    """Where the preferences file lives."""
    override = os.environ.get("CONTEXT_INSPECTOR_CONFIG_DIR")
    if override:
        return Path(override).expanduser() / FILE_NAME
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)) / FILE_NAME


def load_prefs(path: Path | None = None) -> tuple[Preferences, str]:
    """The saved preferences and "" , or the defaults and what was wrong with the file."""
    target = path or prefs_path()
    try:
        raw = json.loads(target.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Preferences(), ""
    except (OSError, UnicodeDecodeError, ValueError) as error:
        return Preferences(), f"{target}: unreadable ({error}); using the defaults"
    try:
        return Preferences.model_validate(raw), ""
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "settings"
        return Preferences(), f"{target}: {where}: {first['msg']}; using the defaults"


def write_text_file(path: Path, text: str) -> None:
    """Write `text` to `path` atomically (a temporary file beside it, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def save_prefs(prefs: Preferences, path: Path | None = None) -> Path:
    """Write the preferences atomically; returns the path."""
    target = path or prefs_path()
    write_text_file(target, json.dumps(prefs.model_dump(mode="json"), indent=2) + "\n")
    return target


def update_prefs(path: Path | None = None, **changes: object) -> Preferences:
    """Load, change some fields (validated), save; returns the new preferences."""
    current, _ = load_prefs(path)
    updated = Preferences.model_validate({**current.model_dump(), **changes})
    save_prefs(updated, path)
    return updated
