"""The last real user turn: list content counts as one whatever its text.

openJiuwen's rule (support/util.py): a user message is a real user turn when its content is
not a string, or when the string does not start with an internal prefix. So a
`<system-reminder>` sent as `[{"type": "text", "text": "<system-reminder>..."}]` is a real
turn, and CurrentRound and Dialogue move their split to it.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from inspector.core.checks import Finding
from inspector.core.findings.base import FindingInput
from inspector.core.messages import INTERNAL_USER_PREFIXES, Message


def list_text(message: Message) -> str | None:
    """The joined text blocks of a list content (None for string content)."""
    if isinstance(message.content, str):
        return None
    parts = []
    for block in message.content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
            parts.append(block["text"])
    return "".join(parts)


def _internal_looking(message: Message) -> bool:
    text = list_text(message)
    return text is not None and text.lstrip().startswith(INTERNAL_USER_PREFIXES)


def _last_real(messages: Sequence[Message], as_string: bool) -> int:
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.is_real_user and not (as_string and _internal_looking(message)):
            return index
    return -1


def list_content_user_turn(inp: FindingInput) -> list[Finding]:
    """The last real user turn is a list whose text starts with an internal prefix."""
    if inp.processor not in ("current_round", "dialogue"):
        return []
    messages = inp.messages
    last = inp.last_real_user if inp.last_real_user is not None else _last_real(messages, False)
    if last < 0 or not _internal_looking(messages[last]):
        return []
    text = (list_text(messages[last]) or "").lstrip()
    prefix = next(p for p in INTERNAL_USER_PREFIXES if text.startswith(p))
    as_string = _last_real(messages, True)
    harmful = inp.reason in ("no_compressible_span", "target_below_min")
    instead = (
        f"as a string it would not count, and the last real user message would be #{as_string}"
        if as_string >= 0
        else "as a string it would not count, and there would be no real user message at all"
    )
    effect = (
        f"; here it leaves nothing worth compressing ({inp.reason})"
        if harmful
        else "; it moves the preserved prefix forward to it"
    )
    return [
        Finding(
            "list_content_user_turn",
            "problem" if harmful else "warning",
            f"user message #{last} starts with {prefix} but its content is a list, so openJiuwen "
            f"counts it as the last real user turn; {instead}{effect}",
            {"message_index": last, "prefix": prefix, "as_string_last_real_user": as_string},
            fix="send harness reminders as a string content (or as a system message) so they do "
            "not count as a user turn",
        )
    ]
