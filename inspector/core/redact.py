"""Mask values that look like API keys before anything is exported or shown.

Must not import anything outside the standard library.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_KEY_PATTERNS = re.compile(
    r"(sk-[A-Za-z0-9_\-]{16,}|sk-ant-[A-Za-z0-9_\-]{16,}|AKIA[0-9A-Z]{16}|ghp_[A-Za-z0-9]{30,}|xox[bp]-[A-Za-z0-9\-]{10,}|AIza[0-9A-Za-z_\-]{30,})"
)
_SECRET_KEYS = {"api_key", "apikey", "authorization", "x-api-key", "token", "secret", "password"}
MASK = "***"


def mask_text(text: str) -> str:
    """Replace substrings that look like API keys by ***."""
    return _KEY_PATTERNS.sub(MASK, text)


def mask_secrets(value: Any) -> Any:
    """A copy of a JSON value with secret-looking strings and secret-named fields masked."""
    if isinstance(value, str):
        return mask_text(value)
    if isinstance(value, list):
        return [mask_secrets(v) for v in value]
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if (
                isinstance(key, str)
                and key.lower() in _SECRET_KEYS
                and isinstance(item, str)
                and item
            ):
                out[key] = MASK
            else:
                out[key] = mask_secrets(item)
        return out
    return value
