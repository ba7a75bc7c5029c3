"""The one mapping from regions and verdicts to styles.

Names match TCSS component classes (`region--prefix`, ...) so TUI themes can restyle them.
"""

from __future__ import annotations

REGION_STYLES: dict[str, str] = {
    "prefix": "bold cyan",
    "compress": "bold magenta",
    "tail": "bold green",
    "outside": "dim",
    "free": "grey37",
    "fold": "magenta",
    "offload": "yellow",
    "summary": "bold magenta",
}
REGION_LABELS: dict[str, str] = {
    "prefix": "preserved prefix",
    "compress": "to compress",
    "tail": "protected tail",
    "outside": "outside the span",
    "free": "free",
    "fold": "folded",
    "offload": "offloaded",
    "summary": "summary",
}
REGION_COMPONENT_CLASSES: dict[str, str] = {name: f"region--{name}" for name in REGION_STYLES}
STATUS_MARKS: dict[str, tuple[str, str]] = {
    "pass": ("✔", "green"),
    "fail": ("✘", "red"),
    "info": ("•", "cyan"),
    "skip": ("–", "dim"),
    "warning": ("!", "yellow"),
}
