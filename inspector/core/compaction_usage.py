"""openJiuwen's usage records of the compaction call, as each release writes them.

`usage_details` is one record (`UsageMetadata`: 16 fields up to 0.1.17.post2, 23 from
0.1.18 with the cache read/miss/write fields), `merge_usage` the dump's
`compression_response.usage`. Pure.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return 0
    try:
        return max(int(float(value)), 0)
    except ValueError:
        return 0


def usage_details(
    usage: Mapping[str, Any] | None, model_name: str, cache_fields: bool = False
) -> dict[str, Any]:
    """openJiuwen's usage record from an OpenAI `usage` object: 16 fields, or with
    `cache_fields` (0.1.18 and later, `ReleaseProfile.writes_cache_authoritative`) the 23
    of `UsageMetadata` with the cache read/miss/write fields between `cache_tokens` and
    `reasoning_tokens`."""
    usage = usage or {}
    input_tokens = _int(usage.get("prompt_tokens", usage.get("input_tokens")))
    output_tokens = _int(usage.get("completion_tokens", usage.get("output_tokens")))
    total = _int(usage.get("total_tokens")) or input_tokens + output_tokens
    prompt_details = usage.get("prompt_tokens_details")
    completion_details = usage.get("completion_tokens_details")
    cache = _int(prompt_details.get("cached_tokens")) if isinstance(prompt_details, Mapping) else 0
    reasoning = (
        _int(completion_details.get("reasoning_tokens"))
        if isinstance(completion_details, Mapping)
        else 0
    )
    record: dict[str, Any] = {
        "code": 0,
        "err_msg": "",
        "prompt": "",
        "task_id": "",
        "model_name": model_name,
        "total_latency": 0.0,
        "first_token_time": "",
        "request_start_time": "",
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "total_tokens": total,
        "cache_tokens": cache,
    }
    if cache_fields:
        record["cache_tokens"] = _cache_hit_tokens(usage)
        record.update(cache_usage_fields(usage))
    record.update(
        {"reasoning_tokens": reasoning, "input_cost": 0.0, "output_cost": 0.0, "total_cost": 0.0}
    )
    return record


def _path_value(source: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(source, Mapping):
            return None
        source = source.get(key)
    return source


def _exact_int(value: Any) -> int | None:
    """An integer as openJiuwen's cache parser reads one (None: absent or not a whole number)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str):
        text = value.strip()
        digits = text[1:] if text.startswith(("+", "-")) else text
        return int(text) if digits.isdigit() else None
    return None


def _first_int(usage: Mapping[str, Any], paths: Sequence[tuple[str, ...]]) -> int | None:
    for path in paths:
        value = _exact_int(_path_value(usage, path))
        if value is not None:
            return value
    return None


_CACHE_READ_PATHS: tuple[tuple[str, ...], ...] = (
    ("prompt_tokens_details", "cached_tokens"),
    ("promptTokensDetails", "cachedTokens"),
    ("input_tokens_details", "cached_tokens"),
    ("input_token_details", "cached_tokens"),
    ("inputTokensDetails", "cachedTokens"),
    ("inputTokenDetails", "cachedTokens"),
    ("usageMetadata", "cachedContentTokenCount"),
    ("usage_metadata", "cached_content_token_count"),
    *(
        (name,)
        for name in (
            "prompt_cache_hit_tokens",
            "cache_read_input_tokens",
            "cachedContentTokenCount",
            "cached_content_token_count",
            "cache_read_tokens",
            "cached_tokens",
            "cache_hit_tokens",
            "cached_input_tokens",
            "prompt_cache_tokens",
            "prompt_cached_tokens",
        )
    ),
)
_CACHE_MISS_PATHS = tuple(
    (name,)
    for name in (
        "prompt_cache_miss_tokens",
        "cache_miss_tokens",
        "cache_miss_input_tokens",
        "uncached_tokens",
    )
)
_CACHE_WRITE_PATHS = tuple(
    (name,)
    for name in ("cache_write_tokens", "cache_creation_input_tokens", "cache_creation_tokens")
)
_CACHE_CREATION_PATHS: tuple[tuple[str, ...], ...] = (
    ("input_tokens_details", "cache_creation_tokens"),
    ("input_token_details", "cache_creation_tokens"),
    ("prompt_tokens_details", "cache_creation_tokens"),
    *(
        (name,)
        for name in (
            "cache_creation_input_tokens",
            "cache_write_input_tokens",
            "cache_creation_tokens",
            "cache_write_tokens",
        )
    ),
)


def _cache_hit_tokens(usage: Mapping[str, Any]) -> int:
    """0.1.18+'s `cache_tokens`: the first non-zero cache-hit count among the read paths."""
    for path in (*_CACHE_READ_PATHS[:7], *((name,) for name in _CACHE_HIT_FIELDS)):
        value = _int(_path_value(usage, path))
        if value:
            return value
    return 0


_CACHE_HIT_FIELDS = (
    "prompt_cache_hit_tokens",
    "cache_read_input_tokens",
    "cachedContentTokenCount",
    "cached_content_token_count",
    "cache_tokens",
    "cached_tokens",
    "cache_hit_tokens",
    "cached_input_tokens",
    "cache_read_tokens",
    "prompt_cache_tokens",
    "prompt_cached_tokens",
)


def cache_usage_fields(usage: Mapping[str, Any]) -> dict[str, Any]:
    """The seven cache fields 0.1.18+ add to a usage record, read from the reply's `usage`
    the way its OpenAI client reads them (first path present wins; the legacy
    `cache_tokens` key alone is never authoritative)."""
    read = _first_int(usage, _CACHE_READ_PATHS)
    legacy = read is None and _exact_int(usage.get("cache_tokens")) is not None
    if read is None:
        read = _exact_int(usage.get("cache_tokens"))
    miss = _first_int(usage, _CACHE_MISS_PATHS)
    write = _first_int(usage, _CACHE_WRITE_PATHS)
    observed = any(value is not None for value in (read, miss, write))
    creation = None
    for path in _CACHE_CREATION_PATHS:
        value = _path_value(usage, path)
        if value is None or isinstance(value, bool):
            continue
        try:
            creation = max(int(float(value)), 0)
            break
        except (TypeError, ValueError):
            continue
    return {
        "cache_read_tokens": read,
        "cache_miss_tokens": miss,
        "cache_write_tokens": write,
        "cache_status": "observed" if observed else None,
        "cache_source": "provider_usage" if observed else None,
        "cache_authoritative": observed and not legacy,
        "cache_creation_input_tokens": creation,
    }


def merge_usage(details: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The dump's `compression_response.usage`: sums over the successful calls, or None."""
    if not details:
        return None
    return {
        "calls": len(details),
        "input_tokens": sum(_int(d.get("input_tokens")) for d in details),
        "output_tokens": sum(_int(d.get("output_tokens")) for d in details),
        "total_tokens": sum(_int(d.get("total_tokens")) for d in details),
        "cache_tokens": sum(_int(d.get("cache_tokens")) for d in details),
        "input_cost": float(sum(float(d.get("input_cost") or 0.0) for d in details)),
        "output_cost": float(sum(float(d.get("output_cost") or 0.0) for d in details)),
        "total_cost": float(sum(float(d.get("total_cost") or 0.0) for d in details)),
        "model_name": str(details[-1].get("model_name") or ""),
        "details": [dict(d) for d in details],
    }
