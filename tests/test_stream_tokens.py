"""A huge text is counted in pieces (`inspector.encoding.text_pieces`) and the sum is exact:
the same cl100k count as the whole text, on real conversation text and on adversarial
mixes of newlines, spaces, CJK, digits and punctuation."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.encoding import LazyEncodeLen, load_cl100k, text_pieces
from tests.conftest import REPO

_STATUS = load_cl100k()
pytestmark = pytest.mark.skipif(_STATUS.encode_len is None, reason=_STATUS.note)
_ALPHABET = "ab Z9 \n\n\r\n\t  .,'s'll 中文字、。\u3000!?-_{}\"" + "\u00e9\u0301"


def _encode() -> object:
    counter = _STATUS.encode_len
    assert isinstance(counter, LazyEncodeLen)
    return counter.build()


def _pieces_count(text: str, size: int) -> int:
    encode = _encode()
    pieces = list(text_pieces(text, size))
    assert "".join(pieces) == text
    return sum(len(encode(piece)) for piece in pieces)  # type: ignore[operator]


def _whole_count(text: str) -> int:
    return len(_encode()(text))  # type: ignore[operator]


def test_the_sample_conversations_count_the_same_in_pieces() -> None:
    texts = []
    for path in sorted((REPO / "sample_dumps").rglob("*.json")):
        for message in json.loads(path.read_text())["context_after"]["messages"]:
            if isinstance(message.get("content"), str):
                texts.append(message["content"])
    joined = "\n".join(texts)
    assert len(joined) > 20_000
    for size in (1, 7, 64, 1_000):
        assert _pieces_count(joined, size) == _whole_count(joined)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=400), st.integers(min_value=1, max_value=50))
def test_adversarial_text_counts_the_same_in_pieces(text: str, size: int) -> None:
    assert _pieces_count(text, size) == _whole_count(text)


def test_a_huge_text_is_counted_in_pieces_by_the_counter() -> None:
    rng = random.Random(4)
    line = "".join(rng.choice("abcdefghij klmnop,.") for _ in range(120))
    text = "\n".join(line[rng.randrange(60) :] for _ in range(6_000))  # ~500,000 characters
    counter = _STATUS.encode_len
    assert counter is not None and len(text) > 2 * (1 << 18)
    assert len(list(text_pieces(text, 1 << 18))) >= 2
    assert counter(text) == _whole_count(text)
