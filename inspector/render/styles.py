"""The one mapping from semantic style names to Rich styles, and the `Palette` that reads it.

Every renderable in `render` takes its styles by name from a `Palette` (the CLI uses
`DEFAULT_PALETTE`, built from `DEFAULT_STYLES`; the TUI builds one from Textual component
styles, so a Textual theme restyles the same renderables). No other module of `render` or `tui`
spells a colour. Each name has a TCSS component class (`component_class`): `region.prefix` is
`region--prefix`, `link` is `style--link`. Rich only: this module must not import Textual.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.style import Style, StyleType

#: Every semantic style name, with its Rich style on a terminal (the CLI).
DEFAULT_STYLES: dict[str, str] = {
    # regions of a context (a strategy's `RegionRange.name`)
    "region.prefix": "bold cyan",
    "region.compress": "bold magenta",
    "region.tail": "bold green",
    "region.outside": "dim",
    "region.free": "grey37",
    "region.fold": "magenta",
    "region.offload": "yellow",
    "region.summary": "bold magenta",
    # verdicts: a word, and the badge of the TUI's verdict line
    "verdict.hit": "green",
    "verdict.miss": "red",
    "verdict.hit_badge": "bold white on green",
    "verdict.miss_badge": "bold white on red",
    # check statuses (`Check.status`)
    "status.pass": "green",
    "status.fail": "red",
    "status.info": "cyan",
    "status.skip": "dim",
    "status.warning": "yellow",
    # finding severities (`Finding.severity`)
    "severity.info": "cyan",
    "severity.warning": "yellow",
    "severity.problem": "red",
    # marks on bars and charts
    "mark.threshold": "bold yellow",
    "mark.min_target": "bold red",
    "mark.now": "bold cyan",
    "mark.gauge": "bold white",
    "chart.total": "bold bright_white",
    # text roles
    "link": "cyan",
    "name": "bold cyan",
    "muted": "dim",
    "changed": "yellow",
    "good": "green",
    "bad": "red",
    "caution": "yellow",
    "note": "cyan",
    "model": "magenta",
    "error": "bold red",
    "plain": "",
}
#: Region names, in drawing order.
REGION_NAMES: tuple[str, ...] = tuple(
    name.removeprefix("region.") for name in DEFAULT_STYLES if name.startswith("region.")
)
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
#: The mark of each check status, styled by `status.<status>`.
STATUS_MARKS: dict[str, str] = {
    "pass": "✔",
    "fail": "✘",
    "info": "•",
    "skip": "–",
    "warning": "!",
}


def component_class(name: str) -> str:
    """The TCSS component class of style `name`: `region.prefix` -> `region--prefix`."""
    group, dot, item = name.partition(".")
    if not dot:
        group, item = "style", name
    return f"{group}--{item}".replace("_", "-")


#: Every style's component class (the TUI declares these on the widgets that draw them).
COMPONENT_CLASSES: dict[str, str] = {name: component_class(name) for name in DEFAULT_STYLES}
REGION_COMPONENT_CLASSES: dict[str, str] = {
    region: COMPONENT_CLASSES[f"region.{region}"] for region in REGION_NAMES
}


class Palette:
    """Semantic style names to Rich styles; an unknown name is a programming error (KeyError)."""

    __slots__ = ("_styles",)

    def __init__(self, styles: Mapping[str, StyleType] | None = None) -> None:
        merged: dict[str, StyleType] = {**DEFAULT_STYLES, **(styles or {})}
        self._styles = {
            name: value if isinstance(value, Style) else Style.parse(value)
            for name, value in merged.items()
        }

    def __getitem__(self, name: str) -> Style:
        """The style called `name`."""
        return self._styles[name]

    def __call__(self, name: str, extra: str = "") -> Style:
        """The style called `name`, with text attributes `extra` added (e.g. "bold").

        `name` may carry the attributes itself after a space: `"good bold"`.
        """
        name, _, more = name.partition(" ")
        extra = f"{more} {extra}".strip()
        style = self._styles[name]
        return style + Style.parse(extra) if extra else style

    def region(self, region: str, fallback: str = "plain") -> Style:
        """The style of region `region` (`fallback` for a name no strategy declared here)."""
        return self._styles.get(f"region.{region}", self._styles[fallback])

    def names(self) -> list[str]:
        """Every style name."""
        return list(self._styles)


#: The CLI's palette.
DEFAULT_PALETTE = Palette()
