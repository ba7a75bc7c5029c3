"""The masker's fast paths equal its slow path: the pre-check never skips text a mask would
change, the per-string memo answers as masking again would, and `json_text` (no copy when
nothing changes) writes what masking a copy and writing it writes."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.cli import main
from inspector.core import redact
from inspector.core.redact import MASK, Masker, apply_masks, secret_field
from tests.conftest import PARITY_CASES, REFERENCE, REPO
from tests.harden_secrets import PLANTED

#: Pieces that sit at the edges of the masks: their words and prefixes in every case,
#: what may follow them, characters whose lower-casing is special, JSON escapes.
_PIECES = (
    "Bearer", "bearer", "BEARER", "Basic", "TOKEN", "Token", "token", "tokens", "password",
    "PassWord", "passwd", "pwd", "secret", "SECRET", "apikey", "_key", "-KEY", ".key", "key",
    "credential", "credentials", "authorization", "cookie", "api_key", "X-Api-Key",
    "sk-", "sk_live_", "rk_test_", "AKIA", "ASIA", "AIza", "ghp_", "github_pat_", "glpat-",
    "xoxb-", "hf_", "npm_", "SG.", "eyJ", "-----BEGIN ", "-----END ", "RSA KEY-----", "://",
    "postgres://", "u:p@", "@", "=", ":", " = ", ": ", '"', "'", "\\", '\\"', "\\n", " ",
    "\n", "\t", "\xa0", "\u3000", "\x1c", "\u212a", "\u0130", "\u017f", "\u03a3", "\u00df",
    "0123456789abcdefghij", "ABCDEFGHIJKLMNOP", "abcdefgh", "null", "5", "none", "***",
)  # fmt: skip

_texts = st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=6)), max_size=14).map(
    "".join
) | st.sampled_from(sorted(PLANTED.values()))


def _slow_value(masker: Masker, value: Any) -> Any:
    """The masker's walk as it was before the fast paths: every string masked anew."""

    def text(item: str) -> str:
        if masker.literals:
            item = masker.literal_text(item)
        return apply_masks(item) if item else item

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return text(item)
        if isinstance(item, list | tuple):
            return [walk(v) for v in item]
        if isinstance(item, Mapping):
            out: dict[Any, Any] = {}
            for key, inner in item.items():
                if isinstance(key, str) and secret_field(key) and isinstance(inner, str) and inner:
                    out[key] = MASK
                else:
                    out[text(key) if isinstance(key, str) else key] = walk(inner)
            return out
        return item

    return walk(value)


_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), _texts)
_keys = st.one_of(st.sampled_from(_PIECES), _texts, st.integers(-3, 3))
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(_keys, inner, max_size=4),
    ),
    max_leaves=20,
)


@settings(max_examples=700, deadline=None)
@given(_texts)
def test_the_pre_check_never_skips_text_a_mask_changes(text: str) -> None:
    if apply_masks(text) != text:
        assert redact._may_hold_secret(text)
    assert Masker().text(text) == apply_masks(text)


@settings(max_examples=250, deadline=None)
@given(_values)
def test_value_and_json_text_equal_the_slow_walk(value: Any) -> None:
    masker = Masker()
    expected = _slow_value(masker, value)
    assert masker.value(value) == expected
    assert masker.value(value) == expected  # again: now from the memo
    assert masker.json_text(value) == json.dumps(expected, ensure_ascii=False, default=str)


@settings(max_examples=120, deadline=None)
@given(_values, st.sampled_from(["FAKEliteral-1234", 'se"cret-5678', "tokens"]))
def test_a_masker_with_literals_equals_the_slow_walk(value: Any, literal: str) -> None:
    masker = Masker([literal])
    expected = _slow_value(masker, value)
    assert masker.value(value) == expected
    assert masker.json_text(value) == json.dumps(expected, ensure_ascii=False, default=str)


def test_the_memo_is_bounded_and_stays_right() -> None:
    masker = Masker()
    for number in range(redact._MEMO_MAX_ENTRIES + 10):
        assert masker.value(f"plain {number}") == f"plain {number}"
    assert len(masker._memo) <= redact._MEMO_MAX_ENTRIES
    assert masker.value("DB_PASSWORD=hunter2hunter2") == "DB_PASSWORD=***"
    long_text = "x" * (redact._MEMO_MAX_CHARS + 1) + " api_key=abcdefgh"
    assert masker.value(long_text).endswith("api_key=***")


def test_json_text_of_values_json_cannot_write_natively_takes_the_copy() -> None:
    class Box:
        def __str__(self) -> str:
            return "Bearer abcdefgh12345"

    class Text(str):
        pass

    for value in ({"a": Box()}, [Text("token=abcdefgh1")], {"k": {"n": b"x"}}):
        expected = json.dumps(_slow_value(Masker(), value), ensure_ascii=False, default=str)
        assert Masker().json_text(value) == expected


def test_planted_secrets_are_caught_by_the_pre_check() -> None:
    for text in PLANTED.values():
        assert redact._may_hold_secret(text)
        assert Masker().text(text) != text


def _why_bytes(args: list[str]) -> bytes:
    out = io.BytesIO()
    stream = io.TextIOWrapper(out, encoding="utf-8")
    with redirect_stdout(stream):
        main(["why", "--json", *args])
    stream.flush()
    return out.getvalue()


@pytest.mark.parametrize(
    "source",
    [REPO / "sample_dumps", REFERENCE, PARITY_CASES, REPO / "tests" / "data" / "rerun"],
    ids=["sample_dumps", "reference", "parity", "rerun"],
)
def test_why_json_writes_the_bytes_the_slow_walk_writes(
    source: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    if source == PARITY_CASES:  # every 6th case: a spread of the 300 at a fifth of the time
        lines = source.read_text(encoding="utf-8").splitlines()[::6]
        source = tmp_path / "cases.jsonl"
        source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fast = _why_bytes([str(source)])

    def slow(masker: Masker, value: Any) -> str:
        return json.dumps(_slow_value(masker, value), ensure_ascii=False, default=str)

    monkeypatch.setattr(Masker, "json_text", slow)
    assert fast == _why_bytes([str(source)]) and fast.count(b"\n") >= 10


def test_why_json_masks_planted_secrets_as_the_slow_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot = json.loads((REFERENCE / "a_current_round_plain" / "input.json").read_text())
    snapshot["messages"] += [{"role": "user", "content": text} for text in PLANTED.values()]
    snapshot["api_key"] = "FAKEopenaiSECRET-field"
    snapshot["id"] = PLANTED["bearer"]
    (tmp_path / "input.json").write_text(json.dumps(snapshot))
    fast = _why_bytes([str(tmp_path / "input.json")])
    assert b"FAKEbearerSECRET" not in fast and b"***" in fast

    def slow(masker: Masker, value: Any) -> str:
        return json.dumps(_slow_value(masker, value), ensure_ascii=False, default=str)

    monkeypatch.setattr(Masker, "json_text", slow)
    assert fast == _why_bytes([str(tmp_path / "input.json")])
