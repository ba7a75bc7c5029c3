"""jiuwenswarm's agent config (`<home>/config/config.yaml`): the processors, thresholds, model.

What the agent runs is the harness preset with `react.context_engine_config`'s dicts laid
over it by name (`inspector.core.standard.pipeline.jiuwenswarm_chain`, spec
`standard-processors.md` 1.1). The model name is `react.model_name` with its
`${MODEL_NAME:-default}` placeholder resolved from the home's own `config/.env` (only
the `MODEL_NAME` line is read: that file also holds the API key, which is never read).
The context engine gets no model window from jiuwenswarm, so its `context_max` is the
engine default 200,000 whatever the model (spec `openjiuwen-versions.md` 4).
Must not import Textual or Rich.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.core.standard.release import DEFAULT_CONTEXT_MAX
from inspector.sources.jiuwenswarm import yaml_subset

#: The openJiuwen release jiuwenswarm 0.2.3 pins.
OPENJIUWEN_VERSION = "0.1.16"
_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
#: Variables of config/.env this reader may resolve (never keys or endpoints).
_READABLE_VARS = frozenset({"MODEL_NAME", "MODEL_PROVIDER"})


@dataclass(frozen=True, slots=True)
class SwarmConfig:
    """What one home folder's config says about context compression."""

    path: str
    #: The processors in chain order, each with its merged config (openJiuwen field names).
    chain: tuple[tuple[str, Mapping[str, Any]], ...]
    model_name: str | None
    language: str | None
    #: The window the context engine computes its percentages against.
    engine_context_max: int = DEFAULT_CONTEXT_MAX
    #: The `react.context_engine_config` block as written.
    raw: Mapping[str, Any] = field(default_factory=dict)
    #: `enabled: false` switches the context engine's processors off.
    enabled: bool = True

    def config_of(self, processor: str) -> Mapping[str, Any] | None:
        """The merged config of one processor of the chain (None: not in the chain)."""
        return next((config for name, config in self.chain if name == processor), None)

    def trigger_tokens(self) -> dict[str, int]:
        """Each processor's token trigger (tokens_threshold, or the ratio of the window)."""
        out: dict[str, int] = {}
        for name, config in self.chain:
            threshold = config.get("tokens_threshold")
            ratio = config.get("trigger_context_ratio")
            if isinstance(threshold, int) and not isinstance(threshold, bool):
                out[name] = threshold
            elif isinstance(ratio, int | float) and not isinstance(ratio, bool):
                out[name] = int(self.engine_context_max * float(ratio))
        return out


def _env_vars(home: Path) -> dict[str, str]:
    """`MODEL_NAME` / `MODEL_PROVIDER` from the home's config/.env (other lines unread)."""
    path = home / "config" / ".env"
    out: dict[str, str] = {}
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return out
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        key = key.strip().removeprefix("export ").strip()
        if sep and key in _READABLE_VARS:
            out[key] = value.strip().strip("'\"")
    return out


def _resolve(value: Any, env: Mapping[str, str]) -> Any:
    if not isinstance(value, str):
        return value
    match = _PLACEHOLDER.fullmatch(value.strip())
    if match is None:
        return value
    name, default = match.group(1), match.group(2)
    if name in env and env[name]:
        return env[name]
    return yaml_subset.scalar(default) if default is not None else None


def read_config(home: Path) -> SwarmConfig:
    """The home folder's config; ValueError saying where when it cannot be read."""
    path = home / "config" / "config.yaml"
    text = path.read_text(encoding="utf-8")
    document = yaml_subset.load(text)
    if not isinstance(document, Mapping):
        raise ValueError("config.yaml is not a mapping")
    react = document.get("react")
    react = react if isinstance(react, Mapping) else {}
    engine = react.get("context_engine_config")
    engine = engine if isinstance(engine, Mapping) else {}
    env = _env_vars(home)
    model = _resolve(react.get("model_name"), env)
    language = document.get("preferred_language")
    from inspector.core.standard.pipeline import jiuwenswarm_chain

    chain = jiuwenswarm_chain(engine, str(model) if model else None, _language(language))
    return SwarmConfig(
        path=str(path),
        chain=tuple((name, config) for name, config in chain),
        model_name=str(model) if model else None,
        language=_language(language),
        raw=dict(engine),
        enabled=engine.get("enabled", True) is not False,
    )


def _language(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    return "cn" if value.strip().lower() in ("zh", "cn") else "en"


def looks_like_config(text: str) -> bool:
    """True when a config.yaml's text is jiuwenswarm's (a `react:` block with the engine)."""
    return "react:" in text and "context_engine_config:" in text
