"""Where the compaction prompt comes from: a dump's recorded prompt, a file, or ours.

Our built-in prompt (`default_prompt.txt`) is written for the inspector; it asks for a
`<state_snapshot>` execution-state checkpoint, like openJiuwen's prompts do.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def builtin_prompt() -> str:
    """The inspector's own compaction prompt."""
    return (
        resources.files("inspector.llm").joinpath("default_prompt.txt").read_text(encoding="utf-8")
    )


def read_prompt_file(path: str | Path) -> str:
    """A prompt from a UTF-8 text file (OSError / UnicodeDecodeError propagate)."""
    return Path(path).read_text(encoding="utf-8")
