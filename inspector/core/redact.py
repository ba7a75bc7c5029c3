"""The one masking module: secrets out of everything exported or shown, and text made safe to print.

`Masker` masks what a secret scanner finds in text (provider key prefixes, Bearer/Basic
and JWT tokens, credentials in URLs, PEM blocks, `*_KEY=` / `*PASSWORD=` assignments and
`"password": "..."` pairs inside JSON strings such as tool-call arguments), secret-named
fields of JSON values, and any literal the user gave (an API key, a header value), also
when a server echoes it. `mask_text` / `mask_secrets` use a masker without literals.
`escape_controls` / `shown_name` make text safe for a terminal: control characters and
lone surrogates become visible escapes. Must not import anything outside the standard
library.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

MASK = "***"

_PROVIDER_KEYS = (
    r"sk-ant-[A-Za-z0-9_\-]{16,}",
    r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}",
    r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}",
    r"(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}",
    r"gh[pousr]_[A-Za-z0-9]{30,}",
    r"github_pat_[A-Za-z0-9_]{20,}",
    r"glpat-[A-Za-z0-9_\-]{20,}",
    r"xox[abposr]-[A-Za-z0-9\-]{10,}",
    r"AIza[0-9A-Za-z_\-]{30,}",
    r"hf_[A-Za-z0-9]{30,}",
    r"npm_[A-Za-z0-9]{30,}",
    r"SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}",
    r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*",
)
_KEY_RE = re.compile("(?<![A-Za-z0-9])(?:" + "|".join(_PROVIDER_KEYS) + ")")
#: A PEM block, also inside JSON text (line breaks as `\\n`); the body stops at anything
#: that is not base64 or a line break, so a masked JSON string stays valid.
_PEM_RE = re.compile(
    r"-----BEGIN ([A-Z0-9 ]{1,40})-----(?:[A-Za-z0-9+/=:,\- \t\r\n]|\\+[nrt])*(?:-----END \1-----)?"
)
_AUTH_RE = re.compile(
    r"\b([Bb]earer|BEARER|[Bb]asic|BASIC|[Tt]oken|TOKEN)(\s+)([A-Za-z0-9._~+/=\-]{8,})"
)
_URL_CREDENTIALS_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://)([^\s/@:\"\\]*):([^\s/@\"\\]+)@")
#: The end of a secret's name in an assignment (`API_KEY=`, `db_password:`, `"token": "`);
#: the match starts at this keyword, so the scan is fast, and the name before it is kept.
_SECRET_NAME = (
    r"(?=[pstac_\-.])(?:pass(?:word|wd)|pwd|secret|apikey|[_\-.]key|token|credentials?"
    r"|authorization)"
)
_ASSIGNMENT_SOURCE = (
    r"(" + _SECRET_NAME + r")(\\*[\"']?)(\s*[:=]\s*)"
    r"(?:(\\+)\"((?:[^\"\\]|\\+(?!\"))*)\4\"|\"((?:[^\"\\]|\\.)*)\"|'([^'\\]*)'"
    r"|([^\s\"',;&}\]\\]+))"
)
#: Run on a lower-cased copy (much faster than IGNORECASE); the other for text whose
#: length changes when lower-cased.
_ASSIGNMENT_RE = re.compile(_ASSIGNMENT_SOURCE)
_ASSIGNMENT_ANY_CASE_RE = re.compile(_ASSIGNMENT_SOURCE, re.IGNORECASE)
#: Field names whose string values are secrets (normalised: lower case, `-` as `_`).
_SECRET_FIELD_RE = re.compile(
    r"^(?:.*_)?(?:password|passwd|pwd|secret|api_?key|apikey|access_?key|secret_?key"
    r"|private_?key|token|access_token|auth_token|refresh_token|id_token|session_token"
    r"|authorization|proxy_authorization|cookie|set_cookie|credentials?|x_api_key)$"
)
#: Minimum length of a literal secret (shorter ones would mask ordinary words).
MIN_LITERAL = 4


def _mask_assignments(text: str) -> str:
    """`text` with the value of every secret assignment masked."""
    low = text.lower()
    if len(low) != len(text):
        low, pattern = text, _ASSIGNMENT_ANY_CASE_RE
    else:
        pattern = _ASSIGNMENT_RE
    pieces: list[str] = []
    last = position = 0
    while (match := pattern.search(low, position)) is not None:
        group = next(g for g in (5, 6, 7, 8) if match.group(g) is not None)
        start, end = match.span(group)
        position = max(end, match.start() + 1)
        value = text[start:end]
        if group == 8 and _ASSIGNED_AGAIN_RE.match(low, end):
            position = start  # `key: NAME = value`: the value is the next assignment's
            continue
        if not value or value == MASK or _harmless(value):
            continue
        pieces += [text[last:start], MASK]
        last = end
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


_ASSIGNED_AGAIN_RE = re.compile(r"\s*[:=]")

#: Substrings, lower-cased, one of which every match of `_PEM_RE`, `_URL_CREDENTIALS_RE`
#: and `_KEY_RE` contains (a PEM header, a URL scheme's `://`, each provider prefix).
_LOW_FRAGMENTS = (
    "-----begin ", "://", "sk-", "k_", "akia", "asia", "agpa", "aida", "aroa", "aiza", "ghp_",
    "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox", "hf_", "npm_", "sg.", "eyj",
)  # fmt: skip
#: Words, lower-cased, one of which every match of `_AUTH_RE` (the word, then a space) and
#: of `_mask_assignments` (a `_SECRET_NAME`, then a backslash, quote, space, `:` or `=`)
#: contains, followed by one of `_FOLLOWERS` or a space.
_LOW_WORDS = (
    "bearer", "basic", "token", "password", "passwd", "pwd", "secret", "key", "credential",
    "credentials", "authorization",
)  # fmt: skip
_FOLLOWERS = frozenset("\\\"':=")


def _may_hold_secret(text: str) -> bool:
    """False only when no mask of `Masker.text` after the literals can change `text`: a
    superset test, a few substring searches, run before the regular expressions.

    Sound because it looks at the lower-cased text: every trigger above is a substring of
    each match (lower-cased) of its mask; when the length is kept, each character is
    lower-cased on its own (the one rule that looks at neighbours, a final sigma, makes no
    ASCII letter), and a space stays a space. When lower-casing changes the length (`İ`)
    the assignment masks match ignoring case, which this does not model: then True.
    """
    low = text.lower()
    return len(low) != len(text) or _low_may_hold(low)


def _low_may_hold(low: str, json_text: bool = False) -> bool:
    """The substring tests of `_may_hold_secret` on lower-cased text of unchanged length;
    `json_text`: `low` is JSON text (`_json_may_change`), where a word followed by a quote
    ends a string and triggers only when that string may name a secret field
    (`_may_name_secret`)."""
    for fragment in _LOW_FRAGMENTS:
        if fragment in low:
            return True
    end = len(low)
    for word in _LOW_WORDS:
        at = low.find(word)
        while at >= 0:
            after = at + len(word)
            if after < end:
                follower = low[after]
                if follower in _FOLLOWERS or follower.isspace():
                    if not json_text or follower != '"' or _may_name_secret(low, after):
                        return True
            at = low.find(word, at + 1)
    return False


def _may_name_secret(low: str, quote: int) -> bool:
    """In JSON text, False only when the string closed by the quote at `quote` names no
    secret field: a quote JSON writes unescaped ends a string (one inside a string is
    written `\\"`, a backslash then), and a trigger word at the very end of a string starts
    no mask of its text (each needs a character after the word), so only that string
    taken as a field name (`secret_field`) can be masked for it. True when the string
    holds a backslash or the quote before it is escaped (its text is not the name as
    written)."""
    start = low.rfind('"', 0, quote)
    name = low[start + 1 : quote]
    if start <= 0 or low[start - 1] == "\\" or "\\" in name:
        return True
    return _secret_field_memo(name) if len(name) <= _MEMO_MAX_CHARS else secret_field(name)


def _json_may_change(text: str) -> bool:
    """False only when masking no string and no field of a JSON value can change it, judged
    on `text`, that value as `json.dumps(..., ensure_ascii=False)` writes it.

    Sound because every trigger of `_may_hold_secret` found in a string is found in its JSON
    form: the fragments and words hold no character JSON escapes, and a follower that JSON
    escapes (a quote, a backslash, a control character) is written starting with a
    backslash, itself a follower. A secret-named field (`secret_field`) ends, after
    stripping, in one of `_LOW_WORDS` or in `cookie`, and is followed in the text by its
    closing quote or by whitespace (a follower either way), so it is caught too; a word
    closing any other string is let go (`_may_name_secret`: the `"key"` of every check).
    """
    low = text.lower()
    return len(low) != len(text) or "cookie" in low or _low_may_hold(low, json_text=True)


def apply_masks(text: str) -> str:
    """Every mask of `Masker.text` after the literals, without the pre-check."""
    if "-----BEGIN " in text:
        text = _PEM_RE.sub(lambda m: f"-----BEGIN {m.group(1)}-----{MASK}", text)
    if "://" in text:
        text = _URL_CREDENTIALS_RE.sub(lambda m: f"{m.group(1)}{m.group(2)}:{MASK}@", text)
    text = _AUTH_RE.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", text)
    text = _KEY_RE.sub(MASK, text)
    return _mask_assignments(text)


def _harmless(value: str) -> bool:
    """Values an assignment may hold that are no secret: null-ish words and plain numbers
    (`"token": 5` in token statistics)."""
    return value.lower() in _HARMLESS or value.isdigit()


_HARMLESS = frozenset({"null", "none", "true", "false", "", "bearer", "basic", "token"})


class Masker:
    """Masks secrets in text and JSON values; `secrets` are literals to mask wherever seen."""

    def __init__(self, secrets: Iterable[str] = (), enabled: bool = True) -> None:
        self.enabled = enabled
        literals = {s for s in secrets if isinstance(s, str) and len(s) >= MIN_LITERAL}
        # the same value as a JSON string body (a server echoing it inside JSON)
        literals |= {json.dumps(s)[1:-1] for s in literals}
        self.literals = tuple(sorted(literals, key=len, reverse=True))
        self._literal_re = (
            re.compile("|".join(re.escape(s) for s in self.literals)) if self.literals else None
        )
        #: Each literal as it appears inside a JSON string written by `json_text`.
        self._json_literals = tuple(json.dumps(s, ensure_ascii=False)[1:-1] for s in self.literals)
        self._memo: dict[str, str] = {}
        self._changed: dict[str, bool] = {}
        self._keys: dict[str, int] = {}
        self._skeletons: dict[bytes, bool] = {}

    def with_secrets(self, secrets: Iterable[str]) -> Masker:
        """A masker that also masks these literals."""
        return Masker((*self.literals, *secrets), self.enabled)

    def literal_text(self, text: str) -> str:
        """`text` with only the literals given masked (cheap: for text already masked as data)."""
        if self._literal_re is None or not text:
            return text
        return self._literal_re.sub(MASK, text)

    def text(self, text: str) -> str:
        """`text` with every secret replaced by ***."""
        if not self.enabled or not text:
            return text
        if self._literal_re is not None:
            text = self._literal_re.sub(MASK, text)
        return apply_masks(text) if _may_hold_secret(text) else text

    def value(self, value: Any) -> Any:
        """A copy of a JSON value with secret strings and secret-named fields masked."""
        if not self.enabled:
            return value
        return self._value(value)

    def json_text(self, value: Any) -> str:
        """`json.dumps(self.value(value), ensure_ascii=False, default=str)`, without the copy
        when masking would change nothing: first judged on the written text
        (`_json_may_change`, a few substring searches: most lines of a big log), then by a
        walk (`_changes`). A value JSON cannot write natively takes the copy."""
        if type(self) is not Masker or not self.enabled:
            return json.dumps(self.value(value), ensure_ascii=False, default=str)
        try:
            text = _JSON_TEXT.encode(value)  # `json.dumps(value, ensure_ascii=False)`
        except (TypeError, ValueError):
            return json.dumps(self.value(value), ensure_ascii=False, default=str)
        if not self._text_may_change(text) or not self._changes(value):
            return text
        return json.dumps(self.value(value), ensure_ascii=False, default=str)

    def _text_may_change(self, text: str) -> bool:
        """`_json_may_change`, also True when a literal may be in the value's strings.

        Remembered per *skeleton*, the text's UTF-8 bytes without ASCII digits (the lines of
        a big log differ mostly in numbers): no trigger holds a digit and a digit lower-cases
        to itself, so each trigger found in the text is found in its skeleton, and a
        skeleton judged unchanging vouches for every text that has it."""
        if self._json_literals and any(literal in text for literal in self._json_literals):
            return True
        if len(text) > _SKELETON_MAX_CHARS:
            return _json_may_change(text)
        try:
            skeleton = text.encode("utf-8").translate(None, _DIGITS)
        except UnicodeEncodeError:  # a lone surrogate
            return _json_may_change(text)
        known = self._skeletons.get(skeleton)
        if known is None:
            if len(self._skeletons) >= _SKELETONS_MAX:
                self._skeletons.clear()
            known = self._skeletons[skeleton] = _json_may_change(skeleton.decode("utf-8"))
        return known

    def _changes(self, value: Any) -> bool:
        """True when `_value(value)` would differ from `value` as JSON; also for any type but
        the exact JSON ones (the copy decides for those). A loop over a stack, each distinct
        string and key judged once (`_string_changes`, `_key_state`)."""
        stack = [value]
        while stack:
            item = stack.pop()
            kind = type(item)
            if kind is dict:
                for key, inner in item.items():
                    if type(key) is str:
                        state = self._keys.get(key)
                        if state is None:
                            state = self._key_state(key)
                        if state == _KEY_CHANGES or (
                            state == _KEY_SECRET and isinstance(inner, str) and inner
                        ):
                            return True
                    elif not (key is None or type(key) in _SCALARS):
                        return True
                    stack.append(inner)
            elif kind is list or kind is tuple:
                stack.extend(item)
            elif kind is str:
                if item and self._string_changes(item):
                    return True
            elif not (item is None or kind in _SCALARS):
                return True
        return False

    def _string_changes(self, text: str) -> bool:
        """`self.text(text) != text`, remembered for short strings."""
        if len(text) > _MEMO_MAX_CHARS:
            return self.text(text) != text
        changes = self._changed.get(text)
        if changes is None:
            if len(self._changed) >= _MEMO_MAX_ENTRIES:
                self._changed.clear()
            changes = self._changed[text] = self._short_text(text) != text
        return changes

    def _key_state(self, key: str) -> int:
        """How masking treats a field name: masked itself, naming a secret (its string value
        is masked), or kept."""
        if len(self._keys) >= _MEMO_MAX_ENTRIES:
            self._keys.clear()
        if self._short_text(key) != key:
            state = _KEY_CHANGES
        elif _secret_field_memo(key):
            state = _KEY_SECRET
        else:
            state = _KEY_KEPT
        self._keys[key] = state
        return state

    def _value(self, value: Any) -> Any:
        """`value` masked: exact JSON types by a type test (the common case), anything else
        by the general isinstance tests; strings through the per-masker memo."""
        kind = type(value)
        if kind is str:
            return self._short_text(value)
        if kind is dict:
            return self._mapping(value)
        if kind is list or kind is tuple:
            return [self._value(v) for v in value]
        if value is None or kind is int or kind is float or kind is bool:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list | tuple):
            return [self._value(v) for v in value]
        if isinstance(value, Mapping):
            return self._mapping(value)
        return value

    def _mapping(self, value: Mapping[Any, Any]) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if type(key) is str:
                if isinstance(item, str) and item and _secret_field_memo(key):
                    out[key] = MASK
                else:
                    out[self._short_text(key)] = self._value(item)
            elif isinstance(key, str):
                if isinstance(item, str) and item and secret_field(key):
                    out[key] = MASK
                else:
                    out[self.text(key)] = self._value(item)
            else:
                out[key] = self._value(item)
        return out

    def _short_text(self, text: str) -> str:
        """`text(text)` remembered per distinct short string (the same ids, reasons and
        key names recur in every line of a big log); long strings are masked each time."""
        if len(text) > _MEMO_MAX_CHARS:
            return self.text(text)
        memo = self._memo
        masked = memo.get(text)
        if masked is None:
            if len(memo) >= _MEMO_MAX_ENTRIES:
                memo.clear()
            masked = memo[text] = self.text(text)
        return masked


_SCALARS = (int, float, bool)
#: What `json.dumps(..., ensure_ascii=False)` builds on each call (only the all-defaults
#: call reuses one): made once, for the line of every evaluation of a big log.
_JSON_TEXT = json.JSONEncoder(ensure_ascii=False)
#: What a field name does under masking (`Masker._key_state`).
_KEY_KEPT, _KEY_SECRET, _KEY_CHANGES = 0, 1, 2
#: Strings up to this length are remembered by `Masker._short_text`, at most this many per
#: masker (the memo is emptied when full): a few MB at most.
_MEMO_MAX_CHARS = 512
_MEMO_MAX_ENTRIES = 8192
#: `Masker._text_may_change` remembers this many line skeletons (of what `json_text` wrote).
_SKELETONS_MAX = 1024
#: Longer texts are judged anew each time (the memo holds at most ~16 MB).
_SKELETON_MAX_CHARS = 16384
_DIGITS = b"0123456789"


def secret_field(name: str) -> bool:
    """True for a field name whose string value is a secret (`api_key`, `X-Api-Key`, ...)."""
    return bool(_SECRET_FIELD_RE.match(name.strip().lower().replace("-", "_")))


@functools.lru_cache(maxsize=4096)
def _secret_field_memo(name: str) -> bool:
    """`secret_field`, remembered (field names repeat in every record)."""
    return secret_field(name)


_PLAIN = Masker()


def mask_text(text: str) -> str:
    """Replace substrings that look like secrets by ***."""
    return _PLAIN.text(text)


def mask_secrets(value: Any) -> Any:
    """A copy of a JSON value with secret-looking strings and secret-named fields masked."""
    return _PLAIN.value(value)


#: Control characters a terminal acts on (newline and tab excepted), and lone surrogates.
CONTROL_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_CONTROL_NAME_RE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str) -> str:
    """Text safe for a terminal: control characters (except newline and tab) and lone
    surrogates written as visible escapes (`\\x1b`, `\\udcff`)."""
    return CONTROL_RE.sub(_escaped, text)


def shown_text(text: str) -> str:
    """Text from a file, an agent or a model, safe to show: secrets masked, control
    characters escaped (newlines and tabs kept). An escape sequence in a message or a
    summary otherwise reached the terminal: `ESC ]0;...BEL` retitled the window."""
    return escape_controls(mask_text(text))


def shown_name(text: str) -> str:
    """A file name or identifier safe for one terminal line (newlines and tabs escaped too)."""
    return _CONTROL_NAME_RE.sub(_escaped, text)
